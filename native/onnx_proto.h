// Just enough protobuf to walk an ONNX ModelProto -> GraphProto -> NodeProto and write fields back, for
// the in-memory rewrites of the model (packed_gru_op.h, masked_pool_op.h). Field numbers are ONNX's
// (onnx.proto): ModelProto 7 graph, 8 opset_import; GraphProto 1 node, 5 initializer, 11 input,
// 12 output; NodeProto 1 input, 2 output, 3 name, 4 op_type, 5 attribute, 7 domain.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sentio::onnx_proto {

// The domain of Sentio's own operators (sentio_ops.h), which the rewrites import.
inline constexpr const char* kSentioDomain = "ai.sentio";

struct Field {
  uint32_t number;
  uint32_t wire;
  uint64_t varint;        // wire type 0
  std::string_view raw;   // the whole field, key included
  std::string_view bytes; // wire type 2: the payload
};

// The varint at `at`, which it moves past. Throws std::runtime_error when truncated.
uint64_t ReadVarint(std::string_view data, size_t& at);

// The fields of one message, in order. Throws std::runtime_error on bytes protobuf would refuse.
std::vector<Field> Fields(std::string_view data);

void PutVarint(std::string& out, uint64_t value);
void PutBytes(std::string& out, uint32_t number, std::string_view bytes);

// NodeProto's op_type and domain fields for Sentio's operator `op_type`.
void PutSentioOp(std::string& out, std::string_view op_type);

// The fields of ModelProto's graph. Throws when there is none, or when it is given twice (protobuf
// would merge the two; these walks do not).
std::vector<Field> GraphFields(const std::vector<Field>& model);

// Names of a GraphProto's initializers that are not also graph inputs (an input may override its
// initializer): the tensors a rewrite may treat as constant.
std::set<std::string_view> Constants(const std::vector<Field>& graph);

// Names of a GraphProto's outputs.
std::set<std::string_view> Outputs(const std::vector<Field>& graph);

// `model` with its graph replaced by `graph` and the ai.sentio opset (version 1) imported, once.
std::string WithGraph(const std::vector<Field>& model, std::string_view graph);

}  // namespace sentio::onnx_proto
