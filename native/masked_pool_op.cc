#include "masked_pool_op.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "onnx_proto.h"

namespace sentio {
namespace {

using onnx_proto::Field;
using onnx_proto::Fields;
using onnx_proto::PutBytes;

constexpr const char* kOpType = "MaskedPool";

// exp(x) is 0 in float below about -104: a position whose attention score is this far under the text's
// best (a padded one: the graph's fill is -10,000) has a softmax weight of exactly 0, and is skipped.
constexpr float kNegligible = -110.0f;

// --- the operator ---------------------------------------------------------------------------------
//
// Inputs: 0 S [B, T, C] (the branch's sequence, padded positions included); 1 cond [B, T, 1] bool,
// the real positions; 2 W [C, H] and 3 bias [H], the attention scores' projection; 4 fill, the score of
// a padded position (one element); 5 denom [B, 1], what each text's sum is divided by; 6 Z [B, T, 1]
// (optional): the max reads S - Z, as the graph's masked max does, else S. The shapes are checked
// exactly: with others the graph's broadcasting would mean something else (FusePooling matches
// operators, not shapes; session.cc runs a rewritten model once before it keeps it).
// Output [B, (2 + H) x C]: max over t, sum over t / denom, then per head the softmax-weighted sum of S's
// rows, the layout of the graph's Concat(ReduceMax, Div, Flatten(MatMul(Transpose(Softmax), S))).

#define SENTIO_INLINE inline __attribute__((always_inline))

// A dot product in eight independent sums, which the compiler keeps in vector registers (one running sum
// would be a chain of dependent additions).
SENTIO_INLINE float Dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (int k = 0; k < 8; ++k) sum += acc[k];
  return sum;
}

struct Pooling {
  int64_t steps, channels, heads;
  const float* x;     // [batch, steps, channels]
  const bool* real;   // [batch, steps]
  const float* wt;    // [heads, channels]
  const float* bias;  // [heads]
  float pad_score;
  const float* denom;  // [batch]
  const float* z;      // [batch, steps] or nullptr
  float* out;          // [batch, (2 + heads) x channels]
  float* scores;       // [steps, heads] of scratch
  float* best;         // [heads] of scratch
};

// Text b's output row. Plain loops, compiled for AVX2 + FMA and for the build's baseline (Pool, below).
SENTIO_INLINE void PoolText(const Pooling& p, int64_t b) {
  const int64_t steps = p.steps, channels = p.channels, heads = p.heads;
  const float* xb = p.x + b * steps * channels;
  const bool* rb = p.real + b * steps;
  float* max = p.out + b * (2 + heads) * channels;
  float* mean = max + channels;
  float* attn = mean + channels;
  // Max and sum read every position, padded ones too, as the graph does, whatever the padded rows hold
  // (zeros, in the shipped model), in one pass where the graph made several. (A NaN may be dropped
  // from the max where ONNX Runtime keeps it; the model's sequences are finite.)
  std::fill(max, max + channels, -std::numeric_limits<float>::infinity());
  std::fill(mean, mean + channels, 0.0f);
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = xb + t * channels;
    if (p.z) {
      const float shift = p.z[b * steps + t];
      for (int64_t c = 0; c < channels; ++c) max[c] = std::max(max[c], row[c] - shift);
    } else {
      for (int64_t c = 0; c < channels; ++c) max[c] = std::max(max[c], row[c]);
    }
    for (int64_t c = 0; c < channels; ++c) mean[c] += row[c];
  }
  const float d = p.denom[b];
  for (int64_t c = 0; c < channels; ++c) mean[c] /= d;

