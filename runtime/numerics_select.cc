#include "runtime/numerics_select.h"

#include "base/error.h"
#include "golden/quantize.h"
#include "golden/weight_names.h"
#include "golden/weights_quantized.h"

namespace n3 {

std::unique_ptr<Kernels> make_kernels(const std::string& numerics, const HwConfig& hw) {
  if (numerics == "reference") return make_reference_kernels();
  if (numerics == "npu") return make_npu_kernels(hw.numerics.formats);
  throw Error("--numerics must be 'npu' or 'reference' (is '" + numerics + "')");
}

std::shared_ptr<const WeightSource> open_weights_for(const std::string& path, const std::string& numerics) {
  std::shared_ptr<const WeightSource> w = open_weights(path);
  return numerics == "npu" ? quantize_on_load(std::move(w)) : w;
}

std::shared_ptr<const WeightSource> open_weights_for(const std::string& path, const std::string& numerics,
                                                     const HwConfig& hw) {
  if (numerics != "npu") return open_weights_for(path, numerics);
  const num::Formats f = hw.numerics.formats;
  require(f.weight_scale != num::WScale::TwoLevel,
          hw.path + ": numerics.weight_scale = two_level: the golden model reads per_row or per_group INT4 "
                    "weights only (two-level scales exist in the numerics core, not in .n3w files)");
  const int64_t group = f.weight_scale == num::WScale::PerGroup ? f.weight_group : 0;
  std::shared_ptr<const WeightSource> w = quantize_on_load(open_weights(path), group);
  for (const WeightSpec& s : weight_specs(w->config())) {
    if (s.kind != WeightKind::Matrix) continue;
    const MatrixRef m = w->matrix(s.name);
    if (m.dtype != WDType::INT4) continue;
    const int64_t want = effective_group(group, m.cols);
    require(m.group == want, path + ": " + s.name + " has INT4 scales per " + std::to_string(m.group) +
                                 " inputs, but " + hw.path + " says numerics.weight_scale = " +
                                 num::wscale_name(f.weight_scale) + " (" + std::to_string(want) +
                                 "); convert with the matching --group");
  }
  return w;
}

}  // namespace n3
