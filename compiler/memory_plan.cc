#include "compiler/memory_plan.h"

#include "base/error.h"

namespace n3::comp {

const Placed& Layout::at(const std::string& name) const {
  auto it = tensors.find(name);
  if (it != tensors.end()) return it->second;
  auto c = consts.find(name);
  require(c != consts.end(), "compiler: no tensor '" + name + "' in the memory plan");
  return c->second;
}

const Resident* Layout::resident_of(const std::string& name) const {
  for (const Resident& r : resident)
    if (r.name == name) return &r;
  return nullptr;
}

std::string rope_table_name(double theta) { return "rope_inv_freq." + std::to_string(theta); }

}  // namespace n3::comp
