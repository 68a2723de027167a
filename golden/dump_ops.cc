#include "golden/dump_ops.h"

namespace n3 {

namespace {

constexpr char kLayerPrefix[] = "layers.", kDecodePrefix[] = "decode_";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

const OpDef kOps[] = {
#define N3_X(id, name, scope, axis, always, what) {name, OpScope::scope, axis, always, what},
    N3_DUMP_OPS(N3_X)
#undef N3_X
};
}  // namespace

const OpDef& op_def(Op op) { return kOps[static_cast<int>(op)]; }

const char* manifest_op(Op op) { return *op_def(op).name ? op_def(op).name : "layer_out"; }

std::string tensor_name(Op op, int layer, bool decode) {
  const OpDef& d = op_def(op);
  std::string n;
  if (d.scope == OpScope::Layer) {
    n = kLayerPrefix + std::to_string(layer);
    if (*d.name) n += std::string(".") + d.name;
  } else {
    n = d.name;
  }
  return decode ? kDecodePrefix + n : n;
}

std::optional<TensorId> parse_tensor_name(const std::string& name) {
  TensorId id{Op::kCount, -1, starts_with(name, kDecodePrefix)};
  std::string op = id.decode ? name.substr(sizeof kDecodePrefix - 1) : name;
  if (starts_with(op, kLayerPrefix)) {
    size_t i = sizeof kLayerPrefix - 1, end = i;
    while (end < op.size() && op[end] >= '0' && op[end] <= '9') ++end;
    if (end == i || end - i > 9) return std::nullopt;  // no layer number, or not an int
    id.layer = std::stoi(op.substr(i, end - i));
    if (end == op.size()) op.clear();                                   // the layer output
    else if (op[end] == '.' && end + 1 < op.size()) op = op.substr(end + 1);
    else return std::nullopt;
  }
  for (int i = 0; i < int(Op::kCount); ++i) {
    const OpDef& d = op_def(Op(i));
    if ((d.scope == OpScope::Layer) == (id.layer >= 0) && op == d.name) {
      id.op = Op(i);
      return id;
    }
  }
  return std::nullopt;
}

}  // namespace n3
