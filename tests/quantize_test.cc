// The INT4 quantiser (golden/quantize.h): the definition on hand-made rows,
// and exactness on every quantised matrix of the dev fixture, whose weights
// were made as q * s with one -8 per row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "golden/hf_checkpoint.h"
#include "golden/quantize.h"
#include "golden/weight_names.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

int nibble(const std::vector<uint8_t>& p, int64_t i) {
  int q = (p[i >> 1] >> ((i & 1) * 4)) & 0xf;
  return q >= 8 ? q - 16 : q;
}

MatrixRef int4_ref(const std::vector<uint8_t>& p, const std::vector<float>& s, int64_t cols, int64_t group) {
  MatrixRef m;
  m.dtype = WDType::INT4;
  m.rows = 1;
  m.cols = cols;
  m.data = p.data();
  m.scales = s.data();
  m.group = effective_group(group, cols);
  return m;
}

TEST(Quantize, RoundsHalfToEvenAndClampsToMinus8Plus7) {
  // max|w| = 8 -> scale 1, so q is w rounded half to even, clamped.
  const std::vector<float> w = {8.0f, -8.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 7.5f, 6.49f, -7.5f};
  const std::vector<int> want = {7, -8, 0, 2, 2, 0, -2, -2, 7, 6, -8};
  std::vector<uint8_t> p(int4_row_bytes(w.size()), 0xff);
  std::vector<float> s(1);
  ASSERT_TRUE(quantize_row_int4(w.data(), w.size(), 0, p.data(), s.data()));
  EXPECT_EQ(s[0], 1.0f);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(nibble(p, i), want[i]) << "element " << i << " = " << w[i];
  EXPECT_EQ(p.back() >> 4, 0) << "the padding nibble of an odd-length row must be 0";
}

TEST(Quantize, ZeroRowGetsScaleZeroAndDequantisesToZero) {
  std::vector<float> w(9, 0.0f), out(9, 1.0f);
  std::vector<uint8_t> p(5, 0xff);
  std::vector<float> s(1, 1.0f);
  ASSERT_TRUE(quantize_row_int4(w.data(), 9, 0, p.data(), s.data()));
  EXPECT_EQ(s[0], 0.0f);
  for (uint8_t b : p) EXPECT_EQ(b, 0);
  dequant_row(int4_ref(p, s, 9, 0), 0, out.data());
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(Quantize, RejectsNaNAndInfinity) {
  std::vector<uint8_t> p(2);
  std::vector<float> s(1);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    const std::vector<float> w = {1.0f, bad, 2.0f};
    EXPECT_FALSE(quantize_row_int4(w.data(), 3, 0, p.data(), s.data())) << bad;
  }
}

TEST(Quantize, PerGroupScalesAreMaxOver8OfTheirGroup) {
  // 10 columns, groups of 4: [0,4) [4,8) [8,10).
  const std::vector<float> w = {1, -2, 0.5f, 0, 40, 10, -20, 5, 0.25f, -0.125f};
  std::vector<uint8_t> p(5);
  std::vector<float> s(3), out(10);
  ASSERT_TRUE(quantize_row_int4(w.data(), 10, 4, p.data(), s.data()));
  EXPECT_EQ(s[0], 2.0f / 8);
  EXPECT_EQ(s[1], 40.0f / 8);
  EXPECT_EQ(s[2], 0.25f / 8);
  dequant_row(int4_ref(p, s, 10, 4), 0, out.data());
  for (int i = 0; i < 10; ++i) {
    const float sc = s[i / 4];
    // Error is at most half a step, or one step for a positive maximum (8 clamps to 7).
    EXPECT_LE(std::fabs(out[i] - w[i]), sc) << "element " << i;
    if (w[i] < 7.5f * sc) {
      EXPECT_LE(std::fabs(out[i] - w[i]), sc / 2) << "element " << i;
    }
  }
}

TEST(Quantize, ScaledIntegerRowsWithAMinus8AreExact) {
  // w = q * s with arbitrary float s: max|w| / 8 recovers s, w / s rounds to q.
  for (float sc : {0.013f, 1.7e-5f, 3.3f, 0.0078125f}) {
    std::vector<float> w;
    for (int q = -8; q <= 7; ++q) w.push_back(float(q) * sc);
    std::vector<uint8_t> p(8);
    std::vector<float> s(1), out(16);
    ASSERT_TRUE(quantize_row_int4(w.data(), 16, 0, p.data(), s.data()));
    EXPECT_EQ(s[0], sc);
    dequant_row(int4_ref(p, s, 16, 0), 0, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), w.data(), 64)) << "scale " << sc;
  }
}

// Every WeightKind::Matrix tensor of the dev fixture, every row: quantise,
// dequantise, compare bit for bit with the checkpoint's float32 row.
TEST(Quantize, DevFixtureMatricesRoundTripBitExactly) {
  auto src = open_hf_checkpoint(test::fixture("gemma3n-dev/hf"));
  int64_t rows = 0, matrices = 0;
  for (const WeightSpec& spec : weight_specs(src->config())) {
    if (spec.kind != WeightKind::Matrix) continue;
    const MatrixRef m = src->matrix(spec.name);
    ASSERT_EQ(m.dtype, WDType::F32) << spec.name;
    std::vector<float> w(m.cols), back(m.cols);
    std::vector<uint8_t> p(int4_row_bytes(m.cols));
    std::vector<float> s(1);
    int64_t bad_rows = 0, first_bad = -1;
    for (int64_t r = 0; r < m.rows; ++r) {
      dequant_row(m, r, w.data());
      ASSERT_TRUE(quantize_row_int4(w.data(), m.cols, 0, p.data(), s.data()));
      dequant_row(int4_ref(p, s, m.cols, 0), 0, back.data());
      if (std::memcmp(w.data(), back.data(), 4 * m.cols) != 0) {
        if (first_bad < 0) first_bad = r;
        ++bad_rows;
      }
    }
    EXPECT_EQ(bad_rows, 0) << spec.name << ": " << bad_rows << " of " << m.rows << " rows differ, first "
                           << first_bad;
    rows += m.rows;
    ++matrices;
  }
  EXPECT_GT(matrices, 50);
  std::printf("quantised %lld matrices, %lld rows: all bit-exact\n", (long long)matrices, (long long)rows);
}

}  // namespace
}  // namespace n3
