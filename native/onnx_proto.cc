#include "onnx_proto.h"

#include <stdexcept>

namespace sentio::onnx_proto {

uint64_t ReadVarint(std::string_view data, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= data.size()) throw std::runtime_error("model: truncated varint");
    const uint8_t byte = static_cast<uint8_t>(data[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
  throw std::runtime_error("model: varint too long");
}

std::vector<Field> Fields(std::string_view data) {
  std::vector<Field> fields;
  size_t at = 0;
  while (at < data.size()) {
    const size_t start = at;
    const uint64_t key = ReadVarint(data, at);
    // As protobuf: field numbers 1 to 2^29 - 1, so that no bytes protobuf would refuse get rewritten.
    if ((key >> 3) == 0 || (key >> 3) > (uint64_t{1} << 29) - 1) throw std::runtime_error("model: bad field number");
    Field f{static_cast<uint32_t>(key >> 3), static_cast<uint32_t>(key & 7), 0, {}, {}};
    switch (f.wire) {
      case 0: f.varint = ReadVarint(data, at); break;
      case 1: at += 8; break;
      case 5: at += 4; break;
      case 2: {
        const uint64_t length = ReadVarint(data, at);
        if (length > data.size() - at) throw std::runtime_error("model: truncated field");
        f.bytes = data.substr(at, length);
        at += length;
        break;
      }
      default: throw std::runtime_error("model: unsupported wire type");
    }
    if (at > data.size()) throw std::runtime_error("model: truncated field");
    f.raw = data.substr(start, at - start);
    fields.push_back(f);
  }
  return fields;
}

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void PutBytes(std::string& out, uint32_t number, std::string_view bytes) {
  PutVarint(out, (static_cast<uint64_t>(number) << 3) | 2);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

void PutSentioOp(std::string& out, std::string_view op_type) {
  PutBytes(out, 4, op_type);
  PutBytes(out, 7, kSentioDomain);
}

std::vector<Field> GraphFields(const std::vector<Field>& model) {
  const Field* graph = nullptr;
  for (const Field& f : model) {
    if (f.number != 7 || f.wire != 2) continue;
    if (graph) throw std::runtime_error("model: graph given twice");
    graph = &f;
  }
  if (!graph) throw std::runtime_error("model: no graph");
  return Fields(graph->bytes);
}

std::set<std::string_view> Constants(const std::vector<Field>& graph) {
  // GraphProto: 5 initializer (TensorProto, name 8), 11 input (ValueInfoProto, name 1)
  std::set<std::string_view> constants, inputs;
  for (const Field& g : graph) {
    if ((g.number != 5 && g.number != 11) || g.wire != 2) continue;
    for (const Field& t : Fields(g.bytes)) {
      if (g.number == 5 && t.number == 8 && t.wire == 2) constants.insert(t.bytes);
      if (g.number == 11 && t.number == 1 && t.wire == 2) inputs.insert(t.bytes);
    }
  }
  for (std::string_view name : inputs) constants.erase(name);
  return constants;
}

std::set<std::string_view> Outputs(const std::vector<Field>& graph) {
  std::set<std::string_view> outputs;  // GraphProto: 12 output (ValueInfoProto, name 1)
  for (const Field& g : graph) {
    if (g.number != 12 || g.wire != 2) continue;
    for (const Field& t : Fields(g.bytes)) {
      if (t.number == 1 && t.wire == 2) outputs.insert(t.bytes);
    }
  }
  return outputs;
}

std::string WithGraph(const std::vector<Field>& model, std::string_view graph) {
  std::string out;
  out.reserve(graph.size() + 1024);
  bool imported = false;
  for (const Field& f : model) {
    if (f.number == 7 && f.wire == 2) {
      PutBytes(out, 7, graph);
      continue;
    }
    if (f.number == 8 && f.wire == 2) {  // OperatorSetIdProto: 1 domain, 2 version
      for (const Field& o : Fields(f.bytes)) {
        if (o.number == 1 && o.wire == 2 && o.bytes == kSentioDomain) imported = true;
      }
    }
    out.append(f.raw);
  }
  if (!imported) {
    std::string opset;
    PutBytes(opset, 1, kSentioDomain);
    PutVarint(opset, (2 << 3) | 0);
    PutVarint(opset, 1);
    PutBytes(out, 8, opset);
  }
  return out;
}

}  // namespace sentio::onnx_proto
