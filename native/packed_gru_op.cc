#include "packed_gru_op.h"

#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "onnx_proto.h"
#include "packed_gru.h"

namespace sentio {
namespace {

constexpr const char* kOpType = "PackedGRU";

// --- the operator ---------------------------------------------------------------------------------

struct PackedGruKernel {
  explicit PackedGruKernel(const OrtKernelInfo* info)
      : hidden_(Ort::ConstKernelInfo(info).GetAttribute<int64_t>("hidden_size")) {}

  void Compute(OrtKernelContext* raw) {
    Ort::KernelContext context(raw);
    Ort::ConstValue x = context.GetInput(0);
    const std::vector<int64_t> shape = x.GetTensorTypeAndShapeInfo().GetShape();  // [steps, batch, input]
    if (shape.size() != 3) throw Ort::Exception("PackedGRU: X must be [steps, batch, input]", ORT_INVALID_ARGUMENT);
    // W, R and B are the model's initializers: the weights are laid out for the kernel once.
    std::call_once(prepared_, [&] {
      Ort::ConstValue w = context.GetInput(1), r = context.GetInput(2), b = context.GetInput(3);
      const std::vector<int64_t> ws = w.GetTensorTypeAndShapeInfo().GetShape();
      const std::vector<int64_t> rs = r.GetTensorTypeAndShapeInfo().GetShape();
      const std::vector<int64_t> bs = b.GetTensorTypeAndShapeInfo().GetShape();
      if (ws != std::vector<int64_t>{2, 3 * hidden_, shape[2]} || rs != std::vector<int64_t>{2, 3 * hidden_, hidden_} ||
          bs != std::vector<int64_t>{2, 6 * hidden_}) {
        return;  // gru_ stays empty: reported below
      }
      try {
        gru_ = std::make_unique<PackedGru>(w.GetTensorData<float>(), r.GetTensorData<float>(),
                                           b.GetTensorData<float>(), shape[2], hidden_);
      } catch (const std::invalid_argument&) {
        // a size the kernels do not take: reported below
      }
    });
    if (!gru_ || gru_->input() != shape[2]) {
      throw Ort::Exception("PackedGRU: W, R or B do not match hidden_size (64) and X", ORT_INVALID_ARGUMENT);
    }
    const int64_t steps = shape[0], batch = shape[1];
    const int32_t* lengths = nullptr;
    if (context.GetInputCount() > 4) {
      Ort::ConstValue lens = context.GetInput(4);
      if (lens) {
        if (lens.GetTensorTypeAndShapeInfo().GetShape() != std::vector<int64_t>{batch}) {
          throw Ort::Exception("PackedGRU: sequence_lens must be [batch]", ORT_INVALID_ARGUMENT);
        }
        lengths = lens.GetTensorData<int32_t>();
      }
    }
    float* y = context.GetOutput(0, {steps, 2, batch, hidden_}).GetTensorMutableData<float>();
    float* y_h = nullptr;
    if (context.GetOutputCount() > 1) {
      Ort::UnownedValue out = context.GetOutput(1, {2, batch, hidden_});
      if (out) y_h = out.GetTensorMutableData<float>();
    }
    try {
      gru_->Run(x.GetTensorData<float>(), lengths, steps, batch, y, y_h);
    } catch (const std::invalid_argument& e) {
      throw Ort::Exception(e.what(), ORT_INVALID_ARGUMENT);
    }
  }

