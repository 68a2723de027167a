// The host driver: n3 run's greedy loop against HF's generate(), the KV cap
// policies, batched decode, and text in/out through a SentencePiece model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "host_driver/backends.h"
#include "host_driver/sampler.h"
#include "host_driver/tokenizer.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

std::vector<int32_t> load_ids(const std::string& p) { return read_ids(p, 1 << 30); }

TEST(HostRun, GreedyIdsEqualHfGenerateOnEveryFixture) {
  for (const char* f : {"gemma3n-dev", "gemma3n-a", "gemma3n-b"}) {
    const std::string d = test::fixture(f);
    if (!file_exists(d + "/greedy_ids.npy")) continue;
    SCOPED_TRACE(f);
    const std::string out = test::temp_dir("run") + "/ids.npy";
    test::RunResult r = test::run_n3("run --backend golden --numerics reference --model " + d + "/hf --ids " + d +
                                     "/prompt_ids.npy --max-new 8 --out " + out);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(load_ids(out), load_ids(d + "/greedy_ids.npy"));
    EXPECT_NE(r.err.find("tok/s"), std::string::npos) << "summary on stderr: " << r.err;
  }
}

std::string hw_with(const std::string& policy, int cap, int sinks) {
  return test::hw_variant("hw", {{"kv.cap_tokens", std::to_string(cap)}, {"kv.policy", policy},
                                 {"kv.sink_tokens", std::to_string(sinks)}});
}

DeviceOptions dev_opts(const std::string& hw) {
  return DeviceOptions{test::fixture("gemma3n-dev/hf"), hw, "reference"};
}

TEST(HostRun, KvCapWithErrorPolicyRefusesTheStep) {
  auto dev = open_device("golden", dev_opts(hw_with("error", 24, 0)));
  std::vector<int32_t> prompt = load_ids(test::fixture("gemma3n-dev/prompt_ids.npy"));  // 20 tokens
  int s = dev->open_sequence();
  dev->prefill(s, prompt);
  for (int i = 0; i < 4; ++i) dev->decode({s}, {7});
  EXPECT_EQ(dev->cached(s), 24);
  try {
    dev->decode({s}, {7});
    ADD_FAILURE() << "decode past the cap was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KV cache full"), std::string::npos) << e.what();
  }
  test::RunResult r = test::run_n3("run --numerics reference --model " + test::fixture("gemma3n-dev/hf") + " --ids " +
                                   test::fixture("gemma3n-dev/prompt_ids.npy") + " --max-new 8 --hw " +
                                   hw_with("error", 24, 0));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("kv.cap_tokens = 24"), std::string::npos) << r.err;
}

TEST(HostRun, KvCapWithEvictPolicyKeepsSinksAndTheMostRecentRows) {
  std::vector<int32_t> prompt = load_ids(test::fixture("gemma3n-dev/prompt_ids.npy"));
  std::vector<int32_t> tf = load_ids(test::fixture("gemma3n-dev/tf_ids.npy"));
  auto dev = open_device("golden", dev_opts(hw_with("evict", 16, 2)));
  int s = dev->open_sequence();
  // A 20-token prompt does not fit 16 rows; prefill in chunks that do.
  dev->prefill(s, std::vector<int32_t>(prompt.begin(), prompt.begin() + 12));
  dev->prefill(s, std::vector<int32_t>(prompt.begin() + 12, prompt.end()));
  EXPECT_EQ(dev->position(s), 20);
  EXPECT_LE(dev->cached(s), 16);
  Logits last;
  for (size_t i = 20; i < 30; ++i) last = dev->decode({s}, {tf[i]});
  EXPECT_EQ(dev->position(s), 30);
  EXPECT_EQ(dev->cached(s), 16);
  for (float v : last.values.data) ASSERT_TRUE(std::isfinite(v));
  // With the window (8) inside the kept rows, local layers are unaffected;
  // only the global layers (which lost old rows) may differ from the full run:
  // the result must differ from an unevicted run but stay close to it.
  auto full = open_device("golden", dev_opts(test::source_dir() + "/configs/hw/kv260.yaml"));
  int f = full->open_sequence();
  full->prefill(f, prompt);
  Logits ref;
  for (size_t i = 20; i < 30; ++i) ref = full->decode({f}, {tf[i]});
  EXPECT_GT(test::max_abs_err(last.values, ref.values), 0.0) << "eviction had no effect";
}

