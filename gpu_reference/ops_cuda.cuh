// The two arithmetics of the CUDA path, as device-side policies the fused
// kernels are templated on (the counterpart of golden/kernels.h's
// NpuKernels and ReferenceKernels):
//   NpuOps: the numerics core (golden/numerics/), bit for bit. Reductions
//     run on one warp in the core's lane-tree order; every write to L2
//     rounds to the activation format.
//   RefOps: HuggingFace's float32 semantics with float64 accumulation, as
//     golden/kernels_ref.cc computes them (sums in another order, so equal
//     to about 1e-7, not bit for bit).
// Reductions (norm, rms, mag, cut, warp_dot) are called by all 32 lanes of
// one warp and return the result in every lane; the per-element functions
// (normed, magged, ...) are then applied by any thread.
#pragma once
#include <cmath>

#include "golden/numerics/ops.h"
#include "gpu_reference/bfp_lane.h"
#include "gpu_reference/cuda_util.cuh"
#include "gpu_reference/dev_types.cuh"

namespace n3::gpu {

struct NpuOps {
  num::Formats f;
  float eps;  // float(cfg.rms_eps), as NpuKernels passes it

  using Norm = float;
  using Mag = float;
  using Cut = float;
  using CS = float2;

  __device__ float store(float x) const { return round_act(f.act, x); }
  // NpuKernels::store_stream: the residual-carrying tensors (pred, ag, al, o, corr, h).
  __device__ float store_stream(float x) const { return round_act(f.stream, x); }
  __device__ float tanh(float x) const { return round_act(f.act, num::tanh_sfu(x)); }
  __device__ float gelu(float x) const { return round_act(f.act, num::gelu_tanh_sfu(x)); }
  __device__ float to_kv(float x) const {
    return round_act(f.kv == num::KvFmt::BF16 ? num::Fmt::BF16 : num::Fmt::F16, x);
  }

  // rmsnorm: r = rsqrt(sumsq * (1/n) + eps); y_i = RNE((x_i * r) * w_i).
  __device__ Norm norm(const float* x, int n) const {
    const float ss = warp_tree_sum(n, [x](int i) { return x[i] * x[i]; });
    return rsqrt_rn_fast(ss * num::inv_count(n) + eps);
  }
  __device__ float normed(float x, Norm r, const float* w, int i) const {
    return round_act(f.act, w ? (x * r) * w[i] : x * r);
  }
  __device__ float rms(const float* x, int n) const {
    return sqrt_rn_fast(warp_tree_sum(n, [x](int i) { return x[i] * x[i]; }) * num::inv_count(n));
  }
  // match_magnitude: f = target / sqrt(max(mean(x^2), floor)); x_i = RNE(x_i * f).
  __device__ Mag mag(const float* x, int n, float target, float floor) const {
    const float ms = warp_tree_sum(n, [x](int i) { return x[i] * x[i]; }) * num::inv_count(n);
    return target * num::recip(sqrt_rn_fast(num::nmax(ms, floor)));
  }
  __device__ float magged(float x, Mag m) const { return round_act(f.act, x * m); }
  // Gaussian top-k threshold: mean + mult * std (two passes).
  __device__ Cut cut(const float* x, int n, float mult) const {
    const float inv = num::inv_count(n);
    const float mean = warp_tree_sum(n, [x](int i) { return x[i]; }) * inv;
    const float var = warp_tree_sum(n,
                                    [x, mean](int i) {
                                      const float d = x[i] - mean;
                                      return d * d;
                                    }) *
                      inv;
    return mean + mult * sqrt_rn_fast(var);
  }
  __device__ float cutted(float x, Cut t) const {
    const float d = x - t;
    return round_act(f.act, num::is_nan(d) ? d : (d > 0.0f ? d : 0.0f));
  }
  // One output of a float32 coefficient matrix (AltUp router): lane-tree dot, one rounding.
  __device__ float warp_dot(const float* x, const DevMatrix& w, int row, int n) const {
    const float* wr = reinterpret_cast<const float*>(w.data + row * w.row_bytes);
    return num::round_to(f.act, warp_tree_sum(n, [x, wr](int i) { return x[i] * wr[i]; }));
  }
  // The same for a tiny matrix, on one thread (AltUp coefficients, n = streams).
  __device__ float small_dot(const float* x, const DevMatrix& w, int row, int n) const {
    const float* wr = reinterpret_cast<const float*>(w.data + row * w.row_bytes);
    return num::round_to(f.act, num::tree_dot(x, wr, n));
  }
  // RoPE: a = float(pos) * inv_freq[i]; (x, y) -> (x c - y s, y c + x s).
  __device__ CS rope_cs(int64_t pos, float inv_freq) const {
    const float a = static_cast<float>(pos) * inv_freq;
    return make_float2(num::cos_sfu(a), num::sin_sfu(a));
  }
  __device__ void rope(float& x0, float& x1, CS cs) const {
    const float a = x0, b = x1;
    x0 = round_act(f.act, a * cs.x - b * cs.y);
    x1 = round_act(f.act, b * cs.x + a * cs.y);
  }
};

struct RefOps {
  double eps;

