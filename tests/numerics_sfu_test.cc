// SFU accuracy: every float32 SFU function against a long double reference
// on 2^24 points spread evenly (in float bit-pattern order) over its
// documented range; max error <= 2 ULP is pass/fail, and recip/sqrt/rsqrt
// must be correctly rounded (<= 0.5 ULP). Special values as documented.
// The exhaustive float32 sweep is bench/numerics_sweep_bench.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "golden/numerics/sfu.h"
#include "golden/numerics/sfu_trig.h"
#include "tests/numerics_ulp.h"

namespace n3::num {
namespace {

struct SweepCase {
  const char* name;
  float (*f)(float);
  long double (*ref)(long double);
  float lo, hi;
  double bound;
};

void run(const SweepCase& c) {
  const UlpStats s = sweep_range(c.f, c.ref, c.lo, c.hi, uint64_t(1) << 24);
  std::printf("[ %s ] [%g, %g] %llu points: max %.4f ULP at %a (got %a, ref %.12Le), %llu > 0.5 ULP\n", c.name,
              c.lo, c.hi, static_cast<unsigned long long>(s.points), s.max_ulp, s.worst_x, c.f(s.worst_x),
              c.ref(s.worst_x), static_cast<unsigned long long>(s.over_half));
  EXPECT_LE(s.max_ulp, c.bound) << c.name << " worst input " << s.worst_x;
  EXPECT_EQ(s.points, uint64_t(1) << 24);
}

TEST(NumericsSfu, Exp) { run({"exp", exp_sfu, ref_exp, kExpUnder, kExpOver, 2.0}); }
TEST(NumericsSfu, Tanh) { run({"tanh", tanh_sfu, ref_tanh, -kFltMax, kFltMax, 2.0}); }
TEST(NumericsSfu, GeluTanh) { run({"gelu_tanh", gelu_tanh_sfu, ref_gelu, -kFltMax, kFltMax, 2.0}); }
TEST(NumericsSfu, GeluTanhCore) { run({"gelu_tanh", gelu_tanh_sfu, ref_gelu, -12.0f, 12.0f, 2.0}); }
TEST(NumericsSfu, SinRope) { run({"sin", sin_sfu, ref_sin, -32768.0f, 32768.0f, 2.0}); }
TEST(NumericsSfu, CosRope) { run({"cos", cos_sfu, ref_cos, -32768.0f, 32768.0f, 2.0}); }
TEST(NumericsSfu, SinFull) { run({"sin", sin_sfu, ref_sin, -kFltMax, kFltMax, 2.0}); }
TEST(NumericsSfu, CosFull) { run({"cos", cos_sfu, ref_cos, -kFltMax, kFltMax, 2.0}); }
TEST(NumericsSfu, RecipCorrectlyRounded) { run({"recip", recip, ref_recip, kFltMinSub, kFltMax, 0.5}); }
TEST(NumericsSfu, SqrtCorrectlyRounded) { run({"sqrt", sqrt_rn, ref_sqrt, kFltMinSub, kFltMax, 0.5}); }
TEST(NumericsSfu, RsqrtCorrectlyRounded) { run({"rsqrt", rsqrt_rn, ref_rsqrt, kFltMinSub, kFltMax, 0.5}); }

uint32_t bits(float x) { return f2u(x); }

TEST(NumericsSfu, SpecialValues) {
  const float inf = inf_f(false), nan = u2f(0xffc00001u);  // a non-canonical NaN in
  for (auto f : {exp_sfu, tanh_sfu, gelu_tanh_sfu, sin_sfu, cos_sfu, recip, sqrt_rn, rsqrt_rn})
    EXPECT_EQ(bits(f(nan)), kNaNBits);
  EXPECT_EQ(bits(exp_sfu(inf)), kInfBits);
  EXPECT_EQ(bits(exp_sfu(-inf)), 0u);
  EXPECT_EQ(exp_sfu(0.0f), 1.0f);
  EXPECT_EQ(bits(exp_sfu(kExpUnder)), 1u);  // rounds up to the smallest subnormal
  EXPECT_EQ(bits(exp_sfu(u2f(f2u(kExpUnder) + 1))), 0u);
  EXPECT_TRUE(is_finite(exp_sfu(kExpOver)));
  EXPECT_EQ(bits(exp_sfu(u2f(f2u(kExpOver) + 1))), kInfBits);
  EXPECT_EQ(tanh_sfu(inf), 1.0f);
  EXPECT_EQ(tanh_sfu(-inf), -1.0f);
  EXPECT_EQ(bits(tanh_sfu(-0.0f)), 0x80000000u);
  EXPECT_EQ(gelu_tanh_sfu(inf), inf);
  EXPECT_EQ(bits(gelu_tanh_sfu(-inf)), 0x80000000u);
  EXPECT_EQ(bits(gelu_tanh_sfu(0.0f)), 0u);
  EXPECT_EQ(bits(gelu_tanh_sfu(-0.0f)), 0x80000000u);
  EXPECT_EQ(bits(sin_sfu(inf)), kNaNBits);
  EXPECT_EQ(bits(cos_sfu(-inf)), kNaNBits);
  EXPECT_EQ(bits(sin_sfu(-0.0f)), 0x80000000u);
  EXPECT_EQ(cos_sfu(-0.0f), 1.0f);
  EXPECT_EQ(recip(0.0f), inf);
  EXPECT_EQ(recip(-0.0f), -inf);
  EXPECT_EQ(bits(recip(-inf)), 0x80000000u);
  EXPECT_EQ(bits(sqrt_rn(-1.0f)), kNaNBits);
  EXPECT_EQ(bits(sqrt_rn(-0.0f)), 0x80000000u);
  EXPECT_EQ(sqrt_rn(inf), inf);
  EXPECT_EQ(rsqrt_rn(0.0f), inf);
  EXPECT_EQ(rsqrt_rn(-0.0f), -inf);
  EXPECT_EQ(bits(rsqrt_rn(inf)), 0u);
  EXPECT_EQ(bits(rsqrt_rn(-2.0f)), kNaNBits);
  EXPECT_EQ(rsqrt_rn(4.0f), 0.5f);
  EXPECT_EQ(sqrt_rn(u2f(1)), u2f(0x1a3504f3u));  // sqrt(2^-149) = 2^-74.5
}

// exp's subnormal outputs, in units of the subnormal quantum 2^-149.
TEST(NumericsSfu, ExpSubnormalAbsoluteError) {
  const UlpStats s = sweep_range(exp_sfu, ref_exp, kExpUnder, -87.4f, uint64_t(1) << 20);
  std::printf("[ exp subnormal ] max %.4f x 2^-149 at %a\n", s.max_ulp, s.worst_x);
  EXPECT_LE(s.max_ulp, 1.0);
}

}  // namespace
}  // namespace n3::num
