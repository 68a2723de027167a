// The HP-port-to-core clock-domain crossing (rtl_bridge/rtl/cdc/
// n3_cdc_fifo.sv) through `n3 cosim --unit cdc` (docs/rtl.md, "Clock-domain
// crossing"): random streams over many phases, in the hardware file's AXI ->
// core and core -> AXI directions, 1:1, slow -> fast and fast -> slow, come
// out whole and in order; the crossing's latency lies within the design's
// bound in every class; the model's timing.cdc_sync_cycles is the measured
// worst case in core clocks for every hardware file (so neither the RTL nor
// the model's key can drift from the other); the FIFO sustains one word per
// AXI clock both ways; a wrong word is caught and named; shards merge to the
// unsplit run; the waveform holds both clocks. SystemC elaborates once per
// process, so every run is its own n3 process. RtlCdc.LongRun (200 000
// streams) is opt-in (N3_RTL_LARGE=1); .ci/run runs it.
#ifdef N3_HAVE_RTL_CDC
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "base/file_util.h"
#include "golden/hw_config.h"
#include "tests/cosim_summary.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

constexpr int kSyncStages = 2;  // n3_cdc_fifo's SYNC_STAGES as rtl/cdc/unit.cmake builds it

// The common summary, plus the crossing's latency and throughput lines
// (stderr).
struct Summary : test::CosimSummary {
  std::map<std::string, std::pair<double, double>> latency;  // class -> (max, mean) in destination clocks
  std::map<std::string, double> words_per_axi_clock;         // class -> sustained rate
};

Summary parse(const std::string& out, const std::string& err) {
  Summary s;
  static_cast<test::CosimSummary&>(s) = test::parse_cosim_summary("cdc", out);
  std::string line;
  static const std::regex lat(R"(^cdc latency (\S+): max ([0-9.]+) destination clocks, mean ([0-9.]+)$)");
  static const std::regex thr(R"(^  throughput (\S+) +\d+ words: .* ([0-9.]+) words/AXI clock$)");
  std::istringstream e(err);
  while (std::getline(e, line)) {
    std::smatch m;
    if (std::regex_match(line, m, lat)) s.latency[m[1]] = {std::stod(m[2]), std::stod(m[3])};
    else if (std::regex_match(line, m, thr)) s.words_per_axi_clock[m[1]] = std::stod(m[2]);
  }
  return s;
}

const char* const kClasses[] = {"axi>core", "core>axi", "1:1", "slow>fast", "fast>slow"};

// The default suite's run: 2000 streams, about 135 000 words (under a
// second).
TEST(RtlCdc, RandomStreamsCrossWholeAndInOrder) {
  const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 2000 --seed 1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  Summary s = parse(r.out, r.err);
  EXPECT_EQ(s.run, 2000);
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  EXPECT_GE(s.classes["words"], 100000) << r.out;
  for (const char* c : kClasses) {
    EXPECT_GT(s.classes["stream." + std::string(c)], 10) << c << "\n" << r.out;
    EXPECT_GT(s.classes["stream." + std::string(c) + ".throughput"], 2) << c << "\n" << r.out;
    // A word written into an empty FIFO is visible after the SYNC_STAGES
    // synchroniser flops and the registered empty flag: SYNC_STAGES + 1
    // read edges, the first of them anywhere up to one read period after
    // the write edge.
    ASSERT_TRUE(s.latency.count(c)) << c << "\n" << r.err;
    EXPECT_GT(s.latency.at(c).first, kSyncStages) << c;
    EXPECT_LE(s.latency.at(c).first, kSyncStages + 1) << c;
    EXPECT_GT(s.latency.at(c).second, kSyncStages) << c;
    EXPECT_LT(s.latency.at(c).second, kSyncStages + 1) << c;
  }
  // Many phases: the AXI -> core latencies spread over several tenths of a
  // core clock (histogram bins latency.axi>core.NNN).
  std::set<std::string> bins;
  for (const auto& [k, n] : s.classes)
    if (k.rfind("latency.axi>core.", 0) == 0 && n > 0) bins.insert(k);
  EXPECT_GE(bins.size(), 5u) << r.out;
}

