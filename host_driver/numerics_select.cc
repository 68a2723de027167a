#include "host_driver/numerics_select.h"

#include "golden/error.h"
#include "golden/weights_quantized.h"

namespace n3 {

std::unique_ptr<Kernels> make_kernels(const std::string& numerics, const HwConfig& hw) {
  if (numerics == "reference") return make_reference_kernels();
  if (numerics == "npu") return make_npu_kernels(numerics_formats(hw));
  throw Error("--numerics must be 'npu' or 'reference' (is '" + numerics + "')");
}

std::shared_ptr<const WeightSource> open_weights_for(const std::string& path, const std::string& numerics) {
  std::shared_ptr<const WeightSource> w = open_weights(path);
  return numerics == "npu" ? quantize_on_load(std::move(w)) : w;
}

}  // namespace n3
