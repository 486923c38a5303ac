#include "session.h"

#include <filesystem>
#include <fstream>
#include <mutex>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "errors.h"
#include "masked_pool_op.h"
#include "packed_gru.h"
#include "packed_gru_op.h"
#include "sentio_ops.h"

namespace sentio {
namespace {

GraphOptimizationLevel ParseOptimization(const std::string& level) {
  if (level == "disabled") return ORT_DISABLE_ALL;
  if (level == "basic") return ORT_ENABLE_BASIC;
  if (level == "extended") return ORT_ENABLE_EXTENDED;
  if (level == "all") return ORT_ENABLE_ALL;
  throw NativeError(code::kInvalidArgument, "graphOptimization must be disabled, basic, extended or all");
}

// Fails with a readable message before ORT does, for the common cases.
void CheckModelFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw NativeError(code::kModelLoad, "model file not found: " + path);
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw NativeError(code::kModelLoad, "model path is not a file: " + path);
  }
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw NativeError(code::kModelLoad, "model file is not readable: " + path);
}

void CheckApi() {
  // The headers are API version ORT_API_VERSION; an older runtime library returns null here.
  if (OrtGetApiBase()->GetApi(ORT_API_VERSION) == nullptr) {
    throw NativeError(code::kModelLoad, std::string("ONNX Runtime ") + OrtGetApiBase()->GetVersionString() +
                                            " is older than the API this addon was built for (" +
                                            std::to_string(ORT_API_VERSION) + ")");
  }
}

// Adds the CUDA execution provider; throws Ort::Exception when its libraries (or CUDA, cuDNN, a GPU)
// cannot be loaded. The V2 options exist only in runtimes compiled with CUDA in the core (onnxruntime-node's);
// others (the asus4 CUDA 13 set) load the provider through the bridge but compile V2 out, and take V1.
void AppendCuda(Ort::SessionOptions& options, int device_id) {
  OrtCUDAProviderOptionsV2* cuda = nullptr;
  if (Ort::Status status(Ort::GetApi().CreateCUDAProviderOptions(&cuda)); !status.IsOK()) {
    OrtCUDAProviderOptions v1;
    v1.device_id = device_id;
    options.AppendExecutionProvider_CUDA(v1);
    return;
  }
  std::unique_ptr<OrtCUDAProviderOptionsV2, void (*)(OrtCUDAProviderOptionsV2*)> guard(
      cuda, Ort::GetApi().ReleaseCUDAProviderOptions);
  std::string device = std::to_string(device_id);
  const char* keys[] = {"device_id"};
  const char* values[] = {device.c_str()};
  Ort::ThrowOnError(Ort::GetApi().UpdateCUDAProviderOptions(cuda, keys, values, 1));
  options.AppendExecutionProvider_CUDA_V2(*cuda);
}

// One run of two short texts, one of them padded, on a session over a rewritten model: the rewrites
// match operators, not shapes, so a model they misread fails here, at load, not on every request.
bool RunsOnce(Ort::Session& session) {
  try {
    Ort::AllocatorWithDefaultOptions allocator;
    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    const int64_t shape[2] = {2, 3};
    int64_t ids[6] = {2, 5, 6, 2, 5, 0}, mask[6] = {1, 1, 1, 1, 1, 0};
    std::vector<std::string> names, out_names;
    std::vector<Ort::Value> inputs;
    for (size_t i = 0; i < session.GetInputCount(); ++i) {
      names.push_back(session.GetInputNameAllocated(i, allocator).get());
      inputs.push_back(Ort::Value::CreateTensor<int64_t>(memory, names.back() == "attention_mask" ? mask : ids, 6, shape, 2));
    }
    for (size_t i = 0; i < session.GetOutputCount(); ++i) out_names.push_back(session.GetOutputNameAllocated(i, allocator).get());
    std::vector<const char*> in_ptrs, out_ptrs;
    for (const auto& n : names) in_ptrs.push_back(n.c_str());
    for (const auto& n : out_names) out_ptrs.push_back(n.c_str());
    session.Run(Ort::RunOptions{nullptr}, in_ptrs.data(), inputs.data(), inputs.size(), out_ptrs.data(), out_ptrs.size());
    return true;
  } catch (const Ort::Exception&) {
    return false;
  }
}

}  // namespace

Ort::Env& OrtEnvironment() {
  static Ort::Env* env = [] {
    CheckApi();
    return new Ort::Env(ORT_LOGGING_LEVEL_ERROR, "sentio");
  }();
  return *env;
}

