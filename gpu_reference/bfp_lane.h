// The numerics core's BFP quantiser and dot products, cut into the pieces a
// GPU runs in parallel: one element per lane (the block exponent is then a
// max over lanes, which has no order), an INT4 block partial computed with
// dp4a on split mantissas, and the p.V column dot product streamed in two
// passes. Each piece gives exactly the bits of the core function it replaces
// (golden/numerics/bfp.h, mac.h); tests/cuda_helpers_test.cc checks them
// against the core on the host, where no GPU is needed.
#pragma once
#include <cmath>
#include <cstdint>

#include "golden/numerics/mac.h"

namespace n3::gpu {

// ---- rounding to the activation format ---------------------------------------

// num::round_to(f, x) with shortcuts for f32 (the value itself, NaN made
// canonical) and bf16 (round-to-nearest-even on the top 16 bits of the
// encoding: bf16 has f32's exponent range, so normal, subnormal and
// overflowing values all round at the same bit). Bit-identical to the core
// (tests/cuda_helpers_test.cc sweeps the float32 patterns); f16 takes the
// core's path. The per-token kernels round every element they write, and
// this is most of their arithmetic.
N3_HD inline float round_act(num::Fmt f, float x) {
  if (f == num::Fmt::F16) return num::round_to(f, x);
  if (num::is_nan(x)) return num::nan_f();
  if (f == num::Fmt::F32) return x;
  uint32_t u = num::f2u(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // +-inf
  u += 0x7fffu + ((u >> 16) & 1u);
  return num::u2f(u & 0xffff0000u);
}

// ---- correctly rounded sqrt and 1/sqrt with a floating-point first guess ----
//
// num::sqrt_rn and num::rsqrt_rn find an integer root S (resp. Y) bit by bit:
// 26 dependent steps of 64- and 128-bit products, which on a GPU is the
// longest serial chain of every RMSNorm (one warp runs it while the block
// waits). The root is the same integer whichever way it is found: here a
// double-precision estimate (within one unit of it) is corrected by the
// core's own exact tests, then rounded by the same round_pack call. Hence
// the same bits for every input (tests/cuda_helpers_test.cc sweeps them).
N3_HD inline float sqrt_rn_fast(float x) {
  if (num::is_nan(x) || (num::sign_bit(x) && x != 0.0f)) return num::nan_f();
  if (x == 0.0f || !num::is_finite(x)) return x;
  uint32_t sig;
  int exp;
  num::decompose(x, &sig, &exp);
  uint64_t m = sig;
  if (exp & 1) {
    m <<= 1;
    exp -= 1;
  }
  const uint64_t big = m << 26;  // [2^49, 2^51): exact in a double
  // S = floor(sqrt(big)) < 2^26 (the core sets bits 25..0 greedily).
  uint64_t s = static_cast<uint64_t>(sqrt(static_cast<double>(big)));
  if (s > (uint64_t(1) << 26) - 1) s = (uint64_t(1) << 26) - 1;
  while (s > 0 && s * s > big) --s;
  while (s + 1 < (uint64_t(1) << 26) && (s + 1) * (s + 1) <= big) ++s;
  return num::round_pack(false, s, (exp - 26) / 2, s * s != big, num::spec_f32());
}

N3_HD inline float rsqrt_rn_fast(float x) {
  if (num::is_nan(x) || (num::sign_bit(x) && x != 0.0f)) return num::nan_f();
  if (x == 0.0f) return num::inf_f(num::sign_bit(x));
  if (!num::is_finite(x)) return 0.0f;
  uint32_t sig;
  int exp;
  num::decompose(x, &sig, &exp);
  uint64_t m = sig;
  if (exp & 1) {
    m <<= 1;
    exp -= 1;
  }
  // Y = the largest integer below 2^26 with Y^2 * m <= 2^74, i.e.
  // floor(2^37 / sqrt(m)); the test is the core's (exact 128-bit product).
  auto fits = [m](uint64_t t) {
    uint64_t hi, lo;
    num::mul_64x64(t * t, m, &hi, &lo);
    return hi < (uint64_t(1) << 10) || (hi == (uint64_t(1) << 10) && lo == 0);
  };
  uint64_t y = static_cast<uint64_t>(137438953472.0 / sqrt(static_cast<double>(m)));  // 2^37 / sqrt(m)
  if (y > (uint64_t(1) << 26) - 1) y = (uint64_t(1) << 26) - 1;
  while (y > 0 && !fits(y)) --y;
  while (y + 1 < (uint64_t(1) << 26) && fits(y + 1)) ++y;
  uint64_t hi, lo;
  num::mul_64x64(y * y, m, &hi, &lo);
  const bool exact = hi == (uint64_t(1) << 10) && lo == 0;
  return num::round_pack(false, y, -37 - exp / 2, !exact, num::spec_f32());
}

// ---- element-parallel BFP quantisation (num::bfp_quantize_block) ----------

// What one element contributes to its block's exponent: floor(log2|x|) for
// a finite non-zero x; kLaneZero for zero (the core's "no element yet"
// start value); kLanePoison (larger than any exponent) for NaN/Inf. The
// block's value is the max over its elements.
constexpr int kLaneZero = -1000;
constexpr int kLanePoison = 1 << 20;

N3_HD inline int lane_exponent(float v) {
  if (!num::is_finite(v)) return kLanePoison;
  if (v == 0.0f) return kLaneZero;
  uint32_t sig;
  int exp;
  return num::decompose(v, &sig, &exp);
}

// The block's LSB exponent (or kBfpZero / kBfpPoison) from the max of lane_exponent.
N3_HD inline int32_t block_exponent(int emax, int mbits) {
  if (emax >= kLanePoison) return num::kBfpPoison;
  if (emax == kLaneZero) return num::kBfpZero;
  return emax - (mbits - 2);
}

// Mantissa of one element of a block whose LSB exponent is q.
N3_HD inline int lane_mantissa(float v, int32_t q, int mbits) {
  if (q == num::kBfpZero || q == num::kBfpPoison || v == 0.0f) return 0;
  uint32_t sig;
  int exp;
  num::decompose(v, &sig, &exp);
  const int d = exp - q;
  int64_t m;
  if (d < 0) {  // the usual case (d <= mbits - 25): shift_rne's steps on the 24-bit significand in 32 bits
    const int sft = -d;
    uint32_t r = 0;  // sft >= 32: sig < 2^24 < half a unit
    if (sft < 32) {
      r = sig >> sft;
      const uint32_t rem = sig & ((1u << sft) - 1u), half = 1u << (sft - 1);
      if (rem > half || (rem == half && (r & 1u))) ++r;
    }
    m = r;
  } else {
    m = num::shift_rne(static_cast<int64_t>(sig), d);
  }
  const int64_t lim = (int64_t(1) << (mbits - 1)) - 1;
  if (m > lim) m = lim;
  return static_cast<int>(num::sign_bit(v) ? -m : m);
}

// ---- INT4 x BFP block partial with dp4a ------------------------------------
//
// A 32-element block of an INT4 row is 16 bytes, read as four 32-bit words;
// byte j of word k holds elements 8k+2j (low nibble) and 8k+2j+1 (high).
// With u = w + 8 in [0, 15] (the nibble with its top bit flipped),
//   P_b = sum w_i m_i = sum u_i m_i - 8 * sum m_i,
// and each mantissa is split into 7-bit pieces that fit a signed byte:
//   m = m1 * 128 + m0 (M <= 15 bits: m1 in [-128, 127])
//   m = m2 * 16384 + m1 * 128 + m0 (M = 16)
// with m0, m1 in [0, 127] below the top piece. Piece p of the block is
// packed as 8 words: words 0..3 hold the pieces of the even elements of
// word k (bytes j = elements 8k+2j), words 4..7 those of the odd elements,
// so sum u_i piece_i is 8 dp4a. Every sum is an exact integer.

N3_HD inline int splits_for(int mbits) { return mbits <= 15 ? 2 : 3; }

// Piece p (0 = lowest) of mantissa m split `splits` ways.
N3_HD inline int mantissa_piece(int m, int p, int splits) {
  if (p == splits - 1) return m >> (7 * p);  // arithmetic: the signed top piece
  return (m >> (7 * p)) & 127;
}

// Byte offset of element i's piece p inside its block's packed pieces.
N3_HD inline int piece_byte(int i, int p) {
  const int k = i >> 3, j = (i & 7) >> 1, odd = i & 1;
  return p * 32 + odd * 16 + k * 4 + j;
}

N3_HD inline int dp4a_s8(int a, int b, int c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, c);
#else
  for (int i = 0; i < 4; ++i)
    c += int(static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i))) *
         int(static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i)));
  return c;
