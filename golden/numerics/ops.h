// Vector-level NPU operators on float arrays, each a fixed sequence of the
// core's steps (reduce.h, sfu.h, bfp.h, mac.h) ending in one write to L2 in
// the destination format `out`. These are what the golden model's NPU
// kernels, the functional simulator and the CUDA path call; they allocate
// nothing (callers pass scratch), so they compile for the device as well.
// docs/numerics.md, "Operators".
#pragma once
#include <cstdint>

#include "golden/numerics/bfp.h"
#include "golden/numerics/formats_config.h"
#include "golden/numerics/mac.h"
#include "golden/numerics/reduce.h"
#include "golden/numerics/sfu.h"
#include "golden/numerics/sfu_trig.h"

namespace n3::num {

// CVO RELU: max(x, +0) with NaN kept (canonical); relu(-0) = +0.
N3_HD inline float relu(float x) { return is_nan(x) ? nan_f() : (x > 0.0f ? x : 0.0f); }

// 1/n as the SFU gives it (correctly rounded; exact for powers of two).
N3_HD inline float inv_count(int64_t n) { return recip(static_cast<float>(n)); }

// y = x * rsqrt(sum(x^2) * (1/n) + eps) * w: ss = tree_sumsq(x);
// r = rsqrt_rn(ss * inv_n + eps); y_i = RNE_out((x_i * r) * w_i) (w == nullptr:
// y_i = RNE_out(x_i * r)). In place (y == x) is allowed.
N3_HD inline void rmsnorm(const float* x, const float* w, int64_t n, float eps, float* y, Fmt out) {
  const float r = rsqrt_rn(tree_sumsq(x, n) * inv_count(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = round_to(out, w ? (x[i] * r) * w[i] : x[i] * r);
}

// sqrt(sum(x^2) * (1/n)).
N3_HD inline float rms(const float* x, int64_t n) { return sqrt_rn(tree_sumsq(x, n) * inv_count(n)); }

// AltUp magnitude match: m = sqrt(max(sum(x^2) * (1/n), floor));
// f = target * recip(m); x_i = RNE_out(x_i * f).
N3_HD inline void match_magnitude(float* x, int64_t n, float target, float floor, Fmt out) {
  const float ms = tree_sumsq(x, n) * inv_count(n);
  const float f = target * recip(sqrt_rn(nmax(ms, floor)));
  for (int64_t i = 0; i < n; ++i) x[i] = round_to(out, x[i] * f);
}

// Softmax in place: m = tree_max; e_i = exp(s_i - m); z = tree_sum(e);
// p_i = RNE_out(e_i * recip(z)).
N3_HD inline void softmax(float* s, int64_t n, Fmt out) {
  const float m = tree_max(s, n);
  for (int64_t i = 0; i < n; ++i) s[i] = exp_sfu(s[i] - m);
  const float r = recip(tree_sum(s, n));
  for (int64_t i = 0; i < n; ++i) s[i] = round_to(out, s[i] * r);
}

N3_HD inline void tanh_vec(float* x, int64_t n, Fmt out) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_to(out, tanh_sfu(x[i]));
}
N3_HD inline void gelu_vec(float* x, int64_t n, Fmt out) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_to(out, gelu_tanh_sfu(x[i]));
}

// Logit softcap: x_i = RNE_out(cap * tanh(x_i * recip(cap))).
N3_HD inline void softcap(float* x, int64_t n, float cap, Fmt out) {
  const float inv = recip(cap);
  for (int64_t i = 0; i < n; ++i) x[i] = round_to(out, cap * tanh_sfu(x[i] * inv));
}

// Gaussian top-k (two-pass population statistics): mean = tree_sum(x) *
// inv_n; var = tree_sumsq_dev(x, mean) * inv_n; t = mean + mult * sqrt(var);
// x_i = RNE_out(max(x_i - t, +0)) (NaN stays NaN).
N3_HD inline void gaussian_topk(float* x, int64_t n, float mult, Fmt out) {
  const float inv = inv_count(n);
  const float mean = tree_sum(x, n) * inv;
  const float var = tree_sumsq_dev(x, n, mean) * inv;
  const float t = mean + mult * sqrt_rn(var);
  for (int64_t i = 0; i < n; ++i) {
    const float d = x[i] - t;
    x[i] = round_to(out, is_nan(d) ? d : (d > 0.0f ? d : 0.0f));
  }
}

// Half-split RoPE on `heads` vectors of head_dim at position pos:
// a_i = float(pos) * inv_freq[i] (one rounding), c = cos_sfu(a_i),
// s = sin_sfu(a_i); for pairs (i, i + d/2):
// y_i = RNE_out(x_i*c - x_j*s), y_j = RNE_out(x_j*c + x_i*s).
// inv_freq[i] = RNE_f32(theta^(-2i/d)) is a constant table (npu_ops.h).
N3_HD inline void rope(float* x, int64_t heads, int64_t head_dim, int64_t pos, const float* inv_freq, Fmt out) {
  const int64_t half = head_dim / 2;
  const float fp = static_cast<float>(pos);
  for (int64_t i = 0; i < half; ++i) {
    const float a = fp * inv_freq[i];
    const float c = cos_sfu(a), s = sin_sfu(a);
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + h * head_dim;
      const float x0 = v[i], x1 = v[i + half];
      v[i] = round_to(out, x0 * c - x1 * s);
      v[i + half] = round_to(out, x1 * c + x0 * s);
    }
  }
}

