// The pieces the CUDA kernels cut the numerics core into (gpu_reference/
// bfp_lane.h) against the core functions they replace, on the host: the
// element-parallel BFP quantiser, the dp4a INT4 block partial on split
// mantissas, the streamed p.V column dot product. No GPU needed; these run
// everywhere, so a kernel bug in this arithmetic shows up before a GPU run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "golden/numerics/mac.h"
#include "golden/numerics/sfu.h"
#include "gpu_reference/bfp_lane.h"

namespace n3 {
namespace {

using gpu::block_exponent;
using gpu::lane_exponent;
using gpu::lane_mantissa;

// Deterministic awkward floats: zeros of both signs, subnormals, powers of
// two, values that round up to the saturation bound, wide exponent spreads.
struct Gen {
  uint64_t s;
  explicit Gen(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
  float value(int spread) {
    const uint64_t r = next();
    switch (r % 16) {
      case 0:
        return 0.0f;
      case 1:
        return -0.0f;
      case 2:
        return num::u2f(uint32_t(next() % 0x7fffff) | ((r >> 8) & 1 ? 0x80000000u : 0u));  // subnormal
      case 3:
        return std::ldexp(1.0f, int(next() % 40) - 20) * ((r >> 8) & 1 ? -1.0f : 1.0f);
      case 4:
        return std::nextafter(2.0f, 0.0f) * ((r >> 8) & 1 ? -1.0f : 1.0f);  // rounds up, saturates
      default: {
        const float m = float(int64_t(next() % 2000001) - 1000000) / 1e6f;
        return std::ldexp(m, int(next() % (2 * spread + 1)) - spread);
      }
    }
  }
};

TEST(CudaHelpers, FastActivationRoundingEqualsTheCore) {
  int64_t checked = 0;
  auto check = [&](uint32_t u) {
    const float x = num::u2f(u);
    for (num::Fmt f : {num::Fmt::F32, num::Fmt::BF16, num::Fmt::F16})
      ASSERT_EQ(num::f2u(gpu::round_act(f, x)), num::f2u(num::round_to(f, x)))
          << "bits 0x" << std::hex << u << " format " << num::fmt_name(f);
    ++checked;
  };
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 61) check(uint32_t(u));
  // Around every power of two and the bf16 rounding boundaries of each binade.
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t sgn : {0u, 0x80000000u})
      for (uint32_t m : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u, 0x7f8000u, 0x7fffffu, 0x7f7fffu})
        check(sgn | e << 23 | m);
  std::printf("round_act: %lld patterns equal to num::round_to in f32, bf16, f16\n", (long long)checked);
}

TEST(CudaHelpers, FastSqrtAndRsqrtEqualTheCore) {
  int64_t checked = 0;
  auto check = [&](uint32_t u) {
    const float x = num::u2f(u);
    ASSERT_EQ(num::f2u(gpu::sqrt_rn_fast(x)), num::f2u(num::sqrt_rn(x))) << "sqrt, bits 0x" << std::hex << u;
    ASSERT_EQ(num::f2u(gpu::rsqrt_rn_fast(x)), num::f2u(num::rsqrt_rn(x))) << "rsqrt, bits 0x" << std::hex << u;
    ++checked;
  };
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 1021) check(uint32_t(u));
  // Every binade's edges, both signs, and the specials.
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t sgn : {0u, 0x80000000u})
      for (uint32_t m : {0u, 1u, 2u, 3u, 0x3fffffu, 0x400000u, 0x400001u, 0x7ffffeu, 0x7fffffu}) check(sgn | e << 23 | m);
  // Exact squares k^2 * 2^(2j) and their neighbours (the sticky-free results).
  for (uint32_t k = 1; k < 4096; ++k)
    for (int j = -70; j <= 60; j += 13) {
      const uint32_t u = num::f2u(std::ldexp(float(k) * float(k), 2 * j));
      for (uint32_t d : {u - 1, u, u + 1}) check(d);
    }
  std::printf("sqrt_rn_fast, rsqrt_rn_fast: %lld patterns equal to num::sqrt_rn, num::rsqrt_rn\n", (long long)checked);
}

TEST(CudaHelpers, LaneQuantiserEqualsTheCoreBlockQuantiser) {
  Gen g(1);
  int checked = 0;
  for (int mbits : {2, 4, 8, 12, 15, 16})
    for (int B : {8, 16, 32, 64})
      for (int rep = 0; rep < 300; ++rep) {
        const int cnt = rep % 7 == 0 ? 1 + int(g.next() % B) : B;
        std::vector<float> x(B, 0.0f);
        const int spread = rep % 3 == 0 ? 2 : rep % 3 == 1 ? 20 : 120;
        for (int i = 0; i < cnt; ++i) x[i] = g.value(spread);
        if (rep % 50 == 1) x[g.next() % cnt] = std::numeric_limits<float>::infinity();
        if (rep % 50 == 2) x[g.next() % cnt] = std::nanf("");
        if (rep % 40 == 3) std::fill(x.begin(), x.end(), 0.0f);
        std::vector<int16_t> mant(B);
        const int32_t e = num::bfp_quantize_block(x.data(), cnt, B, mbits, mant.data());
        int emax = gpu::kLaneZero;  // the warp's max over lanes
        for (int i = 0; i < B; ++i) emax = std::max(emax, lane_exponent(i < cnt ? x[i] : 0.0f));
        const int32_t q = block_exponent(emax, mbits);
        ASSERT_EQ(q, e) << "mbits " << mbits << " block " << B << " rep " << rep;
        for (int i = 0; i < B; ++i)
          ASSERT_EQ(lane_mantissa(i < cnt ? x[i] : 0.0f, q, mbits), mant[i])
              << "element " << i << " x=" << x[i] << " mbits " << mbits << " rep " << rep;
        ++checked;
      }
  std::printf("lane quantiser: %d blocks equal to num::bfp_quantize_block\n", checked);
}

