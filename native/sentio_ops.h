// The ai.sentio operator domain: PackedGRU (packed_gru_op.h) and MaskedPool (masked_pool_op.h).
#pragma once

#include <onnxruntime_cxx_api.h>

namespace sentio {

// Registers the domain with `options` (needed by a session over a rewritten model; harmless otherwise).
void AddSentioOps(Ort::SessionOptions& options);

}  // namespace sentio
