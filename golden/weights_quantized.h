// Float checkpoints in NPU numerics: every WeightKind::Matrix tensor is
// quantised to INT4 on load (the quantiser of golden/quantize.h, the same
// `n3 convert` uses, so a converted .n3w and a quantised-on-load checkpoint
// hold identical bits). FloatMatrix and Vector tensors pass through; a source
// that is already INT4 is returned as it is.
#pragma once
#include <memory>

#include "golden/weights.h"

namespace n3 {

std::shared_ptr<const WeightSource> quantize_on_load(std::shared_ptr<const WeightSource> src, int64_t group = 0);

}  // namespace n3
