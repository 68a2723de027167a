#include "host_driver/device.h"

#include "golden/error.h"
#include "host_driver/device_func.h"
#include "host_driver/device_golden.h"
#include "host_driver/device_systemc.h"
#ifdef N3_HAVE_CUDA
#include "gpu_reference/device_cuda.h"
#endif

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

std::unique_ptr<Device> open_device(const std::string& backend, const DeviceOptions& opt) {
  if (backend == "golden") return make_golden_device(opt);
  if (backend == "func") return make_func_device(opt);
  if (backend == "systemc") return make_systemc_device(opt);
  if (backend == "cuda") {
#ifdef N3_HAVE_CUDA
    return make_cuda_device(opt);
#else
    throw Error("backend 'cuda' is not available: n3 was built without CUDA (no nvcc when it was configured)");
#endif
  }
  throw Error("unknown backend '" + backend + "' (golden | func | systemc | cuda)");
}

}  // namespace n3