TEST(HostRun, BatchedDecodeEqualsEachSequenceAlone) {
  auto dev = open_device("golden", dev_opts(test::source_dir() + "/configs/hw/kv260.yaml"));
  std::vector<int32_t> p1 = load_ids(test::fixture("gemma3n-dev/prompt_ids.npy"));
  std::vector<int32_t> p2(p1.begin() + 5, p1.end());
  auto greedy = [&](const std::vector<int>& seqs, std::vector<Logits> first, int steps) {
    std::vector<std::vector<int32_t>> out(seqs.size());
    std::vector<host::Sampler> samplers;
    host::SamplerConfig greedy_cfg;
    greedy_cfg.max_new = steps + 1;
    for (size_t i = 0; i < seqs.size(); ++i) samplers.emplace_back(greedy_cfg, std::vector<int>{});
    std::vector<int32_t> next(seqs.size());
    for (size_t i = 0; i < seqs.size(); ++i) next[i] = samplers[i].next(first[i].values.ptr(), 512);
    for (int k = 0; k < steps; ++k) {
      for (size_t i = 0; i < seqs.size(); ++i) out[i].push_back(next[i]);
      Logits l = dev->decode(seqs, next);
      for (size_t i = 0; i < seqs.size(); ++i) next[i] = samplers[i].next(l.values.row(i), 512);
    }
    return out;
  };
  int a = dev->open_sequence(), b = dev->open_sequence();
  auto both = greedy({a, b}, {dev->prefill(a, p1), dev->prefill(b, p2)}, 8);
  int a2 = dev->open_sequence();
  auto alone_a = greedy({a2}, {dev->prefill(a2, p1)}, 8);
  int b2 = dev->open_sequence();
  auto alone_b = greedy({b2}, {dev->prefill(b2, p2)}, 8);
  EXPECT_EQ(both[0], alone_a[0]);
  EXPECT_EQ(both[1], alone_b[0]);
  EXPECT_NE(both[0], both[1]);
}

TEST(HostRun, PromptTextRoundTripsThroughATrainedSentencePieceModel) {
  const std::string dir = test::temp_dir("spm");
  {
    std::ofstream c(dir + "/corpus.txt");
    for (int i = 0; i < 200; ++i)
      c << "the npu streams int4 weights from ddr while the sfu computes gelu and softmax " << i % 17 << "\n"
        << "hardware designers diff tensor dumps against the golden model\n";
  }
  const std::string cmd = "spm_train --input=" + dir + "/corpus.txt --model_prefix=" + dir +
                          "/tok --vocab_size=120 --model_type=bpe --character_coverage=1.0 --unk_id=0 --eos_id=1 "
                          "--bos_id=2 --pad_id=3 --user_defined_symbols='<end_of_turn>' >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "spm_train failed (Debian package sentencepiece)";
  // A synthetic model whose vocabulary is the tokenizer's, so every generated id decodes.
  std::string yaml = read_file_text(test::source_dir() + "/configs/models/tiny.yaml");
  for (const char* key : {"vocab_size: 256", "vocab_size_per_layer_input: 256"}) {
    size_t p = yaml.find(key);
    ASSERT_NE(p, std::string::npos) << key;
    yaml.replace(p, std::string(key).size(), std::string(key).substr(0, std::string(key).size() - 3) + "120");
  }
  std::ofstream(dir + "/m.yaml") << yaml;
  const std::string model = dir + "/m.n3w", tok = dir + "/tok.model";
  ASSERT_EQ(test::run_n3("synth --model " + dir + "/m.yaml --seed 3 -o " + model).status, 0);
  const std::string text = "the golden model streams weights";
  const std::string out = dir + "/gen.npy";
  test::RunResult r = test::run_n3("run --numerics reference --model " + model + " --tokenizer " + tok +
                                   " --prompt '" + text + "' --max-new 6 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  host::Tokenizer t(tok);
  std::vector<int32_t> gen = load_ids(out);
  std::vector<int> gi(gen.begin(), gen.end());
  EXPECT_EQ(r.out, t.decode(gi) + "\n") << "printed text must be the decoded ids";
  // --prompt is BOS + encode(text): the same run from ids gives the same ids.
  std::vector<int> p = t.encode_prompt(text);
  EXPECT_EQ(p[0], 2);
  EXPECT_EQ(t.decode(p), text);
  const std::string ids = dir + "/p.npy";
  write_npy_i32(ids, std::vector<int32_t>(p.begin(), p.end()));
  test::RunResult r2 = test::run_n3("run --numerics reference --model " + model + " --ids " + ids +
                                    " --max-new 6 --out " + dir + "/gen2.npy");
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_EQ(load_ids(dir + "/gen2.npy"), gen);
  // Without a tokenizer --prompt is refused with a reason.
  test::RunResult r3 = test::run_n3("run --numerics reference --model " + model + " --prompt hi --max-new 2");
  EXPECT_EQ(r3.status, 2);
  EXPECT_NE(r3.err.find("--prompt needs --tokenizer"), std::string::npos) << r3.err;
}

}  // namespace
}  // namespace n3
