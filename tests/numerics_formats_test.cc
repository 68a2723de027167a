// Storage formats (bf16 / f16 rounding and encodings, INT8 vectors, the
// single-rounding packer) and the Formats configuration: defaults, parsing
// of the hardware-file keys, and rejection of incompatible combinations
// with a message that names them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "golden/numerics/formats_config.h"
#include "golden/weights.h"

namespace n3::num {
namespace {

TEST(NumericsFormats, Bf16MatchesTheWeightReader) {
  std::mt19937_64 g(1);
  for (int i = 0; i < (1 << 22); ++i) {
    const float x = u2f(static_cast<uint32_t>(g()));
    if (std::isnan(x)) {
      continue;
    }
    ASSERT_EQ(bf16_bits(x), f32_to_bf16_rne(x)) << std::hexfloat << x;
    ASSERT_EQ(f2u(bf16_value(bf16_bits(x))), f2u(round_to(Fmt::BF16, x)));
  }
  EXPECT_EQ(f2u(round_to(Fmt::BF16, NAN)), kNaNBits);
}

// Every f16 value round-trips; random floats round to the nearest f16
// (ties to even), with overflow to infinity at 65520.
TEST(NumericsFormats, F16RoundToNearestEven) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float v = f16_value(static_cast<uint16_t>(h));
    if (std::isnan(v)) continue;
    EXPECT_EQ(v, n3::f16_to_f32(static_cast<uint16_t>(h))) << h;
    ASSERT_EQ(f16_bits(v), h) << h;
  }
  std::mt19937_64 g(2);
  for (int i = 0; i < (1 << 20); ++i) {
    // Exponents around f16's range, subnormals included.
    const float x = std::ldexp(1.0f + static_cast<float>(g() >> 41) * 0x1p-23f, static_cast<int>(g() % 48) - 30) *
                    ((g() & 1) ? -1.0f : 1.0f);
    const uint16_t h = f16_bits(x);
    const float r = f16_value(h);
    if (std::isinf(r)) {
      ASSERT_GE(std::fabs(x), 65520.0f) << x;
      continue;
    }
    const float up = f16_value(static_cast<uint16_t>(h + 1)), dn = f16_value(static_cast<uint16_t>(h - 1));
    const double e = std::fabs(static_cast<double>(x) - r);
    if ((h & 0x7fff) != 0x7bff) {
      ASSERT_LE(e, std::fabs(static_cast<double>(x) - up)) << x;
    }
    if ((h & 0x7fff) != 0) {
      ASSERT_LE(e, std::fabs(static_cast<double>(x) - dn)) << x;
    }
    if (e == std::fabs(static_cast<double>(x) - up) || e == std::fabs(static_cast<double>(x) - dn)) {
      ASSERT_EQ(h & 1, 0) << "tie not to even at " << x;
    }
  }
  EXPECT_EQ(round_to(Fmt::F16, 65519.0f), 65504.0f);
  EXPECT_EQ(round_to(Fmt::F16, 65520.0f), INFINITY);
  EXPECT_EQ(round_to(Fmt::F16, 0x1p-25f), 0.0f);                // tie to even: 0
  EXPECT_EQ(round_to(Fmt::F16, 0x1.000002p-25f), 0x1p-24f);     // just above the tie
  EXPECT_EQ(f2u(round_to(Fmt::F16, -0.0f)), 0x80000000u);
}

TEST(NumericsFormats, F32RoundingIsIdentityAndScale2IsLdexp) {
  std::mt19937_64 g(3);
  for (int i = 0; i < (1 << 20); ++i) {
    const float x = u2f(static_cast<uint32_t>(g()));
    if (std::isnan(x)) {
      continue;
    }
    ASSERT_EQ(f2u(round_to(Fmt::F32, x)), f2u(x));
    const int k = static_cast<int>(g() % 80) - 40;
    ASSERT_EQ(f2u(scale2(x, k)), f2u(std::ldexp(x, k))) << std::hexfloat << x << " k=" << k;
  }
}

