// Every numerics format the hardware file allows, on every backend (issue 18:
// dtypes plumbed end to end). For each allowed combination of the act /
// stream / kv / score / logits formats, the host loop (sampled, so the ids
// depend on every logit) runs on golden, func, systemc and cuda (where built
// and a GPU is present) on the tiny model; every backend's ids must equal
// golden's, and every call's Logits::dtype must name the logits format.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "golden/numerics/formats_config.h"
#include "host_driver/backends.h"
#include "tests/host_loop.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

struct Combo {
  std::string act, stream, kv, score, logits;
  std::string name() const { return act + "_" + stream + "_" + kv + "_" + score + "_" + logits; }
};
// Names the combination in test listings (gtest would print its bytes).
void PrintTo(const Combo& c, std::ostream* os) { *os << c.name(); }

// The combinations num::formats_problem accepts (it is the rule the hardware file is checked with).
std::vector<Combo> allowed() {
  const std::vector<std::string> fmts = {"f32", "bf16", "f16"}, kvs = {"f16", "bf16", "int8"};
  std::vector<Combo> out;
  for (const auto& act : fmts)
    for (const auto& stream : fmts)
      for (const auto& kv : kvs)
        for (const auto& score : fmts)
          for (const auto& logits : fmts) {
            num::Formats f;
            const Combo c{act, stream, kv, score, logits};
            for (const auto& [k, v] : {std::pair<const char*, const std::string&>{"act_format", act},
                                       {"stream_format", stream}, {"kv_format", kv}, {"score_format", score},
                                       {"logits_format", logits}})
              if (!num::set_formats_field(f, k, v).empty()) throw Error(std::string("bad format ") + k);
            if (num::formats_problem(f).empty()) out.push_back(c);
          }
  return out;
}

class RuntimeFormats : public testing::TestWithParam<Combo> {};

TEST_P(RuntimeFormats, EveryBackendGivesGoldensIdsAndNamesTheLogitsFormat) {
  const Combo& c = GetParam();
  const std::string hw = test::hw_variant("formats_" + c.name(), {{"numerics.act_format", c.act},
                                                                   {"numerics.stream_format", c.stream},
                                                                   {"numerics.kv_format", c.kv},
                                                                   {"numerics.score_format", c.score},
                                                                   {"numerics.logits_format", c.logits}});
  const std::string want_dtype = c.logits == "f32" ? "float32" : c.logits == "bf16" ? "bfloat16" : "float16";
  const std::vector<int32_t> prompt = {2, 17, 99, 4, 250, 31};
  DeviceOptions o{test::tiny_n3w(), hw, "npu"};
  o.max_chunk = 4;  // programs of 4, 2 and 1 tokens: the prompt runs as 4 + 2
  const test::Generated want = test::host_loop(*open_device("golden", o), prompt, 6, true);
  for (const std::string& d : want.dtypes) EXPECT_EQ(d, want_dtype) << "golden";
  for (const std::string backend : {"func", "systemc", "cuda"}) {
    std::unique_ptr<Device> dev;
    try {
      dev = open_device(backend, o);
    } catch (const Error& e) {
      const std::string why = e.what();
      // Not built, or no GPU here: nothing to compare on this machine.
      if (why.find("not available") != std::string::npos || why.find("no usable CUDA device") != std::string::npos)
        continue;
      FAIL() << backend << ": " << why;
    }
    const test::Generated got = test::host_loop(*dev, prompt, 6, true);
    EXPECT_EQ(got.ids, want.ids) << backend << " with " << c.name();
    for (const std::string& d : got.dtypes) EXPECT_EQ(d, want_dtype) << backend;
  }
}

INSTANTIATE_TEST_SUITE_P(Allowed, RuntimeFormats, testing::ValuesIn(allowed()),
                         [](const testing::TestParamInfo<Combo>& i) { return i.param.name(); });

// The rule itself: the count of allowed combinations is what formats_problem says, not fewer.
TEST(RuntimeFormatsSet, CoversEveryAllowedCombination) {
  // 3 act x 3 stream x 3 kv x 2 score (bf16 scores are refused) x 3 logits,
  // less int8 KV with f16 scores (3 x 3 x 3).
  EXPECT_EQ(allowed().size(), 3u * 3 * 3 * 2 * 3 - 3 * 3 * 3);
}

}  // namespace
}  // namespace n3

namespace n3 {
namespace {

// The reported bug: with bf16 logits, n3 run on func read the logits region
// as float32 and generated other ids than golden on the dev fixture.
TEST(RuntimeFormatsCli, Bf16LogitsOnTheDevFixtureRunGivesGoldensIds) {
  const std::string hw = test::hw_variant("formats_cli_bf16", {{"numerics.logits_format", "bf16"}});
  const std::string common = " --model " + test::fixture("gemma3n-dev/hf") + " --hw " + hw + " --ids " +
                             test::fixture("gemma3n-dev/prompt_ids.npy") + " --max-new 8";
  const test::RunResult want = test::run_n3("run --backend golden" + common);
  ASSERT_EQ(want.status, 0) << want.err;
  for (const char* backend : {"func", "systemc"}) {
    const test::RunResult got = test::run_n3(std::string("run --backend ") + backend + common);
    ASSERT_EQ(got.status, 0) << backend << ": " << got.err;
    EXPECT_EQ(got.out, want.out) << backend;
  }
}

}  // namespace
}  // namespace n3
