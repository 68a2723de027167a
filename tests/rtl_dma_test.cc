// The RTL DMA engine against the functional simulator's MEMCPY / MEMSET,
// through `n3 cosim --unit dma` (docs/rtl_dma.md): SystemC
// elaborates once per process, so every run is its own n3 process.
// RtlDma.HundredThousandVectors (100 000 descriptors, the bar) is opt-in
// (N3_RTL_LARGE=1); .ci/run runs it.
#ifdef N3_HAVE_RTL_DMA
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "rtl_bridge/dma_vectors.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

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

// Every conversion the ISA allows and every adversarial class ran.
void expect_coverage(const std::string& out) {
  const auto cls = classes_of(out);
  for (int i = 0; i < rtl::kNumDmaConversions; ++i) {
    const std::string c = rtl::dma_conversion_name(i);
    EXPECT_GT(cls.count(c) ? cls.at(c) : 0, 0) << c;
  }
  for (int i = 0; i < rtl::kNumDmaClasses; ++i)
    EXPECT_GT(cls.count(rtl::kDmaClasses[i]) ? cls.at(rtl::kDmaClasses[i]) : 0, 0) << rtl::kDmaClasses[i];
}

TEST(RtlDma, TenThousandDescriptorsBitExact) {
  const auto t0 = std::chrono::steady_clock::now();
  const test::RunResult r = test::run_n3("cosim --unit dma --vectors 10000 --seed 1");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("10000 DMA vectors in %.1f s\n%s", s, r.out.c_str());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("10000 of 10000 vectors (shard 0/1), 0 mismatches"), std::string::npos) << r.out;
  // The ISA's conversion pairs: same-dtype copies, float <-> float, INT32 /
  // INT4 / INT8 to float, float to INT8, MEMSET: 47 of them.
  EXPECT_EQ(rtl::kNumDmaConversions, 47);
  expect_coverage(r.out);
  ASSERT_NE(r.out.find("cycles per vector, RTL vs SystemC model formula"), std::string::npos) << r.out;
  // Calibration (docs/rtl_dma.md): on every stall-free row the
  // model's DMA engine formula (timing::dma_cycles) gives the RTL's cycles
  // exactly, vector by vector, so neither can drift silently.
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
  // Families (copy, copy.scaled, 4 sources to float, float to int8, memset)
  // x DDR or not x 3 sizes: 42 rows possible; 10 000 vectors fill most.
  EXPECT_GE(rows, 30) << "the cycle table covers the conversion families:\n" << r.out;
}

TEST(RtlDma, InjectedMismatchIsCaught) {
  test::ScopedEnv env("N3_COSIM_DMA_INJECT", "1");
  const test::RunResult r = test::run_n3("cosim --unit dma --vectors 60 --seed 4");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("60 mismatches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vector 0 ("), std::string::npos) << r.out;
}

TEST(RtlDma, ShardsMergeToTheUnsplitRun) {
  const std::string dir = test::temp_dir("rtl_dma_shards");
  const test::RunResult whole = test::run_n3("cosim --unit dma --vectors 300 --seed 9 --report " + dir + "/all.json");
  ASSERT_EQ(whole.status, 0) << whole.out << whole.err;
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".json";
    const test::RunResult s =
        test::run_n3("cosim --unit dma --vectors 300 --seed 9 --shard " + std::to_string(i) + "/3 --report " + f);
    ASSERT_EQ(s.status, 0) << s.out << s.err;
    reports += " " + f;
  }
  const test::RunResult m = test::run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  EXPECT_EQ(classes_of(m.out), classes_of(whole.out));
}

TEST(RtlDma, MalformedOptionsAreRefusedInOneLine) {
  const std::string dir = test::temp_dir("rtl_dma_cli");
  const std::string rep = dir + "/r.json", vcd = dir + "/w.fst";
  auto refused = [&](const std::string& args, const std::string& names) {
    const test::RunResult r = test::run_n3(args + " --report " + rep);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(file_exists(rep)) << args;
    EXPECT_FALSE(file_exists(vcd)) << args;
  };
  for (const std::string s : {"3/2", "x", "1/0", "-1/2"})
    refused("cosim --unit dma --vectors 10 --vcd " + vcd + " --shard " + s, "--shard");
  refused("cosim --unit dma --vectors 0 --vcd " + vcd, "--vectors");
  refused("cosim --unit dma --vectors 10 --seed x --vcd " + vcd, "seed");
  refused("cosim --unit dma --vectors 10 --hw " + dir + "/missing.yaml --vcd " + vcd, "missing.yaml");
  refused("cosim --unit dma --vectors 3 --vcd " + dir + "/no-such-dir/w.fst", "no-such-dir");
}

TEST(RtlDma, WaveformOpens) {
  const std::string dir = test::temp_dir("rtl_dma_vcd");
  const test::RunResult r = test::run_n3("cosim --unit dma --vectors 3 --vcd " + dir + "/w.fst");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::FstFile w = test::read_fst(dir + "/w.fst");
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_TRUE(w.has("ar_valid"));
  EXPECT_GT(w.end_time, 0u);
}

TEST(RtlDma, HundredThousandVectors) {
  if (!test::opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 to run 100 000 DMA descriptors";
  const std::string dir = test::temp_dir("rtl_dma_100k");
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd;
  for (int i = 0; i < 2; ++i)
    cmd += test::n3_binary() + " cosim --unit dma --vectors 100000 --seed 1 --shard " + std::to_string(i) +
           "/2 --report " + dir + "/s" + std::to_string(i) + ".json >" + dir + "/out" + std::to_string(i) +
           " 2>&1 & p" + std::to_string(i) + "=$!; ";
  cmd += "wait $p0; r0=$?; wait $p1; r1=$?; exit $((r0 | r1))";
  const int rc = std::system(cmd.c_str());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << read_file_text(dir + "/out0") << read_file_text(dir + "/out1");
  const test::RunResult m = test::run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  std::printf("100000 DMA vectors, 2 shards in parallel, %.1f s wall\n%s", wall, m.out.c_str());
  EXPECT_NE(m.out.find("100000 of 100000 vectors (merged from 2 shards), 0 mismatches"), std::string::npos) << m.out;
  expect_coverage(m.out);
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL_DMA
