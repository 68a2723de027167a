// sin and cos for every float32 input. RoPE needs angles up to
// max_positions * 1 = 32768 rad and more, where a float32 Cody-Waite
// reduction loses the low bits of x - k pi/2; this one is exact to 2^-70 of a
// quadrant for every float: an integer Payne-Hanek reduction.
//
// Reduction (|x| >= 0.78125): |x| = m 2^e (m 24-bit integer). With 2/pi =
// sum_j W_j 2^(-32(j+1)) (the 32-bit words below), words before
// j0 = (e >= 34 ? (e - 2) / 32 : 0) only add multiples of 4 quadrants, so
// P = m * (W_j0..W_j0+3 as a 128-bit integer) holds |x| 2/pi mod 4 with its
// binary point at bit s = 32 (j0 + 4) - e (94 < s <= 152) and an error below
// 2^(24 - s) <= 2^-70. k = the integer part, rounded to nearest by the first
// fraction bit; g = the signed fraction in [-1/2, 1/2) (128 bits); r = g pi/2
// with pi/2 as the 64-bit integer floor(pi/2 * 2^63), normalised to a
// 64-bit product, split into float32 r_hi = RNE(r) and r_lo = RNE(r - r_hi).
// |x| < 0.78125: k = 0, r_hi = x, r_lo = 0.
//
// Kernels on |r| <= pi/4 (t = r_hi^2 rounded; coefficients: fit_sfu_coeffs.cc):
//   sin_k = r_hi + (r_lo + ((r_hi*t)*S(t) - (r_lo*t)*0.5))
//   cos_k: (t, t') = r_hi^2 exactly; h = 0.5*t; w = 1 - h;
//          cos_k = w + (((1 - w) - h) + ((t*t)*C(t) - (0.5*t' + r_hi*r_lo)))
// sin(x) = sign(x) * [sin_k, cos_k, -sin_k, -cos_k][k mod 4] (r from |x|),
// cos(x) =          [cos_k, -sin_k, -cos_k, sin_k][k mod 4].
// sin(+-0) = +-0, cos(+-0) = 1, +-inf and NaN give NaN.
#pragma once
#include <cstdint>

#include "golden/numerics/common.h"
#include "golden/numerics/sfu.h"