#endif
}

// P_b of one block: w the block's 4 weight words, pk its SPLITS * 8 packed
// piece words, msum the sum of its 32 mantissas.
template <int SPLITS>
N3_HD inline int32_t int4_block_partial_split(const uint32_t w[4], const int32_t* pk, int32_t msum) {
  uint32_t lo[4], hi[4];
  for (int k = 0; k < 4; ++k) {
    const uint32_t u = w[k] ^ 0x88888888u;
    lo[k] = u & 0x0f0f0f0fu;
    hi[k] = (u >> 4) & 0x0f0f0f0fu;
  }
  int32_t total = 0;
  for (int p = SPLITS - 1; p >= 0; --p) {
    int d = 0;
    for (int k = 0; k < 4; ++k) d = dp4a_s8(static_cast<int>(lo[k]), pk[p * 8 + k], d);
    for (int k = 0; k < 4; ++k) d = dp4a_s8(static_cast<int>(hi[k]), pk[p * 8 + 4 + k], d);
    total = total * 128 + d;
  }
  return total - 8 * msum;
}

// ---- attention: p . V[:, d] without materialising V's column --------------

// Equals num::dot_bfp_bfp(pv, bfp_quantize_strided(v, n, stride, B, M), 1, out):
// column d of V over n positions (element t at v[t * stride]) is quantised
// block by block (blocks start at element 0, like p's); pass 1 finds the
// block exponents, poison and e_top, pass 2 recomputes each block's
// exponent and mantissas and accumulates the aligned block partials.
N3_HD inline int32_t column_block_exponent(const float* v, int64_t lo, int cnt, int64_t stride, int mbits) {
  int emax = kLaneZero;
  for (int j = 0; j < cnt; ++j) {
    const int e = lane_exponent(v[(lo + j) * stride]);
    if (e > emax) emax = e;
  }
  return block_exponent(emax, mbits);
}

