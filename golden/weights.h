// The weights the golden model reads, whatever file they came from: a
// HuggingFace checkpoint (f32/bf16/f16, memory-mapped) or an n3 weights file
// (INT4 + scales, memory-mapped). Matrices are views, never materialised as a
// whole: E4B does not fit in memory as float32, so rows are dequantised on use.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "golden/model_config.h"

namespace n3 {

enum class WDType : uint8_t { F32 = 0, BF16 = 1, F16 = 2, INT4 = 3 };
const char* wdtype_name(WDType t);

// A row-major [rows, cols] matrix in storage format.
// INT4: each row is ceil(cols/2) bytes, element 2k in the low nibble of byte
// k, two's complement in [-8, 7]; `scales` holds rows * groups_per_row()
// float32 scales (group == cols: one scale per row). w = q * scale.
struct MatrixRef {
  WDType dtype = WDType::F32;
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;
  const float* scales = nullptr;
  int64_t group = 0;

  int64_t row_bytes() const;
  int64_t groups_per_row() const { return (cols + group - 1) / group; }
};

float bf16_to_f32(uint16_t h);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16_rne(float f);

// out[cols] = row r of m as float32 (exact for every storage format).
void dequant_row(const MatrixRef& m, int64_t r, float* out);
// y[t, o] = sum_i x[t, i] * W[o, i] for t < T, W = m; float64 accumulation in
// index order; rows are split over threads, so results do not depend on the
// thread count.
void linear_ref(const MatrixRef& m, const float* x, int64_t T, float* y);

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const ModelConfig& config() const = 0;
  virtual bool has(const std::string& name) const = 0;
  // Names are those of golden/weight_names.h (HF's without the model. /
  // model.language_model. prefix). Throws n3::Error naming a missing tensor.
  virtual MatrixRef matrix(const std::string& name) const = 0;
  virtual std::vector<float> vec(const std::string& name) const = 0;
  virtual std::string describe() const = 0;
};

// A checkpoint directory (config.json + safetensors) or an .n3w file.
std::unique_ptr<WeightSource> open_weights(const std::string& path);

}  // namespace n3
