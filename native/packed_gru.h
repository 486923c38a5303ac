// A bidirectional GRU (ONNX `GRU`, linear_before_reset = 1, default activations) that computes only the
// real positions of each sequence. ONNX Runtime's GRU steps every row of a batch to the longest
// sequence; this one projects only real tokens and, at each step, updates only the rows still running,
// so a run of texts of unequal length costs what its real tokens cost (docs/engine.md, Packed recurrence).
// It knows nothing of ONNX Runtime: packed_gru_op.cc wraps it as a custom operator.
#pragma once

#include <cstdint>
#include <vector>

namespace sentio {

class PackedGru {
 public:
  static constexpr int64_t kHidden = 64;  // the hidden size its kernels are blocked for

  // Whether this CPU runs the kernels with AVX2 + FMA or AVX-512; without them ONNX Runtime's own GRU is
  // the faster one, and the model is not rewritten (packed_gru_op.h).
  static bool Vectorized();
  // The kernels a PackedGru made now runs: "avx512", "avx2" or "base".
  static const char* Kernels();

  // ONNX layouts: w [2, 3H, input], r [2, 3H, H], b [2, 6H] (Wb then Rb), gates in z, r, h order;
  // H must be kHidden.
  PackedGru(const float* w, const float* r, const float* b, int64_t input, int64_t hidden);

  // x [steps, batch, input]; lengths [batch] in [0, steps] (nullptr: all `steps`); y [steps, 2, batch, H]
  // with zeros past each length, as ONNX's Y; y_h [2, batch, H] (may be nullptr), as ONNX's Y_h.
  void Run(const float* x, const int32_t* lengths, int64_t steps, int64_t batch, float* y, float* y_h) const;

  int64_t input() const { return input_; }
  int64_t hidden() const { return hidden_; }

 private:
  enum class Isa { kBase, kAvx2, kAvx512 };  // the widest vectors this CPU runs
  static Isa Detect();  // what the CPU runs
  static Isa Chosen();  // that, capped by SENTIO_PACKED_GRU_ISA
  int64_t input_, hidden_;
  Isa isa_ = Isa::kBase;
  // Both directions' input weights transposed to [input][2 x 3H] (one product projects a token for both),
  // with their bias [2 x 3H]: the input bias plus the recurrent bias of z and r (they are added before the
  // gate). Per direction: recurrent weights transposed to [H][3H], and Rbh (inside r's product) apart.
  std::vector<float> wt_, bias_, rt_[2], rbh_[2];
};

}  // namespace sentio
