// Cross-backend agreement (issue 9): the same prompt through every backend
// via the device API, NPU numerics, greedy, 32 new tokens (and on the tiny
// model a seeded sampled run too, whose ids vary). The generated ids
// equal the golden model's, and every tensor recorded over the whole run
// (prefill and each decode step) is bit-identical to the golden model's
// (`diff_dumps`, the library behind `n3 diff`). Backends not built here
// (systemc without SystemC, cuda without a GPU) are skipped with a message.
#include <gtest/gtest.h>

#include <set>

#include "golden/diff.h"
#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "host_driver/backends.h"
#include "host_driver/sampler.h"
#include "tests/host_loop.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

constexpr int kNewTokens = 32;

test::Generated greedy(Device& dev, const std::vector<int32_t>& prompt, const std::string& dump_dir,
                       bool sampled = false) {
  return test::host_loop(dev, prompt, kNewTokens, sampled, dump_dir);
}

struct Model {
  const char* name;
  std::string path;
  std::vector<int32_t> prompt;
};

std::vector<Model> models() {
  return {{"tiny", test::tiny_n3w(), {2, 17, 99, 4, 250, 31, 7, 8, 120, 64, 5, 200}},
          {"dev", test::fixture("gemma3n-dev/hf"),
           read_ids(test::fixture("gemma3n-dev/prompt_ids.npy"), 1 << 30)}};
}

// A backend that is not built or has no device here: open_device throws
// naming why; anything else is a failure.
std::unique_ptr<Device> open_or_skip(const std::string& backend, const std::string& model, std::string* why) {
  DeviceOptions o;
  o.model = model;
  o.hw_path = test::source_dir() + "/configs/hw/kv260.yaml";
  o.numerics = "npu";
  o.dump_all = true;  // every intermediate, so the diff covers the whole graph
  try {
    return open_device(backend, o);
  } catch (const Error& e) {
    *why = e.what();
    return nullptr;
  }
}

class CrossBackend : public testing::TestWithParam<std::string> {};

TEST_P(CrossBackend, GreedyIdsAndEveryDumpedTensorMatchGolden) {
  const std::string backend = GetParam();
  for (const Model& m : models()) {
    SCOPED_TRACE(m.name);
    const std::string dir = test::temp_dir("cross_" + backend + "_" + m.name);
    std::string why;
    std::unique_ptr<Device> ref = open_or_skip("golden", m.path, &why);
    ASSERT_TRUE(ref) << why;
    const test::Generated want = greedy(*ref, m.prompt, dir + "/golden");
    ASSERT_EQ(want.ids.size(), size_t(kNewTokens));
    std::unique_ptr<Device> dev = open_or_skip(backend, m.path, &why);
    if (!dev) {
      const bool optional = backend == "cuda" || backend == "systemc";
      if (optional) GTEST_SKIP() << backend << " backend unavailable here: " << why;
      FAIL() << why;
    }
    const test::Generated got = greedy(*dev, m.prompt, dir + "/" + backend);
    EXPECT_EQ(got.ids, want.ids);
    const DiffResult d = diff_dumps(got.dump, want.dump);
    EXPECT_TRUE(d.ok()) << backend << " differs from golden first at "
                        << (d.ok() ? std::string() : d.tensors[size_t(d.first_differing)].name);
    // Every tensor golden dumped was compared (none reference-only), decode steps included.
    const Manifest mg = read_manifest(want.dump);
    int decode = 0;
    for (const ManifestEntry& t : mg.tensors) decode += t.phase == "decode";
    EXPECT_GT(decode, 0);
    EXPECT_EQ(d.tensors.size(), mg.tensors.size()) << "tensors golden dumped that " << backend << " did not";
    if (std::string(m.name) != "tiny") continue;
    // Sampled on the tiny model: varied ids, still the same on both.
    std::unique_ptr<Device> ref2 = open_or_skip("golden", m.path, &why), dev2 = open_or_skip(backend, m.path, &why);
    ASSERT_TRUE(ref2 && dev2) << why;
    const test::Generated ws = greedy(*ref2, m.prompt, dir + "/golden_sampled", true);
    const test::Generated gs = greedy(*dev2, m.prompt, dir + "/" + backend + "_sampled", true);
    EXPECT_GE(std::set<int32_t>(ws.ids.begin(), ws.ids.end()).size(), 8u) << "the sampled run should not repeat one id";
    EXPECT_EQ(gs.ids, ws.ids);
    EXPECT_TRUE(diff_dumps(gs.dump, ws.dump).ok()) << backend << " sampled run differs from golden";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CrossBackend, testing::Values("func", "systemc", "cuda"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace n3
