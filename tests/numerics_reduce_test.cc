// Reductions follow the documented lane-tree order exactly (checked against a
// literal transcription of the order) and are accurate (against long double);
// the vector operators built on them match float64 references within their
// documented roundings and do not depend on the thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "golden/numerics/npu_ops.h"

namespace n3::num {
namespace {

std::vector<float> randv(uint64_t seed, int64_t n, float scale) {
  std::mt19937_64 g(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& e : v) e = scale * (static_cast<float>(g() >> 40) * 0x1p-24f - 0.5f) * 2.0f;
  return v;
}

// The order of docs/numerics.md, written out: 32 lanes strided, then
// lane[j] += lane[j + off] for off = 16, 8, 4, 2, 1.
float literal_tree_sum(const std::vector<float>& x) {
  float lane[32];
  for (float& l : lane) l = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) lane[i % 32] = lane[i % 32] + x[i];
  for (int off = 16; off >= 1; off /= 2)
    for (int j = 0; j < off; ++j) lane[j] = lane[j] + lane[j + off];
  return lane[0];
}

TEST(NumericsReduce, SumFollowsTheDocumentedOrder) {
  for (int64_t n : {0, 1, 31, 32, 33, 1000, 2048, 16384, 16385}) {
    const std::vector<float> x = randv(n + 1, n, 100.0f);
    EXPECT_EQ(f2u(tree_sum(x.data(), n)), f2u(literal_tree_sum(x))) << "n=" << n;
    std::vector<float> sq(x.size());
    for (size_t i = 0; i < x.size(); ++i) sq[i] = x[i] * x[i];
    EXPECT_EQ(f2u(tree_sumsq(x.data(), n)), f2u(literal_tree_sum(sq))) << "n=" << n;
  }
}

TEST(NumericsReduce, SumAccuracy) {
  // Relative to sum |x_i|: each lane chain of n/32 adds, then 5 tree levels.
  for (int64_t n : {256, 2048, 16384}) {
    const std::vector<float> x = randv(7 * n, n, 10.0f);
    long double exact = 0, mag = 0;
    for (float v : x) exact += v, mag += std::fabs(v);
    const double rel = static_cast<double>(std::fabs(tree_sum(x.data(), n) - exact) / mag);
    std::printf("[ tree_sum n=%lld ] |err| / sum|x| = %.3g (bound (n/32 + 5) 2^-24 = %.3g)\n",
                static_cast<long long>(n), rel, (n / 32.0 + 5) * 0x1p-24);
    EXPECT_LE(rel, (n / 32.0 + 5) * 0x1p-24);
  }
}

TEST(NumericsReduce, MaxAndNaN) {
  std::vector<float> x = randv(3, 1000, 50.0f);
  float m = -INFINITY;
  for (float v : x) m = std::max(m, v);
  EXPECT_EQ(tree_max(x.data(), 1000), m);
  EXPECT_EQ(tree_max(x.data(), 0), -INFINITY);
  x[517] = NAN;
  EXPECT_EQ(f2u(tree_max(x.data(), 1000)), kNaNBits);
  EXPECT_EQ(f2u(tree_sum(x.data(), 1000)), kNaNBits);
  x[517] = INFINITY;
  x[3] = -INFINITY;
  EXPECT_EQ(f2u(tree_sum(x.data(), 1000)), kNaNBits);
  EXPECT_EQ(tree_max(x.data(), 1000), INFINITY);
}

TEST(NumericsReduce, RmsNormAndMagnitude) {
  const int64_t n = 2048;
  const std::vector<float> x = randv(11, n, 30.0f), w = randv(12, n, 2.0f);
  std::vector<float> y(n);
  rmsnorm(x.data(), w.data(), n, 1e-6f, y.data(), Fmt::F32);
  long double ss = 0;
  for (float v : x) ss += static_cast<long double>(v) * v;
  const long double r = 1.0L / std::sqrt(ss / n + 1e-6L);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(y[i] - x[i] * r * w[i]) / std::fabs(x[i] * r * w[i])));
  std::printf("[ rmsnorm ] max relative error %.3g\n", worst);
  EXPECT_LT(worst, 8e-7);  // sum chain (~70 adds) + rsqrt + two products
  EXPECT_NEAR(rms(x.data(), n), static_cast<double>(std::sqrt(ss / n)), 1e-6 * std::sqrt(ss / n));
  std::vector<float> a = randv(13, n, 0.01f);
  match_magnitude(a.data(), n, 5.0f, 1e-5f, Fmt::F32);
  EXPECT_NEAR(rms(a.data(), n), 5.0f, 5e-6);
  std::vector<float> z(n, 0.0f);
  match_magnitude(z.data(), n, 5.0f, 1e-5f, Fmt::F32);  // floor keeps it finite
  EXPECT_EQ(z[0], 0.0f);
}

