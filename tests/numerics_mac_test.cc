// Integer MAC paths against an independent exact computation: BFP
// quantisation against long double arithmetic, every dot product (INT4 per
// row / per group / two-level, INT8, BFP x BFP) against __int128 sums with
// the documented per-block alignment and one rounding, on random and
// adversarial inputs (extremes, -8 weights, zero blocks, subnormals, wide
// exponent spreads, NaN/Inf). Plus thread-count independence of linear_npu.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "golden/npu_matrix.h"
#include "golden/numerics/npu_ops.h"

namespace n3::num {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

// ---- independent reference ------------------------------------------------

// RNE of v * 2^exp into a format of precision p, normal range [emin, emax].
float ref_round(i128 v, int exp, int p = 24, int emin = -126, int emax = 127) {
  if (v == 0) return 0.0f;
  const bool neg = v < 0;
  u128 m = neg ? u128(-v) : u128(v);
  int len = 0;
  for (u128 t = m; t; t >>= 1) ++len;
  const int e = exp + len - 1;
  int lsb = std::max(e, emin) - (p - 1);
  if (lsb > exp) {
    const int s = lsb - exp;
    u128 q = s >= 128 ? 0 : m >> s;
    const u128 rem = s >= 128 ? m : m - (q << s);
    const u128 half = s > 128 ? 0 : u128(1) << (s - 1);
    if (s <= 128 && (rem > half || (rem == half && (q & 1)))) ++q;
    m = q;
  } else {
    m <<= (exp - lsb);
  }
  if (m >> p) {
    m >>= 1;
    ++lsb;
  }
  int mlen = 0;
  for (u128 t = m; t; t >>= 1) ++mlen;
  if (m != 0 && lsb + mlen - 1 > emax) return neg ? -INFINITY : INFINITY;
  const float r = static_cast<float>(std::ldexp(static_cast<long double>(static_cast<uint64_t>(m)), lsb));
  return neg ? -r : r;
}

i128 ref_shift(i128 v, int d) {
  if (d >= 0) return i128(u128(v) << d);  // (a negative v shifted as two's complement: defined)
  const bool neg = v < 0;
  u128 a = neg ? u128(-v) : u128(v);
  const int s = -d;
  u128 q = s >= 127 ? 0 : a >> s;
  const u128 rem = s >= 127 ? a : a - (q << s);
  if (s < 127) {
    const u128 half = u128(1) << (s - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  return neg ? -i128(q) : i128(q);
}

struct RefBfp {
  std::vector<int> m;
  std::vector<int> e;  // LSB exponent; INT32_MIN for zero blocks; INT32_MAX poison
  bool poison = false;
};

RefBfp ref_bfp(const std::vector<float>& x, int B, int M) {
  RefBfp r;
  const size_t nb = (x.size() + B - 1) / B;
  r.m.assign(nb * B, 0);
  r.e.assign(nb, INT32_MIN);
  const long double lim = std::ldexp(1.0L, M - 1) - 1;
  for (size_t b = 0; b < nb; ++b) {
    int emax = INT32_MIN;
    bool bad = false;
    for (size_t i = b * B; i < std::min(x.size(), (b + 1) * B); ++i) {
      if (!std::isfinite(x[i])) bad = true;
      else if (x[i] != 0) emax = std::max(emax, std::ilogb(static_cast<long double>(x[i])));
    }
    if (bad) {
      r.e[b] = INT32_MAX;
      r.poison = true;
      continue;
    }
    if (emax == INT32_MIN) continue;
    const int q = emax - (M - 2);
    r.e[b] = q;
    for (size_t i = b * B; i < std::min(x.size(), (b + 1) * B); ++i) {
      long double v = std::nearbyint(std::ldexp(static_cast<long double>(x[i]), -q));  // exact, then RNE
      v = std::max(-lim, std::min(lim, v));
      r.m[i] = static_cast<int>(v);
    }
  }
  return r;
}

// A = sum over blocks of RNE(P_b 2^(x_b - e_top + 16)), then one rounding.
float ref_finish(const std::vector<i128>& P, const std::vector<int>& X, float scale, int p = 24, int emin = -126,
                 int emax = 127) {
  bool any = false;
  int top = 0;
  for (size_t b = 0; b < P.size(); ++b)
    if (X[b] != INT32_MIN) top = any ? std::max(top, X[b]) : X[b], any = true;
  if (!any || scale == 0) return 0.0f;
  i128 a = 0;
  for (size_t b = 0; b < P.size(); ++b)
    if (X[b] != INT32_MIN) a += ref_shift(P[b], X[b] - top + 16);
  int es;
  const long double fr = std::frexp(static_cast<long double>(scale), &es);  // scale = fr 2^es
  const i128 ms = static_cast<i128>(std::ldexp(fr, 24));
  return ref_round(a * ms, top - 16 + es - 24, p, emin, emax);
}

// ---- inputs -----------------------------------------------------------------

struct Gen {
  std::mt19937_64 g;
  explicit Gen(uint64_t seed) : g(seed) {}
  uint64_t bits() { return g(); }
  // A float with a random sign, mantissa and an exponent in [lo, hi].
  float f(int lo, int hi) {
    const uint64_t r = bits();
    const int e = lo + static_cast<int>(r % static_cast<uint64_t>(hi - lo + 1));
    const float m = 1.0f + static_cast<float>((r >> 8) & 0x7fffff) * 0x1p-23f;
    const float v = std::ldexp(m, e);
    return (r >> 40) & 1 ? -v : v;
  }
  int int4() { return static_cast<int>(bits() % 16) - 8; }
};

std::vector<uint8_t> pack(const std::vector<int>& q, int64_t rows, int64_t cols) {
  const int64_t rb = (cols + 1) / 2;
  std::vector<uint8_t> p(static_cast<size_t>(rows * rb), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < cols; ++i)
      p[r * rb + (i >> 1)] |= static_cast<uint8_t>((q[r * cols + i] & 0xf) << ((i & 1) * 4));
  return p;
}

struct Quantised {
  std::vector<int16_t> m;
  std::vector<int32_t> e;
  BfpView v;
  Quantised(const std::vector<float>& x, int B, int M)
      : m(bfp_blocks(x.size(), B) * B), e(bfp_blocks(x.size(), B)) {
    v = bfp_quantize(x.data(), static_cast<int64_t>(x.size()), B, M, m.data(), e.data());
  }
};

void expect_same(float got, float want, const char* what, int i) {
  if (std::isnan(want)) {
    EXPECT_EQ(f2u(got), kNaNBits) << what << " case " << i;
  } else {
    EXPECT_EQ(f2u(got), f2u(want)) << what << " case " << i << ": got " << got << " want " << want;
  }
}

// x with a chosen per-block exponent pattern, zero blocks and subnormals.
std::vector<float> activations(Gen& g, int64_t n, int kind) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: x[i] = g.f(-8, 8); break;                                  // ordinary
      case 1: x[i] = g.f(-132, -120); break;                             // around the subnormal boundary
      case 2: x[i] = u2f(static_cast<uint32_t>(g.bits() & 0x807fffffu)); break;  // subnormals
      case 3: x[i] = g.f(-60, 60); break;                                // wide spread: rounded blocks
      case 4: x[i] = (i / 32) % 3 == 1 ? 0.0f : g.f(-4, 4); break;       // zero blocks
      case 5: x[i] = g.f(120, 127); break;                               // near FLT_MAX
      default: x[i] = ((i / 32) % 2 ? 1 : -1) * 0x1.fffffep+0f; break;   // saturating mantissas
    }
  }
  return x;
}

