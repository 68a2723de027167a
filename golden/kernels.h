// The arithmetic the golden model's graph is written in. The graph
// (golden/model.cc) names operators; a Kernels implementation decides how
// each is computed: ReferenceKernels in float32 with float64 accumulation
// (HuggingFace's semantics), the NPU kernels bit-exactly as docs/numerics.md.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "golden/weights.h"

namespace n3 {

// One layer's K or V cache in its storage format. `val` holds the stored
// values as float32 ([row * kv_dim], dequantised for int8 caches); int8
// caches also keep their codes and one scale per token and KV head
// (`scale[head][row]`), which is what the NPU's attention reads.
struct KvStore {
  std::vector<float> val;
  std::vector<int8_t> q8;
  std::vector<std::vector<float>> scale;

  bool empty() const { return val.empty(); }
  // Keeps rows [0, sinks) and the last `recent` rows.
  void trim(int64_t sinks, int64_t recent, int64_t kv_dim);
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual const char* name() const = 0;
  // y[t, :] = W x[t, :] for t < T.
  virtual void linear(const MatrixRef& w, const float* x, int64_t T, float* y) const = 0;
  // The tied LM head: like linear, but the outputs are logits (their own
  // storage format on the NPU).
  virtual void lm_head(const MatrixRef& w, const float* x, int64_t T, float* y) const { linear(w, x, T, y); }
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
  // One query row of attention against KV head `kvh`: scores q.k_j (no
  // scale) for cache rows j in [lo, hi], softmax, out = sum_j p_j v_j.
  virtual void attend(const float* q, const KvStore& k, const KvStore& v, int64_t kvh, int64_t kv_heads,
                      int64_t lo, int64_t hi, int64_t head_dim, float* out) const = 0;
  // x <- relu(x - (mean + mult * std)), population std.
  virtual void gaussian_topk(float* x, int64_t n, float mult) const = 0;
  // x <- cap * tanh(x / cap), in the logits' format.
  virtual void softcap(float* x, int64_t n, float cap) const = 0;
  // Rounds a materialised activation to its storage format (L2).
  virtual void store(float* x, int64_t n) const = 0;
  // Rounds a tensor that carries the residual (the AltUp streams, ag, al, o)
  // to the stream format: these accumulate over every layer.
  virtual void store_stream(float* x, int64_t n) const = 0;
  // Converts T rows of [kv_heads * head_dim] to the cache format (in place:
  // `rows` then holds the stored values) and appends them to `s`.
  virtual void append_kv(KvStore& s, float* rows, int64_t T, int64_t kv_heads, int64_t head_dim) const = 0;
};

std::unique_ptr<Kernels> make_reference_kernels();
// The NPU's bit-exact arithmetic (docs/numerics.md) with the formats of a
// hardware file's numerics section.
namespace num {
struct Formats;
}
std::unique_ptr<Kernels> make_npu_kernels(const num::Formats& f);

}  // namespace n3
