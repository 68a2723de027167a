#include "golden/weights_quantized.h"

#include <map>

#include "base/error.h"
#include "golden/quantize.h"
#include "golden/weight_names.h"

namespace n3 {

namespace {

class QuantizedSource : public WeightSource {
 public:
  QuantizedSource(std::shared_ptr<const WeightSource> src, int64_t group) : src_(std::move(src)) {
    for (const auto& s : weight_specs(src_->config())) {
      if (s.kind == WeightKind::FloatMatrix && src_->matrix(s.name).dtype != WDType::F32) {
        // bf16/f16 AltUp coefficients widen exactly to the float32 the NPU keeps.
        const MatrixRef m = src_->matrix(s.name);
        Quantized& q = q_[s.name];
        q.data.resize(static_cast<size_t>(m.rows * m.cols * 4));
        for (int64_t r = 0; r < m.rows; ++r) dequant_row(m, r, reinterpret_cast<float*>(q.data.data()) + r * m.cols);
        q.ref = MatrixRef{WDType::F32, m.rows, m.cols, q.data.data(), nullptr, m.cols};
        continue;
      }
      if (s.kind != WeightKind::Matrix) continue;
      const MatrixRef m = src_->matrix(s.name);
      const int64_t g = effective_group(group, m.cols), groups = (m.cols + g - 1) / g;
      Quantized& q = q_[s.name];
      q.data.resize(static_cast<size_t>(m.rows * int4_row_bytes(m.cols)));
      q.scales.resize(static_cast<size_t>(m.rows * groups));
      q.ref = MatrixRef{WDType::INT4, m.rows, m.cols, nullptr, nullptr, g};
      std::string bad;
#pragma omp parallel
      {
        std::vector<float> row(static_cast<size_t>(m.cols));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < m.rows; ++r) {
          dequant_row(m, r, row.data());
          if (!quantize_row_int4(row.data(), m.cols, g, &q.data[r * int4_row_bytes(m.cols)], &q.scales[r * groups]))
#pragma omp critical
            bad = s.name + " row " + std::to_string(r);
        }
      }
      require(bad.empty(), src_->describe() + ": non-finite weight in " + bad);
      q.ref.data = q.data.data();
      q.ref.scales = q.scales.data();
    }
  }
  const ModelConfig& config() const override { return src_->config(); }
  bool has(const std::string& name) const override { return src_->has(name); }
  MatrixRef matrix(const std::string& name) const override {
    auto it = q_.find(name);
    return it != q_.end() ? it->second.ref : src_->matrix(name);
  }
  std::vector<float> vec(const std::string& name) const override { return src_->vec(name); }
  std::string describe() const override { return src_->describe() + " (quantised to INT4 on load)"; }

 private:
  struct Quantized {
    std::vector<uint8_t> data;
    std::vector<float> scales;
    MatrixRef ref;
  };
  std::shared_ptr<const WeightSource> src_;
  std::map<std::string, Quantized> q_;
};

}  // namespace

std::shared_ptr<const WeightSource> quantize_on_load(std::shared_ptr<const WeightSource> src, int64_t group) {
  for (const auto& s : weight_specs(src->config()))
    if ((s.kind == WeightKind::Matrix && src->matrix(s.name).dtype != WDType::INT4) ||
        (s.kind == WeightKind::FloatMatrix && src->matrix(s.name).dtype != WDType::F32))
      return std::make_shared<QuantizedSource>(std::move(src), group);
  return src;
}

}  // namespace n3
