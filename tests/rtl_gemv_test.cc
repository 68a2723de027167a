// The RTL GEMV engine against the functional simulator's GEMV, through
// `n3 cosim --unit gemv` (docs/rtl.md): SystemC elaborates once per process,
// so every run is its own n3 process.
#ifdef N3_HAVE_RTL
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "rtl_bridge/gemv_vectors.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

// "  class <name>   <count>" lines of a cosim summary.
std::map<std::string, int64_t> classes_of(const std::string& out) {
  std::map<std::string, int64_t> m;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string w, name;
    int64_t n = 0;
    if (l >> w && w == "class" && l >> name >> n) m[name] = n;
  }
  return m;
}

TEST(RtlGemv, TenThousandVectorsBitExact) {
  const auto t0 = std::chrono::steady_clock::now();
  const test::RunResult r = test::run_n3("cosim --unit gemv --vectors 10000 --seed 1");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("10000 GEMV vectors in %.1f s\n%s", s, r.out.c_str());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("10000 of 10000 vectors (shard 0/1), 0 mismatches"), std::string::npos) << r.out;
  const auto cls = classes_of(r.out);
  for (int i = 0; i < rtl::kNumGemvClasses; ++i)
    EXPECT_GT(cls.count(rtl::kGemvClasses[i]) ? cls.at(rtl::kGemvClasses[i]) : 0, 0) << rtl::kGemvClasses[i];
  for (const char* path : {"mv.int4.row", "mv.int4.group", "mv.int4.two_level", "mv.int8", "mv.float", "qk.float",
                           "qk.int8", "pv.float", "pv.int8"})
    EXPECT_GT(cls.count(path) ? cls.at(path) : 0, 0) << path;
  EXPECT_NE(r.out.find("cycles per vector, RTL vs SystemC model formula"), std::string::npos);
  // Calibration (docs/rtl.md): on every stall-free shape class the SystemC
  // model's GEMV formula gives the RTL's cycles exactly, so neither can
  // drift silently.
  std::istringstream in(r.out.substr(r.out.find("cycles per vector")));
  std::string line;
  int rows = 0;
  std::getline(in, line);
  std::getline(in, line);  // the header
  while (std::getline(in, line) && line.rfind("  wall", 0) != 0) {
    std::istringstream l(line);
    std::vector<std::string> w;
    for (std::string t; l >> t;) w.push_back(t);
    ASSERT_GE(w.size(), 5u) << line;
    const double rtl = std::stod(w[w.size() - 4]), model = std::stod(w[w.size() - 3]), worst = std::stod(w.back());
    EXPECT_EQ(rtl, model) << line;
    EXPECT_EQ(worst, 0.0) << line;
    ++rows;
  }
  EXPECT_GE(rows, 9) << "every engine path has a row in the cycle table:\n" << r.out;
}

TEST(RtlGemv, ShardsMergeToTheUnsplitRun) {
  const std::string dir = test::temp_dir("rtl_gemv_shards");
  const test::RunResult whole = test::run_n3("cosim --unit gemv --vectors 600 --seed 9 --report " + dir + "/all.json");
  ASSERT_EQ(whole.status, 0) << whole.out << whole.err;
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".json";
    const test::RunResult s =
        test::run_n3("cosim --unit gemv --vectors 600 --seed 9 --shard " + std::to_string(i) + "/3 --report " + f);
    ASSERT_EQ(s.status, 0) << s.out << s.err;
    reports += " " + f;
  }
  const test::RunResult m = test::run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  EXPECT_EQ(classes_of(m.out), classes_of(whole.out)) << m.out << "\nunsplit:\n" << whole.out;
  EXPECT_NE(m.out.find("600 of 600 vectors"), std::string::npos) << m.out;
}

TEST(RtlGemv, InjectedMismatchIsCaught) {
  test::ScopedEnv env("N3_COSIM_GEMV_INJECT", "1");
  const test::RunResult r = test::run_n3("cosim --unit gemv --vectors 20 --seed 3");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("20 mismatches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first mismatch: vector 0 ("), std::string::npos) << r.out;
}

TEST(RtlGemv, RefusesOtherGemvCores) {
  const std::string hw = test::hw_variant("rtl_gemv_cores", {{"compute.gemv_cores", "2"}});
  const test::RunResult r = test::run_n3("cosim --unit gemv --vectors 1 --hw " + hw);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("-DN3_RTL_HW"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RtlGemv, WritesAWaveform) {
  const std::string fst = test::temp_dir("rtl_gemv_vcd") + "/gemv.fst";
  const test::RunResult r = test::run_n3("cosim --unit gemv --vectors 3 --vcd " + fst);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::FstFile w = test::read_fst(fst);
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_TRUE(w.has("a_valid"));
  EXPECT_GT(w.end_time, 0u);
  // A waveform that cannot be written is bad input: one line, exit 2.
  const test::RunResult bad = test::run_n3("cosim --unit gemv --vectors 3 --vcd /nonexistent-dir/gemv.fst");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// Opt-in (N3_RTL_LARGE=1): one million vectors over two parallel shards, merged.
TEST(RtlGemv, MillionVectorsInTwoShards) {
  if (!test::opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 for the 1,000,000-vector run";
  const std::string dir = test::temp_dir("rtl_gemv_large");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<test::RunResult>> shards;
  for (int i = 0; i < 2; ++i)
    shards.push_back(std::async(std::launch::async, [&dir, i] {
      return test::run_n3("cosim --unit gemv --vectors 1000000 --seed 7 --shard " + std::to_string(i) + "/2 --report " +
                          dir + "/s" + std::to_string(i) + ".json");
    }));
  for (auto& f : shards) {
    const test::RunResult s = f.get();
    EXPECT_EQ(s.status, 0) << s.out << s.err;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const test::RunResult m = test::run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  std::printf("%s1000000 GEMV vectors over 2 shards: wall %.0f s, %.0f vectors/s\n", m.out.c_str(), wall, 1e6 / wall);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  EXPECT_NE(m.out.find("1000000 of 1000000 vectors"), std::string::npos);
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL
