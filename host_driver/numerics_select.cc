#include "host_driver/numerics_select.h"

#include "golden/error.h"

namespace n3 {

std::unique_ptr<Kernels> make_kernels(const std::string& numerics, const HwConfig& hw) {
  if (numerics == "reference") return make_reference_kernels();
  if (numerics == "npu")
    throw Error("--numerics npu: the NPU numerics core is not wired into the golden model yet (" + hw.path +
                "); use --numerics reference");
  throw Error("--numerics must be 'npu' or 'reference' (is '" + numerics + "')");
}

}  // namespace n3
