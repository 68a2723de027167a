#include "host_driver/backends.h"

#include "base/error.h"
#include "runtime/device_compiled.h"
#include "runtime/device_golden.h"
#include "runtime/device_systemc.h"
#ifdef N3_HAVE_CUDA
#include "gpu_reference/device_cuda.h"
#endif

namespace n3 {

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
