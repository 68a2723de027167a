// The RTL SFU element pipeline (rtl_bridge/rtl/sfu/) against the numerics
// core, through `n3 cosim --unit sfu` (docs/rtl_sfu.md, "SFU element pipeline", "SFU row operators"): 10 000 random
// and adversarial vectors per function (an element; a row for the row
// reductions RSUM, RMAX, RSUMSQ; for the fused row operators RMSNORM,
// SOFTMAX, ROPE, GTOPK, SOFTCAP, MAGMATCH a row each 20th as often, at least
// as many elements in all) match bit for bit, every class is
// drawn, each function streams one element a clock at its fixed latency,
// shards merge to the unsplit run, the waveform is written, a fault injected
// into any function's result is caught and named, and bad options are
// refused in one line; the unit's 1/n of a row is checked for every row
// length the ISA allows. SystemC elaborates once per process, so every run is
// its own n3 process. RtlSfu.MillionVectors (1 000 000 per function) is
// opt-in (N3_RTL_LARGE=1); .ci/run runs it.
#ifdef N3_HAVE_RTL_SFU
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "base/file_util.h"
#include "rtl_bridge/sfu_vectors.h"
#include "tests/cosim_summary.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

using Summary = test::CosimSummary;
Summary parse(const std::string& out) { return test::parse_cosim_summary("sfu", out); }

// The pipeline depth of each function (docs/rtl_sfu.md, "SFU element pipeline", the latency
// table): the RTL's design, pinned so that a change to a program's steps is
// a deliberate one, made in the doc and the SystemC model's calibration too.
const std::map<std::string, int> kLatency = {
    {"exp", 12}, {"sqrt", 7}, {"rsqrt", 7}, {"recip", 2}, {"tanh", 18}, {"gelu", 23}, {"sin", 13}, {"cos", 13},
    {"scale", 2}, {"relu", 2}, {"addk", 2}, {"maxk", 2}, {"add", 2},   {"sub", 2},    {"mul", 2},  {"max", 2},
    {"mac", 2}, {"rsum", 8}, {"rmax", 8}, {"rsumsq", 8}, {"rms", 14},
    // The row operators: SOFTCAP's and ROPE's pipeline depth; the
    // multi-pass ones' clocks a row beyond its beats (passes, scalar tails).
    {"rmsnorm", 17}, {"softmax", 41}, {"rope", 14}, {"gtopk", 26}, {"softcap", 20}, {"magmatch", 18}};

// Vectors of a run with `per` vectors of each element-wise function.
int64_t vectors_for(int64_t per) { return per / rtl::kSfuRowRatio * rtl::kSfuCycle; }

// Every function ran `per` vectors (a row operator per / kSfuRowRatio rows
// of at least `per` elements in all), all passed, every class was drawn.
void expect_coverage(const Summary& s, int64_t per) {
  ASSERT_EQ(kLatency.size(), size_t(rtl::kNumSfuFuncs));
  for (int i = 0; i < rtl::kNumSfuFuncs; ++i) {
    const isa::CvoFunc f = rtl::kSfuFuncs[i];
    const std::string n = rtl::sfu_func_name(f);
    auto count = [&](const std::string& k) { return s.classes.count(k) ? s.classes.at(k) : 0; };
    const int64_t want = rtl::sfu_is_rowop(f) ? per / rtl::kSfuRowRatio : per;
    EXPECT_EQ(count(n), want) << n;
    EXPECT_EQ(count(n + ":pass"), want) << n;
    if (rtl::sfu_is_rowop(f)) {
      EXPECT_GE(count(n + ":elements"), per) << n;
    }
    EXPECT_EQ(count(n + ":FAIL"), 0) << n;
    for (const std::string& c : rtl::sfu_class_names(f)) EXPECT_GT(count(n + "." + c), 0) << n << "." << c;
  }
}

TEST(RtlSfu, TenThousandVectorsPerFunctionBitExact) {
  const int64_t per = 10000;
  const auto t0 = std::chrono::steady_clock::now();
  const test::RunResult r = test::run_n3("cosim --unit sfu --vectors " + std::to_string(vectors_for(per)) + " --seed 1");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%lld SFU vectors in %.1f s\n", static_cast<long long>(vectors_for(per)), wall);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const Summary s = parse(r.out);
  EXPECT_EQ(s.run, vectors_for(per));
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  expect_coverage(s, per);
  // Each function: one latency on every stall-free stream (the cosim also
  // checks each stream takes its input beats + latency clocks), the pinned
  // one (a reduction's: from its row's last beat in to the row's result).
  for (const auto& [name, lat] : kLatency) {
    int keys = 0;
    for (const auto& [k, n] : s.classes)
      if (k.rfind(name + ":latency=", 0) == 0) ++keys;
    EXPECT_EQ(keys, 1) << name << ": one latency on every stream";
    EXPECT_GT(s.classes.count(name + ":latency=" + std::to_string(lat)), 0u) << name << "\n" << r.out;
    ASSERT_TRUE(s.cycles.count(name + " latency")) << name;
    EXPECT_EQ(s.cycles.at(name + " latency").first, double(lat)) << name;
    // The model's figures are the RTL's (the hardware file's
    // timing.sfu_latency_*_cycles, measured here): its latency equals the
    // measured one, and its stream term (the beats + that latency) every
    // stall-free stream's clocks, on average exactly.
    EXPECT_EQ(s.cycles.at(name + " latency").second, double(lat)) << name << ": the hardware file's latency";
    ASSERT_TRUE(s.cycles.count(name + " stream")) << name;
    EXPECT_EQ(s.cycles.at(name + " stream").second, s.cycles.at(name + " stream").first) << name;
  }
}

