#include "runtime/device.h"

#include "base/error.h"

namespace n3 {

int64_t Device::kv_capacity() const { return hw().integer("kv.cap_tokens"); }

KvPolicy Device::kv_policy() const {
  if (!hw().has("kv.policy")) return KvPolicy::Error;
  const std::string& p = hw().str("kv.policy");
  if (p == "error") return KvPolicy::Error;
  if (p == "evict") return KvPolicy::Evict;
  throw Error(hw().path + ": kv.policy must be 'error' or 'evict' (is '" + p + "')");
}

int64_t Device::kv_sinks() const { return hw().has("kv.sink_tokens") ? hw().integer("kv.sink_tokens") : 0; }

}  // namespace n3