// ---- attention -----------------------------------------------------------

// A K or V cache as the attention reads it. F16/BF16: `val` holds values
// already in that format, element (t, d) at val[t * stride + d]. INT8: codes
// q8[t * stride + d] and the token's scale scale[t] (formats.h int8_quantize,
// one vector per token and KV head).
struct KvView {
  KvFmt fmt = KvFmt::F16;
  const float* val = nullptr;
  const int8_t* q8 = nullptr;
  const float* scale = nullptr;
  int64_t stride = 0;
};

// Scratch for one query row over T = hi - lo + 1 positions, head_dim d,
// block B: pad(n) = bfp_blocks(n, B) * B.
struct AttnScratch {
  float* scores;    // T
  float* tmp;       // max(T, B)
  int8_t* col8;     // T
  int16_t* mant_q;  // pad(d)
  int32_t* exp_q;   // bfp_blocks(d)
  int16_t* mant_k;  // pad(d)
  int32_t* exp_k;   // bfp_blocks(d)
  int16_t* mant_p;  // pad(T)
  int32_t* exp_p;   // bfp_blocks(T)
  int16_t* mant_v;  // pad(T)
  int32_t* exp_v;   // bfp_blocks(T)
};

// One query row: scores_t = q . k_t for t in [lo, hi] (no 1/sqrt(d) scale),
// softmax, out = sum_t p_t v_t.
//   q -> BFP(attn_mant_bits) over d; F16/BF16 k_t -> BFP(attn_mant_bits);
//   score_t = dot_bfp_bfp(q, k_t) rounded once to f.score (INT8 k:
//   dot_int8_bfp(k_t, q, scale_t));
//   softmax(scores) in f.score;
//   F16/BF16 V: p -> BFP over t (blocks start at lo), column d of V -> BFP
//   over t, out_d = dot_bfp_bfp rounded once to f.act;
//   INT8 V: p'_t = RNE_score(p_t * scale_t) -> BFP over t, out_d =
//   dot_int8_bfp(column d, p', 1) rounded once to f.act.
N3_HD inline void attend(const float* q, const KvView& k, const KvView& v, int64_t lo, int64_t hi, int64_t d,
                         float* out, const Formats& f, const AttnScratch& w) {
  const int B = f.bfp_block, M = f.attn_mant_bits;
  const int64_t T = hi - lo + 1;
  const BfpView qv = bfp_quantize(q, d, B, M, w.mant_q, w.exp_q);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = (lo + t) * k.stride;
    if (k.fmt == KvFmt::INT8) {
      w.scores[t] = dot_int8_bfp(k.q8 + row, qv, k.scale[lo + t], f.score);
    } else {
      const BfpView kv = bfp_quantize(k.val + row, d, B, M, w.mant_k, w.exp_k);
      w.scores[t] = dot_bfp_bfp(qv, kv, 1.0f, f.score);
    }
  }
  softmax(w.scores, T, f.score);
  if (v.fmt == KvFmt::INT8) {
    for (int64_t t = 0; t < T; ++t) w.tmp[t] = round_to(f.score, w.scores[t] * v.scale[lo + t]);
    const BfpView pv = bfp_quantize(w.tmp, T, B, M, w.mant_p, w.exp_p);
    for (int64_t j = 0; j < d; ++j) {
      for (int64_t t = 0; t < T; ++t) w.col8[t] = v.q8[(lo + t) * v.stride + j];
      out[j] = dot_int8_bfp(w.col8, pv, 1.0f, f.act);
    }
    return;
  }
  const BfpView pv = bfp_quantize(w.scores, T, B, M, w.mant_p, w.exp_p);
  for (int64_t j = 0; j < d; ++j) {
    const BfpView vc = bfp_quantize_strided(v.val + lo * v.stride + j, T, v.stride, B, M, w.mant_v, w.exp_v, w.tmp);
    out[j] = dot_bfp_bfp(pv, vc, 1.0f, f.act);
  }
}

// Rounds K or V values of one token and KV head to the cache format (F16 /
// BF16; INT8 goes through int8_quantize).
N3_HD inline void to_kv(float* x, int64_t n, KvFmt fmt) {
  round_to(fmt == KvFmt::BF16 ? Fmt::BF16 : Fmt::F16, x, n);
}

}  // namespace n3::num
