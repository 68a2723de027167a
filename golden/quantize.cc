#include "golden/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/error.h"
#include "golden/n3w_file.h"

namespace n3 {

bool quantize_row_int4(const float* w, int64_t cols, int64_t group, uint8_t* packed, float* scales) {
  group = effective_group(group, cols);
  std::memset(packed, 0, static_cast<size_t>(int4_row_bytes(cols)));
  // 1.5 * 2^23: adding and subtracting it rounds |x| < 2^22 to an integer,
  // half to even (round-to-nearest is the only mode n3 runs in). Exact, and
  // unlike nearbyintf it vectorises on baseline x86-64.
  constexpr float kRound = 12582912.0f;
  for (int64_t g0 = 0, gi = 0; g0 < cols; g0 += group, ++gi) {
    const int64_t g1 = std::min(cols, g0 + group);
    float amax = 0.0f;
    bool finite = true;
    for (int64_t i = g0; i < g1; ++i) {
      const float a = std::fabs(w[i]);
      finite &= a <= std::numeric_limits<float>::max();  // false for NaN and infinities
      amax = a > amax ? a : amax;
    }
    if (!finite) return false;
    // Division by 8 is exact (a power of two) unless the result is subnormal.
    const float s = amax / 8.0f;
    scales[gi] = s;
    if (s == 0.0f) continue;  // all-zero group (or max|w| below 8 * the smallest float): q = 0
    for (int64_t i = g0; i < g1; ++i) {
      float r = (w[i] / s + kRound) - kRound;
      r = r < -8.0f ? -8.0f : r > 7.0f ? 7.0f : r;
      packed[i >> 1] |= static_cast<uint8_t>((static_cast<int>(r) & 0xf) << ((i & 1) * 4));
    }
  }
  return true;
}

namespace {

// Row blocks of about this many bytes of float32 input are converted at a time.
constexpr int64_t kBlockBytes = 16 << 20;

void copy_int4_matrix(const WeightSource& src, const N3wTensor& t, size_t index, N3wWriter& w) {
  const MatrixRef m = src.matrix(t.name);
  require(m.rows == t.rows() && m.cols == t.cols(),
          src.describe() + ": tensor '" + t.name + "' has shape [" + std::to_string(m.rows) + ", " +
              std::to_string(m.cols) + "], expected " + shape_str(t.shape));
  const int64_t cols = t.cols(), gpr = t.groups_per_row(), rb = t.row_bytes();
  const int64_t block = std::max<int64_t>(1, std::min(t.rows(), kBlockBytes / (cols * 4)));
  std::vector<uint8_t> packed(static_cast<size_t>(block * rb));
  std::vector<float> scales(static_cast<size_t>(block * gpr));
  std::vector<char> bad(static_cast<size_t>(block));
  for (int64_t r0 = 0; r0 < t.rows(); r0 += block) {
    const int64_t nb = std::min(block, t.rows() - r0);
#pragma omp parallel
    {
      std::vector<float> row(static_cast<size_t>(cols));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < nb; ++r) {
        dequant_row(m, r0 + r, row.data());
        bad[r] = !quantize_row_int4(row.data(), cols, t.group, packed.data() + r * rb, scales.data() + r * gpr);
      }
    }
    for (int64_t r = 0; r < nb; ++r)
      require(!bad[r], src.describe() + ": tensor '" + t.name + "' row " + std::to_string(r0 + r) +
                           " holds a NaN or an infinity; it cannot be quantised");
    w.append_int4(index, nb, packed.data(), scales.data());
  }
}

void copy_f32(const WeightSource& src, const N3wTensor& t, size_t index, N3wWriter& w) {
  std::vector<float> v;
  if (t.kind == WeightKind::FloatMatrix) {
    const MatrixRef m = src.matrix(t.name);
    require(m.rows == t.rows() && m.cols == t.cols(),
            src.describe() + ": tensor '" + t.name + "' has shape [" + std::to_string(m.rows) + ", " +
                std::to_string(m.cols) + "], expected " + shape_str(t.shape));
    v.resize(static_cast<size_t>(m.rows * m.cols));
    for (int64_t r = 0; r < m.rows; ++r) dequant_row(m, r, v.data() + r * m.cols);
  } else {
    v = src.vec(t.name);
    require(int64_t(v.size()) == numel(t.shape), src.describe() + ": tensor '" + t.name + "' has " +
                                                     std::to_string(v.size()) + " elements, expected " +
                                                     shape_str(t.shape));
  }
  for (size_t i = 0; i < v.size(); ++i)
    require(std::isfinite(v[i]), src.describe() + ": tensor '" + t.name + "' element " + std::to_string(i) +
                                     " is a NaN or an infinity");
  w.append_f32(index, t.rows(), v.data());
}

}  // namespace

uint64_t quantize_to_n3w(const WeightSource& src, const std::string& path, const QuantizeOptions& opt) {
  N3wWriter w(path, src.config(), opt.group);
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    const N3wTensor& t = w.tensors()[i];
    if (t.dtype == WDType::INT4) copy_int4_matrix(src, t, i, w);
    else copy_f32(src, t, i, w);
    if (opt.progress) opt.progress(w.bytes_written(), w.file_bytes());
  }
  w.finish();
  return w.file_bytes();
}

}  // namespace n3
