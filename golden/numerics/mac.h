// Integer dot products of the MAC engines and their single rounding back to
// float. docs/numerics.md, "MAC".
//
// For operands cut into blocks b of B elements:
//   P_b  = sum_i a_i * w_i                      exact integer (block partial)
//   x_b  = exponent of block b: the activation block's LSB exponent, plus the
//          other operand's block exponent when it is BFP too (INT4 / INT8
//          operands have exponent 0)
//   e_top = max x_b over blocks where no operand block is all-zero
//   A    = sum_b RNE(P_b * 2^(x_b - e_top + F))  F = kAccFrac = 16; each term
//          is rounded on its own (ties to even), so the integer sum has no order
//   y    = RNE_fmt(A * 2^(e_top - F) * scale)    the one rounding, into the
//          destination format (f32, bf16 or f16), scale a float32
// |A| < 2^62 for every dot product up to kMaxDotLen elements with mantissas of
// at most 16 bits. A poison block (NaN/Inf input) or a NaN scale makes y NaN;
// an infinite scale gives +-inf (NaN if A == 0); A == 0 or scale == 0 gives +0.
#pragma once
#include <cstdint>

#include "golden/numerics/bfp.h"
#include "golden/numerics/formats_config.h"
#include "golden/numerics/reduce.h"