std::string OrtVersion() { return OrtGetApiBase()->GetVersionString(); }

Ort::SessionOptions Session::BaseOptions() const {
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(config_.intra_op_threads);
  options.SetInterOpNumThreads(config_.inter_op_threads);
  options.SetGraphOptimizationLevel(ParseOptimization(config_.graph_optimization));
  // ONNX Runtime reads the inter-op pool only in parallel mode: 1 (the default) keeps the graph sequential.
  options.SetExecutionMode(config_.inter_op_threads == 1 ? ORT_SEQUENTIAL : ORT_PARALLEL);
  const char* spin = config_.allow_spinning ? "1" : "0";
  options.AddConfigEntry("session.intra_op.allow_spinning", spin);
  options.AddConfigEntry("session.inter_op.allow_spinning", spin);
  return options;
}

Session::Session(const SessionConfig& config)
    : config_(config), cpu_memory_(Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault)) {
  CheckModelFile(config.model_path);
  Ort::Env& env = OrtEnvironment();
  const bool want_cuda = config.provider == "cuda" || config.provider == "auto";
  if (!want_cuda && config.provider != "cpu") {
    throw NativeError(code::kInvalidArgument, "executionProvider must be auto, cuda or cpu");
  }

  auto load_cpu = [&]() {
    try {
      Ort::SessionOptions options = BaseOptions();
      // Rewritten in memory (packed_gru_op.h, masked_pool_op.h); the file itself stays standard ONNX. The
      // rewrites are tried with both, then the packed recurrence alone, then the file as it is: a model
      // they misread (ONNX Runtime refuses it, or its first run fails) still loads.
      const bool pack = config.packed_recurrence && PackedGru::Vectorized();
      if (pack || config.fuse_pooling) {
        AddSentioOps(options);  // unused, and harmless, if the file as it is loads below
        std::string model(std::filesystem::file_size(config.model_path), '\0');
        std::ifstream(config.model_path, std::ios::binary).read(model.data(), static_cast<std::streamsize>(model.size()));
        std::string packed, fused;
        try {
          if (pack) packed = PackRecurrences(model, &packed_recurrences_);
        } catch (const std::runtime_error&) {
          packed_recurrences_ = 0;  // not a model this walk reads: ONNX Runtime says what is wrong below
        }
        try {
          if (config.fuse_pooling) fused = FusePooling(packed_recurrences_ > 0 ? packed : model, &fused_poolings_);
        } catch (const std::runtime_error&) {
          fused_poolings_ = 0;
        }
        std::string().swap(model);
        const auto load = [&](const std::string& bytes) {
          try {
            auto session = std::make_unique<Ort::Session>(env, bytes.data(), bytes.size(), options);
            if (!RunsOnce(*session)) return false;
            session_ = std::move(session);
            return true;
          } catch (const Ort::Exception&) {
            return false;
          }
        };
        if (fused_poolings_ > 0 && !load(fused)) fused_poolings_ = 0;
        if (!session_ && packed_recurrences_ > 0 && !load(packed)) packed_recurrences_ = 0;
        if (!session_) packed_recurrences_ = fused_poolings_ = 0;
        if (packed_recurrences_ > 0) packed_kernels_ = PackedGru::Kernels();
        // The copies of the file (tens of MB) would otherwise stay in the heap, counted in RSS.
        std::string().swap(packed);
        std::string().swap(fused);
#ifdef __GLIBC__
        malloc_trim(0);
#endif
      }
      if (!session_) session_ = std::make_unique<Ort::Session>(env, config.model_path.c_str(), options);
    } catch (const Ort::Exception& e) {
      throw NativeError(code::kModelLoad, "cannot load model " + config.model_path + ": " + e.what());
    }
    provider_ = "cpu";
  };

  if (want_cuda) {
    std::string cuda_error;
    try {
      Ort::SessionOptions options = BaseOptions();
      AppendCuda(options, config.cuda_device_id);
      session_ = std::make_unique<Ort::Session>(env, config.model_path.c_str(), options);
      provider_ = "cuda";
    } catch (const Ort::Exception& e) {
      cuda_error = e.what();
    }
    if (!session_) {
      // Either CUDA is missing or the model is bad: a CPU load tells which (and is the fallback).
      load_cpu();
      if (config.provider == "cuda") {
        session_.reset();
        throw NativeError(code::kProviderUnavailable,
                          "executionProvider 'cuda' requested but the CUDA execution provider is unavailable: " +
                              cuda_error +
                              " (it needs libonnxruntime_providers_cuda.so beside libonnxruntime, the CUDA "
                              "and cuDNN 9 libraries it was built for, and a GPU; see docs/gpu.md, or use "
                              "executionProvider 'cpu' or 'auto')");
      }
      fallback_reason_ = cuda_error;
    }
  } else {
    load_cpu();
  }
  ReadSignature();
}

