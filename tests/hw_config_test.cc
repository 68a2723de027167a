// The hardware file as a typed struct (golden/hw_config.h): every shipped
// design point survives parse -> emit -> parse with its values and sources;
// bad values are refused naming the key, the file and the line (and on the
// command line with exit 2, one line, no output); the derived quantities and
// the decode traffic give the figures docs/timing.md quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/decode_traffic.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;

const char* const kDesignPoints[] = {"kv260", "lpddr5x-edge", "hbm-server"};

std::string hw_path(const std::string& name) { return test::source_dir() + "/configs/hw/" + name + ".yaml"; }
std::string kv260_text() { return read_file_text(hw_path("kv260")); }

// kv260.yaml with the first `from` replaced by `to`, and the line it is on.
struct Edited {
  std::string text;
  int line;
};
Edited kv260_with(const std::string& from, const std::string& to) {
  std::string s = kv260_text();
  const size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p == std::string::npos) return {s, 0};
  const int line = 1 + int(std::count(s.begin(), s.begin() + long(p), '\n'));
  return {s.replace(p, from.size(), to), line};
}

// An edit of kv260.yaml and what the refusal must say.
struct Bad {
  std::string from, to, says;
};

TEST(HwConfig, EveryDesignPointRoundTripsThroughYaml) {
  for (const char* h : kDesignPoints) {
    SCOPED_TRACE(h);
    const HwConfig a = load_hw_config(hw_path(h));
    const std::string yaml = emit_hw_yaml(a);
    const HwConfig b = parse_hw_config(yaml, "rt.yaml");
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.description, b.description);
    EXPECT_TRUE(a.numerics.formats == b.numerics.formats);
    const std::vector<HwKeyInfo> ka = hw_keys(a), kb = hw_keys(b);
    ASSERT_EQ(ka.size(), kb.size());
    int given = 0;
    for (size_t i = 0; i < ka.size(); ++i) {
      EXPECT_EQ(ka[i].key, kb[i].key);
      EXPECT_EQ(ka[i].value, kb[i].value) << ka[i].key;
      EXPECT_EQ(ka[i].origin->given, kb[i].origin->given) << ka[i].key;
      EXPECT_EQ(ka[i].origin->source, kb[i].origin->source) << ka[i].key;
      given += ka[i].origin->given;
    }
    EXPECT_GE(given, 50) << "every key of the shipped files is given";
    EXPECT_EQ(emit_hw_yaml(b), yaml);
  }
  // Reals keep their shortest form, so the emitted file reads like the source; the schema describes each key.
  const std::string kv260 = emit_hw_yaml(load_hw_config(hw_path("kv260")));
  EXPECT_NE(kv260.find("  ddr_efficiency: {value: 0.57, source: "), std::string::npos) << kv260;
  EXPECT_NE(kv260.find("  core_mhz: {value: 400, source: \"pccx v002 docs: engines at 400 MHz\"}  # engine clock\n"),
            std::string::npos)
      << kv260;
}

TEST(HwConfig, TypedMembersKeepValuesAndSources) {
  const HwConfig hw = load_hw_config(hw_path("kv260"));
  EXPECT_EQ(hw.memory.ddr_bytes.value, int64_t(4) << 30);
  EXPECT_EQ(hw.memory.ddr_bytes.source, "KV260 datasheet: 4 GB DDR4");
  EXPECT_DOUBLE_EQ(hw.memory.ddr_efficiency.value, 0.57);
  EXPECT_EQ(hw.kv.policy.value, KvPolicy::Error);
  EXPECT_EQ(hw.numerics.formats.act, num::Fmt::BF16);
  EXPECT_EQ(hw.numerics.act_format.source, "pccx v002 RTL: BF16 activations");
  EXPECT_FALSE(hw.numerics.weight_group.given);  // not in the file: Formats' default
  EXPECT_EQ(hw.numerics.formats.weight_group, num::Formats{}.weight_group);
  const HwConfig evict = parse_hw_config(kv260_with("{value: error,", "{value: evict,").text, "hw.yaml");
  EXPECT_EQ(evict.kv.policy.value, KvPolicy::Evict);
}

