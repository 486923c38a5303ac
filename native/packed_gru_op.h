// PackedGru (packed_gru.h) as an ONNX Runtime custom operator, ai.sentio.PackedGRU, and the rewrite
// that points a model's GRU nodes at it. The model file keeps ONNX's own GRU (onnxruntime-node, the
// peer benchmark and the CUDA provider read it as it is); the CPU session loads a copy rewritten in
// memory (docs/engine.md, Packed recurrence).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>

namespace sentio {

// The ONNX model `model` (serialized bytes) with every GRU node that PackedGRU computes exactly
// (bidirectional, 64 units, linear_before_reset = 1, default activations, no initial state) turned into one, and
// the ai.sentio opset imported. `converted` receives how many; with none, the result equals `model`.
// Throws std::runtime_error on bytes it cannot parse as a model.
std::string PackRecurrences(const std::string& model, int* converted);

// The operator, for the ai.sentio domain (sentio_ops.h).
const OrtCustomOp* PackedGruOp();

}  // namespace sentio