// ---- tests -------------------------------------------------------------------

TEST(NumericsMac, BfpQuantizeMatchesExact) {
  Gen g(1);
  int cases = 0;
  for (int B : {8, 16, 32, 64})
    for (int M : {2, 4, 8, 12, 16})
      for (int kind = 0; kind < 7; ++kind)
        for (int64_t n : {1, 31, 64, 100}) {
          const std::vector<float> x = activations(g, n, kind);
          const Quantised q(x, B, M);
          const RefBfp r = ref_bfp(x, B, M);
          ++cases;
          for (size_t b = 0; b < r.e.size(); ++b) {
            const int32_t want = r.e[b] == INT32_MIN ? kBfpZero : r.e[b];
            ASSERT_EQ(q.e[b], want) << "B=" << B << " M=" << M << " kind=" << kind << " block " << b;
          }
          for (size_t i = 0; i < r.m.size(); ++i)
            ASSERT_EQ(q.m[i], r.m[i]) << "B=" << B << " M=" << M << " kind=" << kind << " element " << i;
        }
  std::printf("[ bfp ] %d vectors match the long double quantiser\n", cases);
}

TEST(NumericsMac, BfpSpecials) {
  std::vector<float> x(70, 0.0f);
  x[40] = 3.0f;
  Quantised q(x, 32, 8);
  EXPECT_EQ(q.e[0], kBfpZero);
  EXPECT_EQ(q.e[1], 1 - 6);  // floor(log2 3) - (8 - 2)
  EXPECT_EQ(q.m[40], 96);     // 3 / 2^-5
  EXPECT_EQ(q.e[2], kBfpZero);
  EXPECT_EQ(q.v.e_max, -5);
  EXPECT_FALSE(q.v.poison);
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    x[65] = bad;
    Quantised p(x, 32, 8);
    EXPECT_EQ(p.e[2], kBfpPoison);
    EXPECT_TRUE(p.v.poison);
    std::vector<uint8_t> w(35, 0x11);
    EXPECT_EQ(f2u(dot_int4_row(w.data(), 70, p.v, 1.0f, Fmt::F32)), kNaNBits);
  }
}