// The model's key is the RTL's worst case: timing.cdc_sync_cycles core
// clocks (timing::cdc_latency_ps) is the measured AXI -> core latency
// rounded up to a whole core clock, for each hardware file's clocks; and the
// FIFO moves one word per AXI clock both ways, as the model's ports do.
TEST(RtlCdc, ModelChargesTheMeasuredWorstCase) {
  for (const char* f : {"kv260", "lpddr5x-edge", "hbm-server"}) {
    const std::string hw = test::source_dir() + "/configs/hw/" + f + ".yaml";
    const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 200 --seed 3 --hw " + hw);
    ASSERT_EQ(r.status, 0) << f << "\n" << r.out << r.err;
    const Summary s = parse(r.out, r.err);
    EXPECT_EQ(s.mismatches, 0) << f << ": " << s.first_mismatch;
    const int64_t key = load_hw_config(hw).timing.cdc_sync_cycles.value;
    ASSERT_TRUE(s.latency.count("axi>core")) << f << "\n" << r.err;
    const double worst = s.latency.at("axi>core").first;
    EXPECT_EQ(double(key), std::ceil(worst)) << f << ": worst " << worst << " core clocks, key " << key;
    for (const char* c : {"axi>core", "core>axi"}) {
      ASSERT_TRUE(s.words_per_axi_clock.count(c)) << f << " " << c << "\n" << r.err;
      EXPECT_GE(s.words_per_axi_clock.at(c), 0.999) << f << " " << c;
      EXPECT_LE(s.words_per_axi_clock.at(c), 1.0) << f << " " << c;
    }
  }
}

TEST(RtlCdc, InjectedWrongWordIsCaughtAndNamed) {
  test::ScopedEnv env("N3_COSIM_CDC_INJECT", "1");
  const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 20 --seed 5");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const Summary s = parse(r.out, r.err);
  EXPECT_GE(s.mismatches, 1) << r.out;
  EXPECT_TRUE(std::regex_search(s.first_mismatch, std::regex(R"(: word 4: rtl 0x[0-9a-f]{8} expected 0x[0-9a-f]{8}$)")))
      << s.first_mismatch;
}

TEST(RtlCdc, ShardsMergeToTheUnsplitRun) {
  const std::string dir = test::temp_dir("rtl_cdc_shards");
  const test::RunResult whole = test::run_n3("cosim --unit cdc --vectors 90 --seed 9");
  ASSERT_EQ(whole.status, 0) << whole.out << whole.err;
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".json";
    const test::RunResult s =
        test::run_n3("cosim --unit cdc --vectors 90 --seed 9 --shard " + std::to_string(i) + "/3 --report " + f);
    ASSERT_EQ(s.status, 0) << s.out << s.err;
    reports += " " + f;
  }
  const test::RunResult m = test::run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  // Each stream starts from reset with its own clocks: the latency
  // histogram and the word count of the merge are the unsplit run's.
  const Summary a = parse(whole.out, whole.err), b = parse(m.out, m.err);
  EXPECT_EQ(b.run, 90);
  EXPECT_EQ(b.classes, a.classes);
}

TEST(RtlCdc, BadHardwareFileIsRefusedInOneLine) {
  const std::string dir = test::temp_dir("rtl_cdc_cli");
  const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 10 --hw " + dir + "/missing.yaml --report " +
                                         dir + "/r.json");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(file_exists(dir + "/r.json"));
}

TEST(RtlCdc, WaveformHoldsBothClocks) {
  const std::string dir = test::temp_dir("rtl_cdc_vcd");
  const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 4 --vcd " + dir + "/w.fst");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::FstFile w = test::read_fst(dir + "/w.fst");
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_TRUE(w.has("wclk"));
  EXPECT_TRUE(w.has("rclk"));
  EXPECT_GT(w.end_time, 0u);
}

TEST(RtlCdc, LongRun) {
  if (!test::opt_in("N3_RTL_LARGE"))
    GTEST_SKIP() << "set N3_RTL_LARGE=1 to run 200 000 streams (about 13.5 M words, 150 s on 2 loaded cores)";
  const test::RunResult r = test::run_n3("cosim --unit cdc --vectors 200000 --seed 2");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const Summary s = parse(r.out, r.err);
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  for (const char* c : kClasses) {
    ASSERT_TRUE(s.latency.count(c)) << c;
    EXPECT_LE(s.latency.at(c).first, kSyncStages + 1) << c;
  }
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL_CDC