// Overrides (n3 estimate --set) go through the file's own typed load: they
// replace a key, add one the file leaves out (a whole section too), carry
// their text as the source and are checked as the file's values are.
TEST(HwConfig, OverridesAreLoadedLikeTheFile) {
  std::string bare = kv260_text();
  bare = bare.substr(0, bare.find("timing:\n"));
  const HwConfig hw = parse_hw_config(bare, "bare.yaml",
                                      {{"compute.gemv_cores", "8", "--set"}, {"timing.wbuf_tiles", "4", "--sweep"}});
  EXPECT_EQ(hw.compute.gemv_cores.value, 8);
  EXPECT_EQ(hw.compute.gemv_cores.source, "--set compute.gemv_cores=8");
  EXPECT_TRUE(hw.timing.wbuf_tiles.given);
  EXPECT_EQ(hw.weight_tile_bytes(), 65536);
  EXPECT_EQ(hw.memory.hp_ports.value, 4);  // untouched keys keep the file's values
  auto refused = [&](const std::vector<HwOverride>& o) {
    try {
      parse_hw_config(bare, "bare.yaml", o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refused({{"compute.gemv_cores", "-1", "--set"}}),
            "--set compute.gemv_cores=-1: 'compute.gemv_cores' must be positive (is '-1')");
  EXPECT_EQ(refused({{"clocks.turbo", "1", "--set"}}), "--set clocks.turbo=1: unknown hardware parameter 'clocks.turbo'");
  EXPECT_EQ(refused({{"compute.gemv_cores", "4", "--set"}, {"compute.gemv_cores", "8", "--set"}}),
            "--set compute.gemv_cores=8: 'compute.gemv_cores' is overridden twice");
  EXPECT_EQ(refused({{"timing.wbuf_tiles", "1", "--sweep"}}),
            "--sweep timing.wbuf_tiles=1: 'timing.wbuf_tiles' must be at least 2 (single buffering is not modelled) (is '1')");
}

TEST(HwConfig, DerivedQuantitiesAreItsMethods) {
  const HwConfig hw = load_hw_config(hw_path("kv260"));
  // docs/timing.md: min(19.2 x 0.57, 4 x 16 B x 250 MHz) = 10.944 GB/s.
  EXPECT_DOUBLE_EQ(hw.ddr_roofline_bytes_per_s(), 10.944e9);
  EXPECT_DOUBLE_EQ(hw.hp_bytes_per_s(4), 16e9);
  EXPECT_DOUBLE_EQ(hw.ddr_bytes_per_s(1), 4e9);  // one port is the bound
  EXPECT_EQ(hw.weight_buffer_bytes(), 4 * 65536);
  EXPECT_EQ(hw.weight_tile_bytes(), 4 * 65536 / 2);
  EXPECT_EQ(hw.ddr_latency_bytes(), 1313u);  // 120 ns x 10.944 GB/s
  EXPECT_EQ(hw.gemv_macs_per_clk_total(), 128);
  EXPECT_EQ(hw.gemm_macs_per_clk_total(), 32 * 32 * 2);
  // Without timing keys: the tiles default to double buffering, no latency, and the timing model refuses.
  std::string s = kv260_text();
  s = s.substr(0, s.find("timing:\n"));
  const HwConfig bare = parse_hw_config(s, "bare.yaml");
  EXPECT_FALSE(bare.timing.wbuf_tiles.given);
  EXPECT_EQ(bare.weight_tile_bytes(), 4 * 65536 / 2);
  EXPECT_EQ(bare.ddr_latency_bytes(), 0u);
  try {
    bare.require_timing();
    ADD_FAILURE() << "a file without timing keys passed require_timing";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "bare.yaml: missing hardware parameter 'timing.ddr_latency_ns'");
  }
  const HwConfig four = parse_hw_config(kv260_with("wbuf_tiles: {value: 2,", "wbuf_tiles: {value: 4,").text, "hw.yaml");
  EXPECT_EQ(four.weight_tile_bytes(), 65536);
}

TEST(HwConfig, RejectsBadValuesNamingKeyFileAndLine) {
  const Bad cases[] = {
      {"ddr_efficiency: {value: 0.57,", "ddr_efficiency: {value: 1.5,",
       "'memory.ddr_efficiency' must be in [0.001, 1] (is '1.5')"},
      {"ddr_efficiency: {value: 0.57,", "ddr_efficiency: {value: 0,", "'memory.ddr_efficiency' must be in [0.001, 1]"},
      {"ddr_efficiency: {value: 0.57,", "ddr_efficiency: {value: 1e-300,", "'memory.ddr_efficiency' must be in [0.001, 1] (is '1e-300')"},
      {"core_mhz: {value: 400,", "core_mhz: {value: 0,", "'clocks.core_mhz' must be in [0.001, 1e6] (is '0')"},
      // Rates within physical reason: 1e-300 GB/s made n3 estimate print inf and -nan%.
      {"ddr_peak_gbps: {value: 19.2,", "ddr_peak_gbps: {value: 1e-300,",
       "'memory.ddr_peak_gbps' must be in [0.001, 1e6] (is '1e-300')"},
      {"axi_mhz: {value: 250,", "axi_mhz: {value: 1e7,", "'clocks.axi_mhz' must be in [0.001, 1e6] (is '1e7')"},
      {"gemv_cores: {value: 4,", "gemv_cores: {value: 2.5,", "'compute.gemv_cores' must be an integer (is '2.5')"},
      {"l2_bytes: {value: 1835008,", "l2_bytes: {value: -1,", "'memory.l2_bytes' must be positive"},
      {"hp_port_bits: {value: 128,", "hp_port_bits: {value: 100,",
       "'memory.hp_port_bits' must be a positive multiple of 8"},
      {"policy: {value: error,", "policy: {value: drop,", "'kv.policy' must be one of error, evict (is 'drop')"},
      {"act_format: {value: bf16,", "act_format: {value: fp8,", "'numerics.act_format' must be one of f32, bf16, f16"},
      {"kv_format: {value: f16,", "kv_format: {value: fp8,", "'numerics.kv_format' must be one of f16, bf16, int8"},
      {"sink_tokens: {value: 4,", "sink_tokens: {value: 8192,",
       "kv.sink_tokens = 8192 must be less than kv.cap_tokens = 8192"},
      {"sink_tokens: {value: 4,", "sink_tokens: {value: -1,", "'kv.sink_tokens' must not be negative"},
      {"wbuf_tiles: {value: 2,", "wbuf_tiles: {value: 1,", "'timing.wbuf_tiles' must be at least 2"},
      {"wbuf_tiles: {value: 2,", "wbuf_tiles: {value: 1000000,",
       "timing.wbuf_tiles must be at most the weight buffers' bytes (262144)"},
      {"dma_hp_ports: {value: 4,", "dma_hp_ports: {value: 5,", "timing.dma_hp_ports = 5 must be in [1, memory.hp_ports = 4]"},
      {"queue_depth: {value: 8,", "queue_depth: {value: 0,", "'timing.queue_depth' must be positive"},
      {"dma_lanes: {value: 8,", "dma_lanes: {value: 0,", "'timing.dma_lanes' must be positive"},
      {"dma_job_cycles: {value: 6,", "dma_job_cycles: {value: -1,", "'timing.dma_job_cycles' must not be negative"},
      {"dma_lanes: {value: 8,", "dma_lanes: {value: 1.5,", "'timing.dma_lanes' must be an integer (is '1.5')"},
      {"cdc_sync_cycles:", "cdc_sync_cycles: {value: 2, source: \"x\"}\n  cdc_sync_cycles:",
       "'timing.cdc_sync_cycles' is given twice"},
      {"ddr_latency_ns: {value: 120,", "ddr_latency_ns: {value: [120],",
       "'timing.ddr_latency_ns' must be {value: ..., source:"},
  };
  for (const Bad& b : cases) {
    const Edited e = kv260_with(b.from, b.to);
    // The duplicate's line is the second of the two (the original key, now a line down).
    const int line = b.says.find("given twice") != std::string::npos ? e.line + 1 : e.line;
    try {
      parse_hw_config(e.text, "hw.yaml");
      ADD_FAILURE() << "accepted: " << b.to;
    } catch (const Error& err) {
      const std::string m = err.what();
      EXPECT_NE(m.find(b.says), std::string::npos) << m;
      EXPECT_EQ(m.rfind("hw.yaml:" + std::to_string(line) + ": ", 0), 0u) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  // Cross-format rules keep the numerics core's words (num::formats_problem).
  try {
    parse_hw_config(kv260_with("score_format: {value: f32,", "score_format: {value: bf16,").text, "hw.yaml");
    ADD_FAILURE() << "accepted bf16 scores";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("hw.yaml: incompatible numerics formats: numerics.score_format = bf16"),
              std::string::npos)
        << err.what();
  }
}

// Command line: a bad hardware file stops the command before any output.
TEST(HwConfig, CommandsRefuseABadHardwareFileWithOneLine) {
  const std::string dir = test::temp_dir("hwbad");
  const std::string hw = dir + "/hw.yaml";
  const std::string tiny = test::source_dir() + "/configs/models/tiny.yaml";
  const Bad cases[] = {
      {"ddr_efficiency: {value: 0.57,", "ddr_efficiency: {value: 1.5,", "'memory.ddr_efficiency' must be in [0.001, 1]"},
      {"policy: {value: error,", "policy: {value: drop,", "'kv.policy' must be one of error, evict"},
      {"sink_tokens: {value: 4,", "sink_tokens: {value: 9000,", "must be less than kv.cap_tokens"},
  };
  for (const Bad& b : cases) {
    const Edited e = kv260_with(b.from, b.to);
    write_file_atomic(hw, e.text);
    const std::string where = hw + ":" + std::to_string(e.line) + ": ";
    for (const std::string& cmd : {"estimate --model " + tiny + " --hw " + hw,
                                   "compile --model " + tiny + " --hw " + hw + " -o " + dir + "/out"}) {
      SCOPED_TRACE(cmd);
      const test::RunResult r = test::run_n3(cmd);
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(b.says), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be one line: " << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_FALSE(fs::exists(dir + "/out"));
    }
  }
}

// One decode-traffic function: the figures of `n3 estimate` on E4B (docs/timing.md).
TEST(DecodeTraffic, E4bTokenBytesAndKvFormat) {
  const ModelConfig c = load_model_config(test::source_dir() + "/configs/models/gemma3n-e4b.yaml");
  const num::Formats f16;
  const DecodeTraffic one = decode_traffic(c, f16, 1), far = decode_traffic(c, f16, 4096);
  EXPECT_DOUBLE_EQ(one.weight_bytes, 2253578312.0);
  EXPECT_DOUBLE_EQ(one.kv_bytes, 71680.0);
  EXPECT_DOUBLE_EQ(one.macs, 4485978864.0);
  EXPECT_DOUBLE_EQ(far.weight_bytes, one.weight_bytes);
  EXPECT_DOUBLE_EQ(far.kv_bytes, 88080384.0);
  EXPECT_DOUBLE_EQ(far.bytes(), 2341658696.0);
  num::Formats int8;
  int8.kv = num::KvFmt::INT8;
  EXPECT_DOUBLE_EQ(decode_traffic(c, int8, 4096).kv_bytes, far.kv_bytes / 2);
}

}  // namespace
}  // namespace n3
