// Model and hardware configuration: HF config.json forms, n3 YAML, and the
// validation errors a user sees for bad files.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

TEST(ModelConfig, ReadsDevFixtureConfigJson) {
  ModelConfig c = load_model_config(test::fixture("gemma3n-dev/hf"));
  EXPECT_EQ(c.hidden, 128);
  EXPECT_EQ(c.layers, 10);
  EXPECT_EQ(c.kv_shared, 4);
  EXPECT_EQ(c.ffn, std::vector<int>(10, 512));
  EXPECT_EQ(c.kv_source(6), 5);  // local shared layer reads the last local non-shared layer
  EXPECT_EQ(c.kv_source(9), 4);  // global reads the last global non-shared layer
  EXPECT_DOUBLE_EQ(c.rope_global, 1e6);
  EXPECT_DOUBLE_EQ(c.rope_local, 1e4);
  EXPECT_FLOAT_EQ(c.sparsity[2], 0.95f);
  EXPECT_EQ(c.sparsity[3], 0.0f);
}

TEST(ModelConfig, ReadsNestedTextConfigOfHubCheckpoints) {
  const std::string hub = test::fixture("gemma3n-dev-hub/hf");
  if (!file_exists(hub + "/config.json")) GTEST_SKIP();
  EXPECT_EQ(load_model_config(hub), load_model_config(test::fixture("gemma3n-dev/hf")));
}

const char* kLegacy = R"({"model_type": "gemma3n_text", "hidden_size": 64, "intermediate_size": 128,
 "num_hidden_layers": 3, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
 "vocab_size": 100, "vocab_size_per_layer_input": 80, "hidden_size_per_layer_input": 8,
 "num_kv_shared_layers": 1, "sliding_window": 4, "laurel_rank": 4,
 "activation_sparsity_pattern": [0.95, 0.0, 0.0],
 "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
 "rope_theta": 500000.0, "rope_local_base_freq": 2000.0, "some_unrelated_hf_key": 1})";

TEST(ModelConfig, ReadsLegacyRopeFieldsAndIgnoresUnrelatedHfKeys) {
  ModelConfig c = parse_model_config(kLegacy, "legacy.json", false);
  EXPECT_DOUBLE_EQ(c.rope_global, 500000.0);
  EXPECT_DOUBLE_EQ(c.rope_local, 2000.0);
  EXPECT_EQ(c.vocab_pl, 80);
  EXPECT_EQ(c.kv_source(2), 0);
}

TEST(ModelConfig, YamlRoundTrips) {
  ModelConfig c = parse_model_config(kLegacy, "legacy.json", false);
  ModelConfig d = parse_model_config(model_config_to_yaml(c), "roundtrip.yaml", true);
  EXPECT_EQ(c, d);
}

void expect_error(const std::string& text, const std::string& needle, bool strict = true) {
  try {
    parse_model_config(text, "bad.yaml", strict);
    ADD_FAILURE() << "accepted a bad config; expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "error must be one line";
  }
}

std::string legacy_with(const std::string& from, const std::string& to) {
  std::string s = kLegacy;
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos);
  return s.replace(p, from.size(), to);
}

TEST(ModelConfig, RejectsBadFilesWithNamedReasons) {
  expect_error("hidden_size: [1, 2", "malformed YAML");
  expect_error(legacy_with("\"some_unrelated_hf_key\": 1", "\"bogus_key\": 1"), "unknown key 'bogus_key'");
  expect_error(legacy_with("\"hidden_size\": 64", "\"hidden_size\": \"wide\""), "hidden_size", false);
  expect_error(legacy_with("[0.95, 0.0, 0.0]", "[0.95, 0.0]"), "activation_sparsity_pattern has 2 entries", false);
  expect_error(legacy_with("\"num_key_value_heads\": 1", "\"num_key_value_heads\": 3"), "not a multiple", false);
  expect_error(legacy_with("\"intermediate_size\": 128", "\"intermediate_size\": [128, 128]"),
               "intermediate_size has 2 entries", false);
  expect_error(legacy_with("\"vocab_size_per_layer_input\": 80", "\"vocab_size_per_layer_input\": 200"),
               "exceeds vocab_size", false);
  expect_error(legacy_with("\"full_attention\", \"sliding_attention\"]", "\"sliding_attention\", \"full_attention\"]"),
               "has no earlier non-shared layer of its type", false);
  expect_error(legacy_with("\"head_dim\": 32", "\"head_dim\": 31"), "head_dim must be even", false);
  expect_error(legacy_with("\"sliding_attention\", \"full_attention\"", "\"sliding\", \"full_attention\""),
               "layer_types[0]", false);
}

