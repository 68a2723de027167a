// The n3 weights file (.n3w): INT4 weights with scales and the float tensors
// the model keeps, the model config in its header; versioned, checksummed,
// memory-mappable. Layout: docs/weights.md.
#pragma once
#include <memory>
#include <string>

#include "golden/weights.h"

namespace n3 {

std::unique_ptr<WeightSource> open_n3w(const std::string& path);

}  // namespace n3
