// The RTL GEMM engine (rtl_bridge/rtl/gemm/) against the functional
// simulator's gemm.mv, through `n3 cosim --unit gemm` (docs/rtl_gemm.md):
// SystemC elaborates once per process, so every run is its own n3 process.
#ifdef N3_HAVE_RTL_GEMM
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "rtl_bridge/gemv_vectors.h"
#include "tests/cosim_summary.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

TEST(RtlGemm, TenThousandVectorsBitExact) {
  const auto t0 = std::chrono::steady_clock::now();
  const test::RunResult r = test::run_n3("cosim --unit gemm --vectors 10000 --seed 1");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("10000 GEMM vectors in %.1f s\n%s", s, r.out.c_str());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::CosimSummary c = test::parse_cosim_summary("gemm", r.out);
  EXPECT_EQ(c.run, 10000);
  EXPECT_EQ(c.mismatches, 0) << c.first_mismatch;
  // Every adversarial class of the GEMV generator but the one with too few
  // draws to be sure of in 10 000 ("large", 0.2 %), and every engine path.
  for (int i = 0; i < rtl::kNumGemvClasses; ++i) {
    const std::string k = rtl::kGemvClasses[i];
    if (k != "large") {
      EXPECT_GT(c.classes.count(k) ? c.classes.at(k) : 0, 0) << k;
    }
  }
  for (const char* path : {"mv.int4.row", "mv.int4.two_level", "mv.int8"})
    EXPECT_GT(c.classes.count(path) ? c.classes.at(path) : 0, 0) << path;
  // Every vector without stalls already kept to the engine's own cycle
  // formula (a difference is a mismatch); the table has the four shape classes.
  for (const char* row : {"T>rows whole tiles", "T>rows ragged", "T<=rows whole tiles", "T<=rows ragged"})
    EXPECT_EQ(c.cycles.count(row), 1u) << row << "\n" << r.out;
}

// Calibration (docs/rtl_gemm.md, "Cycles"): the SystemC model's GEMM
// formula (timing::gemm_cycles, with the calibrated gemm_setup_cycles)
// equals the RTL's cycles less the activation stream on every shape class.
TEST(RtlGemm, ModelFormulaKeepsToTheRtl) {
  const test::RunResult r = test::run_n3("cosim --unit gemm --vectors 600 --seed 5");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::CosimSummary c = test::parse_cosim_summary("gemm", r.out);
  ASSERT_TRUE(c.cycles.count("T>rows whole tiles")) << r.out;
  const auto [rtl, model] = c.cycles.at("T>rows whole tiles");
  EXPECT_LE(std::fabs(model - rtl), 0.02 * rtl) << r.out;
  // The model charges the RTL's own formula (timing::gemm_cycles): every
  // class, ragged tiles and T <= rows included, to the printed 0.1 cycle.
  for (const auto& [row, rm] : c.cycles) EXPECT_NEAR(rm.second, rm.first, 0.051) << row << "\n" << r.out;
}

TEST(RtlGemm, InjectedMismatchIsCaught) {
  test::ScopedEnv env("N3_COSIM_GEMM_INJECT", "1");
  const test::RunResult r = test::run_n3("cosim --unit gemm --vectors 20 --seed 3");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const test::CosimSummary c = test::parse_cosim_summary("gemm", r.out);
  EXPECT_EQ(c.mismatches, 20) << r.out;
  EXPECT_EQ(c.first_mismatch.rfind("vector 0 (", 0), 0u) << r.out;
}

TEST(RtlGemm, RefusesOtherMacsPerPe) {
  const std::string hw = test::hw_variant("rtl_gemm_mpe", {{"timing.gemm_macs_per_pe", "4"}});
  const test::RunResult r = test::run_n3("cosim --unit gemm --vectors 1 --hw " + hw);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("-DN3_RTL_HW"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RtlGemm, WritesAWaveform) {
  const std::string fst = test::temp_dir("rtl_gemm_vcd") + "/gemm.fst";
  const test::RunResult r = test::run_n3("cosim --unit gemm --vectors 3 --vcd " + fst);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::FstFile w = test::read_fst(fst);
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_TRUE(w.has("w_valid"));
  EXPECT_GT(w.end_time, 0u);
  // A waveform that cannot be written is bad input: one line, exit 2.
  const test::RunResult bad = test::run_n3("cosim --unit gemm --vectors 3 --vcd /nonexistent-dir/gemm.fst");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// `vectors` GEMM vectors over two parallel shards, merged: none differs.
void run_sharded(int64_t vectors) {
  const std::string dir = test::temp_dir("rtl_gemm_large");
  const std::string n = std::to_string(vectors);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<test::RunResult>> shards;
  for (int i = 0; i < 2; ++i)
    shards.push_back(std::async(std::launch::async, [&dir, &n, i] {
      return test::run_n3("cosim --unit gemm --vectors " + n + " --seed 7 --shard " + std::to_string(i) + "/2 --report " +
                          dir + "/s" + std::to_string(i) + ".json");
    }));
  for (auto& f : shards) {
    const test::RunResult s = f.get();
    EXPECT_EQ(s.status, 0) << s.out << s.err;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const test::RunResult m = test::run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  std::printf("%s%s GEMM vectors over 2 shards: wall %.0f s, %.0f vectors/s\n", m.out.c_str(), n.c_str(), wall,
              double(vectors) / wall);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const test::CosimSummary c = test::parse_cosim_summary("gemm", m.out);
  EXPECT_EQ(c.run, vectors);
  EXPECT_EQ(c.mismatches, 0) << c.first_mismatch;
}

// Opt-in (N3_RTL_LARGE=1), run by CI: 100 000 vectors, about 100 s on 2 cores.
TEST(RtlGemm, HundredThousandVectors) {
  if (!test::opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 for the 100,000-vector run";
  run_sharded(100000);
}

// Opt-in (N3_RTL_GEMM_MILLION=1), not in CI (about 16 minutes on 2 cores;
// docs/rtl_gemm.md records the million-vector run, spread over a bigger host
// with --shard).
TEST(RtlGemm, MillionVectorsInTwoShards) {
  if (!test::opt_in("N3_RTL_GEMM_MILLION")) GTEST_SKIP() << "set N3_RTL_GEMM_MILLION=1 for the 1,000,000-vector run";
  run_sharded(1000000);
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL_GEMM