  // Attention: a score per position and head, softmax over positions, then the weighted rows.
  std::fill(p.best, p.best + heads, -std::numeric_limits<float>::infinity());
  for (int64_t t = 0; t < steps; ++t) {
    float* st = p.scores + t * heads;
    for (int64_t h = 0; h < heads; ++h) {
      st[h] = rb[t] ? Dot(xb + t * channels, p.wt + h * channels, channels) + p.bias[h] : p.pad_score;
      p.best[h] = std::max(p.best[h], st[h]);
    }
  }
  std::fill(attn, attn + heads * channels, 0.0f);
  for (int64_t h = 0; h < heads; ++h) {
    float total = 0.0f;
    for (int64_t t = 0; t < steps; ++t) {
      float& e = p.scores[t * heads + h];
      const float shifted = e - p.best[h];
      e = shifted < kNegligible ? 0.0f : std::exp(shifted);
      total += e;
    }
    float* ah = attn + h * channels;
    for (int64_t t = 0; t < steps; ++t) {
      const float weight = p.scores[t * heads + h];
      if (weight == 0.0f) continue;  // padded positions, mostly: their rows add nothing
      const float share = weight / total;
      const float* row = xb + t * channels;
      for (int64_t c = 0; c < channels; ++c) ah[c] += share * row[c];
    }
  }
}

void PoolBase(const Pooling& p, int64_t batch) {
  for (int64_t b = 0; b < batch; ++b) PoolText(p, b);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void PoolAvx2(const Pooling& p, int64_t batch) {
  for (int64_t b = 0; b < batch; ++b) PoolText(p, b);
}

void Pool(const Pooling& p, int64_t batch) {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  if (avx2) PoolAvx2(p, batch);
  else PoolBase(p, batch);
}
#else
void Pool(const Pooling& p, int64_t batch) { PoolBase(p, batch); }
#endif

struct MaskedPoolKernel {
  explicit MaskedPoolKernel(const OrtKernelInfo*) {}

  void Compute(OrtKernelContext* raw) {
    Ort::KernelContext context(raw);
    Ort::ConstValue s = context.GetInput(0), cond = context.GetInput(1), w = context.GetInput(2),
                    bias = context.GetInput(3), fill = context.GetInput(4), denom = context.GetInput(5);
    Ort::ConstValue z{nullptr};
    if (context.GetInputCount() > 6) z = context.GetInput(6);
    const std::vector<int64_t> shape = s.GetTensorTypeAndShapeInfo().GetShape();
    const std::vector<int64_t> ws = w.GetTensorTypeAndShapeInfo().GetShape();
    if (shape.size() != 3 || ws.size() != 2 || ws[0] != shape[2]) {
      throw Ort::Exception("MaskedPool: S must be [batch, steps, channels] and W [channels, heads]", ORT_INVALID_ARGUMENT);
    }
    const int64_t batch = shape[0], steps = shape[1], channels = shape[2], heads = ws[1];
    const auto dims = [](const Ort::ConstValue& v) { return v.GetTensorTypeAndShapeInfo().GetShape(); };
    const std::vector<int64_t> per_position{batch, steps, 1};
    if (dims(cond) != per_position || dims(bias) != std::vector<int64_t>{heads} ||
        fill.GetTensorTypeAndShapeInfo().GetElementCount() != 1 || dims(denom) != std::vector<int64_t>{batch, 1} ||
        (z && dims(z) != per_position)) {
      throw Ort::Exception("MaskedPool: cond or Z is not [batch, steps, 1], bias not [heads], fill not one value, or denom not [batch, 1]",
                           ORT_INVALID_ARGUMENT);
    }
    const float* wd = w.GetTensorData<float>();
    std::vector<float> wt(static_cast<size_t>(heads * channels));  // W as [heads][channels]: rows to dot with
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t h = 0; h < heads; ++h) wt[h * channels + c] = wd[c * heads + h];
    }
    std::vector<float> scratch(static_cast<size_t>((steps + 1) * heads));
    const Pooling p{steps,
                    channels,
                    heads,
                    s.GetTensorData<float>(),
                    cond.GetTensorData<bool>(),
                    wt.data(),
                    bias.GetTensorData<float>(),
                    fill.GetTensorData<float>()[0],
                    denom.GetTensorData<float>(),
                    z ? z.GetTensorData<float>() : nullptr,
                    context.GetOutput(0, {batch, (2 + heads) * channels}).GetTensorMutableData<float>(),
                    scratch.data(),
                    scratch.data() + steps * heads};
    Pool(p, batch);
  }
};

