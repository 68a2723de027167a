// The numerics core's building blocks: the host/device qualifier, float bit
// access, 64x64->128-bit products, and round_pack(), the one function that
// turns an exact value (integer significand x 2^exp, plus a sticky bit) into a
// float of a given format with round-to-nearest-even. Every rounding the core
// does that is not a plain float32 operation goes through round_pack().
// docs/numerics.md is the specification; this is its implementation.
//
// Rules for every file in golden/numerics/: header-only; no libm, no long
// double, no double except where a comment says why; only IEEE float32 + - *
// / and integer operations in a written order; compiled with
// -ffp-contract=off (g++) and -fmad=false (nvcc) so no FMA is formed.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define N3_HD __host__ __device__
#else
#define N3_HD
#endif

namespace n3::num {

// The numerics' version: bumped whenever any result of the core can change
// (a rounding, an order of reduction, a polynomial), so that dumps and
// reports made by different builds say whether they may be compared bit for
// bit. `n3 --version` prints it beside a hash of these headers.
constexpr int kNumericsVersion = 1;

// Every NaN the core produces or passes on is this quiet NaN, so dumps of
// different backends compare bit for bit (x86 and CUDA make different NaNs).
constexpr uint32_t kNaNBits = 0x7fc00000u;
constexpr uint32_t kInfBits = 0x7f800000u;

N3_HD inline uint32_t f2u(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

N3_HD inline float u2f(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

N3_HD inline float nan_f() { return u2f(kNaNBits); }
N3_HD inline float inf_f(bool neg) { return u2f(kInfBits | (neg ? 0x80000000u : 0u)); }
N3_HD inline bool is_nan(float x) { return (f2u(x) & 0x7fffffffu) > kInfBits; }
N3_HD inline bool is_finite(float x) { return (f2u(x) & kInfBits) != kInfBits; }
N3_HD inline float abs_f(float x) { return u2f(f2u(x) & 0x7fffffffu); }
N3_HD inline bool sign_bit(float x) { return (f2u(x) >> 31) != 0; }
N3_HD inline float with_sign(float mag, bool neg) {
  return u2f((f2u(mag) & 0x7fffffffu) | (neg ? 0x80000000u : 0u));
}
// NaN -> kNaNBits; everything else unchanged.
N3_HD inline float canon(float x) { return is_nan(x) ? nan_f() : x; }

// Correctly rounded a / b (IEEE division; __fdiv_rn is the same on CUDA and
// does not depend on -prec-div).
N3_HD inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Number of leading zero bits of a non-zero 64-bit value.
N3_HD inline int clz64(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// Full 128-bit product of two 64-bit values, portable (no __int128).
N3_HD inline void mul_64x64(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
  const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *lo = (mid << 32) | (p00 & 0xffffffffu);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// A float storage format as round_pack sees it: precision p (significand
// bits including the hidden one) and the exponent range of normal numbers.
struct FloatSpec {
  int p, emin, emax;
};
// (Functions rather than constexpr objects: device code cannot read
// namespace-scope class objects.)
N3_HD inline FloatSpec spec_f32() { return FloatSpec{24, -126, 127}; }
N3_HD inline FloatSpec spec_bf16() { return FloatSpec{8, -126, 127}; }
N3_HD inline FloatSpec spec_f16() { return FloatSpec{11, -14, 15}; }

// Builds the float32 with value q * 2^lsb, q < 2^24, known to be exactly
// representable in float32 (normal or subnormal). q == 0 gives +0 / -0.
N3_HD inline float make_f32(bool neg, uint64_t q, int lsb) {
  const uint32_t s = neg ? 0x80000000u : 0u;
  if (q == 0) return u2f(s);
  int n = 64 - clz64(q);  // bit length
  int e = lsb + n - 1;    // exponent of the leading bit
  if (e < -126) {         // float32 subnormal: q * 2^lsb = bits * 2^-149
    return u2f(s | static_cast<uint32_t>(q << (lsb + 149)));
  }
  uint64_t sig = q << (24 - n);  // 24-bit significand
  return u2f(s | static_cast<uint32_t>(e + 127) << 23 | (static_cast<uint32_t>(sig) & 0x7fffffu));
}

// Rounds the exact value (-1)^neg * (sig + frac) * 2^exp, where 0 <= frac < 1
// and `sticky` says frac != 0, to format `f` with round-to-nearest, ties to
// even; gradual underflow; overflow gives infinity. The result, a value of
// format f, is returned as the float32 holding it. sig == 0 && !sticky: zero.
N3_HD inline float round_pack(bool neg, uint64_t sig, int exp, bool sticky, FloatSpec f) {
  if (sig == 0) {
    // Only a sticky remainder below 2^exp: far below any format's quantum in
    // every use of the core (callers normalise first); rounds to zero.
    return make_f32(neg, 0, 0);
  }
  // Normalise so the leading bit is bit 63; sticky stays below bit 0.
  const int lz = clz64(sig);
  sig <<= lz;
  exp -= lz;
  const int e = exp + 63;                       // exponent of the leading bit
  int lsb = (e < f.emin ? f.emin : e) - (f.p - 1);  // exponent of the result's last bit
  const int shift = lsb - exp;                  // >= 64 - p > 0
  uint64_t q, rem, half;
  bool rest_sticky = sticky;
  if (shift >= 64) {
    q = 0;
    if (shift == 64) {
      rem = sig;
      half = uint64_t(1) << 63;
    } else {  // value < half a quantum
      return make_f32(neg, 0, 0);
    }
  } else {
    q = sig >> shift;
    rem = sig & ((uint64_t(1) << shift) - 1);
    half = uint64_t(1) << (shift - 1);
  }
  if (rem > half || (rem == half && (rest_sticky || (q & 1)))) ++q;
  if (q >> f.p) {  // carried into a new bit
    q >>= 1;
    ++lsb;
  }
  if (q != 0 && lsb + (64 - clz64(q)) - 1 > f.emax) return inf_f(neg);
  return make_f32(neg, q, lsb);
}

// Same, for a 128-bit significand hi:lo.
N3_HD inline float round_pack128(bool neg, uint64_t hi, uint64_t lo, int exp, bool sticky, FloatSpec f) {
  if (hi == 0) return round_pack(neg, lo, exp, sticky, f);
  const int lz = clz64(hi);
  const uint64_t top = lz == 0 ? hi : (hi << lz) | (lo >> (64 - lz));
  const uint64_t dropped = lz == 0 ? lo : lo << lz;
  return round_pack(neg, top, exp + 64 - lz, sticky || dropped != 0, f);
}

// Decomposes a finite non-zero float: |x| = sig * 2^exp with sig in
// [2^23, 2^24) (subnormals normalised). Returns the exponent of the leading
// bit, exp + 23 (= floor(log2|x|)).
N3_HD inline int decompose(float x, uint32_t* sig, int* exp) {
  const uint32_t u = f2u(x) & 0x7fffffffu;
  const int be = static_cast<int>(u >> 23);
  uint32_t m = u & 0x7fffffu;
  int e;
  if (be == 0) {  // subnormal: m * 2^-149
    const int lz = clz64(m) - 40;  // leading zeros within 24 bits
    m <<= lz;
    e = -149 - lz;
  } else {
    m |= 0x800000u;
    e = be - 150;
  }
  *sig = m;
  *exp = e;
  return e + 23;
}

// x * 2^k for a float32 x and integer k, exact unless the result leaves the
// normal range (then rounded once, RNE). No libm ldexp.
N3_HD inline float scale2(float x, int k) {
  if (x == 0.0f || !is_finite(x)) return canon(x);
  uint32_t sig;
  int exp;
  decompose(x, &sig, &exp);
  return round_pack(sign_bit(x), sig, exp + k, false, spec_f32());
}

// Round-to-nearest-even shift of a signed integer by d bits: v * 2^d for
// d >= 0 (caller guarantees no overflow), RNE(v * 2^d) for d < 0.
N3_HD inline int64_t shift_rne(int64_t v, int d) {
  if (d >= 0) return static_cast<int64_t>(static_cast<uint64_t>(v) << d);
  const bool neg = v < 0;
  const uint64_t a = neg ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int s = -d;
  uint64_t q;
  if (s >= 64) {
    q = (s == 64 && a > (uint64_t(1) << 63)) ? 1 : 0;  // |v| < 2^63: only > half rounds up
  } else {
    q = a >> s;
    const uint64_t rem = a & ((uint64_t(1) << s) - 1), half = uint64_t(1) << (s - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  return neg ? -static_cast<int64_t>(q) : static_cast<int64_t>(q);
}

}  // namespace n3::num
