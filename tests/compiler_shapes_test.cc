// Shapes the fixtures do not reach: a hidden size that is not a multiple of
// 4 (the stream buffers' rows must still start 16-byte aligned), with float32
// and with bf16 residual streams; the compiled model stays bit-identical to
// the golden model in NPU numerics over a chunked prefill and decode steps.
#include <gtest/gtest.h>

#include "golden/file_util.h"
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
  for (const std::string h : {test::source_dir() + "/configs/hw/kv260.yaml", dir + "/bf16_streams.yaml"}) {
    SCOPED_TRACE(h);
    const std::string io = " --model " + dir + "/m.n3w --hw " + h + " --ids " + ids + " --feed " + feed + " --force";
    ASSERT_EQ(run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
    const test::RunResult r = run_n3("sim --backend func --chunk 5" + io + " --dump " + dir + "/f");
    ASSERT_EQ(r.status, 0) << r.err;
    const test::RunResult d = run_n3("diff " + dir + "/f " + dir + "/g");
    EXPECT_EQ(d.status, 0) << d.out << d.err;
  }
}

}  // namespace
}  // namespace n3