  int64_t hidden_;
  std::once_flag prepared_;
  std::unique_ptr<PackedGru> gru_;
};

struct PackedGruOperator : Ort::CustomOpBase<PackedGruOperator, PackedGruKernel> {
  void* CreateKernel(const OrtApi&, const OrtKernelInfo* info) const { return new PackedGruKernel(info); }
  const char* GetName() const { return kOpType; }
  const char* GetExecutionProviderType() const { return "CPUExecutionProvider"; }
  size_t GetInputTypeCount() const { return 5; }  // X, W, R, B, sequence_lens
  ONNXTensorElementDataType GetInputType(size_t index) const {
    return index == 4 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  }
  OrtCustomOpInputOutputCharacteristic GetInputCharacteristic(size_t index) const {
    return index == 4 ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
  }
  size_t GetOutputTypeCount() const { return 2; }  // Y, Y_h
  ONNXTensorElementDataType GetOutputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; }
  OrtCustomOpInputOutputCharacteristic GetOutputCharacteristic(size_t index) const {
    return index == 1 ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
  }
};

// --- the rewrite ----------------------------------------------------------------------------------

using onnx_proto::Field;
using onnx_proto::Fields;
using onnx_proto::PutBytes;

// Whether PackedGRU computes this GRU node exactly (and at the size its kernels are blocked for); NodeProto fields: 1 input, 2 output, 4 op_type,
// 5 attribute, 7 domain. AttributeProto: 1 name, 3 i, 4 s.
// `constants`: the graph's initializers that are not also graph inputs, whose values the kernel may lay
// out once.
bool Packable(const std::vector<Field>& node, const std::set<std::string_view>& constants) {
  std::vector<std::string_view> inputs, outputs;
  bool gru = false, bidirectional = false, before_reset = false, hidden = false;
  for (const Field& f : node) {
    if (f.number == 1 && f.wire == 2) inputs.push_back(f.bytes);
    if (f.number == 2 && f.wire == 2) outputs.push_back(f.bytes);
    if (f.number == 4 && f.wire == 2) gru = f.bytes == "GRU";
    if (f.number == 7 && f.wire == 2 && !f.bytes.empty() && f.bytes != "ai.onnx") return false;
    if (f.number == 5 && f.wire == 2) {
      std::string_view name, s;
      uint64_t i = 0;
      for (const Field& a : Fields(f.bytes)) {
        if (a.number == 1 && a.wire == 2) name = a.bytes;
        if (a.number == 3 && a.wire == 0) i = a.varint;
        if (a.number == 4 && a.wire == 2) s = a.bytes;
      }
      if (name == "direction") bidirectional = s == "bidirectional";
      else if (name == "linear_before_reset") before_reset = i == 1;
      else if (name == "hidden_size") hidden = i == static_cast<uint64_t>(PackedGru::kHidden);
      else if (name == "layout") { if (i != 0) return false; }
      else return false;  // activations, clip, ...: not what the kernel computes
    }
  }
  const bool no_initial_state = inputs.size() < 6 || inputs[5].empty();
  const bool constant_weights =
      inputs.size() >= 4 && constants.count(inputs[1]) && constants.count(inputs[2]) && constants.count(inputs[3]);
  return gru && bidirectional && before_reset && hidden && constant_weights && no_initial_state && !outputs.empty() &&
         !outputs[0].empty();
}

// The node as ai.sentio.PackedGRU: its inputs X, W, R, B and sequence_lens in order (a sixth, initial_h,
// is empty in a packable node), then every other field but op_type and domain.
std::string RewriteNode(const std::vector<Field>& node) {
  std::string out;
  int inputs = 0;
  for (const Field& f : node) {
    if (f.number == 1 && f.wire == 2 && inputs++ < 5) PutBytes(out, 1, f.bytes);
  }
  for (const Field& f : node) {
    if (f.number != 1 && f.number != 4 && f.number != 7) out.append(f.raw);
  }
  onnx_proto::PutSentioOp(out, kOpType);
  return out;
}

}  // namespace

std::string PackRecurrences(const std::string& model, int* converted) {
  *converted = 0;
  const std::vector<Field> top = Fields(model);
  const std::vector<Field> fields = onnx_proto::GraphFields(top);
  const std::set<std::string_view> constants = onnx_proto::Constants(fields);
  std::string graph;
  for (const Field& g : fields) {
    if (g.number == 1 && g.wire == 2) {  // GraphProto.node
      const std::vector<Field> node = Fields(g.bytes);
      if (Packable(node, constants)) {
        PutBytes(graph, 1, RewriteNode(node));
        ++*converted;
        continue;
      }
    }
    graph.append(g.raw);
  }
  if (*converted == 0) return model;
  return onnx_proto::WithGraph(top, graph);
}

const OrtCustomOp* PackedGruOp() {
  static PackedGruOperator* op = new PackedGruOperator();
  return op;
}

}  // namespace sentio