TEST(CudaHelpers, SplitDp4aPartialEqualsTheCoreInt4Partial) {
  Gen g(2);
  for (int mbits : {2, 8, 12, 15, 16}) {
    const int splits = gpu::splits_for(mbits);
    for (int rep = 0; rep < 2000; ++rep) {
      uint8_t w[16];
      for (auto& b : w) b = uint8_t(g.next());
      if (rep % 10 == 0) std::fill(w, w + 16, 0x88);  // all -8
      std::vector<float> x(32);
      for (auto& v : x) v = g.value(rep % 2 ? 3 : 30);
      if (rep % 10 == 1) {  // full-scale mantissas of both signs
        for (int i = 0; i < 32; ++i) x[i] = i % 2 ? 1.999f : -1.999f;
      }
      std::vector<int16_t> m(32);
      num::bfp_quantize_block(x.data(), 32, 32, mbits, m.data());
      std::vector<int32_t> pk(splits * 8, 0);
      int32_t msum = 0;
      for (int i = 0; i < 32; ++i) {
        msum += m[i];
        for (int p = 0; p < splits; ++p)
          reinterpret_cast<int8_t*>(pk.data())[gpu::piece_byte(i, p)] = int8_t(gpu::mantissa_piece(m[i], p, splits));
      }
      // The pieces reassemble the mantissa.
      for (int i = 0; i < 32; ++i) {
        int v = 0;
        for (int p = splits - 1; p >= 0; --p) v = v * 128 + gpu::mantissa_piece(m[i], p, splits);
        ASSERT_EQ(v, m[i]);
      }
      uint32_t words[4];
      std::memcpy(words, w, 16);
      const int64_t want = num::int4_block_partial(w, 0, 32, m.data());
      const int32_t got = splits == 2 ? gpu::int4_block_partial_split<2>(words, pk.data(), msum)
                                      : gpu::int4_block_partial_split<3>(words, pk.data(), msum);
      ASSERT_EQ(got, want) << "mbits " << mbits << " rep " << rep;
    }
  }
}

TEST(CudaHelpers, StreamedPvColumnEqualsTheCoreDot) {
  Gen g(3);
  int checked = 0;
  for (int B : {8, 16, 32, 64})
    for (int M : {8, 12, 16})
      for (int rep = 0; rep < 60; ++rep) {
        const int n = 1 + int(g.next() % 300), stride = 3;
        std::vector<float> p(n), v(size_t(n) * stride, 7.0f);
        for (auto& x : p) x = std::fabs(g.value(rep % 2 ? 4 : 40));
        for (int t = 0; t < n; ++t) v[size_t(t) * stride] = g.value(rep % 3 ? 6 : 60);
        if (rep % 9 == 0)  // a zero stretch of V
          for (int t = 0; t < n && t < 2 * B; ++t) v[size_t(t) * stride] = 0.0f;
        if (rep % 11 == 0)  // a zero stretch of p
          for (int t = n / 2; t < n && t < n / 2 + B; ++t) p[t] = 0.0f;
        if (rep % 23 == 5) v[size_t(g.next() % n) * stride] = std::numeric_limits<float>::infinity();
        const int nb = int(num::bfp_blocks(n, B));
        std::vector<int16_t> mp(size_t(nb) * B), mv(size_t(nb) * B);
        std::vector<int32_t> ep(nb), ev(nb);
        std::vector<float> tmp(B);
        const num::BfpView pv = num::bfp_quantize(p.data(), n, B, M, mp.data(), ep.data());
        const num::BfpView vc = num::bfp_quantize_strided(v.data(), n, stride, B, M, mv.data(), ev.data(), tmp.data());
        for (num::Fmt out : {num::Fmt::F32, num::Fmt::BF16}) {
          const float want = num::dot_bfp_bfp(pv, vc, 1.0f, out);
          const float got = gpu::pv_column(gpu::bfp_view(mp.data(), ep.data(), n, B), v.data(), n, stride, M, out);
          ASSERT_EQ(num::f2u(got), num::f2u(want))
              << "B " << B << " M " << M << " n " << n << " rep " << rep << ": got " << got << " want " << want;
          if (B == 32) {
            const float got32 =
                gpu::pv_column32(gpu::bfp_view(mp.data(), ep.data(), n, B), v.data(), n, stride, M, out);
            ASSERT_EQ(num::f2u(got32), num::f2u(want)) << "pv_column32, M " << M << " n " << n << " rep " << rep;
          }
        }
        if (B == 32) {  // the score path: two BFP vectors of 32-element blocks
          const float want = num::dot_bfp_bfp(pv, vc, 1.0f, num::Fmt::F32);
          ASSERT_EQ(num::f2u(gpu::dot_bfp_bfp32(pv, vc, num::Fmt::F32)), num::f2u(want)) << "dot_bfp_bfp32 n " << n;
        }
        // bfp_view rebuilds e_max and poison as bfp_quantize set them.
        const num::BfpView back = gpu::bfp_view(mp.data(), ep.data(), n, B);
        ASSERT_EQ(back.e_max, pv.e_max);
        ASSERT_EQ(back.poison, pv.poison);
        ++checked;
      }
  std::printf("p.V column: %d columns equal to num::dot_bfp_bfp\n", checked);
}

}  // namespace
}  // namespace n3