// One INT4 row against activations: every case is checked against the
// __int128 reference of the same spec, and cases whose exponent spread is
// within the 16 guard bits also against the exact dot of the quantised
// operands (no per-block rounding at all).
TEST(NumericsMac, Int4PerRowExact) {
  Gen g(2);
  int checked = 0, exact_checked = 0;
  for (int M : {4, 8, 16})
    for (int kind = 0; kind < 7; ++kind)
      for (int64_t n : {32, 33, 250, 2048})
        for (int wk = 0; wk < 3; ++wk) {
          const std::vector<float> x = activations(g, n, kind);
          std::vector<int> q(static_cast<size_t>(n));
          for (auto& v : q) v = wk == 0 ? g.int4() : wk == 1 ? -8 : 7;
          const std::vector<uint8_t> w = pack(q, 1, n);
          const float scale = wk == 2 ? g.f(-140, -120) : g.f(-10, 10);
          const Quantised xq(x, 32, M);
          const RefBfp r = ref_bfp(x, 32, M);
          std::vector<i128> P(r.e.size(), 0);
          std::vector<int> X(r.e.size());
          for (size_t b = 0; b < r.e.size(); ++b) {
            X[b] = r.e[b];
            for (int64_t i = b * 32; i < std::min<int64_t>(n, (b + 1) * 32); ++i) P[b] += i128(q[i]) * r.m[i];
          }
          for (Fmt out : {Fmt::F32, Fmt::BF16, Fmt::F16}) {
            const FloatSpec s = spec_of(out);
            const float want = ref_finish(P, X, scale, s.p, s.emin, s.emax);
            expect_same(dot_int4_row(w.data(), n, xq.v, scale, out), want, "int4", checked++);
          }
          // Exact dot of the quantised operands when no block is rounded.
          int lo = INT32_MAX, hi = INT32_MIN;
          for (int e : X)
            if (e != INT32_MIN) lo = std::min(lo, e), hi = std::max(hi, e);
          if (lo != INT32_MAX && hi - lo <= 16) {
            i128 exact = 0;
            for (size_t b = 0; b < X.size(); ++b)
              if (X[b] != INT32_MIN) exact += i128(u128(P[b]) << (X[b] - lo));  // (two's complement shift: defined)
            int es;
            const long double fr = std::frexp(static_cast<long double>(scale), &es);
            const float want = ref_round(exact * static_cast<i128>(std::ldexp(fr, 24)), lo + es - 24);
            expect_same(dot_int4_row(w.data(), n, xq.v, scale, Fmt::F32), want, "int4 exact", exact_checked++);
          }
        }
  std::printf("[ int4 ] %d dot products match the int128 reference, %d the exact dot\n", checked, exact_checked);
  EXPECT_GT(exact_checked, 100);
}