TEST(ModelConfig, ShippedModelYamlsLoadAndRoundTrip) {
  for (const char* m : {"gemma3n-e4b", "gemma3n-e2b", "tiny"}) {
    const std::string p = test::source_dir() + "/configs/models/" + m + ".yaml";
    if (!file_exists(p)) continue;
    ModelConfig c = load_model_config(p);
    EXPECT_EQ(c, parse_model_config(model_config_to_yaml(c), "rt", true)) << m;
  }
}

TEST(ModelConfig, E4BAndE2BHaveTheBriefsDimensions) {
  const std::string dir = test::source_dir() + "/configs/models/";
  if (!file_exists(dir + "gemma3n-e4b.yaml")) GTEST_SKIP() << "model YAMLs not present";
  ModelConfig e4b = load_model_config(dir + "gemma3n-e4b.yaml");
  EXPECT_EQ(e4b.hidden, 2048);
  EXPECT_EQ(e4b.ffn, std::vector<int>(35, 16384));
  EXPECT_EQ(e4b.layers, 35);
  EXPECT_EQ(e4b.kv_shared, 15);
  EXPECT_EQ(e4b.kv_source(20), 18);  // brief: local shared layers read layer 18
  EXPECT_EQ(e4b.kv_source(24), 19);  // global shared layers read layer 19
  EXPECT_EQ(e4b.vocab, 262400);
  EXPECT_EQ(e4b.vocab_pl, 262144);
  EXPECT_EQ(e4b.sliding_window, 512);
  EXPECT_EQ(e4b.laurel_rank, 64);
  for (int l = 0; l < 35; ++l) {
    EXPECT_EQ(e4b.is_global(l), (l + 1) % 5 == 0) << l;
    EXPECT_EQ(e4b.sparsity[l] > 0, l < 10) << l;
  }
  ModelConfig e2b = load_model_config(dir + "gemma3n-e2b.yaml");
  EXPECT_EQ(e2b.layers, 30);
  EXPECT_EQ(e2b.ffn, std::vector<int>(30, 8192));
  EXPECT_EQ(e2b.kv_shared, 10);
  EXPECT_EQ(e2b.first_shared(), 20);
}

TEST(HwConfig, Kv260LoadsWithSourcesForEveryValue) {
  HwConfig hw = load_hw_config(test::source_dir() + "/configs/hw/kv260.yaml");
  EXPECT_EQ(hw.name, "kv260");
  EXPECT_EQ(hw.memory.l2_bytes.value, 114688 * 16);
  EXPECT_DOUBLE_EQ(hw.clocks.core_mhz.value, 400);
  for (const HwKeyInfo& k : hw_keys(hw)) {
    if (k.origin->given) {
      EXPECT_FALSE(k.origin->source.empty()) << k.key;
    }
  }
}

TEST(HwConfig, RejectsUnknownKeysMissingSourcesAndWrongTypes) {
  const std::string good = read_file_text(test::source_dir() + "/configs/hw/kv260.yaml");
  auto bad = [&](const std::string& from, const std::string& to, const std::string& needle) {
    std::string s = good;
    size_t p = s.find(from);
    ASSERT_NE(p, std::string::npos) << from;
    s.replace(p, from.size(), to);
    try {
      parse_hw_config(s, "hw.yaml");
      ADD_FAILURE() << "accepted: " << to;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  bad("core_mhz:", "core_ghz:", "unknown hardware parameter 'clocks.core_ghz'");
  bad("{value: 400, source: \"pccx v002 docs: engines at 400 MHz\"}", "400", "must be {value");
  bad("{value: 400,", "{value: fast,", "must be a number");
  bad("  gemv_cores:", "  #gemv_cores:", "missing hardware parameter 'compute.gemv_cores'");
  bad("name: kv260", "name: [kv260", "malformed YAML");
}

}  // namespace
}  // namespace n3
