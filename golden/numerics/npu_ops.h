// Host-side entry points of the numerics core for the golden model: whole
// INT4 matrices (Int4Matrix; golden/npu_matrix.h views the model's MatrixRef
// as one, since the core sits below the model), token batches, scratch
// allocation, OpenMP over output rows (each output is computed by one thread
// in the fixed order of the core, so results do not depend on the thread
// count), and the constant tables the compiler would precompute (RoPE
// inverse frequencies). Not for device code.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "golden/numerics/ops.h"

namespace n3::num {

// An INT4 matrix as the GEMV engine reads it (MatrixRef's packing: row r is
// (cols + 1) / 2 bytes, element 2k in the low nibble of byte k).
//   PerRow:   scales[r]
//   PerGroup: scales[r * groups + g], group = inputs per scale
//   TwoLevel: scales[r] (row scale) and block_scales[r * groups + g] in
//             [1, 2^block_scale_bits - 1]
struct Int4Matrix {
  const uint8_t* data = nullptr;
  int64_t rows = 0, cols = 0;
  WScale mode = WScale::PerRow;
  int64_t group = 0;
  const float* scales = nullptr;
  const uint8_t* block_scales = nullptr;

  int64_t row_bytes() const { return (cols + 1) / 2; }
  int64_t groups() const { return mode == WScale::PerRow ? 1 : (cols + group - 1) / group; }
};

// One output row of the GEMV on an already quantised activation vector.
inline float linear_row(const Int4Matrix& w, int64_t r, const BfpView& x, Fmt out) {
  const uint8_t* row = w.data + r * w.row_bytes();
  switch (w.mode) {
    case WScale::PerRow: return dot_int4_row(row, w.cols, x, w.scales[r], out);
    case WScale::PerGroup: return dot_int4_row_grouped(row, w.cols, x, w.scales + r * w.groups(), w.group, out);
    case WScale::TwoLevel:
      return dot_int4_row_two_level(row, w.cols, x, w.block_scales + r * w.groups(), w.group, w.scales[r], out);
  }
  return nan_f();
}

// y[t, o] = W x[t, :] for t < T: each x_t is quantised to BFP
// (bfp_block, act_mant_bits), each output rounded once to `out`.
inline void linear_npu(const Int4Matrix& w, const float* x, int64_t T, float* y, const Formats& f, Fmt out) {
  require(w.cols <= kMaxDotLen, "linear: " + std::to_string(w.cols) + " inputs exceed the accumulator bound " +
                                    std::to_string(kMaxDotLen));
  const int B = f.bfp_block;
  const int64_t nb = bfp_blocks(w.cols, B);
  std::vector<int16_t> mant(static_cast<size_t>(T * nb * B));
  std::vector<int32_t> exps(static_cast<size_t>(T * nb));
  std::vector<BfpView> xv(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t)
    xv[t] = bfp_quantize(x + t * w.cols, w.cols, B, f.act_mant_bits, mant.data() + t * nb * B, exps.data() + t * nb);
  // Small GEMVs are not worth waking threads for (and on a busy machine the
  // wake-up costs more than the work).
#pragma omp parallel for schedule(static) if (w.rows * w.cols * T >= (1 << 18))
  for (int64_t o = 0; o < w.rows; ++o)
    for (int64_t t = 0; t < T; ++t) y[t * w.rows + o] = linear_row(w, o, xv[t], out);
}

// Per row of n: RMSNorm (ops.h) rounded to `out`; rows in parallel.
inline void rmsnorm_rows(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* y, Fmt out) {
#pragma omp parallel for schedule(static) if (rows * n >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r) rmsnorm(x + r * n, w, n, eps, y + r * n, out);
}

// RoPE inverse frequencies inv_freq[i] = RNE_f32(theta^(-2i/d)), i < d/2: a
// constant table, computed on the host in double (std::pow's error, < 1 ULP
// of double, cannot move a float32 rounding except in a tie within 2^-29,
// which does not occur for Gemma's thetas: tests check the table).
inline std::vector<float> rope_inv_freq(double theta, int64_t head_dim) {
  std::vector<float> f(static_cast<size_t>(head_dim / 2));
  for (int64_t i = 0; i < head_dim / 2; ++i)
    f[i] = static_cast<float>(std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim)));
  return f;
}

