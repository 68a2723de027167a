// Picks the Kernels for --numerics: reference float32, or the NPU's
// bit-exact arithmetic with the formats of the hardware file.
#pragma once
#include <memory>
#include <string>

#include "golden/hw_config.h"
#include "golden/kernels.h"
#include "golden/weights.h"

namespace n3 {

std::unique_ptr<Kernels> make_kernels(const std::string& numerics, const HwConfig& hw);
// The weights as the numerics need them: float checkpoints are quantised to
// INT4 on load for the NPU (never converted silently in reference mode).
std::shared_ptr<const WeightSource> open_weights_for(const std::string& path, const std::string& numerics);
// The same for the golden model on hardware `hw`: float checkpoints are
// quantised with the hardware file's numerics.weight_scale, and INT4 weights
// whose scale layout differs from it are refused, naming the tensor (the
// hardware file decides the format; nothing runs in another one silently).
std::shared_ptr<const WeightSource> open_weights_for(const std::string& path, const std::string& numerics,
                                                     const HwConfig& hw);

}  // namespace n3