N3_HD inline float pv_column(const num::BfpView& pv, const float* v, int64_t n, int64_t stride, int mbits,
                             num::Fmt out) {
  const int B = pv.block;
  const int64_t nb = num::bfp_blocks(n, B);
  bool poison = pv.poison, any = false;
  int32_t e_top = 0;
  for (int64_t k = 0; k < nb; ++k) {
    const int cnt = num::block_count(n, k, B);
    const int32_t ev = column_block_exponent(v, k * B, cnt, stride, mbits);
    if (ev == num::kBfpPoison) poison = true;
    if (ev == num::kBfpPoison || ev == num::kBfpZero || pv.exp[k] == num::kBfpZero) continue;
    const int32_t x = pv.exp[k] + ev;
    if (!any || x > e_top) e_top = x;
    any = true;
  }
  if (poison) return num::nan_f();
  if (!any) return num::acc_finish(0, 0, 1.0f, out);
  int64_t acc = 0;
  for (int64_t k = 0; k < nb; ++k) {
    if (pv.exp[k] == num::kBfpZero) continue;
    const int cnt = num::block_count(n, k, B);
    const int32_t ev = column_block_exponent(v, k * B, cnt, stride, mbits);
    if (ev == num::kBfpZero) continue;
    int64_t p = 0;
    for (int j = 0; j < cnt; ++j) p += int64_t(pv.mant[k * B + j]) * lane_mantissa(v[(k * B + j) * stride], ev, mbits);
    acc += num::acc_align(p, pv.exp[k] + ev, e_top);
  }
  return num::acc_finish(acc, e_top, 1.0f, out);
}

// pv_column for 32-element blocks: each block's 32 values are fetched into
// registers before they are used (so the loads overlap), then the same
// steps as pv_column. What the attention kernel runs at the default block.
N3_HD inline int32_t column_block32(const float* v, int64_t k, int cnt, int64_t stride, int mbits, float x[32]) {
  int emax = kLaneZero;
  for (int j = 0; j < 32; ++j) x[j] = j < cnt ? v[(k * 32 + j) * stride] : 0.0f;
  for (int j = 0; j < 32; ++j) {
    const int e = lane_exponent(x[j]);
    if (e > emax) emax = e;
  }
  return block_exponent(emax, mbits);
}

