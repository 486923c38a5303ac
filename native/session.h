// One ONNX Runtime session for the emotion model: execution-provider choice (CUDA with CPU
// fallback), thread and optimisation settings, and a Run over padded int64 input tensors. On CPU the
// engine threads share one session and call Run concurrently (ONNX Runtime allows it); on CUDA each
// thread has a session of its own (worker.h, Lane).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sentio {

struct SessionConfig {
  std::string model_path;
  std::string provider = "auto";  // "auto" | "cuda" | "cpu"
  int cuda_device_id = 0;
  int intra_op_threads = 0;  // 0: ONNX Runtime's default (one per physical core)
  int inter_op_threads = 1;  // 1: the graph runs sequentially (session.cc)
  std::string graph_optimization = "all";  // "disabled" | "basic" | "extended" | "all"
  bool allow_spinning = false;             // see docs/engine.md: spinning steals the JS thread's core
  bool packed_recurrence = true;           // on CPU, GRU nodes run as PackedGRU (packed_gru_op.h)
  bool fuse_pooling = true;                // on CPU, pooling subgraphs run as MaskedPool (masked_pool_op.h)
};

// One model output: its name and the width of its [batch, width] float32 tensor.
struct OutputSpec {
  std::string name;
  int64_t width = -1;  // -1 until the first run when the model leaves it symbolic
};

class Session {
 public:
  // Loads the model; throws NativeError with NATIVE_MODEL_LOAD_FAILED or NATIVE_PROVIDER_UNAVAILABLE.
  explicit Session(const SessionConfig& config);

  // Runs one padded batch. ids and mask are [batch, seq] row-major. `outputs[k]` receives
  // batch * width floats of output k, in outputs() order. Throws NativeError(NATIVE_INFERENCE_FAILED).
  void Run(const std::vector<int64_t>& ids, const std::vector<int64_t>& mask, int64_t batch, int64_t seq,
           std::vector<std::vector<float>>& outputs);

  // Makes the current and every later Run fail fast; safe from any thread.
  void Terminate();

  const std::string& provider() const { return provider_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  const std::vector<OutputSpec>& outputs() const { return outputs_; }
  // GRU nodes the CPU session runs as PackedGRU (0 on CUDA, or with packed_recurrence off).
  int packed_recurrences() const { return packed_recurrences_; }
  // Their kernels' instruction set ("avx512", "avx2", "base"); empty when none is packed.
  const std::string& packed_kernels() const { return packed_kernels_; }
  // Pooling subgraphs the CPU session runs as MaskedPool (0 on CUDA, or with fuse_pooling off).
  int fused_poolings() const { return fused_poolings_; }

 private:
  Ort::SessionOptions BaseOptions() const;
  void ReadSignature();

  SessionConfig config_;
  std::unique_ptr<Ort::Session> session_;
  Ort::RunOptions run_options_;
  Ort::MemoryInfo cpu_memory_;
  std::string provider_;
  std::string fallback_reason_;
  int packed_recurrences_ = 0;
  int fused_poolings_ = 0;
  std::string packed_kernels_;
  std::vector<OutputSpec> outputs_;
  std::vector<std::string> input_names_;     // in the model's order
  std::vector<bool> input_is_mask_;          // per input: attention_mask (true) or input_ids
  std::vector<const char*> input_name_ptrs_;
  std::vector<const char*> output_name_ptrs_;
};

// The process-wide ONNX Runtime environment (created once, never destroyed: ORT's own threads may
// outlive module unload, and onnxruntime-node in the same process shares it).
Ort::Env& OrtEnvironment();
std::string OrtVersion();

}  // namespace sentio
