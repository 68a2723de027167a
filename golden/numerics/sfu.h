// The SFU: exp, tanh, GELU (tanh form), reciprocal, square root and reciprocal
// square root in float32, each a fixed sequence of IEEE float32 operations
// (no FMA) and integer operations. sin and cos are in sfu_trig.h.
// docs/numerics.md, "SFU" gives ranges, algorithms and measured errors; the
// polynomial coefficients come from fit_sfu_coeffs.cc.
//
// recip, sqrt and rsqrt are correctly rounded (RNE). exp, tanh, gelu_tanh,
// sin, cos are within 2 ULP of the exact function (measured, see the doc).
// Every NaN result is the canonical NaN.
#pragma once
#include <cstdint>

#include "golden/numerics/common.h"
#include "golden/numerics/formats.h"

namespace n3::num {

// ---- float32 building blocks -------------------------------------------

// div_rn (correctly rounded a / b) is common.h's.

// Error-free transformations (Knuth TwoSum, Veltkamp/Dekker TwoProduct);
// valid while no intermediate overflows (|a|, |b| < 2^100 here).
N3_HD inline void two_sum(float a, float b, float* s, float* e) {
  const float x = a + b;
  const float bb = x - a;
  *s = x;
  *e = (a - (x - bb)) + (b - bb);
}
N3_HD inline void split(float a, float* hi, float* lo) {
  const float c = 4097.0f * a;  // 2^12 + 1
  const float h = c - (c - a);
  *hi = h;
  *lo = a - h;
}
N3_HD inline void two_prod(float a, float b, float* p, float* e) {
  float ah, al, bh, bl;
  split(a, &ah, &al);
  split(b, &bh, &bl);
  const float x = a * b;
  *p = x;
  *e = ((ah * bh - x) + ah * bl + al * bh) + al * bl;
}

// ---- reciprocal, square root, reciprocal square root --------------------

// 1/x, correctly rounded; 1/+-0 = +-inf, 1/+-inf = +-0.
N3_HD inline float recip(float x) { return canon(div_rn(1.0f, x)); }

// sqrt(x), correctly rounded, by the integer digit recurrence:
// x = sig * 2^e with e even (sig in [2^23, 2^25)), S = floor(sqrt(sig * 2^26)),
// result = RNE(S * 2^((e - 26) / 2)), sticky = (S^2 != sig * 2^26).
N3_HD inline float sqrt_rn(float x) {
  if (is_nan(x) || (sign_bit(x) && x != 0.0f)) return nan_f();
  if (x == 0.0f || !is_finite(x)) return x;
  uint32_t sig;
  int exp;
  decompose(x, &sig, &exp);
  uint64_t m = sig;
  if (exp & 1) {
    m <<= 1;
    exp -= 1;
  }
  const uint64_t big = m << 26;  // [2^49, 2^51)
  uint64_t s = 0;
  for (int b = 25; b >= 0; --b) {
    const uint64_t t = s | (uint64_t(1) << b);
    if (t * t <= big) s = t;
  }
  return round_pack(false, s, (exp - 26) / 2, s * s != big, spec_f32());
}

// 1/sqrt(x), correctly rounded: x = sig * 2^e, e even; Y = the largest
// integer with Y^2 * sig <= 2^74 (26 bits, digit recurrence with exact 128-bit
// products), result = RNE(Y * 2^(-37 - e/2)), sticky = (Y^2 * sig != 2^74).
// rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0, negative -> NaN.
N3_HD inline float rsqrt_rn(float x) {
  if (is_nan(x) || (sign_bit(x) && x != 0.0f)) return nan_f();
  if (x == 0.0f) return inf_f(sign_bit(x));
  if (!is_finite(x)) return 0.0f;
  uint32_t sig;
  int exp;
  decompose(x, &sig, &exp);
  uint64_t m = sig;
  if (exp & 1) {
    m <<= 1;
    exp -= 1;
  }
  uint64_t y = 0, hi = 0, lo = 0;
  for (int b = 25; b >= 0; --b) {
    const uint64_t t = y | (uint64_t(1) << b);
    mul_64x64(t * t, m, &hi, &lo);
    if (hi < (uint64_t(1) << 10) || (hi == (uint64_t(1) << 10) && lo == 0)) y = t;
  }
  mul_64x64(y * y, m, &hi, &lo);
  const bool exact = hi == (uint64_t(1) << 10) && lo == 0;
  return round_pack(false, y, -37 - exp / 2, !exact, spec_f32());
}

// ---- exp -------------------------------------------------------------------

// ln2 split for Cody-Waite: kLn2Hi has 16 significant bits, so n * kLn2Hi is
// exact for |n| <= 2^8; kLn2Lo = RNE(ln2 - kLn2Hi).
constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kLn2Hi = 0x1.62e4p-1f;
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
// exp(x) overflows above this (the largest float with exp(x) < 2^128 rounded)
// and is below half the smallest subnormal under kExpUnder.
constexpr float kExpOver = 0x1.62e42ep+6f;    // 88.7228391
constexpr float kExpUnder = -0x1.9fe368p+6f;  // -103.972084

// exp(hi + lo) for a double-float argument (lo = 0 for plain exp) as
// (1 + q) * 2^n, q returned unrounded-into-1 so callers can keep its bits:
//   n = RNE_int(hi * kLog2e)                 (float32 product, then to integer)
//   r = ((hi - n*kLn2Hi) - n*kLn2Lo) + lo    (left to right, each op rounded)
//   p = E(r) by Horner: c5, then p = p*r + c_k for k = 4..0
//   q = r + (r*r)*p
// Valid for |hi| <= 200 (n * kLn2Hi exact).
N3_HD inline float exp_q(float hi, float lo, int* n_out) {
  const int n = rne_to_int(hi * kLog2e);
  const float fn = static_cast<float>(n);
  const float r = ((hi - fn * kLn2Hi) - fn * kLn2Lo) + lo;
  float p = 0x1.a2cb46p-13f;
  p = p * r + 0x1.6d3074p-10f;
  p = p * r + 0x1.110fc8p-7f;
  p = p * r + 0x1.5555p-5f;
  p = p * r + 0x1.555556p-3f;
  p = p * r + 0x1p-1f;
  *n_out = n;
  return r + (r * r) * p;
}

// exp(hi + lo) = (1 + q) * 2^n: y = 1 + q rounded, then y * 2^n with one
// rounding (subnormals included).
N3_HD inline float exp_df(float hi, float lo) {
  if (is_nan(hi) || is_nan(lo)) return nan_f();
  if (hi > kExpOver) return inf_f(false);
  if (hi < kExpUnder) return 0.0f;
  int n;
  const float q = exp_q(hi, lo, &n);
  return scale2(1.0f + q, n);
}

// e^x, x in float32. Range: all floats; exp(x) = +inf above kExpOver, +0
// below kExpUnder; <= 2 ULP in between (subnormal results: see the doc).
N3_HD inline float exp_sfu(float x) { return exp_df(x, 0.0f); }

// x / (1 + exp(v + v')) for v <= 40, to ~0.6 ULP: the exponential is kept
// as (1 + q) 2^n and the sum and the division are done in double-float:
//   (q, n) = exp_q(v, v'); (d, e1) = 1 + 2^n exactly; (dh, e2) = d + q 2^n
//   exactly; dl = e1 + e2; y0 = x / dh (correctly rounded);
//   (p, p') = y0 * dh exactly; y = y0 + (((x - p) - p') - y0*dl) / dh.
N3_HD inline float div_one_plus_exp(float x, float v, float v2) {
  int n;
  const float q = exp_q(v, v2, &n);
  float d1, e1, dh, e2;
  two_sum(1.0f, scale2(1.0f, n), &d1, &e1);
  two_sum(d1, scale2(q, n), &dh, &e2);
  const float dl = e1 + e2;
  const float y0 = div_rn(x, dh);
  float p, pe;
  two_prod(y0, dh, &p, &pe);
  const float rem = ((x - p) - pe) - y0 * dl;
  return y0 + div_rn(rem, dh);
}

// ---- tanh ------------------------------------------------------------------

// |x| < 0.55: x + (x*t)*T(t), t = x*x, T by Horner (c6 .. c0);
// 0.55 <= |x| < 9: 1 - div_one_plus_exp(2, 2|x|, 0), sign of x;
// |x| >= 9: +-1 (1 - tanh(9) = 3.0e-8: within 0.52 ULP). tanh(-0) = -0.
N3_HD inline float tanh_sfu(float x) {
  if (is_nan(x)) return nan_f();
  if (x == 0.0f) return x;
  const float a = abs_f(x);
  if (a < 0.55f) {
    const float t = x * x;
    float p = -0x1.4aacc4p-8f;
    p = p * t + 0x1.e60a8ep-8f;
    p = p * t + -0x1.52ed4ap-7f;
    p = p * t + 0x1.6ac24cp-6f;
    p = p * t + -0x1.ba4e34p-5f;
    p = p * t + 0x1.11118cp-3f;
    p = p * t + -0x1.555556p-2f;
    return x + (x * t) * p;
  }
  float y = 1.0f;
  if (a < 9.0f) {
    y = 1.0f - div_one_plus_exp(2.0f, a + a, 0.0f);
  }
  return with_sign(y, sign_bit(x));
}

// ---- GELU, tanh approximation ----------------------------------------------

// gelu(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed
// in the cancellation-free form x / (1 + exp(-2u)) (0.5 (1 + tanh u) is
// sigmoid(2u)). -2u = K x (1 + c x^2) is formed in double-float (constants
// split hi + lo) so exp's argument is accurate to ~2^-44 relative, which
// the steep left tail (d ln gelu / dx ~ 2|u|) needs:
//   (s, s') = x*x exactly; (q, q') = c_hi*s exactly; q' += c_hi*s' + c_lo*s;
//   (w, w') = 1 + q exactly; w' += q';
//   (a, a') = K_hi*x exactly; a' += K_lo*x;
//   (v, v') = a*w exactly; v' += a*w' + a'*w;
//   v <= 40: y = div_one_plus_exp(x, v, v');
//   v > 40:  (q, n) = exp_q(-v, -v'); y = scale2(x + x*q, n).
// x > 10: x (gelu(10) rounds to 10); x < -20: -0 (gelu underflows below -11).
constexpr float kGeluCHi = 0x1.6e4e26p-5f;   // 0.044715 = kGeluCHi + kGeluCLo
constexpr float kGeluCLo = 0x1.a9003ep-30f;
constexpr float kGeluKHi = -0x1.988454p+0f;  // -2 sqrt(2/pi) = kGeluKHi + kGeluKLo
constexpr float kGeluKLo = 0x1.857936p-25f;

N3_HD inline float gelu_tanh_sfu(float x) {
  if (is_nan(x)) return nan_f();
  if (x == 0.0f) return x;
  if (x > 10.0f) return x;
  if (x < -20.0f) return with_sign(0.0f, true);
  float s, s2, q, q2, w, w2, a, a2, v, v2;
  two_prod(x, x, &s, &s2);
  two_prod(kGeluCHi, s, &q, &q2);
  q2 = q2 + (kGeluCHi * s2 + kGeluCLo * s);
  two_sum(1.0f, q, &w, &w2);
  w2 = w2 + q2;
  two_prod(kGeluKHi, x, &a, &a2);
  a2 = a2 + kGeluKLo * x;
  two_prod(a, w, &v, &v2);
  v2 = v2 + (a * w2 + a2 * w);
  if (v <= 40.0f) return canon(div_one_plus_exp(x, v, v2));
  // exp(v) > 2^57: 1 + exp(v) is exp(v) to 2^-57, and exp(v) may overflow
  // while the result is still normal: y = x exp(-v) = (x + x*q) 2^n.
  int n;
  const float eq = exp_q(-v, -v2, &n);
  return scale2(x + x * eq, n);
}

}  // namespace n3::num
