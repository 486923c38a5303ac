// The pooling that closes each branch of the emotion model (max, mean and attention pooling over a
// text's positions, concatenated) as one ONNX Runtime custom operator, ai.sentio.MaskedPool, and the
// rewrite that replaces each such subgraph of a model with it. ONNX's own operators compute that pooling
// over the padded [batch, longest, channels] tensor, a dozen passes over every padded position; this one
// reads a padded position once, for the max and the sum, and skips it in the attention (docs/engine.md,
// Packed pooling). Like PackedGRU, it runs on a copy of the model rewritten in memory, on CPU.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>

namespace sentio {

// The ONNX model `model` (serialized bytes) with every pooling subgraph that MaskedPool computes replaced
// by one node, the nodes that then feed nothing removed, and the ai.sentio opset imported. `fused`
// receives how many; with none, the result equals `model`. Throws std::runtime_error on bytes it cannot
// parse as a model.
std::string FusePooling(const std::string& model, int* fused);

// The operator, for the ai.sentio domain (sentio_ops.h).
const OrtCustomOp* MaskedPoolOp();

}  // namespace sentio