TEST(NumericsFormats, Int8Vectors) {
  const float x[5] = {1.0f, -2.54f, 0.001f, 2.54f, 0.0f};
  int8_t q[5];
  const float s = int8_quantize(x, 5, q);
  EXPECT_EQ(s, 2.54f / 127.0f);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[3], 127);
  EXPECT_EQ(q[0], 50);
  EXPECT_EQ(q[2], 0);
  const float z[2] = {0.0f, -0.0f};
  EXPECT_EQ(int8_quantize(z, 2, q), 0.0f);
  const float bad[2] = {1.0f, INFINITY};
  EXPECT_TRUE(std::isnan(int8_quantize(bad, 2, q)));
  EXPECT_EQ(q[0], 0);
}

TEST(NumericsFormats, DefaultsAreValid) {
  const Formats f;
  EXPECT_EQ(formats_problem(f), "");
  EXPECT_EQ(formats_to_string(f),
            "act=bf16 stream=f32 kv=f16 score=f32 logits=f32 bfp_block=32 act_mant=12 attn_mant=16 weight_scale=per_row");
}

TEST(NumericsFormats, ParsesHardwareKeys) {
  Formats f;
  EXPECT_EQ(set_formats_field(f, "act_format", "f16"), "");
  EXPECT_EQ(set_formats_field(f, "kv_format", "int8"), "");
  EXPECT_EQ(set_formats_field(f, "stream_format", "bf16"), "");
  EXPECT_EQ(set_formats_field(f, "act_mantissa_bits", "12"), "");
  EXPECT_EQ(set_formats_field(f, "weight_scale", "two_level"), "");
  EXPECT_EQ(set_formats_field(f, "weight_group", "64"), "");
  EXPECT_EQ(set_formats_field(f, "block_scale_bits", "6"), "");
  EXPECT_EQ(f.act, Fmt::F16);
  EXPECT_EQ(f.kv, KvFmt::INT8);
  EXPECT_EQ(f.stream, Fmt::BF16);
  EXPECT_EQ(f.act_mant_bits, 12);
  EXPECT_EQ(f.weight_scale, WScale::TwoLevel);
  EXPECT_EQ(formats_problem(f), "");
  EXPECT_NE(set_formats_field(f, "act_format", "fp8").find("f32, bf16, f16"), std::string::npos);
  EXPECT_NE(set_formats_field(f, "bfp_block", "32x").find("not an integer"), std::string::npos);
  EXPECT_NE(set_formats_field(f, "mantissa", "8").find("unknown key"), std::string::npos);
}

TEST(NumericsFormats, RejectsIncompatibleCombinations) {
  auto problem = [](auto edit) {
    Formats f;
    edit(f);
    return formats_problem(f);
  };
  auto has = [](const std::string& msg, const char* what) { return msg.find(what) != std::string::npos; };
  EXPECT_TRUE(has(problem([](Formats& f) { f.score = Fmt::BF16; }), "score_format = bf16"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.kv = KvFmt::INT8, f.score = Fmt::F16; }),
                  "kv_format = int8 with numerics.score_format = f16"));
  EXPECT_EQ(problem([](Formats& f) { f.kv = KvFmt::F16, f.score = Fmt::F16; }), "");
  EXPECT_TRUE(has(problem([](Formats& f) { f.bfp_block = 24; }), "bfp_block = 24"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.bfp_block = 128; }), "bfp_block = 128"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.act_mant_bits = 17; }), "act_mantissa_bits = 17"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.attn_mant_bits = 1; }), "attn_mantissa_bits = 1"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.weight_scale = WScale::PerGroup, f.weight_group = 48; }),
                  "weight_group = 48 with weight_scale = per_group"));
  EXPECT_TRUE(has(problem([](Formats& f) { f.weight_scale = WScale::TwoLevel, f.block_scale_bits = 9; }),
                  "block_scale_bits = 9"));
  EXPECT_EQ(problem([](Formats& f) { f.weight_scale = WScale::PerRow, f.weight_group = 48; }), "");
}

}  // namespace
}  // namespace n3::num