N3_HD inline float pv_column32(const num::BfpView& pv, const float* v, int64_t n, int64_t stride, int mbits,
                               num::Fmt out) {
  const int64_t nb = num::bfp_blocks(n, 32);
  bool poison = pv.poison, any = false;
  int32_t e_top = 0;
  float x[32];
  for (int64_t k = 0; k < nb; ++k) {
    const int32_t ev = column_block32(v, k, num::block_count(n, k, 32), stride, mbits, x);
    if (ev == num::kBfpPoison) poison = true;
    if (ev == num::kBfpPoison || ev == num::kBfpZero || pv.exp[k] == num::kBfpZero) continue;
    const int32_t e = pv.exp[k] + ev;
    if (!any || e > e_top) e_top = e;
    any = true;
  }
  if (poison) return num::nan_f();
  if (!any) return num::acc_finish(0, 0, 1.0f, out);
  int64_t acc = 0;
  for (int64_t k = 0; k < nb; ++k) {
    if (pv.exp[k] == num::kBfpZero) continue;
    const int32_t ev = column_block32(v, k, num::block_count(n, k, 32), stride, mbits, x);
    if (ev == num::kBfpZero) continue;
    int64_t p = 0;
    for (int j = 0; j < 32; ++j) p += int64_t(pv.mant[k * 32 + j]) * lane_mantissa(x[j], ev, mbits);
    acc += num::acc_align(p, pv.exp[k] + ev, e_top);
  }
  return num::acc_finish(acc, e_top, 1.0f, out);
}

// num::dot_bfp_bfp(a, b, 1, out) for 32-element blocks, each block partial
// summed over all 32 mantissas (the padding is zero) with 16-byte loads on
// the device: the attention score q . k_t against a cached key row.
N3_HD inline int64_t block_dot32(const int16_t* a, const int16_t* b) {
  int64_t p = 0;
#if defined(__CUDA_ARCH__)
  const int4* a4 = reinterpret_cast<const int4*>(a);
  const int4* b4 = reinterpret_cast<const int4*>(b);
  int64_t s = 0;  // each product < 2^30; their sum needs 64 bits
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int4 x = a4[c], y = b4[c];
    const int xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int h = 0; h < 4; ++h)
      s += int64_t(int32_t(int16_t(xs[h] & 0xffff)) * int16_t(ys[h] & 0xffff)) + int64_t((xs[h] >> 16) * (ys[h] >> 16));
  }
  p = s;
#else
  for (int j = 0; j < 32; ++j) p += int64_t(a[j]) * b[j];
#endif
  return p;
}

N3_HD inline float dot_bfp_bfp32(const num::BfpView& a, const num::BfpView& b, num::Fmt out) {
  if (a.poison || b.poison) return num::nan_f();
  bool any = false;
  int32_t e_top = 0;
  for (int64_t k = 0; k < a.nblocks; ++k) {
    if (a.exp[k] == num::kBfpZero || b.exp[k] == num::kBfpZero) continue;
    const int32_t x = a.exp[k] + b.exp[k];
    if (!any || x > e_top) e_top = x;
    any = true;
  }
  if (!any) return num::acc_finish(0, 0, 1.0f, out);
  int64_t acc = 0;
  for (int64_t k = 0; k < a.nblocks; ++k) {
    if (a.exp[k] == num::kBfpZero || b.exp[k] == num::kBfpZero) continue;
    acc += num::acc_align(block_dot32(a.mant + k * 32, b.mant + k * 32), a.exp[k] + b.exp[k], e_top);
  }
  return num::acc_finish(acc, e_top, 1.0f, out);
}

// e_max and poison of a quantised vector from its block exponents, as
// num::bfp_quantize sets them.
N3_HD inline num::BfpView bfp_view(const int16_t* mant, const int32_t* exp, int64_t n, int block) {
  num::BfpView v;
  v.mant = mant;
  v.exp = exp;
  v.n = n;
  v.block = block;
  v.nblocks = num::bfp_blocks(n, block);
  for (int64_t b = 0; b < v.nblocks; ++b) {
    const int32_t e = exp[b];
    if (e == num::kBfpPoison)
      v.poison = true;
    else if (e != num::kBfpZero && (v.e_max == num::kBfpZero || e > v.e_max))
      v.e_max = e;
  }
  return v;
}

}  // namespace n3::gpu