namespace n3::num {

// Word j of 2/pi = sum_j W_j 2^(-32(j+1)) (computed with exact integer
// arithmetic; they match fdlibm's table). A function, not a namespace-scope
// array, so device code can read it without a __constant__ copy.
N3_HD inline uint32_t two_over_pi_word(int j) {
  const uint32_t w[8] = {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                         0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};
  return w[j];
}
constexpr uint64_t kPiOver2Q63 = 0xc90fdaa22168c234ull;  // floor(pi/2 * 2^63)

struct Reduced {
  int k;       // quadrant mod 4
  float hi, lo;
};

// Bits [p, p + 64) of the 192-bit number v[2]:v[1]:v[0]; bits outside it
// (p < 0 or p + 64 > 192) read as 0.
N3_HD inline uint64_t bits_at(const uint64_t v[3], int p) {
  if (p <= -64 || p >= 192) return 0;
  if (p < 0) return v[0] << -p;
  const int i = p >> 6, o = p & 63;
  uint64_t r = v[i] >> o;
  if (o != 0 && i + 1 < 3) r |= v[i + 1] << (64 - o);
  return r;
}

// Payne-Hanek reduction of |x| >= 0.78125 (finite).
N3_HD inline Reduced reduce_pio2(float ax) {
  uint32_t m;
  int e;
  decompose(ax, &m, &e);
  const int j0 = e >= 34 ? (e - 2) / 32 : 0;
  // P = m * window, window = 4 words = 128 bits, as 3 x 64-bit limbs.
  uint64_t p[3] = {0, 0, 0};
  uint64_t carry = 0;
  for (int i = 3; i >= 0; --i) {  // word j0 + i has weight 2^(32 (3 - i))
    const uint64_t prod = uint64_t(m) * two_over_pi_word(j0 + i) + carry;
    const int sh = 32 * (3 - i);
    p[sh >> 6] |= (prod & 0xffffffffu) << (sh & 63);
    carry = prod >> 32;
  }
  p[2] |= carry;  // bits 128..151
  const int s = 32 * (j0 + 4) - e;
  int k = static_cast<int>(bits_at(p, s) & 3);
  uint64_t fh = bits_at(p, s - 64), fl = bits_at(p, s - 128);  // fraction * 2^128
  bool neg = false;
  if (fh >> 63) {  // fraction >= 1/2: next quadrant, g = fraction - 1
    k = (k + 1) & 3;
    neg = true;
    fl = ~fl + 1;
    fh = ~fh + (fl == 0 ? 1 : 0);
  }
  Reduced red{k, 0.0f, 0.0f};
  if (fh == 0 && fl == 0) return red;
  // Normalise |g| to a 64-bit T (leading bit 63): |g| = T * 2^(-64 - lz).
  int lz;
  uint64_t t;
  if (fh != 0) {
    lz = clz64(fh);
    t = lz == 0 ? fh : (fh << lz) | (fl >> (64 - lz));
  } else {
    lz = 64 + clz64(fl);
    t = fl << (lz - 64);
  }
  uint64_t zh, zl;
  mul_64x64(t, kPiOver2Q63, &zh, &zl);  // r = zh:zl * 2^(-64 - lz - 63)
  const int zlz = clz64(zh);
  const uint64_t z = zlz == 0 ? zh : (zh << zlz) | (zl >> (64 - zlz));
  const int ez = -lz - 63 - zlz;  // r = z * 2^ez (truncated below)
  red.hi = round_pack(neg, z, ez, false, spec_f32());
  uint32_t hs;
  int he;
  decompose(red.hi, &hs, &he);
  const int64_t res = static_cast<int64_t>(z - (uint64_t(hs) << (he - ez)));  // mod 2^64, |res| < 2^41
  if (res != 0) {
    const bool rneg = (res < 0) != neg;
    red.lo = round_pack(rneg, res < 0 ? uint64_t(0) - uint64_t(res) : uint64_t(res), ez, false, spec_f32());
  }
  return red;
}

N3_HD inline float sin_kernel(float h, float l) {
  const float t = h * h;
  float p = -0x1.0d579p-20f;
  p = p * t + 0x1.140ddp-18f;
  p = p * t + -0x1.a16b28p-13f;
  p = p * t + 0x1.1111f8p-7f;
  p = p * t + -0x1.555556p-3f;
  return h + (l + ((h * t) * p - (l * t) * 0.5f));
}

N3_HD inline float cos_kernel(float h, float l) {
  float t, t2;
  two_prod(h, h, &t, &t2);
  float p = -0x1.045d32p-21f;
  p = p * t + 0x1.ae131ep-22f;
  p = p * t + 0x1.9ada34p-16f;
  p = p * t + -0x1.6c1328p-10f;
  p = p * t + 0x1.555554p-5f;
  const float hz = 0.5f * t;
  const float w = 1.0f - hz;
  return w + (((1.0f - w) - hz) + ((t * t) * p - (0.5f * t2 + h * l)));
}

N3_HD inline Reduced reduce_any(float x) {
  const float ax = abs_f(x);
  if (ax < 0.78125f) return Reduced{0, ax, 0.0f};
  return reduce_pio2(ax);
}

N3_HD inline float sin_sfu(float x) {
  if (!is_finite(x)) return nan_f();
  if (x == 0.0f) return x;
  const Reduced r = reduce_any(x);
  float y;
  switch (r.k) {
    case 0: y = sin_kernel(r.hi, r.lo); break;
    case 1: y = cos_kernel(r.hi, r.lo); break;
    case 2: y = -sin_kernel(r.hi, r.lo); break;
    default: y = -cos_kernel(r.hi, r.lo); break;
  }
  return sign_bit(x) ? -y : y;
}

N3_HD inline float cos_sfu(float x) {
  if (!is_finite(x)) return nan_f();
  const Reduced r = reduce_any(x);
  switch (r.k) {
    case 0: return cos_kernel(r.hi, r.lo);
    case 1: return -sin_kernel(r.hi, r.lo);
    case 2: return -cos_kernel(r.hi, r.lo);
    default: return sin_kernel(r.hi, r.lo);
  }
}

}  // namespace n3::num