struct MaskedPoolOperator : Ort::CustomOpBase<MaskedPoolOperator, MaskedPoolKernel> {
  void* CreateKernel(const OrtApi&, const OrtKernelInfo* info) const { return new MaskedPoolKernel(info); }
  const char* GetName() const { return kOpType; }
  const char* GetExecutionProviderType() const { return "CPUExecutionProvider"; }
  size_t GetInputTypeCount() const { return 7; }
  ONNXTensorElementDataType GetInputType(size_t index) const {
    return index == 1 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  }
  OrtCustomOpInputOutputCharacteristic GetInputCharacteristic(size_t index) const {
    return index == 6 ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
  }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; }
};

// --- the rewrite ----------------------------------------------------------------------------------

struct Node {
  std::string_view raw;  // the NodeProto's bytes
  std::string_view op, domain, name;
  std::vector<std::string_view> inputs, outputs;
  std::vector<Field> attributes;  // AttributeProto payloads
  bool removed = false;
};

Node ParseNode(std::string_view bytes) {
  Node n;
  n.raw = bytes;
  for (const Field& f : Fields(bytes)) {
    if (f.wire != 2) continue;
    switch (f.number) {
      case 1: n.inputs.push_back(f.bytes); break;
      case 2: n.outputs.push_back(f.bytes); break;
      case 3: n.name = f.bytes; break;
      case 4: n.op = f.bytes; break;
      case 5: n.attributes.push_back(f); break;
      case 7: n.domain = f.bytes; break;
      default: break;
    }
  }
  return n;
}

// A node's integer attributes by name (AttributeProto: 1 name, 3 i, 8 ints, packed or not, 20 type);
// an attribute of any other kind makes them `unexpected`.
struct Attributes {
  std::map<std::string_view, std::vector<int64_t>> ints;
  bool unexpected = false;
};

Attributes ReadAttributes(const Node& node) {
  Attributes out;
  for (const Field& a : node.attributes) {
    std::string_view name;
    std::vector<int64_t> values;
    bool other = false;
    for (const Field& f : Fields(a.bytes)) {
      if (f.number == 1 && f.wire == 2) name = f.bytes;
      else if ((f.number == 3 || f.number == 8) && f.wire == 0) values.push_back(static_cast<int64_t>(f.varint));
      else if (f.number == 8 && f.wire == 2) {
        for (size_t at = 0; at < f.bytes.size();) values.push_back(static_cast<int64_t>(onnx_proto::ReadVarint(f.bytes, at)));
      } else if (f.number == 20 && f.wire == 0) {
        // AttributeProto.type
      } else {
        other = true;
      }
    }
    if (other) out.unexpected = true;
    out.ints[name] = values;
  }
  return out;
}

bool HasInts(const Node& node, std::initializer_list<std::pair<std::string_view, std::vector<int64_t>>> want) {
  const Attributes a = ReadAttributes(node);
  if (a.unexpected || a.ints.size() != want.size()) return false;
  for (const auto& [name, values] : want) {
    auto it = a.ints.find(name);
    if (it == a.ints.end() || it->second != values) return false;
  }
  return true;
}

