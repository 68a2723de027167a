// Several sequences and the KV policy on every backend (issue 18): the
// compiled backends (func, systemc) swap sequences' KV rings in and out of
// their one DDR image, so a batch gives each sequence the ids it gives
// alone; and with kv.policy: evict they keep the sink rows and the most
// recent ones exactly as the golden model does, so a run past the cap
// continues with golden's ids and tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/npy.h"
#include "golden/diff.h"
#include "host_driver/backends.h"
#include "tests/host_loop.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

std::string ids_file(const std::string& dir, const std::string& name, const std::vector<int32_t>& ids) {
  const std::string p = dir + "/" + name + ".npy";
  write_npy_i32(p, ids);
  return p;
}

// The generated ids printed by `n3 run`, one line per sequence.
std::vector<std::string> run_lines(const std::string& args) {
  const test::RunResult r = test::run_n3("run " + args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  std::vector<std::string> lines;
  size_t b = 0;
  for (size_t e; (e = r.out.find('\n', b)) != std::string::npos; b = e + 1) lines.push_back(r.out.substr(b, e - b));
  return lines;
}

class RuntimeSequences : public testing::TestWithParam<std::string> {};

// n3 run with two prompts in one batch prints, for each, the ids it prints alone.
TEST_P(RuntimeSequences, TwoSequencesInOneBatchGiveTheIdsEachGivesAlone) {
  const std::string dir = test::temp_dir("two_seqs_" + GetParam());
  const std::string a = ids_file(dir, "a", {2, 17, 99, 4, 250, 31, 7, 8, 120, 64, 5, 200, 9});
  const std::string b = ids_file(dir, "b", {5, 6, 7, 8, 9, 10, 11});
  const std::string common = "--backend " + GetParam() + " --model " + test::tiny_n3w() +
                             " --max-new 10 --temperature 3 --top-k 40 --seed 7";
  const std::vector<std::string> both = run_lines(common + " --ids " + a + " --ids " + b);
  const std::vector<std::string> alone_a = run_lines(common + " --ids " + a);
  const std::vector<std::string> alone_b = run_lines(common + " --ids " + b);
  ASSERT_EQ(both.size(), 2u);
  ASSERT_EQ(alone_a.size(), 1u);
  ASSERT_EQ(alone_b.size(), 1u);
  EXPECT_EQ(both[0], alone_a[0]);
  EXPECT_EQ(both[1], alone_b[0]);
  EXPECT_NE(alone_a[0], alone_b[0]) << "the two prompts should not generate the same ids";
}

// Past kv.cap_tokens with kv.policy evict: the same ids as golden through
// n3 run, and every tensor of the run (prefill and each decode step past the
// cap) bit-identical to golden's through the Device API.
TEST_P(RuntimeSequences, EvictPastTheCapContinuesAsGolden) {
  const std::string hw =
      test::hw_variant("evict_" + GetParam(), {{"kv.cap_tokens", "32"}, {"kv.policy", "evict"}, {"kv.sink_tokens", "4"}});
  const std::string dir = test::temp_dir("evict_" + GetParam());
  const std::vector<int32_t> prompt = {2, 17, 99, 4, 250, 31, 7, 8, 120, 64, 5, 200, 9};
  const std::string common = "--model " + test::tiny_n3w() + " --hw " + hw + " --ids " + ids_file(dir, "p", prompt) +
                             " --max-new 40 --temperature 3 --top-k 40 --seed 7";
  const std::vector<std::string> want = run_lines("--backend golden " + common);
  const std::vector<std::string> got = run_lines("--backend " + GetParam() + " " + common);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(got, want);

  const DeviceOptions o{test::tiny_n3w(), hw, "npu"};
  std::unique_ptr<Device> ref = open_device("golden", o), dev = open_device(GetParam(), o);
  const test::Generated g = test::host_loop(*ref, prompt, 30, true, dir + "/golden", false);
  const test::Generated c = test::host_loop(*dev, prompt, 30, true, dir + "/" + GetParam(), false);
  EXPECT_EQ(c.ids, g.ids);
  const DiffResult d = diff_dumps(c.dump, g.dump);
  EXPECT_TRUE(d.ok()) << GetParam() << " differs from golden first at "
                      << (d.ok() ? std::string() : d.tensors[size_t(d.first_differing)].name);
  EXPECT_EQ(d.tensors.size(), read_manifest(g.dump).tensors.size());
}

// Two prompts of 25 tokens with a cap of 32 keep 3 recent rows: fewer than a
// sliding window of 8 reads. Golden (whose cache is by position) runs it;
// the compiled rings cannot, and say so instead of computing something else.
TEST_P(RuntimeSequences, EvictThatWouldLoseWindowRowsIsRefused) {
  const std::string hw = test::hw_variant("evict_refused_" + GetParam(),
                                          {{"kv.cap_tokens", "32"}, {"kv.policy", "evict"}, {"kv.sink_tokens", "4"}});
  const DeviceOptions o{test::tiny_n3w(), hw, "npu"};
  const std::vector<int32_t> part(25, 7);
  std::unique_ptr<Device> ref = open_device("golden", o), dev = open_device(GetParam(), o);
  const int r = ref->open_sequence(), s = dev->open_sequence();
  ref->prefill(r, part);
  ref->prefill(r, part);
  EXPECT_EQ(ref->cached(r), 32);
  dev->prefill(s, part);
  try {
    dev->prefill(s, part);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sliding window"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Compiled, RuntimeSequences, testing::Values("func", "systemc"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

// The Device base refuses what no backend can run, with one line each.
TEST(RuntimeDevice, BadCallsAreRefusedByTheBase) {
  const DeviceOptions o{test::tiny_n3w(), test::source_dir() + "/configs/hw/kv260.yaml", "npu"};
  for (const char* backend : {"golden", "func"}) {
    SCOPED_TRACE(backend);
    std::unique_ptr<Device> dev = open_device(backend, o);
    const int s = dev->open_sequence();
    EXPECT_THROW(dev->prefill(s + 1, {1, 2}), Error);  // no such sequence
    EXPECT_THROW(dev->prefill(s, {}), Error);          // nothing to prefill
    EXPECT_THROW(dev->prefill(s, {1, 256}), Error);    // id past the vocabulary
    dev->prefill(s, {1, 2});
    EXPECT_THROW(dev->decode({s, s}, {1, 2}), Error);  // one sequence twice in a batch
    EXPECT_THROW(dev->decode({s}, {1, 2}), Error);     // ids and sequences differ in count
    EXPECT_EQ(dev->position(s), 2);
  }
}

}  // namespace
}  // namespace n3

namespace n3 {
namespace {

// A batch of prompts in n3 run takes no option that records one sequence:
// each refusal is one line, exit 2, and nothing written.
TEST(RuntimeBatchCli, OneSequenceOptionsWithSeveralPromptsAreRefused) {
  const std::string dir = test::temp_dir("batch_cli");
  write_npy_i32(dir + "/a.npy", {1, 2, 3});
  write_npy_i32(dir + "/b.npy", {4, 5});
  write_npy_i32(dir + "/bad.npy", {4, 256});
  const std::string base = "run --backend golden --model " + test::tiny_n3w() + " --max-new 3 --ids " + dir +
                           "/a.npy --ids ";
  struct Case {
    std::string extra, needle;
  };
  for (const Case& c : {Case{dir + "/b.npy --dump " + dir + "/d", "--dump records one sequence"},
                        Case{dir + "/b.npy --tokenizer x.model", "--tokenizer prints one sequence"},
                        Case{dir + "/bad.npy --out " + dir + "/o.npy", "out of range"}}) {
    const test::RunResult r = test::run_n3(base + c.extra);
    EXPECT_EQ(r.status, 2) << c.extra << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/d"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.npy"));
}

}  // namespace
}  // namespace n3