// The accumulator bound: 65536 elements, all weights -8, all mantissas
// -(2^15 - 1), 16-bit mantissas, equal exponents: |A| = 2^16 * 8 * 32767 * 2^16.
TEST(NumericsMac, Int4AccumulatorExtreme) {
  const int64_t n = kMaxDotLen;
  std::vector<float> x(static_cast<size_t>(n), -0x1.fffcp+0f);  // quantises to -(2^15 - 1) at M = 16
  std::vector<int> q(static_cast<size_t>(n), -8);
  const std::vector<uint8_t> w = pack(q, 1, n);
  const Quantised xq(x, 32, 16);
  ASSERT_EQ(xq.m[0], -32767);
  const float y = dot_int4_row(w.data(), n, xq.v, 1.0f, Fmt::F32);
  const long double exact = static_cast<long double>(n) * 8 * 32767 * std::ldexp(1.0L, xq.e[0]);
  EXPECT_EQ(y, static_cast<float>(exact));
  // Scale extremes: overflow to inf, underflow to subnormal, special scales.
  EXPECT_EQ(dot_int4_row(w.data(), n, xq.v, 1e38f, Fmt::F32), INFINITY);
  EXPECT_EQ(dot_int4_row(w.data(), n, xq.v, 1e38f, Fmt::F16), INFINITY);
  const std::vector<i128> P(static_cast<size_t>(n / 32), i128(32) * 8 * 32767);
  const std::vector<int> X(P.size(), xq.e[0]);
  const float tiny = dot_int4_row(w.data(), n, xq.v, 1e-44f, Fmt::F32);
  EXPECT_EQ(f2u(tiny), f2u(ref_finish(P, X, 1e-44f)));
  EXPECT_GT(tiny, 0.0f);
  EXPECT_EQ(f2u(dot_int4_row(w.data(), n, xq.v, NAN, Fmt::F32)), kNaNBits);
  EXPECT_EQ(dot_int4_row(w.data(), n, xq.v, -INFINITY, Fmt::F32), -INFINITY);
  EXPECT_EQ(f2u(dot_int4_row(w.data(), n, xq.v, 0.0f, Fmt::F32)), 0u);
}

TEST(NumericsMac, Int4GroupedAndTwoLevelExact) {
  Gen g(3);
  int cases = 0;
  for (int64_t group : {32, 64, 128})
    for (int kind : {0, 3, 4})
      for (int64_t n : {128, 300, 1024}) {
        const std::vector<float> x = activations(g, n, kind);
        std::vector<int> q(static_cast<size_t>(n));
        for (auto& v : q) v = g.int4();
        const std::vector<uint8_t> w = pack(q, 1, n);
        const int64_t ng = (n + group - 1) / group;
        std::vector<float> gs(static_cast<size_t>(ng));
        std::vector<uint8_t> bs(static_cast<size_t>(ng));
        for (int64_t k = 0; k < ng; ++k) gs[k] = g.f(-12, -2), bs[k] = static_cast<uint8_t>(1 + g.bits() % 15);
        const float row_scale = g.f(-12, -2);
        const Quantised xq(x, 32, 8);
        const RefBfp r = ref_bfp(x, 32, 8);
        const size_t nb = r.e.size();
        std::vector<i128> P(nb, 0), Pb(nb, 0);
        for (size_t b = 0; b < nb; ++b) {
          for (int64_t i = b * 32; i < std::min<int64_t>(n, (b + 1) * 32); ++i) P[b] += i128(q[i]) * r.m[i];
          Pb[b] = P[b] * bs[b * 32 / group];
        }
        // Two-level: one integer sum, one rounding.
        expect_same(dot_int4_row_two_level(w.data(), n, xq.v, bs.data(), group, row_scale, Fmt::F32),
                    ref_finish(Pb, r.e, row_scale), "two-level", cases);
        // Per group: each group's aligned sum (shared e_top) rounded once, then
        // the documented lane tree over groups.
        int top = INT32_MIN;
        for (int e : r.e)
          if (e != INT32_MIN) top = std::max(top, e);
        std::vector<float> yg(static_cast<size_t>(ng), 0.0f);
        for (int64_t k = 0; k < ng && top != INT32_MIN; ++k) {
          i128 a = 0;
          for (size_t b = k * group / 32; b < std::min<size_t>(nb, (k + 1) * group / 32); ++b)
            if (r.e[b] != INT32_MIN) a += ref_shift(P[b], r.e[b] - top + 16);
          int es;
          const long double fr = std::frexp(static_cast<long double>(gs[k]), &es);
          yg[k] = ref_round(a * static_cast<i128>(std::ldexp(fr, 24)), top - 16 + es - 24);
        }
        float lane[32] = {};
        for (int64_t k = 0; k < ng; ++k) lane[k % 32] += yg[k];
        for (int off = 16; off; off /= 2)
          for (int j = 0; j < off; ++j) lane[j] += lane[j + off];
        expect_same(dot_int4_row_grouped(w.data(), n, xq.v, gs.data(), group, Fmt::F32), lane[0], "grouped", cases);
        ++cases;
      }
}

