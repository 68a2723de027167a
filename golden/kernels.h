// The arithmetic the golden model's graph is written in. The graph
// (golden/model.cc) names operators; a Kernels implementation decides how
// each is computed: ReferenceKernels in float32 with float64 accumulation
// (HuggingFace's semantics), the NPU kernels bit-exactly as docs/numerics.md.
#pragma once
#include <cstdint>
#include <memory>

#include "golden/weights.h"

namespace n3 {

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual const char* name() const = 0;
  // y[t, :] = W x[t, :] for t < T.
  virtual void linear(const MatrixRef& w, const float* x, int64_t T, float* y) const = 0;
  // Per row of n: y = x / sqrt(mean(x^2) + eps) * w (w == nullptr: no weight).
  virtual void rmsnorm(const float* x, const float* w, int64_t rows, int64_t n, double eps,
                       float* y) const = 0;
  // sqrt(mean(x^2)) of one vector.
  virtual float rms(const float* x, int64_t n) const = 0;
  // x <- x * target / sqrt(max(mean(x^2), floor)): the AltUp magnitude match.
  virtual void match_magnitude(float* x, int64_t n, float target, float floor) const = 0;
  virtual void tanh_inplace(float* x, int64_t n) const = 0;
  virtual void gelu_inplace(float* x, int64_t n) const = 0;  // tanh approximation
  // Half-split (NeoX) RoPE on `heads` vectors of head_dim at position pos.
  virtual void rope(float* x, int64_t heads, int64_t head_dim, int64_t pos, double theta) const = 0;
  // One query row of attention: scores q.k_j (no scale) for j in [lo, hi],
  // softmax, out = sum_j p_j v_j. k/v rows are `stride` floats apart.
  virtual void attend(const float* q, const float* k, const float* v, int64_t stride, int64_t lo,
                      int64_t hi, int64_t head_dim, float* out) const = 0;
  // x <- relu(x - (mean + mult * std)), population std.
  virtual void gaussian_topk(float* x, int64_t n, float mult) const = 0;
  // x <- cap * tanh(x / cap).
  virtual void softcap(float* x, int64_t n, float cap) const = 0;
  // Rounds K/V to the cache's storage format before they are stored.
  virtual void to_kv_format(float* x, int64_t n) const = 0;
};

std::unique_ptr<Kernels> make_reference_kernels();

// Inverse standard normal CDF in float64 (torch.distributions.Normal.icdf), so
// the Gaussian top-k multiplier for sparsity 0.95 is 1.6448536 as in HF.
double normal_icdf(double p);

}  // namespace n3
