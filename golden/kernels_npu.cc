// NPU numerics: every operator through the header-only core
// (golden/numerics/, specified in docs/numerics.md), with the formats of the
// hardware file. The functional simulator, the SystemC model and the CUDA path
// compute through the same core, which is what makes them bit-exact with this.
#include <map>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "golden/kernels.h"
#include "golden/npu_matrix.h"
#include "golden/numerics/npu_ops.h"

namespace n3 {

namespace {

using num::Fmt;
using num::Formats;

class NpuKernels : public Kernels {
 public:
  explicit NpuKernels(const Formats& f) : f_(f) {
    const std::string problem = num::formats_problem(f);
    require(problem.empty(), problem);
  }
  const char* name() const override { return "npu"; }

  void linear(const MatrixRef& w, const float* x, int64_t T, float* y) const override { gemv(w, x, T, y, f_.act); }
  void lm_head(const MatrixRef& w, const float* x, int64_t T, float* y) const override {
    gemv(w, x, T, y, f_.logits);
  }

  void rmsnorm(const float* x, const float* w, int64_t rows, int64_t n, double eps, float* y) const override {
    num::rmsnorm_rows(x, w, rows, n, float(eps), y, f_.act);
  }
  float rms(const float* x, int64_t n) const override { return num::rms(x, n); }
  void match_magnitude(float* x, int64_t n, float target, float floor) const override {
    num::match_magnitude(x, n, target, floor, f_.act);
  }
  void tanh_inplace(float* x, int64_t n) const override { num::tanh_vec(x, n, f_.act); }
  void gelu_inplace(float* x, int64_t n) const override { num::gelu_vec(x, n, f_.act); }
  void rope(float* x, int64_t heads, int64_t hd, int64_t pos, double theta) const override {
    num::rope(x, heads, hd, pos, inv_freq(theta, hd), f_.act);
  }
  void attend(const float* q, const KvStore& k, const KvStore& v, int64_t kvh, int64_t kv_heads, int64_t lo,
              int64_t hi, int64_t hd, float* out) const override {
    num::attend_npu(q, view(k, kvh, kv_heads, hd), view(v, kvh, kv_heads, hd), lo, hi, hd, out, f_);
  }
  void gaussian_topk(float* x, int64_t n, float mult) const override { num::gaussian_topk(x, n, mult, f_.act); }
  void softcap(float* x, int64_t n, float cap) const override { num::softcap(x, n, cap, f_.logits); }
  void store(float* x, int64_t n) const override { num::round_to(f_.act, x, n); }
  void store_stream(float* x, int64_t n) const override { num::round_to(f_.stream, x, n); }

  void append_kv(KvStore& s, float* rows, int64_t T, int64_t kv_heads, int64_t hd) const override {
    if (f_.kv != num::KvFmt::INT8) {
      num::to_kv(rows, T * kv_heads * hd, f_.kv);
      s.val.insert(s.val.end(), rows, rows + T * kv_heads * hd);
      return;
    }
    // INT8: one scale per token and KV head; the stored value is q * scale.
    s.scale.resize(kv_heads);
    std::vector<int8_t> q(static_cast<size_t>(hd));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < kv_heads; ++h) {
        float* r = rows + (t * kv_heads + h) * hd;
        const float sc = num::int8_quantize(r, hd, q.data());
        s.scale[h].push_back(sc);
        s.q8.insert(s.q8.end(), q.begin(), q.end());
        for (int64_t i = 0; i < hd; ++i) r[i] = num::int8_value(q[i], sc);
      }
    s.val.insert(s.val.end(), rows, rows + T * kv_heads * hd);
  }

 private:
  // INT4 matrices go to the GEMV engine (BFP activations, integer MACs); the
  // small float32 AltUp matrices ([S, D] router, [S*S, S] and [S, S]
  // coefficients) are dotted in float32 in the core's tree order, one
  // rounding to `out` (docs/numerics.md, "Float coefficient matrices").
  void gemv(const MatrixRef& w, const float* x, int64_t T, float* y, Fmt out) const {
    if (w.dtype == WDType::INT4) {
      num::linear_npu(w, x, T, y, f_, out);
      return;
    }
    require(w.dtype == WDType::F32, std::string("NPU numerics: a ") + wdtype_name(w.dtype) +
                                        " matrix reached the GEMV (quantise float checkpoints on load)");
    const float* W = reinterpret_cast<const float*>(w.data);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < w.rows; ++o)
        y[t * w.rows + o] = num::round_to(out, num::tree_dot(x + t * w.cols, W + o * w.cols, w.cols));
  }

  num::KvView view(const KvStore& s, int64_t kvh, int64_t kv_heads, int64_t hd) const {
    num::KvView v;
    v.fmt = f_.kv;
    v.stride = kv_heads * hd;
    v.val = s.val.data() + kvh * hd;
    if (f_.kv == num::KvFmt::INT8) {
      v.q8 = s.q8.data() + kvh * hd;
      v.scale = s.scale[kvh].data();
    }
    return v;
  }

  // The RoPE frequency table is a constant the compiler would precompute.
  const float* inv_freq(double theta, int64_t hd) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto& t = freq_[{theta, hd}];
    if (t.empty()) t = num::rope_inv_freq(theta, hd);
    return t.data();
  }

  Formats f_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<double, int64_t>, std::vector<float>> freq_;
};

}  // namespace

std::unique_ptr<Kernels> make_npu_kernels(const num::Formats& f) { return std::make_unique<NpuKernels>(f); }

}  // namespace n3