TEST(NumericsMac, Int8AndBfpBfpExact) {
  Gen g(4);
  int cases = 0;
  for (int M : {8, 12, 16})
    for (int kind : {0, 2, 3, 4, 6})
      for (int64_t n : {256, 200, 4096}) {
        const std::vector<float> a = activations(g, n, kind), b = activations(g, n, (kind + 3) % 7);
        const Quantised qa(a, 32, M), qb(b, 32, M);
        const RefBfp ra = ref_bfp(a, 32, M), rb = ref_bfp(b, 32, M);
        std::vector<int8_t> k8(static_cast<size_t>(n));
        for (auto& v : k8) v = static_cast<int8_t>(static_cast<int>(g.bits() % 255) - 127);
        const size_t nb = ra.e.size();
        std::vector<i128> P8(nb, 0), PP(nb, 0);
        std::vector<int> XX(nb);
        for (size_t blk = 0; blk < nb; ++blk) {
          for (int64_t i = blk * 32; i < std::min<int64_t>(n, (blk + 1) * 32); ++i) {
            P8[blk] += i128(k8[i]) * ra.m[i];
            PP[blk] += i128(ra.m[i]) * rb.m[i];
          }
          XX[blk] = ra.e[blk] == INT32_MIN || rb.e[blk] == INT32_MIN ? INT32_MIN : ra.e[blk] + rb.e[blk];
        }
        const float s = g.f(-10, 0);
        expect_same(dot_int8_bfp(k8.data(), qa.v, s, Fmt::F32), ref_finish(P8, ra.e, s), "int8", cases);
        expect_same(dot_bfp_bfp(qa.v, qb.v, 1.0f, Fmt::F32), ref_finish(PP, XX, 1.0f), "bfp x bfp", cases);
        expect_same(dot_bfp_bfp(qa.v, qb.v, 1.0f, Fmt::BF16), ref_finish(PP, XX, 1.0f, 8), "bfp x bfp bf16", cases);
        ++cases;
      }
}

// The offline two-level quantiser: block scales in range, every weight within
// half a step of its value, and the dot product close to the float one.
TEST(NumericsMac, TwoLevelQuantiserRoundTrip) {
  Gen g(8);
  const int64_t n = 1000, group = 64, ng = (n + group - 1) / group;
  std::vector<float> w(static_cast<size_t>(n)), x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = g.f(-12, -6) * (i / group + 1), x[i] = g.f(-3, 3);
  std::vector<uint8_t> packed(static_cast<size_t>((n + 1) / 2)), bs(static_cast<size_t>(ng));
  float S = 0;
  quantize_row_two_level(w.data(), n, group, 4, packed.data(), bs.data(), &S);
  long double ref = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int b = bs[i / group];
    ASSERT_GE(b, 1);
    ASSERT_LE(b, 15);
    const long double step = static_cast<long double>(b) * S;
    const int q = int4_at(packed.data(), i);
    const long double v = q * step;
    if (q == 7 || q == -8) {  // clamped (b_g may round below s_g / S): only extremes get here
      EXPECT_GE(std::fabs(w[i]), 6.5L * step) << i;
    } else {
      EXPECT_LE(std::fabs(v - w[i]), step / 2 * (1 + 1e-6L)) << i;
    }
    ref += v * x[i];
    mag += std::fabs(v * x[i]);
  }
  const Quantised xq(x, 32, 16);
  const float y = dot_int4_row_two_level(packed.data(), n, xq.v, bs.data(), group, S, Fmt::F32);
  EXPECT_LE(std::fabs(y - ref), 1e-4 * mag);
}