void Session::ReadSignature() {
  Ort::AllocatorWithDefaultOptions allocator;
  const size_t inputs = session_->GetInputCount();
  bool have_ids = false, have_mask = false;
  for (size_t i = 0; i < inputs; ++i) {
    std::string name = session_->GetInputNameAllocated(i, allocator).get();
    Ort::TypeInfo type = session_->GetInputTypeInfo(i);  // owns what `info` points into
    auto info = type.GetTensorTypeAndShapeInfo();
    if (name != "input_ids" && name != "attention_mask") {
      throw NativeError(code::kModelLoad, "model input '" + name +
                                              "' is not part of the contract (input_ids, attention_mask)");
    }
    if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 || info.GetDimensionsCount() != 2) {
      throw NativeError(code::kModelLoad, "model input '" + name + "' must be an int64 [batch, seq] tensor");
    }
    (name == "input_ids" ? have_ids : have_mask) = true;
    input_is_mask_.push_back(name == "attention_mask");
    input_names_.push_back(std::move(name));
  }
  if (!have_ids || !have_mask) {
    throw NativeError(code::kModelLoad, "model must take inputs input_ids and attention_mask");
  }
  const size_t count = session_->GetOutputCount();
  for (size_t i = 0; i < count; ++i) {
    OutputSpec spec;
    spec.name = session_->GetOutputNameAllocated(i, allocator).get();
    Ort::TypeInfo type = session_->GetOutputTypeInfo(i);
    auto info = type.GetTensorTypeAndShapeInfo();
    std::vector<int64_t> shape = info.GetShape();
    if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || shape.size() != 2) {
      throw NativeError(code::kModelLoad, "model output '" + spec.name + "' must be a float32 [batch, n] tensor");
    }
    spec.width = shape[1] > 0 ? shape[1] : -1;
    outputs_.push_back(std::move(spec));
  }
  for (const auto& n : input_names_) input_name_ptrs_.push_back(n.c_str());
  for (const auto& o : outputs_) output_name_ptrs_.push_back(o.name.c_str());
}

void Session::Run(const std::vector<int64_t>& ids, const std::vector<int64_t>& mask, int64_t batch, int64_t seq,
                  std::vector<std::vector<float>>& outputs) {
  const int64_t shape[2] = {batch, seq};
  std::vector<Ort::Value> inputs;
  inputs.reserve(input_names_.size());
  for (bool is_mask : input_is_mask_) {
    const std::vector<int64_t>& data = is_mask ? mask : ids;
    // ORT only reads inputs; the const_cast is what its CreateTensor signature asks for.
    inputs.push_back(Ort::Value::CreateTensor<int64_t>(cpu_memory_, const_cast<int64_t*>(data.data()), data.size(),
                                                       shape, 2));
  }
  std::vector<Ort::Value> results;
  try {
    results = session_->Run(run_options_, input_name_ptrs_.data(), inputs.data(), inputs.size(),
                            output_name_ptrs_.data(), output_name_ptrs_.size());
  } catch (const Ort::Exception& e) {
    throw NativeError(code::kInference, std::string("inference failed: ") + e.what());
  }
  outputs.resize(results.size());
  for (size_t k = 0; k < results.size(); ++k) {
    auto info = results[k].GetTensorTypeAndShapeInfo();
    std::vector<int64_t> out_shape = info.GetShape();
    if (out_shape.size() != 2 || out_shape[0] != batch) {
      throw NativeError(code::kInference, "output '" + outputs_[k].name + "' is not [batch, n]");
    }
    if (outputs_[k].width < 0) outputs_[k].width = out_shape[1];
    if (out_shape[1] != outputs_[k].width) {
      throw NativeError(code::kInference, "output '" + outputs_[k].name + "' changed width between runs");
    }
    const float* data = results[k].GetTensorData<float>();
    outputs[k].assign(data, data + batch * out_shape[1]);
  }
}

void Session::Terminate() { run_options_.SetTerminate(); }

}  // namespace sentio