// The 1/n the unit forms from its count of a row's elements (RMS, RMSNORM,
// GTOPK, MAGMATCH: n3_fp_pkg::fp_inv_count) is num::inv_count's for every
// row length the ISA allows, 1 .. 2^24 - 1 (a descriptor's cols has 24
// bits): `n3 cosim --unit sfu-count` over all of them (about 3 s); a wrong
// bit at the last length is caught and named; shards cover the lengths.
TEST(RtlSfu, OneOverNOfEveryRowLength) {
  const int64_t all = (int64_t(1) << 24) - 1;
  const std::regex head(R"(cosim sfu-count: seed \d+, (\d+) of (\d+) vectors \(shard 0/1\), (\d+) mismatches)");
  std::smatch m;
  const test::RunResult r = test::run_n3("cosim --unit sfu-count --vectors " + std::to_string(all));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_TRUE(std::regex_search(r.out, m, head)) << r.out;
  EXPECT_EQ(std::stoll(m[1]), all);
  EXPECT_EQ(std::stoll(m[3]), 0) << r.out;
  EXPECT_NE(r.out.find("class inv_count.power_of_two       24\n"), std::string::npos) << r.out;  // 2^0 .. 2^23
  {
    test::ScopedEnv env("N3_COSIM_SFU_COUNT_INJECT", std::to_string(all));
    const test::RunResult bad = test::run_n3("cosim --unit sfu-count --vectors " + std::to_string(all));
    EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
    ASSERT_TRUE(std::regex_search(bad.out, m, head)) << bad.out;
    EXPECT_EQ(std::stoll(m[3]), 1) << bad.out;
    EXPECT_TRUE(std::regex_search(bad.out, std::regex("first mismatch: vector 16777214: inv_count\\(16777215\\): rtl "
                                                      "0x[0-9a-f]{8}, numerics 0x[0-9a-f]{8}")))
        << bad.out;
  }
  const test::RunResult shard = test::run_n3("cosim --unit sfu-count --vectors 1000 --shard 2/3");
  ASSERT_EQ(shard.status, 0) << shard.out << shard.err;
  EXPECT_NE(shard.out.find("333 of 1000 vectors (shard 2/3), 0 mismatches"), std::string::npos) << shard.out;
}

TEST(RtlSfu, InjectedMismatchIsCaughtAndNamed) {
  const int64_t n = rtl::kSfuCycle + 100;  // every function, the row operators' first rows
  for (const char* f : {"exp", "gelu", "cos", "rsqrt", "mac", "maxk", "rsumsq", "rmsnorm", "softmax", "rope", "gtopk",
                        "softcap", "magmatch"}) {
    test::ScopedEnv env("N3_COSIM_SFU_INJECT", f);
    const test::RunResult r = test::run_n3("cosim --unit sfu --vectors " + std::to_string(n) + " --seed 4");
    EXPECT_EQ(r.status, 1) << f << "\n" << r.out << r.err;
    const Summary s = parse(r.out);
    // k functions stream one vector a command: each stream's first result is flipped.
    int64_t maxk = 0;
    for (int64_t i = 0; i < n; ++i) maxk += rtl::kSfuFuncs[rtl::sfu_func_index(i)] == isa::CvoFunc::MAXK;
    if (std::string(f) == "maxk") EXPECT_EQ(s.mismatches, maxk) << r.out;
    else EXPECT_EQ(s.mismatches, 1) << r.out;
    EXPECT_NE(s.first_mismatch.find(std::string(": ") + f + " (class "), std::string::npos) << s.first_mismatch;
    EXPECT_NE(s.first_mismatch.find(" rtl 0x"), std::string::npos) << s.first_mismatch;
    EXPECT_NE(s.first_mismatch.find(" numerics 0x"), std::string::npos) << s.first_mismatch;
  }
}