  using Norm = double;
  using Mag = double2;  // (target, magnitude)
  using Cut = double;
  using CS = double2;

  __device__ float store(float x) const { return x; }
  __device__ float store_stream(float x) const { return x; }
  __device__ float tanh(float x) const { return float(::tanh(double(x))); }
  __device__ float gelu(float x) const {
    const double k = ::sqrt(2.0 / M_PI), v = x;
    return float(0.5 * v * (1.0 + ::tanh(k * (v + 0.044715 * v * v * v))));
  }
  __device__ float to_kv(float x) const { return x; }

  __device__ Norm norm(const float* x, int n) const {
    const double ss = warp_dsum(n, [x](int i) { return double(x[i]) * x[i]; });
    return 1.0 / ::sqrt(ss / double(n) + eps);
  }
  __device__ float normed(float x, Norm inv, const float* w, int i) const {
    return float(double(x) * inv * (w ? double(w[i]) : 1.0));
  }
  __device__ float rms(const float* x, int n) const {
    return float(::sqrt(warp_dsum(n, [x](int i) { return double(x[i]) * x[i]; }) / double(n)));
  }
  __device__ Mag mag(const float* x, int n, float target, float floor) const {
    const double ss = warp_dsum(n, [x](int i) { return double(x[i]) * x[i]; });
    return make_double2(target, ::sqrt(::fmax(ss / double(n), double(floor))));
  }
  __device__ float magged(float x, Mag m) const { return float(double(x) * m.x / m.y); }
  __device__ Cut cut(const float* x, int n, float mult) const {
    const double mean = warp_dsum(n, [x](int i) { return double(x[i]); }) / double(n);
    const double var = warp_dsum(n, [x, mean](int i) { return (x[i] - mean) * (x[i] - mean); });
    return mean + double(mult) * ::sqrt(var / double(n));
  }
  __device__ float cutted(float x, Cut c) const {
    const double v = double(x) - c;
    return float(0.0 < v ? v : 0.0);  // std::max(0.0, v)
  }
  __device__ float warp_dot(const float* x, const DevMatrix& w, int row, int n) const {
    return float(warp_dsum(n, [x, &w, row](int i) { return double(x[i]) * double(load_w(w, row, i)); }));
  }
  __device__ float small_dot(const float* x, const DevMatrix& w, int row, int n) const {
    double acc = 0;
    for (int i = 0; i < n; ++i) acc += double(x[i]) * double(load_w(w, row, i));
    return float(acc);
  }
  // HF computes the angle in float32 and its cos/sin in float64 (kernels_ref.cc).
  __device__ CS rope_cs(int64_t pos, float inv_freq) const {
    const float ang = float(pos) * inv_freq;
    return make_double2(::cos(double(ang)), ::sin(double(ang)));
  }
  __device__ void rope(float& x0, float& x1, CS cs) const {
    const double a = x0, b = x1;
    x0 = float(a * cs.x - b * cs.y);
    x1 = float(b * cs.x + a * cs.y);
  }
};

}  // namespace n3::gpu