// A Constant node's int64 tensor (attribute value: TensorProto 1 dims, 2 data_type, 7 int64_data,
// 9 raw_data); nullopt for anything else.
std::optional<std::vector<int64_t>> Int64Constant(const Node& node) {
  if (node.op != "Constant" || !node.domain.empty() || node.attributes.size() != 1) return std::nullopt;
  std::string_view tensor;
  for (const Field& f : Fields(node.attributes[0].bytes)) {
    if (f.number == 1 && f.wire == 2 && f.bytes != "value") return std::nullopt;
    if (f.number == 5 && f.wire == 2) tensor = f.bytes;
  }
  std::vector<int64_t> values;
  uint64_t type = 0;
  std::string_view raw;
  for (const Field& f : Fields(tensor)) {
    if (f.number == 2 && f.wire == 0) type = f.varint;
    if (f.number == 7 && f.wire == 0) values.push_back(static_cast<int64_t>(f.varint));
    if (f.number == 7 && f.wire == 2) {  // packed, as ONNX declares int64_data
      for (size_t at = 0; at < f.bytes.size();) values.push_back(static_cast<int64_t>(onnx_proto::ReadVarint(f.bytes, at)));
    }
    if (f.number == 9 && f.wire == 2) raw = f.bytes;
  }
  if (type != 7) return std::nullopt;  // INT64
  if (!raw.empty()) {
    if (raw.size() % 8) return std::nullopt;
    values.resize(raw.size() / 8);
    std::memcpy(values.data(), raw.data(), raw.size());  // little-endian, as ONNX stores it
  }
  return values;
}

class Graph {
 public:
  explicit Graph(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (std::string_view o : nodes_[i].outputs) producer_[o] = i;
    }
  }
  // The node producing `tensor` if it is `op` of the default domain with `inputs` inputs (0: any).
  const Node* Producer(std::string_view tensor, std::string_view op, size_t inputs = 0) const {
    auto it = producer_.find(tensor);
    if (it == producer_.end()) return nullptr;
    const Node& n = nodes_[it->second];
    if (n.op != op || !n.domain.empty() || n.outputs.size() != 1 || (inputs && n.inputs.size() != inputs)) return nullptr;
    return &n;
  }
  std::vector<Node>& nodes() { return nodes_; }

 private:
  std::vector<Node> nodes_;
  std::map<std::string_view, size_t> producer_;
};

// The MaskedPool node's inputs for a Concat that closes a pooling subgraph, or an empty vector. The
// forms matched are opset 13 to 17's (ReduceSum's axes an input, ReduceMax's an attribute, Softmax over
// one axis), which such a node set implies.
std::vector<std::string_view> MatchPooling(const Graph& g, const Node& concat, const std::set<std::string_view>& constants) {
  if (concat.op != "Concat" || !concat.domain.empty() || concat.inputs.size() != 3 || concat.outputs.size() != 1 ||
      !HasInts(concat, {{"axis", {1}}})) {
    return {};
  }
  // Flatten(MatMul(Transpose(Softmax(Where(cond, Add(bias, MatMul(S, W)), fill))), S))
  const Node* flatten = g.Producer(concat.inputs[2], "Flatten", 1);
  if (!flatten || !HasInts(*flatten, {{"axis", {1}}})) return {};
  const Node* weighted = g.Producer(flatten->inputs[0], "MatMul", 2);
  if (!weighted) return {};
  const std::string_view s = weighted->inputs[1];
  const Node* transpose = g.Producer(weighted->inputs[0], "Transpose", 1);
  if (!transpose || !HasInts(*transpose, {{"perm", {0, 2, 1}}})) return {};
  const Node* softmax = g.Producer(transpose->inputs[0], "Softmax", 1);
  if (!softmax || !HasInts(*softmax, {{"axis", {1}}})) return {};
  const Node* where = g.Producer(softmax->inputs[0], "Where", 3);
  if (!where) return {};
  const Node* add = g.Producer(where->inputs[1], "Add", 2);
  if (!add) return {};
  const bool bias_first = constants.count(add->inputs[0]) > 0;
  const std::string_view bias = add->inputs[bias_first ? 0 : 1];
  if (!constants.count(bias)) return {};
  const Node* scores = g.Producer(add->inputs[bias_first ? 1 : 0], "MatMul", 2);
  if (!scores || scores->inputs[0] != s || !constants.count(scores->inputs[1])) return {};
  // Div(ReduceSum(S, axes = [1], keepdims = 0), denom)
  const Node* div = g.Producer(concat.inputs[1], "Div", 2);
  if (!div) return {};
  const Node* sum = g.Producer(div->inputs[0], "ReduceSum", 2);
  if (!sum || sum->inputs[0] != s || !HasInts(*sum, {{"keepdims", {0}}})) return {};
  const Node* axes = g.Producer(sum->inputs[1], "Constant", 0);
  if (!axes || Int64Constant(*axes) != std::vector<int64_t>{1}) return {};
  // ReduceMax(S or Sub(S, Z), axes = [1], keepdims = 0)
  const Node* max = g.Producer(concat.inputs[0], "ReduceMax", 1);
  if (!max || !HasInts(*max, {{"axes", {1}}, {"keepdims", {0}}})) return {};
  std::string_view z;
  if (max->inputs[0] != s) {
    const Node* shifted = g.Producer(max->inputs[0], "Sub", 2);
    if (!shifted || shifted->inputs[0] != s) return {};
    z = shifted->inputs[1];
  }
  std::vector<std::string_view> inputs = {s, where->inputs[0], scores->inputs[1], bias, where->inputs[2], div->inputs[1]};
  if (!z.empty()) inputs.push_back(z);
  return inputs;
}