TEST(RtlSfu, ShardsMergeToTheUnsplitRun) {
  const std::string dir = test::temp_dir("rtl_sfu_shards");
  const test::RunResult whole = test::run_n3("cosim --unit sfu --vectors 5000 --seed 9 --report " + dir + "/all.json");
  ASSERT_EQ(whole.status, 0) << whole.out << whole.err;
  std::string reports;
  for (int i = 0; i < 3; ++i) {
    const std::string f = dir + "/s" + std::to_string(i) + ".json";
    const test::RunResult s =
        test::run_n3("cosim --unit sfu --vectors 5000 --seed 9 --shard " + std::to_string(i) + "/3 --report " + f);
    ASSERT_EQ(s.status, 0) << s.out << s.err;
    reports += " " + f;
  }
  const test::RunResult m = test::run_n3("cosim --merge" + reports);
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  // The vectors and their classes are the unsplit run's (the streams, and
  // so the latency counts, are cut differently).
  auto vectors_only = [](std::map<std::string, int64_t> c) {
    for (auto it = c.begin(); it != c.end();) it = it->first.find(":latency=") != std::string::npos ? c.erase(it) : ++it;
    return c;
  };
  const Summary a = parse(whole.out), b = parse(m.out);
  EXPECT_EQ(b.run, 5000);
  EXPECT_EQ(vectors_only(b.classes), vectors_only(a.classes));
}

TEST(RtlSfu, MalformedOptionsAreRefusedInOneLine) {
  const std::string dir = test::temp_dir("rtl_sfu_cli");
  const std::string rep = dir + "/r.json", vcd = dir + "/w.fst";
  auto refused = [&](const std::string& args, const std::string& names) {
    const test::RunResult r = test::run_n3(args + " --report " + rep);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
    EXPECT_FALSE(file_exists(rep)) << args;
    EXPECT_FALSE(file_exists(vcd)) << args;
  };
  refused("cosim --unit sfuu --vectors 10 --vcd " + vcd, "--unit");
  for (const std::string v : {"0", "x", "-5", "1e3"}) refused("cosim --unit sfu --vcd " + vcd + " --vectors " + v, "vectors");
  for (const std::string s : {"3/2", "x", "1/0"}) refused("cosim --unit sfu --vectors 10 --vcd " + vcd + " --shard " + s, "--shard");
  refused("cosim --unit sfu --vectors 10 --hw " + dir + "/missing.yaml --vcd " + vcd, "missing.yaml");
  // A hardware file whose SFU has other lanes than the Verilated unit
  // (hbm-server: 16; the build's kv260: 1) is refused naming the key.
  if (N3_RTL_SFU_LANES != 16)
    refused("cosim --unit sfu --vectors 10 --hw " + test::source_dir() + "/configs/hw/hbm-server.yaml", "sfu_elems_per_clk");
}

TEST(RtlSfu, WaveformOpens) {
  const std::string dir = test::temp_dir("rtl_sfu_vcd");
  const test::RunResult r = test::run_n3("cosim --unit sfu --vectors 40 --vcd " + dir + "/w.fst");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const test::FstFile w = test::read_fst(dir + "/w.fst");
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_TRUE(w.has("out_valid"));
  EXPECT_GT(w.end_time, 0u);
}

TEST(RtlSfu, MillionVectors) {
  if (!test::opt_in("N3_RTL_LARGE"))
    GTEST_SKIP() << "set N3_RTL_LARGE=1 to run 1 000 000 vectors per SFU function (row operators: 50 000 rows)";
  const int64_t per = 1000000, total = vectors_for(per);
  const std::string dir = test::temp_dir("rtl_sfu_million");
  const auto t0 = std::chrono::steady_clock::now();
  std::string cmd;
  for (int i = 0; i < 2; ++i)
    cmd += test::n3_binary() + " cosim --unit sfu --vectors " + std::to_string(total) + " --seed 1 --shard " +
           std::to_string(i) + "/2 --report " + dir + "/s" + std::to_string(i) + ".json >" + dir + "/out" +
           std::to_string(i) + " 2>&1 & p" + std::to_string(i) + "=$!; ";
  cmd += "wait $p0; r0=$?; wait $p1; r1=$?; exit $((r0 | r1))";
  const int rc = std::system(cmd.c_str());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << read_file_text(dir + "/out0") << read_file_text(dir + "/out1");
  const test::RunResult m = test::run_n3("cosim --merge " + dir + "/s0.json " + dir + "/s1.json");
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  std::printf("%lld SFU vectors, 2 shards in parallel, %.1f s wall\n", static_cast<long long>(total), wall);
  const Summary s = parse(m.out);
  EXPECT_EQ(s.run, total);
  EXPECT_EQ(s.mismatches, 0) << s.first_mismatch;
  expect_coverage(s, per);
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL_SFU