namespace n3::num {

N3_HD inline int64_t acc_align(int64_t p, int32_t x, int32_t e_top) {
  return shift_rne(p, x - e_top + kAccFrac);
}

// y = RNE_out(A * 2^(e_top - F) * scale).
N3_HD inline float acc_finish(int64_t acc, int32_t e_top, float scale, Fmt out) {
  if (is_nan(scale)) return nan_f();
  if (!is_finite(scale)) return acc == 0 ? nan_f() : inf_f((acc < 0) != sign_bit(scale));
  if (acc == 0 || scale == 0.0f) return 0.0f;
  uint32_t ms;
  int es;
  decompose(scale, &ms, &es);
  const bool neg = (acc < 0) != sign_bit(scale);
  const uint64_t mag = acc < 0 ? uint64_t(0) - static_cast<uint64_t>(acc) : static_cast<uint64_t>(acc);
  uint64_t hi, lo;
  mul_64x64(mag, ms, &hi, &lo);
  return round_pack128(neg, hi, lo, e_top - kAccFrac + es, false, spec_of(out));
}

// INT4 element i of a packed row (two per byte, even element in the low
// nibble, two's complement).
N3_HD inline int int4_at(const uint8_t* row, int64_t i) {
  const int nib = (row[i >> 1] >> ((i & 1) * 4)) & 0xf;
  return (nib ^ 8) - 8;
}

// P_b of an INT4 row against a BFP block whose mantissas start at m, for
// elements [lo, lo + cnt). |P_b| <= 64 * 8 * 32767 < 2^24.
N3_HD inline int64_t int4_block_partial(const uint8_t* row, int64_t lo, int cnt, const int16_t* m) {
  int32_t p = 0;
  if ((lo & 1) == 0 && (cnt & 1) == 0) {
    const uint8_t* r = row + (lo >> 1);
    for (int j = 0; j < cnt / 2; ++j) {
      const int b = r[j];
      p += (((b & 15) ^ 8) - 8) * m[2 * j] + (((b >> 4) ^ 8) - 8) * m[2 * j + 1];
    }
  } else {
    for (int j = 0; j < cnt; ++j) p += int4_at(row, lo + j) * m[j];
  }
  return p;
}

N3_HD inline int block_count(int64_t cols, int64_t b, int block) {
  const int64_t lo = b * block;
  return static_cast<int>(cols - lo < block ? cols - lo : block);
}

// One output of an INT4 x activation GEMV with one scale per row.
// x is the quantised activation vector of length cols.
N3_HD inline float dot_int4_row(const uint8_t* row, int64_t cols, const BfpView& x, float scale, Fmt out) {
  if (x.poison) return nan_f();
  if (x.e_max == kBfpZero) return acc_finish(0, 0, scale, out);
  int64_t acc = 0;
  for (int64_t b = 0; b < x.nblocks; ++b) {
    const int32_t e = x.exp[b];
    if (e == kBfpZero) continue;
    const int64_t p = int4_block_partial(row, b * x.block, block_count(cols, b, x.block), x.mant + b * x.block);
    acc += acc_align(p, e, x.e_max);
  }
  return acc_finish(acc, x.e_max, scale, out);
}

// Two-level scales: group g of `group` inputs (a multiple of the block) has
// the unsigned integer block scale bscale[g] (1..2^bits-1); the row has one
// float scale. P_b is multiplied by its group's block scale before alignment:
//   A = sum_b RNE(bscale[g(b)] * P_b * 2^(x_b - e_top + F)); y = RNE(A * 2^(e_top-F) * row_scale).
N3_HD inline float dot_int4_row_two_level(const uint8_t* row, int64_t cols, const BfpView& x,
                                          const uint8_t* bscale, int64_t group, float row_scale, Fmt out) {
  if (x.poison) return nan_f();
  if (x.e_max == kBfpZero) return acc_finish(0, 0, row_scale, out);
  const int64_t bpg = group / x.block;  // blocks per group
  int64_t acc = 0;
  for (int64_t b = 0; b < x.nblocks; ++b) {
    const int32_t e = x.exp[b];
    if (e == kBfpZero) continue;
    const int64_t p = int4_block_partial(row, b * x.block, block_count(cols, b, x.block), x.mant + b * x.block);
    acc += acc_align(p * bscale[b / bpg], e, x.e_max);
  }
  return acc_finish(acc, x.e_max, row_scale, out);
}

// Per-group float scales: each group's aligned integer sum A_g (same e_top
// for the whole row) is rounded once to float32 with its scale,
// y_g = RNE_f32(A_g * 2^(e_top-F) * scale[g]); the y_g are summed in the
// lane-tree order (reduce.h) and the sum is rounded to `out`.
N3_HD inline float dot_int4_row_grouped(const uint8_t* row, int64_t cols, const BfpView& x,
                                        const float* gscale, int64_t group, Fmt out) {
  if (x.poison) return nan_f();
  const int64_t bpg = group / x.block;
  const int64_t ngroups = (cols + group - 1) / group;
  const float s = lane_tree<SumOp>(ngroups, [&](int64_t g) {
    int64_t acc = 0;
    const int64_t b1 = (g + 1) * bpg < x.nblocks ? (g + 1) * bpg : x.nblocks;
    for (int64_t b = g * bpg; b < b1; ++b) {
      const int32_t e = x.exp[b];
      if (e == kBfpZero) continue;
      const int64_t p =
          int4_block_partial(row, b * x.block, block_count(cols, b, x.block), x.mant + b * x.block);
      acc += acc_align(p, e, x.e_max);
    }
    return acc_finish(acc, x.e_max == kBfpZero ? 0 : x.e_max, gscale[g], Fmt::F32);
  });
  return round_to(out, s);
}

// INT8 vector (KV cache option) x BFP vector, one float scale. The INT8
// operand has exponent 0, so e_top is the BFP operand's e_max. Element i of
// the INT8 vector is q[i * stride] (a column of the V cache: stride > 1).
N3_HD inline float dot_int8_bfp_strided(const int8_t* q, int64_t stride, const BfpView& x, float scale, Fmt out) {
  if (x.poison) return nan_f();
  if (x.e_max == kBfpZero) return acc_finish(0, 0, scale, out);
  int64_t acc = 0;
  for (int64_t b = 0; b < x.nblocks; ++b) {
    const int32_t e = x.exp[b];
    if (e == kBfpZero) continue;
    const int64_t lo = b * x.block;
    const int cnt = block_count(x.n, b, x.block);
    int64_t p = 0;
    for (int j = 0; j < cnt; ++j) p += int64_t(q[(lo + j) * stride]) * x.mant[lo + j];
    acc += acc_align(p, e, x.e_max);
  }
  return acc_finish(acc, x.e_max, scale, out);
}
N3_HD inline float dot_int8_bfp(const int8_t* q, const BfpView& x, float scale, Fmt out) {
  return dot_int8_bfp_strided(q, 1, x, scale, out);
}

// BFP x BFP (q.k and p.v): block exponents add; blocks where either side is
// all-zero are skipped, including for e_top.
N3_HD inline float dot_bfp_bfp(const BfpView& a, const BfpView& b, float scale, Fmt out) {
  if (a.poison || b.poison) return nan_f();
  bool any = false;
  int32_t e_top = 0;
  for (int64_t k = 0; k < a.nblocks; ++k) {
    if (a.exp[k] == kBfpZero || b.exp[k] == kBfpZero) continue;
    const int32_t x = a.exp[k] + b.exp[k];
    if (!any || x > e_top) e_top = x;
    any = true;
  }
  if (!any) return acc_finish(0, 0, scale, out);
  int64_t acc = 0;
  for (int64_t k = 0; k < a.nblocks; ++k) {
    if (a.exp[k] == kBfpZero || b.exp[k] == kBfpZero) continue;
    const int64_t lo = k * a.block;
    const int cnt = block_count(a.n, k, a.block);
    int64_t p = 0;
    for (int j = 0; j < cnt; ++j) p += int64_t(a.mant[lo + j]) * b.mant[lo + j];
    acc += acc_align(p, a.exp[k] + b.exp[k], e_top);
  }
  return acc_finish(acc, e_top, scale, out);
}

}  // namespace n3::num
