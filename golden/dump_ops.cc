#include "golden/dump_ops.h"

namespace n3 {

namespace {
const OpDef kOps[] = {
#define N3_X(id, name, scope, axis, always, what) {name, OpScope::scope, axis, always, what},
    N3_DUMP_OPS(N3_X)
#undef N3_X
};
}  // namespace

const OpDef& op_def(Op op) { return kOps[static_cast<int>(op)]; }

std::string tensor_name(Op op, int layer, bool decode) {
  const OpDef& d = op_def(op);
  std::string n;
  if (d.scope == OpScope::Layer) {
    n = "layers." + std::to_string(layer);
    if (*d.name) n += std::string(".") + d.name;
  } else {
    n = d.name;
  }
  return decode ? "decode_" + n : n;
}

}  // namespace n3