TEST(NumericsReduce, SoftmaxLargeScores) {
  // Scores in the hundreds (no 1/sqrt(d) scale): exp(s - max) stays accurate.
  std::vector<float> s = randv(21, 512, 400.0f);
  std::vector<long double> e(s.size());
  long double mx = -INFINITY, z = 0;
  for (float v : s) mx = std::max<long double>(mx, v);
  for (size_t i = 0; i < s.size(); ++i) z += (e[i] = std::exp(s[i] - mx));
  softmax(s.data(), static_cast<int64_t>(s.size()), Fmt::F32);
  double worst = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (e[i] / z > 1e-30) worst = std::max(worst, static_cast<double>(std::fabs(s[i] - e[i] / z) / (e[i] / z)));
  std::printf("[ softmax |s| <= 400 ] max relative error %.3g\n", worst);
  EXPECT_LT(worst, 2e-5);  // |s - max| up to 800: s - max rounds at 2^-15 relative
}

TEST(NumericsReduce, GaussianTopKAndSoftcap) {
  const int64_t n = 16384;
  std::vector<float> g = randv(31, n, 4.0f);
  long double mean = 0, var = 0;
  for (float v : g) mean += v;
  mean /= n;
  for (float v : g) var += (v - mean) * (v - mean);
  const long double t = mean + 1.6448536L * std::sqrt(var / n);
  std::vector<float> y = g;
  gaussian_topk(y.data(), n, 1.6448536f, Fmt::F32);
  int64_t kept = 0, want = 0;
  for (int64_t i = 0; i < n; ++i) {
    kept += y[i] > 0;
    want += g[i] > t;
    EXPECT_NEAR(y[i], std::max(0.0L, g[i] - t), 1e-5) << i;
  }
  EXPECT_NEAR(kept, want, 2);
  std::vector<float> l = randv(32, 1000, 200.0f);
  std::vector<float> c = l;
  softcap(c.data(), 1000, 30.0f, Fmt::F32);
  for (int i = 0; i < 1000; ++i) EXPECT_NEAR(c[i], 30.0L * std::tanh(l[i] / 30.0L), 1e-5) << i;
}

TEST(NumericsReduce, RopeAtLongPositions) {
  const int64_t d = 256, heads = 2;
  const std::vector<float> inv = rope_inv_freq(1e6, d);
  EXPECT_EQ(inv[0], 1.0f);
  // The table is RNE_f32 of the exact power, at every head dim of the configs and fixtures.
  for (int64_t hd : {16, 24, 32, 64, 128, 256})
    for (double theta : {1e4, 1e6}) {
      const std::vector<float> t = rope_inv_freq(theta, hd);
      for (int64_t i = 0; i < hd / 2; ++i)
        EXPECT_EQ(t[i], static_cast<float>(std::pow(static_cast<long double>(theta), -2.0L * i / hd))) << hd << " " << i;
    }
  for (int64_t pos : {0, 1, 511, 32767}) {
    std::vector<float> x = randv(41 + pos, heads * d, 3.0f), y = x;
    rope(y.data(), heads, d, pos, inv.data(), Fmt::F32);
    double worst = 0;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < d / 2; ++i) {
        const long double a = static_cast<long double>(static_cast<float>(pos) * inv[i]);
        const long double x0 = x[h * d + i], x1 = x[h * d + i + d / 2];
        const long double r0 = x0 * std::cos(a) - x1 * std::sin(a), r1 = x1 * std::cos(a) + x0 * std::sin(a);
        const long double mag = std::fabs(x0) + std::fabs(x1);
        worst = std::max(worst, static_cast<double>(std::fabs(y[h * d + i] - r0) / mag));
        worst = std::max(worst, static_cast<double>(std::fabs(y[h * d + i + d / 2] - r1) / mag));
      }
    EXPECT_LT(worst, 4e-7) << "pos " << pos;
  }
}

TEST(NumericsReduce, OperatorsIndependentOfThreads) {
  const int64_t rows = 37, n = 2048;
  const std::vector<float> x = randv(51, rows * n, 5.0f), w = randv(52, n, 1.0f);
  std::vector<float> y1(x.size()), y2(x.size());
  omp_set_num_threads(1);
  rmsnorm_rows(x.data(), w.data(), rows, n, 1e-6f, y1.data(), Fmt::BF16);
  omp_set_num_threads(2);
  rmsnorm_rows(x.data(), w.data(), rows, n, 1e-6f, y2.data(), Fmt::BF16);
  for (size_t i = 0; i < y1.size(); ++i) ASSERT_EQ(f2u(y1[i]), f2u(y2[i])) << i;
}

}  // namespace
}  // namespace n3::num
