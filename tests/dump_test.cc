// Dumps: concatenation of chunks and decode steps along each op's token axis,
// --logits last, the docs' op table against the one list in dump_ops.h, and
// determinism (same inputs, same bytes, whatever the thread count).
#include <gtest/gtest.h>

#include <cstdlib>

#include "golden/dump.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

TEST(Dump, ConcatenatesChunksAlongTheTokenAxis) {
  DumpCollector d(true);
  // [S=2, T=1, D=2] streams twice: token axis 1.
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  d.record(Phase::Prefill, Op::LayerOut, 0, {2, 1, 2}, a, "float32");
  d.record(Phase::Prefill, Op::LayerOut, 0, {2, 1, 2}, b, "float32");
  const Tensor* t = d.find("layers.0");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->shape, (Shape{2, 2, 2}));
  EXPECT_EQ(t->data, (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
  // Decode steps go to decode_* tensors, token axis 0 for [T, D].
  d.record(Phase::Decode, Op::Logits, -1, {1, 2}, a, "float32");
  d.record(Phase::Decode, Op::Logits, -1, {1, 2}, b, "float32");
  EXPECT_EQ(d.find("decode_logits")->shape, (Shape{2, 2}));
  EXPECT_EQ(d.find("logits"), nullptr);
}

TEST(Dump, ManifestIsInCanonicalOrderAndLogitsLastKeepsOneRow) {
  DumpCollector d(false);
  const float x[] = {1, 2, 3, 4, 5, 6};
  d.record(Phase::Decode, Op::LayerOut, 1, {1, 1, 2}, x, "float32");
  d.record(Phase::Prefill, Op::Logits, -1, {3, 2}, x, "float32");
  d.record(Phase::Prefill, Op::LayerOut, 1, {1, 3, 2}, x, "float32");
  d.record(Phase::Prefill, Op::LayerOut, 0, {1, 3, 2}, x, "float32");
  d.record(Phase::Prefill, Op::AttnQ, 0, {3, 1, 2}, x, "float32");  // not wanted without all_ops
  d.set_logits_last(true);
  const std::string dir = test::temp_dir("dump");
  d.write(dir);
  Manifest m = read_manifest(dir);
  std::vector<std::string> names;
  for (const auto& e : m.tensors) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0", "layers.1", "logits", "decode_layers.1"}));
  Tensor l = read_npy_f32(dir + "/logits.npy");
  EXPECT_EQ(l.shape, (Shape{1, 2}));
  EXPECT_EQ(l.data, (std::vector<float>{5, 6}));
}

TEST(Dump, DocsTableListsEveryOpOfTheOneList) {
  const std::string doc = read_file_text(test::source_dir() + "/docs/dumps.md");
  for (int i = 0; i < int(Op::kCount); ++i) {
    const OpDef& d = op_def(Op(i));
    const std::string op = *d.name ? d.name : "layer_out";
    EXPECT_NE(doc.find("| `" + op + "` |"), std::string::npos) << "docs/dumps.md lacks op " << op;
  }
}

class DumpDeterminism : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(Numerics, DumpDeterminism, ::testing::Values("reference", "npu"));

TEST_P(DumpDeterminism, GoldenDumpsAreByteIdenticalAcrossRunsAndThreadCounts) {
  const std::string f = test::fixture("gemma3n-dev");
  const std::string args = "golden --numerics " + std::string(GetParam()) + " --model " + f + "/hf --ids " + f +
                           "/prompt_ids.npy --dump-all --feed " + f + "/prompt_ids.npy --dump ";
  const std::string d1 = test::temp_dir("d1"), d2 = test::temp_dir("d2"), d3 = test::temp_dir("d3");
  ASSERT_EQ(test::run_n3(args + d1 + " --force").status, 0);
  ASSERT_EQ(test::run_n3(args + d2 + " --force").status, 0);
  int rc;
  {
    test::ScopedEnv one_thread("OMP_NUM_THREADS", "1");
    rc = test::run_n3(args + d3 + " --force").status;
  }
  ASSERT_EQ(rc, 0);
  Manifest m = read_manifest(d1);
  ASSERT_GT(m.tensors.size(), 100u);
  for (const auto& e : m.tensors) {
    const std::string a = read_file_text(d1 + "/" + e.file);
    EXPECT_EQ(a, read_file_text(d2 + "/" + e.file)) << e.name << " differs between runs";
    EXPECT_EQ(a, read_file_text(d3 + "/" + e.file)) << e.name << " depends on the thread count";
  }
}

}  // namespace
}  // namespace n3
