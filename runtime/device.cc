#include "runtime/device.h"

#include "base/error.h"

namespace n3 {

int64_t Device::kv_capacity() const { return hw().kv.cap_tokens.value; }

KvPolicy Device::kv_policy() const { return hw().kv.policy.value; }

int64_t Device::kv_sinks() const { return hw().kv.sink_tokens.value; }

}  // namespace n3
