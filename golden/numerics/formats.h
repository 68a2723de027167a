// Storage formats: float32 / bfloat16 / float16 values (held in float32 once
// loaded), their 16-bit encodings, and the symmetric INT8 vector format of the
// KV cache option. docs/numerics.md section "Storage formats".
#pragma once
#include <cstdint>

#include "golden/numerics/common.h"

namespace n3::num {

// A float storage format (L2 activations, attention scores, logits).
enum class Fmt : uint8_t { F32 = 0, BF16 = 1, F16 = 2 };

N3_HD inline FloatSpec spec_of(Fmt f) {
  return f == Fmt::BF16 ? spec_bf16() : f == Fmt::F16 ? spec_f16() : spec_f32();
}

// The value of x in format f: round-to-nearest-even, gradual underflow,
// overflow to +-infinity, NaN -> the canonical NaN, -0 stays -0. This is
// what every write to L2 does. Returned as the float32 holding that value.
N3_HD inline float round_to(Fmt f, float x) {
  if (!is_finite(x) || x == 0.0f) return canon(x);
  uint32_t sig;
  int exp;
  decompose(x, &sig, &exp);
  return round_pack(sign_bit(x), sig, exp, false, spec_of(f));
}

N3_HD inline void round_to(Fmt f, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_to(f, x[i]);
}

// 16-bit encodings. The *_bits functions take a value already in the format
// (e.g. from round_to) or round it first; *_value decode exactly.
N3_HD inline uint16_t bf16_bits(float x) {
  return static_cast<uint16_t>(f2u(round_to(Fmt::BF16, x)) >> 16);
}
N3_HD inline float bf16_value(uint16_t h) { return u2f(uint32_t(h) << 16); }

N3_HD inline uint16_t f16_bits(float x) {
  const float v = round_to(Fmt::F16, x);
  const uint32_t u = f2u(v);
  const uint16_t s = static_cast<uint16_t>((u >> 16) & 0x8000u);
  if (is_nan(v)) return 0x7e00u;
  if (!is_finite(v)) return s | 0x7c00u;
  if (v == 0.0f) return s;
  uint32_t sig;
  int exp;
  const int e = decompose(v, &sig, &exp);
  if (e < -14) return s | static_cast<uint16_t>(sig >> (-24 - exp));  // subnormal: v / 2^-24
  return s | static_cast<uint16_t>((e + 15) << 10 | ((sig >> 13) & 0x3ffu));
}
N3_HD inline float f16_value(uint16_t h) {
  const bool neg = (h & 0x8000u) != 0;
  const int be = (h >> 10) & 0x1f;
  const uint32_t m = h & 0x3ffu;
  if (be == 31) return m ? nan_f() : inf_f(neg);
  if (be == 0) return make_f32(neg, m, -24);
  return make_f32(neg, m | 0x400u, be - 25);
}

// Symmetric INT8 vector (KV cache option, one per token and KV head):
//   scale = max|x| / 127 (float32 division, RNE),
//   q_i = clamp(RNE(x_i / scale), -127, 127) (float32 division, then RNE to
//   an integer); an all-zero vector (or one so small that scale rounds to
//   0) has scale 0 and q = 0. A vector holding
//   NaN or infinity gets scale = NaN and q = 0: every dot product it enters
//   is NaN. Value of element i: q_i * scale.
N3_HD inline int rne_to_int(float v) {  // |v| < 2^30
  if (v == 0.0f) return 0;
  uint32_t sig;
  int exp;
  decompose(v, &sig, &exp);
  const int64_t q = shift_rne(static_cast<int64_t>(sig), exp);
  return static_cast<int>(sign_bit(v) ? -q : q);
}

// The quantiser in three pieces, so a parallel unit (the CUDA append: a
// thread an element, max|x| as an orderless reduction) computes the same
// bits as the serial loop below from the same definitions.
// Scale from amax = max|x_i| over the finite vector (bad: some x_i is NaN or
// infinite): NaN for a bad vector, else max|x| / 127 (0 for a zero vector,
// or where the quotient underflows to 0).
N3_HD inline float int8_scale(float amax, bool bad) {
  if (bad) return nan_f();
  if (amax == 0.0f) return 0.0f;
  return div_rn(amax, 127.0f);
}
// Code of x under the vector's scale s: 0 unless s > 0 (a zero, underflowed
// or bad vector stores zeros), else clamp(RNE(x / s), -127, 127).
N3_HD inline int8_t int8_code(float x, float s) {
  if (!(s > 0.0f)) return 0;
  const int v = rne_to_int(div_rn(x, s));  // |x / s| <= 127 * (1 + 2^-23)
  return static_cast<int8_t>(v > 127 ? 127 : v < -127 ? -127 : v);
}
// The stored value q * s (one float32 product), canonical NaN for a bad
// vector (0 * NaN gives another NaN pattern on CUDA than on x86).
N3_HD inline float int8_value(int8_t q, float s) { return canon(float(q) * s); }

// Quantises x[0..n) into q, returns the scale.
N3_HD inline float int8_quantize(const float* x, int64_t n, int8_t* q) {
  float amax = 0.0f;
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    if (!is_finite(x[i])) bad = true;
    const float a = abs_f(x[i]);
    if (a > amax) amax = a;
  }
  const float s = int8_scale(amax, bad);
  for (int64_t i = 0; i < n; ++i) q[i] = int8_code(x[i], s);
  return s;
}

}  // namespace n3::num