std::string PoolNode(const Node& concat, const std::vector<std::string_view>& inputs) {
  std::string out;
  for (std::string_view i : inputs) PutBytes(out, 1, i);
  PutBytes(out, 2, concat.outputs[0]);
  PutBytes(out, 3, concat.name);
  onnx_proto::PutSentioOp(out, kOpType);
  return out;
}

}  // namespace

std::string FusePooling(const std::string& model, int* fused) {
  *fused = 0;
  const std::vector<Field> top = Fields(model);
  const std::vector<Field> fields = onnx_proto::GraphFields(top);
  const std::set<std::string_view> constants = onnx_proto::Constants(fields);
  const std::set<std::string_view> graph_outputs = onnx_proto::Outputs(fields);
  std::vector<Node> nodes;
  for (const Field& g : fields) {
    if (g.number != 1 || g.wire != 2) continue;
    nodes.push_back(ParseNode(g.bytes));
    for (const Field& a : nodes.back().attributes) {
      for (const Field& f : Fields(a.bytes)) {
        if (f.number == 6 || f.number == 11) return model;  // a subgraph: names this walk cannot follow
      }
    }
  }
  Graph graph(std::move(nodes));
  std::map<size_t, std::vector<std::string_view>> pooled;  // Concat's index -> the MaskedPool node's inputs
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    std::vector<std::string_view> inputs = MatchPooling(graph, graph.nodes()[i], constants);
    if (!inputs.empty()) pooled[i] = std::move(inputs);
  }
  if (pooled.empty()) return model;
  // The MaskedPool nodes' inputs replace the Concats'; then nodes whose outputs nothing reads go.
  std::vector<std::vector<std::string_view>> reads(graph.nodes().size());
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    auto it = pooled.find(i);
    reads[i] = it != pooled.end() ? it->second : graph.nodes()[i].inputs;
  }
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string_view> used(graph_outputs);
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      if (!graph.nodes()[i].removed) used.insert(reads[i].begin(), reads[i].end());
    }
    for (Node& n : graph.nodes()) {
      if (n.removed) continue;
      const bool live = std::any_of(n.outputs.begin(), n.outputs.end(), [&](std::string_view o) { return !o.empty() && used.count(o); });
      if (!live) {
        n.removed = true;
        changed = true;
      }
    }
  }
  std::string out;
  size_t index = 0;
  for (const Field& g : fields) {
    if (g.number == 1 && g.wire == 2) {
      const size_t i = index++;
      if (graph.nodes()[i].removed) continue;
      auto it = pooled.find(i);
      if (it != pooled.end()) {
        PutBytes(out, 1, PoolNode(graph.nodes()[i], it->second));
        ++*fused;
        continue;
      }
    }
    out.append(g.raw);
  }
  return onnx_proto::WithGraph(top, out);
}

const OrtCustomOp* MaskedPoolOp() {
  static MaskedPoolOperator* op = new MaskedPoolOperator();
  return op;
}

}  // namespace sentio
