// The golden model as a Device backend: runs on the host CPU, no simulated time.
#pragma once
#include <memory>

#include "runtime/device.h"

namespace n3 {

std::unique_ptr<Device> make_golden_device(const DeviceOptions& opt);

}  // namespace n3
