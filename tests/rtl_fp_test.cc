// The floating-point and BFP leaves of the GEMV engine (rtl_bridge/rtl/fp/)
// against the numerics core, through `n3 cosim --unit fp` (docs/rtl.md): 20 000
// random and adversarial vectors match bit for bit, every adversarial class
// is drawn, shards merge to the unsplit run, the waveform is written, and a
// fault injected into any one leaf's RTL output is caught and named.
// RtlFp.MillionVectors is opt-in (N3_RTL_LARGE=1).
#ifdef N3_HAVE_RTL
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "base/file_util.h"
#include "tests/cosim_summary.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

// What print_summary printed: counts and the classes.
using Summary = CosimSummary;
Summary parse(const std::string& out) { return parse_cosim_summary("fp", out); }

constexpr const char* kLeaves[] = {"fp_acc_round", "acc_align", "fp_mul",   "fp_add",
                                   "fp_round_fmt", "fp_to_f32", "bfp_quant"};

TEST(RtlFp, TwentyThousandVectorsMatchTheNumericsCore) {
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_n3("cosim --unit fp --vectors 20000 --seed 5");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 mismatches"), std::string::npos) << r.out;
  const Summary s = parse(r.out);
  EXPECT_EQ(s.run, 20000);
  EXPECT_EQ(s.mismatches, 0);
  // Every vector drives every leaf, and each adversarial kind is drawn.
  std::map<std::string, int64_t> per_leaf;
  for (const auto& [k, n] : s.classes) per_leaf[k.substr(0, k.find('.'))] += n;
  for (const char* leaf : kLeaves) EXPECT_EQ(per_leaf[leaf], 20000) << leaf;
  for (const char* c : {"fp_acc_round.tie",
                        "fp_acc_round.near_tie",
                        "fp_acc_round.overflow",
                        "fp_acc_round.underflow",
                        "fp_acc_round.acc_2p62",
                        "fp_acc_round.e_top_extreme",
                        "fp_acc_round.special_scale",
                        "fp_acc_round.zero",
                        "acc_align.tie",
                        "acc_align.far",
                        "acc_align.left",
                        "acc_align.extreme",
                        "fp_mul.tie",
                        "fp_mul.underflow",
                        "fp_mul.overflow",
                        "fp_mul.zero_inf",
                        "fp_mul.special",
                        "fp_add.tie",
                        "fp_add.near_tie",
                        "fp_add.cancel",
                        "fp_add.subnormal",
                        "fp_add.overflow",
                        "fp_add.zero",
                        "fp_round_fmt.tie",
                        "fp_round_fmt.overflow",
                        "fp_round_fmt.underflow",
                        "fp_round_fmt.f32_subnormal",
                        "fp_to_f32.f16_subnormal",
                        "fp_to_f32.f16_inf_nan",
                        "fp_to_f32.bf16_special",
                        "fp_to_f32.f32_special",
                        "bfp_quant.one_huge",
                        "bfp_quant.all_zero",
                        "bfp_quant.poison",
                        "bfp_quant.cnt_short",
                        "bfp_quant.saturate",
                        "bfp_quant.tie",
                        "bfp_quant.subnormal",
                        "bfp_quant.extreme"})
    EXPECT_GT(s.classes.count(c) ? s.classes.at(c) : 0, 100) << c;
  std::printf("RtlFp: 20000 vectors in %.2f s (n3 process wall, %.0f vectors/s)\n", wall, 20000 / wall);
}

TEST(RtlFp, ShardsMergeToTheUnsplitRun) {
  const std::string dir = temp_dir("rtl_fp_shards");
  const std::string run = "cosim --unit fp --vectors 3001 --seed 9";
  const RunResult whole = run_n3(run);
  ASSERT_EQ(whole.status, 0) << whole.out << whole.err;
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string rep = dir + "/s" + std::to_string(i) + ".json";
    const RunResult r = run_n3(run + " --shard " + std::to_string(i) + "/3 --report " + rep);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(parse(r.out).run, i == 0 ? 1001 : 1000);
    reports += " " + rep;
  }
  const RunResult m = run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const Summary a = parse(whole.out), b = parse(m.out);
  EXPECT_EQ(b.run, 3001);
  EXPECT_EQ(b.mismatches, 0);
  EXPECT_FALSE(a.classes.empty());
  EXPECT_EQ(a.classes, b.classes);
}

TEST(RtlFp, WaveformIsWritten) {
  const std::string fst = temp_dir("rtl_fp_vcd") + "/fp.fst";
  const RunResult r = run_n3("cosim --unit fp --vectors 20 --vcd " + fst);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const FstFile w = read_fst(fst);
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  for (const char* port : {"mul_a", "bq_mant", "ar_y"}) EXPECT_TRUE(w.has(port)) << port;
  EXPECT_GT(w.end_time, 0u);
}

TEST(RtlFp, InjectedFaultIsCaughtAndNamed) {
  for (const char* leaf : kLeaves) {
    ScopedEnv env("N3_COSIM_FP_INJECT", leaf);
    const RunResult r = run_n3("cosim --unit fp --vectors 50");
    EXPECT_EQ(r.status, 1) << leaf << ": " << r.out << r.err;
    const Summary s = parse(r.out);
    EXPECT_EQ(s.mismatches, 50) << leaf;  // every vector, that leaf only
    EXPECT_EQ(s.first_mismatch.rfind("vector 0: " + std::string(leaf) + " (", 0), 0u) << s.first_mismatch;
  }
  ScopedEnv env("N3_COSIM_FP_INJECT", "no_such_leaf");
  const RunResult r = run_n3("cosim --unit fp --vectors 10");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("fp_acc_round"), std::string::npos) << r.err;
}

// Opt-in (CI): 1 M vectors in two processes, merged.
TEST(RtlFp, MillionVectors) {
  if (!test::opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 to run 1 000 000 vectors";
  const std::string dir = temp_dir("rtl_fp_1m");
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd;
  for (int i = 0; i < 2; ++i)
    cmd += n3_binary() + " cosim --unit fp --vectors 1000000 --seed 1 --shard " + std::to_string(i) + "/2 --report " +
           dir + "/s" + std::to_string(i) + ".json >" + dir + "/out" + std::to_string(i) + " 2>&1 & p" +
           std::to_string(i) + "=$!; ";
  cmd += "wait $p0; r0=$?; wait $p1; r1=$?; exit $((r0 | r1))";
  const int rc = std::system(cmd.c_str());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << read_file_text(dir + "/out0") << read_file_text(dir + "/out1");
  const RunResult m = run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const Summary s = parse(m.out);
  EXPECT_EQ(s.run, 1000000);
  EXPECT_EQ(s.mismatches, 0);
  std::printf("RtlFp.MillionVectors: 1000000 vectors in 2 processes, wall %.1f s\n", wall);
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL
