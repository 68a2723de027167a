// The golden model's weight views (MatrixRef, golden/weights.h) on the
// numerics core's GEMV (golden/numerics/npu_ops.h). The core sits below the
// model (docs/architecture.md) and knows only its own Int4Matrix, so the
// conversion lives here, on the model's floor.
#pragma once
#include <cstdint>
#include <string>

#include "base/error.h"
#include "golden/numerics/npu_ops.h"
#include "golden/weights.h"

namespace n3::num {

// A view of an INT4 MatrixRef: one scale per row (group == cols) is PerRow,
// a smaller group is PerGroup (its group must be a multiple of the BFP
// block). MatrixRef cannot carry two-level scales; build an Int4Matrix.
inline Int4Matrix int4_view(const MatrixRef& m, const Formats& f) {
  require(m.dtype == WDType::INT4, std::string("NPU numerics need INT4 weights, got ") + wdtype_name(m.dtype) +
                                       " (convert the checkpoint with n3 convert)");
  Int4Matrix w;
  w.data = m.data;
  w.rows = m.rows;
  w.cols = m.cols;
  w.scales = m.scales;
  const int64_t g = m.group <= 0 ? m.cols : m.group;
  if (g >= m.cols) {
    w.mode = WScale::PerRow;
  } else {
    require(g % f.bfp_block == 0, "INT4 weight group " + std::to_string(g) +
                                      " is not a multiple of numerics.bfp_block " + std::to_string(f.bfp_block));
    w.mode = WScale::PerGroup;
    w.group = g;
  }
  return w;
}

inline void linear_npu(const MatrixRef& m, const float* x, int64_t T, float* y, const Formats& f, Fmt out) {
  linear_npu(int4_view(m, f), x, T, y, f, out);
}

}  // namespace n3::num
