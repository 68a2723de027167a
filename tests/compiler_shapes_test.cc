// Shapes the fixtures do not reach: a hidden size that is not a multiple of
// 4 (the stream buffers' rows must still start 16-byte aligned), with float32
// and with bf16 residual streams; the compiled model stays bit-identical to
// the golden model in NPU numerics over a chunked prefill and decode steps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/npy.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

using test::run_n3;

TEST(CompilerShapes, HiddenSizeNotAMultipleOfFourWithBothStreamFormats) {
  const std::string dir = test::temp_dir("shapes66");
  std::string y = read_file_text(test::source_dir() + "/configs/models/tiny.yaml");
  const size_t at = y.find("hidden_size: 64");
  ASSERT_NE(at, std::string::npos);
  y.replace(at, 15, "hidden_size: 66");
  write_file_atomic(dir + "/m.yaml", y);
  ASSERT_EQ(run_n3("synth -q --model " + dir + "/m.yaml --seed 2 -o " + dir + "/m.n3w").status, 0);
  std::string hw = read_file_text(test::source_dir() + "/configs/hw/kv260.yaml");
  const size_t s = hw.find("stream_format: {value: f32");
  ASSERT_NE(s, std::string::npos);
  hw.replace(s, 26, "stream_format: {value: bf16");
  write_file_atomic(dir + "/bf16_streams.yaml", hw);
  const std::string ids = test::source_dir() + "/configs/demo/prompt_ids.npy";
  const std::string feed = test::source_dir() + "/configs/demo/feed_ids.npy";
  for (const std::string& h : {test::source_dir() + "/configs/hw/kv260.yaml", dir + "/bf16_streams.yaml"}) {
    SCOPED_TRACE(h);
    const std::string io = " --model " + dir + "/m.n3w --hw " + h + " --ids " + ids + " --feed " + feed + " --force";
    ASSERT_EQ(run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
    test::expect_sims_match("--chunk 5" + io, dir, dir + "/g");
  }
}

}  // namespace
}  // namespace n3

namespace n3 {
namespace {

// A chunk larger than what fits L2 spills its largest activation buffers to
// DDR (the report names them) and stays bit-identical on func and systemc:
// gemma3n-dev with the L2 cut to 512 KB (largest chunk in L2: 18), chunk 48.
TEST(CompilerSpill, ChunkLargerThanL2SpillsToDdrAndStaysBitIdentical) {
  const std::string dir = test::temp_dir("spill");
  std::string hw = read_file_text(test::source_dir() + "/configs/hw/kv260.yaml");
  const size_t at = hw.find("l2_bytes: {value: 1835008");
  ASSERT_NE(at, std::string::npos);
  hw.replace(at, 25, "l2_bytes: {value: 524288");
  write_file_atomic(dir + "/hw.yaml", hw);
  std::vector<int32_t> ids;
  for (int i = 0; i < 48; ++i) ids.push_back((i * 37 + 5) % 400);
  write_npy_i32(dir + "/ids.npy", ids);
  const std::string m = test::fixture("gemma3n-dev/hf");
  test::RunResult c = run_n3("compile --model " + m + " --hw " + dir + "/hw.yaml --chunk 48 -o " + dir + "/c");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("spill to DDR"), std::string::npos) << c.err;
  const nlohmann::json rep = nlohmann::json::parse(read_file_text(dir + "/c/report.json"));
  EXPECT_LT(rep["largest_chunk_in_l2"].get<int>(), 48);
  EXPECT_GT(rep["programs"].back()["spill_bytes"].get<uint64_t>(), 0u) << rep.dump();
  EXPECT_EQ(rep["programs"].back()["tokens"].get<int>(), 48) << rep.dump();
  const std::string io = " --model " + m + " --hw " + dir + "/hw.yaml --ids " + dir + "/ids.npy --feed " +
                         test::source_dir() + "/configs/demo/feed_ids.npy --dump-all --force";
  ASSERT_EQ(run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
  test::expect_sims_match("--chunk 48" + io, dir, dir + "/g");
}

}  // namespace
}  // namespace n3
