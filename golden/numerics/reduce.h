// Fixed-shape float32 reductions: every float sum, sum of squares, max and
// small float dot product of the NPU follows this one order, which a CUDA
// warp (one lane per stride, then __shfl_down by 16, 8, 4, 2, 1) and a
// hardware unit (32 interleaved accumulators behind a pipelined adder, then
// a 5-level adder tree) both follow at speed:
//   lane j (0..31) starts at the identity (+0 for sums, -inf for max) and
//   folds in elements j, j+32, j+64, ... in increasing order: a = op(a, x_i);
//   then for off = 16, 8, 4, 2, 1: lane[j] = op(lane[j], lane[j + off]), j < off;
//   the result is lane[0].
// op(a, b) is a + b (one float32 rounding) or nmax(a, b) below. A term that
// is computed first (x_i * x_i, (x_i - m) * (x_i - m), a_i * b_i) is rounded
// to float32 before it is added. docs/numerics.md, "Reductions".
#pragma once
#include <cstdint>

#include "golden/numerics/common.h"

namespace n3::num {

constexpr int kLanes = 32;

// NaN-propagating max (the canonical NaN), ties keep the first operand.
N3_HD inline float nmax(float a, float b) {
  if (is_nan(a) || is_nan(b)) return nan_f();
  return b > a ? b : a;
}

struct SumOp {
  N3_HD static float identity() { return 0.0f; }
  N3_HD static float apply(float a, float b) { return a + b; }
};
struct MaxOp {
  N3_HD static float identity() { return inf_f(true); }
  N3_HD static float apply(float a, float b) { return nmax(a, b); }
};

// Reduces get(0..n) with Op in the lane-tree order.
template <class Op, class Get>
N3_HD inline float lane_tree(int64_t n, Get get) {
  float lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = Op::identity();
  for (int64_t i = 0; i < n; ++i) {
    const int j = static_cast<int>(i % kLanes);
    lane[j] = Op::apply(lane[j], get(i));
  }
  for (int off = kLanes / 2; off >= 1; off /= 2)
    for (int j = 0; j < off; ++j) lane[j] = Op::apply(lane[j], lane[j + off]);
  return canon(lane[0]);
}

N3_HD inline float tree_sum(const float* x, int64_t n) {
  return lane_tree<SumOp>(n, [x](int64_t i) { return x[i]; });
}
N3_HD inline float tree_max(const float* x, int64_t n) {
  return lane_tree<MaxOp>(n, [x](int64_t i) { return x[i]; });
}
N3_HD inline float tree_sumsq(const float* x, int64_t n) {
  return lane_tree<SumOp>(n, [x](int64_t i) { return x[i] * x[i]; });
}
// sum (x_i - m)^2, the second pass of a two-pass variance.
N3_HD inline float tree_sumsq_dev(const float* x, int64_t n, float m) {
  return lane_tree<SumOp>(n, [x, m](int64_t i) {
    const float d = x[i] - m;
    return d * d;
  });
}
// Float dot product for the few small float matrices (AltUp coefficients).
N3_HD inline float tree_dot(const float* a, const float* b, int64_t n) {
  return lane_tree<SumOp>(n, [a, b](int64_t i) { return a[i] * b[i]; });
}

}  // namespace n3::num
