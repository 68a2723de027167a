// The CUDA reference path as a Device backend (runtime/device.h):
// `n3 run --backend cuda`, `n3 golden --backend cuda`. Built only where nvcc
// is found (N3_HAVE_CUDA); open_device("cuda") fails with one line when no
// usable GPU is present.
#pragma once
#include <memory>

#include "runtime/device.h"

namespace n3 {

std::unique_ptr<Device> make_cuda_device(const DeviceOptions& opt);

}  // namespace n3
