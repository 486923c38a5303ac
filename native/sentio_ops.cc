#include "sentio_ops.h"

#include "masked_pool_op.h"
#include "onnx_proto.h"
#include "packed_gru_op.h"

namespace sentio {

void AddSentioOps(Ort::SessionOptions& options) {
  // Sessions keep pointers to the domain and its operators: all live as long as the process.
  static Ort::CustomOpDomain* domain = [] {
    auto* d = new Ort::CustomOpDomain(onnx_proto::kSentioDomain);
    d->Add(PackedGruOp());
    d->Add(MaskedPoolOp());
    return d;
  }();
  options.Add(*domain);
}

}  // namespace sentio
