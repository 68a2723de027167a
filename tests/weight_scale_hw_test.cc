// The hardware file decides the weight-scale format the golden model runs in
// (issue 3): INT4 weights whose scale layout differs from numerics.weight_scale
// are refused naming the tensor; matching ones run; two-level is refused.
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

using test::run_n3;

std::string hw_with_scales(const std::string& dir, const std::string& mode, int group) {
  std::string hw = read_file_text(test::source_dir() + "/configs/hw/kv260.yaml");
  const size_t at = hw.find("  weight_scale: {value: per_row");
  EXPECT_NE(at, std::string::npos);
  hw.replace(at, hw.find('\n', at) - at,
             "  weight_scale: {value: " + mode + ", source: test}\n  weight_group: {value: " + std::to_string(group) +
                 ", source: test}");
  const std::string p = dir + "/" + mode + std::to_string(group) + ".yaml";
  write_file_atomic(p, hw);
  return p;
}

TEST(WeightScaleHw, GoldenRunsOnlyInTheHardwareFilesWeightScale) {
  const std::string dir = test::temp_dir("wscale");
  const std::string m = test::fixture("gemma3n-dev/hf"), ids = test::fixture("gemma3n-dev/prompt_ids.npy");
  ASSERT_EQ(run_n3("convert -q --model " + m + " --group 32 -o " + dir + "/g32.n3w").status, 0);
  const std::string run = "golden --model " + dir + "/g32.n3w --ids " + ids + " --force --dump " + dir + "/d";
  test::RunResult r = run_n3(run);  // kv260: per_row
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("INT4 scales per 32 inputs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("per_row"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(dir + "/d/manifest.json"));
  r = run_n3(run + " --hw " + hw_with_scales(dir, "per_group", 32));
  EXPECT_EQ(r.status, 0) << r.err;
  // A float checkpoint is quantised with the hardware file's groups: per_group 32 equals the converted file.
  ASSERT_EQ(run_n3("golden --model " + m + " --ids " + ids + " --force --dump " + dir + "/q --hw " +
                   hw_with_scales(dir, "per_group", 32)).status, 0);
  EXPECT_EQ(run_n3("diff " + dir + "/q " + dir + "/d").status, 0);
  r = run_n3(run + " --hw " + hw_with_scales(dir, "two_level", 32));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("two_level"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace n3
