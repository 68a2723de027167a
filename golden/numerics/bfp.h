// Block floating point: how a float vector enters the MAC engines.
// Blocks of B consecutive elements share one exponent; each element becomes
// a signed integer mantissa of M bits (sign included) in [-(2^(M-1)-1),
// 2^(M-1)-1]. For a block whose largest |x| has leading-bit exponent E
// (floor(log2|x|), subnormals included), the block's LSB exponent is
//   q = E - (M - 2),   m_i = clamp(RNE(x_i / 2^q), -(2^(M-1)-1), 2^(M-1)-1)
// (the exact quotient, rounded once). A vector whose length is not a multiple
// of B ends in a zero-padded block. Blocks holding only zeros get the
// exponent kBfpZero; blocks holding a NaN or an infinity get kBfpPoison and
// make every dot product they enter NaN. docs/numerics.md, "Block floating point".
#pragma once
#include <cstdint>

#include "golden/numerics/common.h"

namespace n3::num {

constexpr int32_t kBfpZero = -32768;   // block of zeros (never the top block)
constexpr int32_t kBfpPoison = 32767;  // block holding NaN or infinity

// A quantised vector: mant[nblocks * block] (tail zero-padded), exp[nblocks]
// LSB exponents; e_max = the largest non-zero-block exponent (kBfpZero if all
// blocks are zero); poison if any block is.
struct BfpView {
  const int16_t* mant = nullptr;
  const int32_t* exp = nullptr;
  int64_t n = 0;
  int block = 32;
  int64_t nblocks = 0;
  int32_t e_max = kBfpZero;
  bool poison = false;
};

N3_HD inline int64_t bfp_blocks(int64_t n, int block) { return (n + block - 1) / block; }

// Quantises elements x[0..cnt) (cnt <= block) into one block: writes
// mant[0..block) and returns the block exponent.
N3_HD inline int32_t bfp_quantize_block(const float* x, int cnt, int block, int mbits, int16_t* mant) {
  int emax = -1000;
  bool poison = false;
  for (int i = 0; i < cnt; ++i) {
    const float v = x[i];
    if (!is_finite(v)) {
      poison = true;
    } else if (v != 0.0f) {
      uint32_t sig;
      int exp;
      const int e = decompose(v, &sig, &exp);
      if (e > emax) emax = e;
    }
  }
  if (poison || emax == -1000) {
    for (int i = 0; i < block; ++i) mant[i] = 0;
    return poison ? kBfpPoison : kBfpZero;
  }
  const int32_t q = emax - (mbits - 2);
  const int64_t lim = (int64_t(1) << (mbits - 1)) - 1;
  for (int i = 0; i < block; ++i) {
    int64_t m = 0;
    if (i < cnt && x[i] != 0.0f) {
      uint32_t sig;
      int exp;
      decompose(x[i], &sig, &exp);
      // x / 2^q = sig * 2^(exp - q); exp - q <= 23 - 23 - (25 - mbits) < 0.
      m = shift_rne(static_cast<int64_t>(sig), exp - q);
      if (m > lim) m = lim;  // only 2^(M-1) after rounding up: saturate
      if (sign_bit(x[i])) m = -m;
    }
    mant[i] = static_cast<int16_t>(m);
  }
  return q;
}

// Quantises x[0..n) into caller buffers mant[bfp_blocks(n) * block] and
// exp[bfp_blocks(n)] and returns the view.
N3_HD inline BfpView bfp_quantize(const float* x, int64_t n, int block, int mbits, int16_t* mant,
                                  int32_t* exp) {
  BfpView v;
  v.mant = mant;
  v.exp = exp;
  v.n = n;
  v.block = block;
  v.nblocks = bfp_blocks(n, block);
  for (int64_t b = 0; b < v.nblocks; ++b) {
    const int64_t lo = b * block;
    const int cnt = static_cast<int>(n - lo < block ? n - lo : block);
    const int32_t e = bfp_quantize_block(x + lo, cnt, block, mbits, mant + lo);
    exp[b] = e;
    if (e == kBfpPoison) v.poison = true;
    else if (e != kBfpZero && (v.e_max == kBfpZero || e > v.e_max)) v.e_max = e;
  }
  return v;
}

// Strided variant: element i is x[i * stride] (a column of a row-major
// matrix, e.g. V over token positions).
N3_HD inline BfpView bfp_quantize_strided(const float* x, int64_t n, int64_t stride, int block, int mbits,
                                          int16_t* mant, int32_t* exp, float* tmp /* block floats */) {
  BfpView v;
  v.mant = mant;
  v.exp = exp;
  v.n = n;
  v.block = block;
  v.nblocks = bfp_blocks(n, block);
  for (int64_t b = 0; b < v.nblocks; ++b) {
    const int64_t lo = b * block;
    const int cnt = static_cast<int>(n - lo < block ? n - lo : block);
    for (int i = 0; i < cnt; ++i) tmp[i] = x[(lo + i) * stride];
    const int32_t e = bfp_quantize_block(tmp, cnt, block, mbits, mant + lo);
    exp[b] = e;
    if (e == kBfpPoison) v.poison = true;
    else if (e != kBfpZero && (v.e_max == kBfpZero || e > v.e_max)) v.e_max = e;
  }
  return v;
}

// The value a quantised element stands for, m * 2^q, as a float32 (exact
// for every M <= 16 unless it underflows float32's range). For tests/dumps.
N3_HD inline float bfp_value(const BfpView& v, int64_t i) {
  const int32_t e = v.exp[i / v.block];
  if (e == kBfpPoison) return nan_f();
  const int m = v.mant[i];
  if (e == kBfpZero || m == 0) return 0.0f;
  const bool neg = m < 0;
  return round_pack(neg, static_cast<uint64_t>(neg ? -m : m), e, false, spec_f32());
}

}  // namespace n3::num