// Owns the scratch of attend() for up to T positions and head_dim d.
struct AttnBuffers {
  std::vector<float> scores, tmp;
  std::vector<int8_t> col8;
  std::vector<int16_t> mq, mk, mp, mv;
  std::vector<int32_t> eq, ek, ep, ev;

  AttnScratch get(int64_t T, int64_t d, int B) {
    const int64_t bd = bfp_blocks(d, B), bt = bfp_blocks(T, B);
    auto fit = [](auto& v, int64_t n) {
      if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
      return v.data();
    };
    return AttnScratch{fit(scores, T), fit(tmp, T > B ? T : B), fit(col8, T),
                       fit(mq, bd * B), fit(eq, bd), fit(mk, bd * B), fit(ek, bd),
                       fit(mp, bt * B), fit(ep, bt), fit(mv, bt * B), fit(ev, bt)};
  }
};

// attend() with its own scratch; F16/BF16 caches given as float rows.
inline void attend_npu(const float* q, const KvView& k, const KvView& v, int64_t lo, int64_t hi, int64_t d,
                       float* out, const Formats& f) {
  require(hi - lo + 1 <= kMaxDotLen, "attention over more than 65536 positions exceeds the accumulator bound");
  thread_local AttnBuffers buf;
  attend(q, k, v, lo, hi, d, out, f, buf.get(hi - lo + 1, d, f.bfp_block));
}

// Two-level (LPBQ-like) INT4 quantisation of one row, the offline step that
// makes the TwoLevel format (docs/numerics.md, "Weights"):
//   s_g = max|w over group g| / 8 (float32);  S = max_g s_g / (2^bits - 1);
//   b_g = clamp(RNE_int(s_g / S), 1, 2^bits - 1);
//   q_i = clamp(RNE_int(w_i / (b_g * S)), -8, 7), the quotient w_i / (b_g S)
//   taken exactly (in double, where b_g * S and the quotient's rounding to
//   an integer are exact). All-zero row: S = 0, b_g = 1, q = 0.
inline void quantize_row_two_level(const float* w, int64_t cols, int64_t group, int bits, uint8_t* packed,
                                   uint8_t* bscales, float* row_scale) {
  const int64_t ng = (cols + group - 1) / group;
  const int bmax = (1 << bits) - 1;
  std::vector<float> sg(static_cast<size_t>(ng));
  float smax = 0.0f;
  for (int64_t g = 0; g < ng; ++g) {
    float a = 0.0f;
    for (int64_t i = g * group; i < cols && i < (g + 1) * group; ++i) a = nmax(a, abs_f(w[i]));
    sg[g] = a / 8.0f;
    smax = nmax(smax, sg[g]);
  }
  const float S = smax / static_cast<float>(bmax);
  *row_scale = S;
  for (int64_t i = 0; i < (cols + 1) / 2; ++i) packed[i] = 0;
  for (int64_t g = 0; g < ng; ++g) {
    int b = S == 0.0f ? 1 : static_cast<int>(std::nearbyint(static_cast<double>(sg[g]) / S));
    b = b < 1 ? 1 : b > bmax ? bmax : b;
    bscales[g] = static_cast<uint8_t>(b);
    const double step = static_cast<double>(b) * S;
    for (int64_t i = g * group; i < cols && i < (g + 1) * group; ++i) {
      int q = step == 0.0 ? 0 : static_cast<int>(std::nearbyint(static_cast<double>(w[i]) / step));
      q = q < -8 ? -8 : q > 7 ? 7 : q;
      packed[i >> 1] |= static_cast<uint8_t>((q & 0xf) << ((i & 1) * 4));
    }
  }
}

}  // namespace n3::num
