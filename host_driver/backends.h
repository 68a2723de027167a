// Opens a Device by backend name. The registry lives on the driver floor
// (docs/architecture.md): it is the one place that knows every backend,
// the runtime's (golden, func, systemc) and the CUDA path's above it.
#pragma once
#include <memory>
#include <string>

#include "runtime/device.h"

namespace n3 {

// backend: golden | func | systemc | cuda. Throws n3::Error for a backend
// that is not built or not available on this machine, naming why.
std::unique_ptr<Device> open_device(const std::string& backend, const DeviceOptions& opt);

}  // namespace n3