// linear_npu: rows split over threads; identical bits for 1 and 2 threads and
// equal to the row-by-row dot products; MatrixRef per-row and per-group views.
TEST(NumericsMac, LinearDeterministicAcrossThreads) {
  Gen g(5);
  const int64_t rows = 257, cols = 640, T = 3;
  std::vector<int> q(static_cast<size_t>(rows * cols));
  for (auto& v : q) v = g.int4();
  const std::vector<uint8_t> w = pack(q, rows, cols);
  std::vector<float> scales(static_cast<size_t>(rows * (cols / 64)));
  for (auto& s : scales) s = g.f(-8, -4);
  std::vector<float> x(static_cast<size_t>(T * cols));
  for (auto& v : x) v = g.f(-6, 6);
  Formats f;
  for (int64_t group : {cols, int64_t(64)}) {
    MatrixRef m;
    m.dtype = WDType::INT4;
    m.rows = rows;
    m.cols = cols;
    m.data = w.data();
    m.scales = scales.data();
    m.group = group;
    std::vector<float> y1(static_cast<size_t>(T * rows)), y2(y1.size());
    omp_set_num_threads(1);
    linear_npu(m, x.data(), T, y1.data(), f, Fmt::BF16);
    omp_set_num_threads(2);
    linear_npu(m, x.data(), T, y2.data(), f, Fmt::BF16);
    for (size_t i = 0; i < y1.size(); ++i) ASSERT_EQ(f2u(y1[i]), f2u(y2[i])) << "output " << i;
    const Quantised xq(std::vector<float>(x.begin() + cols, x.begin() + 2 * cols), 32, f.act_mant_bits);
    const Int4Matrix v = int4_view(m, f);
    for (int64_t o = 0; o < rows; ++o) ASSERT_EQ(f2u(y1[rows + o]), f2u(linear_row(v, o, xq.v, Fmt::BF16)));
  }
  MatrixRef bad;
  bad.dtype = WDType::F32;
  EXPECT_THROW(int4_view(bad, f), Error);
}

// Attention in NPU numerics: deterministic, and close to a long double
// reference (the formats' quantisation is the only difference).
TEST(NumericsMac, AttendMatchesReferenceWithinQuantisation) {
  Gen g(6);
  const int64_t d = 256, T = 700;
  std::vector<float> q(d), k(T * d), v(T * d);
  for (auto& e : q) e = g.f(-3, 1);
  for (auto& e : k) e = g.f(-3, 1);
  for (auto& e : v) e = g.f(-4, 0);
  for (KvFmt kvf : {KvFmt::F16, KvFmt::BF16, KvFmt::INT8}) {
    Formats f;
    f.kv = kvf;
    f.act = Fmt::F32;
    std::vector<float> kc = k, vc = v;
    std::vector<int8_t> k8(T * d), v8(T * d);
    std::vector<float> ks(T), vs(T);
    if (kvf == KvFmt::INT8) {
      for (int64_t t = 0; t < T; ++t) {
        ks[t] = int8_quantize(&k[t * d], d, &k8[t * d]);
        vs[t] = int8_quantize(&v[t * d], d, &v8[t * d]);
        for (int64_t j = 0; j < d; ++j) kc[t * d + j] = k8[t * d + j] * ks[t], vc[t * d + j] = v8[t * d + j] * vs[t];
      }
    } else {
      to_kv(kc.data(), T * d, kvf);
      to_kv(vc.data(), T * d, kvf);
    }
    KvView kv{kvf, kc.data(), k8.data(), ks.data(), d}, vv{kvf, vc.data(), v8.data(), vs.data(), d};
    std::vector<float> out(d), out2(d);
    attend_npu(q.data(), kv, vv, 0, T - 1, d, out.data(), f);
    attend_npu(q.data(), kv, vv, 0, T - 1, d, out2.data(), f);
    // Reference on the stored (cache-format) values, long double.
    std::vector<long double> s(T);
    long double mx = -INFINITY, z = 0;
    for (int64_t t = 0; t < T; ++t) {
      s[t] = 0;
      for (int64_t j = 0; j < d; ++j) s[t] += static_cast<long double>(q[j]) * kc[t * d + j];
      mx = std::max(mx, s[t]);
    }
    for (auto& e : s) z += (e = std::exp(e - mx));
    double worst = 0;
    for (int64_t j = 0; j < d; ++j) {
      long double o = 0, mag = 0;
      for (int64_t t = 0; t < T; ++t) o += s[t] / z * vc[t * d + j], mag += s[t] / z * std::fabs(vc[t * d + j]);
      worst = std::max(worst, static_cast<double>(std::fabs(out[j] - o) / mag));
      ASSERT_EQ(f2u(out[j]), f2u(out2[j]));
    }
    std::printf("[ attend %s ] max |out - ref| / sum p|v| = %.3g\n", kv_fmt_name(kvf), worst);
    EXPECT_LT(worst, 1e-3);
  }
}

}  // namespace
}  // namespace n3::num
