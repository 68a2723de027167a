// ULP measurement shared by the SFU tests and the exhaustive sweep benchmark:
// long double references (x87 80-bit, 64-bit significand: an error of
// 2^-40 ULP of float32 at most) and a sweep over evenly spaced float32 bit
// patterns of a range, OpenMP-parallel with an order-independent max.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "golden/numerics/common.h"

namespace n3::num {

constexpr float kFltMax = 3.40282347e38f;
constexpr float kFltMinSub = 1.40129846e-45f;

// |y - ref| in ULPs of float32 at ref (the ULP of ref's binade; 2^-149 below
// 2^-126). A NaN or infinite ref must be matched exactly (0 or 1e9). A
// finite ref beyond float's range is matched by the infinity it rounds to.
inline double ulp_error(float y, long double ref) {
  if (std::isnan(ref)) return std::isnan(y) ? 0.0 : 1e9;
  const long double big = std::ldexp(1.0L, 128) * (1.0L - std::ldexp(1.0L, -25));
  if (std::isinf(ref) || std::fabs(ref) >= big) {
    if (std::isinf(y) && (y > 0) == (ref > 0)) return 0.0;
    if (std::isinf(ref)) return 1e9;
  }
  if (std::isnan(y) || std::isinf(y)) return 1e9;
  int e = -126;
  if (ref != 0) {
    std::frexp(ref, &e);
    e -= 1;
    if (e < -126) e = -126;
  }
  return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / std::ldexp(1.0L, e - 23));
}

inline long double ref_exp(long double x) { return std::exp(x); }
inline long double ref_tanh(long double x) { return std::tanh(x); }
// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)); the second form has no
// cancellation for x < 0, so the reference is accurate there too.
inline long double ref_gelu(long double x) {
  const long double u = std::sqrt(2.0L / 3.141592653589793238462643383279502884L) * (x + 0.044715L * x * x * x);
  return x / (1.0L + std::exp(-2.0L * u));
}
inline long double ref_sin(long double x) { return std::sin(x); }
inline long double ref_cos(long double x) { return std::cos(x); }
inline long double ref_recip(long double x) { return 1.0L / x; }
inline long double ref_sqrt(long double x) { return std::sqrt(x); }
inline long double ref_rsqrt(long double x) { return 1.0L / std::sqrt(x); }

// Double references for the exhaustive sweep (3-5x faster): glibc's double
// exp/tanh/sin/cos/sqrt are within 1 ULP of double, 2^-29 ULP of float32;
// the GELU reference's exp argument has relative error < 2^-50 * |2u| with
// |2u| < 2^7 where the result is not 0 or x. Good to 2^-20 ULP of float32.
inline long double refd_exp(long double x) { return std::exp(static_cast<double>(x)); }
inline long double refd_tanh(long double x) { return std::tanh(static_cast<double>(x)); }
inline long double refd_gelu(long double xl) {
  const double x = static_cast<double>(xl);
  const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));
}
inline long double refd_sin(long double x) { return std::sin(static_cast<double>(x)); }
inline long double refd_cos(long double x) { return std::cos(static_cast<double>(x)); }
inline long double refd_recip(long double x) { return 1.0 / static_cast<double>(x); }
inline long double refd_sqrt(long double x) { return std::sqrt(static_cast<double>(x)); }
inline long double refd_rsqrt(long double x) { return 1.0 / std::sqrt(static_cast<double>(x)); }

// Float32 <-> a monotone integer index (negative floats below positive).
inline int64_t float_index(float x) {
  const uint32_t u = f2u(x);
  return (u >> 31) ? -static_cast<int64_t>(u & 0x7fffffffu) : static_cast<int64_t>(u);
}
inline float index_float(int64_t i) {
  return i < 0 ? u2f(static_cast<uint32_t>(-i) | 0x80000000u) : u2f(static_cast<uint32_t>(i));
}

struct UlpStats {
  double max_ulp = 0;
  float worst_x = 0;
  uint64_t points = 0, over_half = 0, over_one = 0;
  double sum_ulp = 0;
};

inline void merge(UlpStats& a, const UlpStats& b) {
  if (b.max_ulp > a.max_ulp || (b.max_ulp == a.max_ulp && float_index(b.worst_x) < float_index(a.worst_x))) {
    a.max_ulp = b.max_ulp;
    a.worst_x = b.worst_x;
  }
  a.points += b.points;
  a.over_half += b.over_half;
  a.over_one += b.over_one;
  a.sum_ulp += b.sum_ulp;
}

// `points` inputs evenly spaced in index between lo and hi (all of them if
// the range holds fewer). The result does not depend on the thread count:
// max and counts are order-independent, ties go to the smallest input.
template <class F, class R>
UlpStats sweep_range(F f, R ref, float lo, float hi, uint64_t points) {
  const int64_t a = float_index(lo), b = float_index(hi);
  const uint64_t span = static_cast<uint64_t>(b - a) + 1;
  const uint64_t n = points < span ? points : span;
  UlpStats total;
#pragma omp parallel
  {
    UlpStats mine;
#pragma omp for schedule(static)
    for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) {
      const int64_t idx = a + static_cast<int64_t>(n == span ? k : (static_cast<long double>(k) * (span - 1)) / (n - 1));
      const float x = index_float(idx);
      const double e = ulp_error(f(x), ref(static_cast<long double>(x)));
      UlpStats one;
      one.max_ulp = e;
      one.worst_x = x;
      one.points = 1;
      one.over_half = e > 0.5 ? 1 : 0;
      one.over_one = e > 1.0 ? 1 : 0;
      one.sum_ulp = e;
      merge(mine, one);
    }
#pragma omp critical
    merge(total, mine);
  }
  return total;
}

}  // namespace n3::num
