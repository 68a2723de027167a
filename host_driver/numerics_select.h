// Picks the Kernels for --numerics: reference float32, or the NPU's
// bit-exact arithmetic with the formats of the hardware file.
#pragma once
#include <memory>
#include <string>

#include "golden/hw_config.h"
#include "golden/kernels.h"

namespace n3 {

std::unique_ptr<Kernels> make_kernels(const std::string& numerics, const HwConfig& hw);

}  // namespace n3
