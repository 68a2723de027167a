// Reference numerics: float32 storage, float64 accumulation, libm functions.
// This is the model's specification (HF transformers in float32), not the NPU.
#include <algorithm>
#include <cmath>
#include <vector>

#include "golden/kernels.h"

namespace n3 {

namespace {

class ReferenceKernels : public Kernels {
 public:
  const char* name() const override { return "reference"; }

  void linear(const MatrixRef& w, const float* x, int64_t T, float* y) const override {
    linear_ref(w, x, T, y);
  }

  void rmsnorm(const float* x, const float* w, int64_t rows, int64_t n, double eps,
               float* y) const override {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      double ss = 0;
      for (int64_t i = 0; i < n; ++i) ss += double(xr[i]) * xr[i];
      const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
      for (int64_t i = 0; i < n; ++i) yr[i] = float(double(xr[i]) * inv * (w ? double(w[i]) : 1.0));
    }
  }

  float rms(const float* x, int64_t n) const override {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
    return float(std::sqrt(ss / double(n)));
  }

  void match_magnitude(float* x, int64_t n, float target, float floor) const override {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
    const double mag = std::sqrt(std::max(ss / double(n), double(floor)));
    for (int64_t i = 0; i < n; ++i) x[i] = float(double(x[i]) * target / mag);
  }

  void tanh_inplace(float* x, int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) x[i] = float(std::tanh(double(x[i])));
  }

  void gelu_inplace(float* x, int64_t n) const override {
    const double k = std::sqrt(2.0 / M_PI);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[i];
      x[i] = float(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
    }
  }

  void rope(float* x, int64_t heads, int64_t hd, int64_t pos, double theta) const override {
    const int64_t half = hd / 2;
    for (int64_t i = 0; i < half; ++i) {
      // HF computes inv_freq and the angle in float32; matching that keeps
      // large-position angles within tolerance of the reference.
      const float inv_freq = float(1.0 / std::pow(theta, double(2 * i) / double(hd)));
      const float ang = float(pos) * inv_freq;
      const double c = std::cos(double(ang)), s = std::sin(double(ang));
      for (int64_t h = 0; h < heads; ++h) {
        float* v = x + h * hd;
        const double a = v[i], b = v[i + half];
        v[i] = float(a * c - b * s);
        v[i + half] = float(b * c + a * s);
      }
    }
  }

  void attend(const float* q, const KvStore& ks, const KvStore& vs, int64_t kvh, int64_t kv_heads, int64_t lo,
              int64_t hi, int64_t hd, float* out) const override {
    const int64_t stride = kv_heads * hd;
    const float* k = ks.val.data() + kvh * hd;
    const float* v = vs.val.data() + kvh * hd;
    std::vector<double> s(static_cast<size_t>(hi - lo + 1));
    double mx = -INFINITY;
    for (int64_t j = lo; j <= hi; ++j) {
      const float* kj = k + j * stride;
      double d = 0;
      for (int64_t i = 0; i < hd; ++i) d += double(q[i]) * kj[i];
      s[j - lo] = d;
      mx = std::max(mx, d);
    }
    double sum = 0;
    for (double& e : s) sum += (e = std::exp(e - mx));
    std::vector<double> acc(static_cast<size_t>(hd), 0.0);
    for (int64_t j = lo; j <= hi; ++j) {
      const double p = s[j - lo] / sum;
      const float* vj = v + j * stride;
      for (int64_t i = 0; i < hd; ++i) acc[i] += p * vj[i];
    }
    for (int64_t i = 0; i < hd; ++i) out[i] = float(acc[i]);
  }

  void gaussian_topk(float* x, int64_t n, float mult) const override {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const double mean = sum / double(n);
    double var = 0;
    for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    const double cut = mean + double(mult) * std::sqrt(var / double(n));
    for (int64_t i = 0; i < n; ++i) x[i] = float(std::max(0.0, double(x[i]) - cut));
  }

  void softcap(float* x, int64_t n, float cap) const override {
    for (int64_t i = 0; i < n; ++i) x[i] = float(double(cap) * std::tanh(double(x[i]) / double(cap)));
  }

  void store(float*, int64_t) const override {}  // reference activations are float32
  void store_stream(float*, int64_t) const override {}
  void append_kv(KvStore& s, float* rows, int64_t T, int64_t kv_heads, int64_t hd) const override {
    s.val.insert(s.val.end(), rows, rows + T * kv_heads * hd);  // the reference cache is float32
  }
};

}  // namespace

void KvStore::trim(int64_t sinks, int64_t recent, int64_t kv_dim) {
  const int64_t n = static_cast<int64_t>(val.size()) / kv_dim;
  if (sinks + recent >= n) return;
  val.erase(val.begin() + sinks * kv_dim, val.begin() + (n - recent) * kv_dim);
  if (!q8.empty()) q8.erase(q8.begin() + sinks * kv_dim, q8.begin() + (n - recent) * kv_dim);
  for (auto& s : scale) s.erase(s.begin() + sinks, s.begin() + (n - recent));
}

std::unique_ptr<Kernels> make_reference_kernels() { return std::make_unique<ReferenceKernels>(); }

}  // namespace n3
