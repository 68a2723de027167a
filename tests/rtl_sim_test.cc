// The RTL GEMV engine inside the SystemC model (`n3 sim --backend systemc
// --rtl gemv`, docs/rtl.md "The bridge"): the tiny model's prompt in two
// chunk sizes plus decode steps gives every dumped tensor byte-identical to
// `n3 golden --numerics npu`; every GEMV instruction's RTL cycles lie within
// 2 % of the calibrated timing model's, and the run's total within 2 % of the
// run on the timing model alone; programs run with it too; a difference
// stops the run naming the instruction, the tensor and the element.
#ifdef N3_HAVE_RTL_GEMV
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/npy.h"
#include "sim/memory.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

struct Tiny {
  std::string dir, model, io;
};

Tiny tiny(const std::string& tag, int prompt, int steps) {
  Tiny t;
  t.dir = temp_dir(tag);
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < prompt; ++i) ids.push_back((i * 37 + 5) % 256);
  for (int i = 0; i < steps; ++i) feed.push_back((i * 7 + 3) % 256);
  write_npy_i32(t.dir + "/ids.npy", ids);
  write_npy_i32(t.dir + "/feed.npy", feed);
  t.model = tiny_n3w();
  t.io = " --model " + t.model + " --ids " + t.dir + "/ids.npy --feed " + t.dir + "/feed.npy --dump-all --force" +
         hw_without_prefetch(tag + "_hw");  // the run totals are compared with the bridge's
  return t;
}

// "rtl gemv: worst 0.123%: ..." -> 0.00123.
double worst_of(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex("rtl gemv: worst ([0-9.]+)%"))) return 1e9;
  return std::stod(m[1]) / 100.0;
}

double total_cycles(const std::string& stats) {
  return nlohmann::json::parse(read_file_text(stats)).at("total_cycles").get<double>();
}

TEST(RtlSim, TinyPromptTwoChunkSizesAndDecodeMatchGoldenWithinTwoPercent) {
  const Tiny t = tiny("rtl_sim_tiny", 13, 8);
  RunResult g = run_n3("golden --numerics npu" + t.io + " --dump " + t.dir + "/ref");
  ASSERT_EQ(g.status, 0) << g.err;
  for (int chunk : {4, 13}) {
    const std::string c = std::to_string(chunk), cand = t.dir + "/rtl" + c;
    RunResult s = run_n3("sim --backend systemc --rtl gemv" + t.io + " --chunk " + c + " --dump " + cand +
                         " --stats " + t.dir + "/rtl" + c + ".json");
    ASSERT_EQ(s.status, 0) << s.err;
    RunResult d = run_n3("diff " + cand + " " + t.dir + "/ref");
    EXPECT_EQ(d.status, 0) << "chunk " << chunk << ":\n" << d.out << d.err;
    EXPECT_NE(d.out.find("reference-only=0"), std::string::npos) << d.out;
    // The histogram is printed, and every GEMV instruction is within 2 % of
    // the calibrated timing model.
    EXPECT_NE(s.err.find("per-instruction |model - rtl| / rtl"), std::string::npos) << s.err;
    std::smatch within;
    ASSERT_TRUE(std::regex_search(s.err, within,
                                  std::regex("([0-9]+) within 2%, ([0-9]+) more within one cycle, ([0-9]+) beyond both")))
        << s.err;
    EXPECT_EQ(within[2], "0") << s.err;
    EXPECT_EQ(within[3], "0") << s.err;
    EXPECT_LE(worst_of(s.err), 0.02) << s.err;
    std::printf("chunk %d:\n%s", chunk, s.err.c_str());
    // Every GEMV instruction the run executed went through the RTL (the
    // functional core writes dst too, so one that skipped it would pass).
    std::smatch n;
    ASSERT_TRUE(std::regex_search(s.err, n, std::regex("rtl gemv: ([0-9]+) instructions"))) << s.err;
    const auto st = nlohmann::json::parse(read_file_text(t.dir + "/rtl" + c + ".json"));
    const long long gemv = st.at("counts").at("instructions").at("GEMV").get<long long>();
    EXPECT_GT(gemv, 0);
    EXPECT_EQ(std::stoll(n[1]), gemv) << s.err;
    // The whole run: RTL GEMV engine against the timing model's.
    RunResult m = run_n3("sim --backend systemc" + t.io + " --chunk " + c + " --dump " + t.dir + "/model" + c +
                         " --stats " + t.dir + "/model" + c + ".json");
    ASSERT_EQ(m.status, 0) << m.err;
    const double rtl = total_cycles(t.dir + "/rtl" + c + ".json"), model = total_cycles(t.dir + "/model" + c + ".json");
    std::printf("chunk %d: total cycles rtl %.0f, model %.0f (%+.3f%%)\n", chunk, rtl, model, 100 * (model - rtl) / rtl);
    EXPECT_LE(std::fabs(model - rtl) / rtl, 0.02) << "rtl " << rtl << ", model " << model;
  }
}

// A difference between the RTL and the functional core stops the run at the
// first one, naming the instruction, the tensor and the element (exit 1).
TEST(RtlSim, AMismatchStopsTheRunNamingInstructionTensorAndElement) {
  const Tiny t = tiny("rtl_sim_inject", 5, 2);
  setenv("N3_RTL_GEMV_INJECT", "7", 1);  // flip a bit of dynamic GEMV instruction 7's first result
  RunResult s = run_n3("sim --backend systemc --rtl gemv" + t.io + " --dump " + t.dir + "/out");
  unsetenv("N3_RTL_GEMV_INJECT");
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_TRUE(std::regex_search(s.err, std::regex("rtl gemv: instruction [0-9]+ \\(gemv\\.(mv|qk|pv), dynamic #[0-9]+\\), "
                                                  "dst '[^']+' \\[[0-9]+,[0-9]+\\], element \\[0, 0\\]: rtl")))
      << s.err;
  EXPECT_FALSE(file_exists(t.dir + "/out")) << "no partial output";
}

TEST(RtlSim, RefusesWhatItCannotRun) {
  const Tiny t = tiny("rtl_sim_refuse", 3, 0);
  const std::string io = " --model " + t.model + " --ids " + t.dir + "/ids.npy";
  for (const std::string& bad :
       {"sim --backend func --rtl gemv" + io + " --dump " + t.dir + "/a",
        "sim --backend systemc --rtl sfu,fpu" + io + " --dump " + t.dir + "/a",
        "sim --backend systemc --rtl gemv --timing-only" + io,
        "sim --backend systemc --vcd x.fst" + io + " --dump " + t.dir + "/a"}) {
    RunResult r = run_n3(bad);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Programs: the example GEMV programs on random data give the same memory
// with the RTL engine as on the functional core, and a waveform.
TEST(RtlSim, ExampleProgramsGiveTheFunctionalCoresMemory) {
  const std::string dir = temp_dir("rtl_sim_prog");
  for (const std::string ex : {"gemv_int4", "attention_decode"}) {
    ASSERT_EQ(run_n3("asm " + source_dir() + "/isa/examples/" + ex + ".s -o " + dir + "/" + ex + ".n3p").status, 0);
    // Random bytes over every input and weight region, as floats in a sane range.
    std::vector<sim::ImageRegion> regions;
    std::string text = read_file_text(source_dir() + "/isa/examples/" + ex + ".s");
    std::regex reg(R"(\.region (\S+) space=(\w+) role=(\w+) base=(0x[0-9a-f]+) size=(0x[0-9a-f]+))");
    uint32_t s = 12345;
    for (std::sregex_iterator it(text.begin(), text.end(), reg), end; it != end; ++it) {
      const std::string role = (*it)[3];
      if (role == "output" || role == "scratch") continue;
      sim::ImageRegion r;
      r.space = (*it)[2] == "ddr" ? isa::Space::DDR : isa::Space::L2;
      r.name = (*it)[1];
      r.addr = std::stoull((*it)[4], nullptr, 16);
      const size_t n = std::stoull((*it)[5], nullptr, 16);
      // Small floats (any 16-bit half is a bf16/f16 of modest size), INT4 nibbles anything.
      for (size_t i = 0; i < n; i += 2) {
        s = s * 1103515245u + 12345u;
        const uint16_t h = uint16_t(0x3000 + ((s >> 8) & 0x0fff)) | uint16_t((s >> 4) & 0x8000);
        r.bytes.push_back(char(h & 0xff));
        r.bytes.push_back(char(h >> 8));
      }
      r.bytes.resize(n);
      regions.push_back(r);
    }
    ASSERT_FALSE(regions.empty()) << ex;
    sim::write_image(dir + "/" + ex + ".img", regions);
    const std::string run = "sim --program " + dir + "/" + ex + ".n3p --mem-in " + dir + "/" + ex + ".img";
    RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/" + ex + ".func.img");
    ASSERT_EQ(f.status, 0) << f.err;
    RunResult r = run_n3(run + " --backend systemc --rtl gemv --vcd " + dir + "/" + ex + ".fst --mem-out " + dir +
                         "/" + ex + ".rtl.img");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file_bytes(dir + "/" + ex + ".rtl.img"), read_file_bytes(dir + "/" + ex + ".func.img")) << ex;
    EXPECT_NE(r.err.find("rtl gemv: "), std::string::npos) << r.err;
    const FstFile all = read_fst(dir + "/" + ex + ".fst");
    ASSERT_TRUE(all.opened) << ex << ": GTKWave's reader cannot open the waveform";
    EXPECT_TRUE(all.has("a_valid")) << ex;
    // --vcd-instructions 1: the waveform ends with the first GEMV instruction,
    // earlier than the whole run's; the run itself is unchanged.
    RunResult one = run_n3(run + " --backend systemc --rtl gemv --vcd " + dir + "/" + ex + ".first.fst --vcd-instructions 1" +
                           " --mem-out " + dir + "/" + ex + ".first.img");
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(read_file_bytes(dir + "/" + ex + ".first.img"), read_file_bytes(dir + "/" + ex + ".func.img")) << ex;
    const FstFile first = read_fst(dir + "/" + ex + ".first.fst");
    ASSERT_TRUE(first.opened) << ex;
    EXPECT_EQ(first.names, all.names) << ex;
    EXPECT_GT(first.end_time, 0u) << ex;
    std::smatch n;
    ASSERT_TRUE(std::regex_search(r.err, n, std::regex("rtl gemv: ([0-9]+) instructions"))) << r.err;
    if (std::stoi(n[1]) > 1) {
      EXPECT_LT(first.end_time, all.end_time) << ex;
    }
  }
}

// Opt-in (N3_RTL_LARGE=1): the tiny run above on E2B's shapes (synthetic
// weights): a 13-token prompt in two prefill chunk sizes and 3 decode steps
// with the RTL doing every GEMV, every tensor the programs materialise
// (--dump-all) bit-identical to golden, every GEMV instruction within 2 %
// of the calibrated timing model and the run's total within 2 % of the run
// on the timing model alone; prints the histogram, the wall time and the RTL
// cycles simulated per wall second. About 15 minutes per chunk size on the
// 2-core machine (docs/rtl.md, "E2B with --rtl gemv").
TEST(RtlSimLarge, E2bPromptTwoChunkSizesAndDecodeMatchGoldenWithinTwoPercent) {
  if (!opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 to run";
  const std::string dir = temp_dir("rtl_sim_e2b");
  ASSERT_EQ(run_n3("synth -q --model " + source_dir() + "/configs/models/gemma3n-e2b.yaml --seed 1 -o " + dir + "/m.n3w")
                .status,
            0);
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < 13; ++i) ids.push_back((i * 7919 + 11) % 262144);
  for (int i = 0; i < 3; ++i) feed.push_back((i * 104729 + 5) % 262144);
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  const std::string io =
      " --model " + dir + "/m.n3w --ids " + dir + "/ids.npy --feed " + dir + "/feed.npy --dump-all --force" +
      hw_without_prefetch("rtl_sim_e2b_hw");
  ASSERT_EQ(run_n3("golden --numerics npu" + io + " --dump " + dir + "/ref").status, 0);
  for (int chunk : {4, 13}) {
    const std::string c = std::to_string(chunk), cand = dir + "/rtl" + c;
    RunResult s = run_n3("sim --backend systemc --rtl gemv" + io + " --chunk " + c + " --dump " + cand + " --stats " +
                         cand + ".json");
    ASSERT_EQ(s.status, 0) << s.err;
    std::printf("chunk %d:\n%s", chunk, s.err.c_str());
    EXPECT_NE(s.err.find("cycles per wall second"), std::string::npos) << s.err;
    EXPECT_NE(s.err.find("per-instruction |model - rtl| / rtl"), std::string::npos) << s.err;
    std::smatch within;
    ASSERT_TRUE(std::regex_search(s.err, within,
                                  std::regex("([0-9]+) within 2%, ([0-9]+) more within one cycle, ([0-9]+) beyond both")))
        << s.err;
    EXPECT_EQ(within[2], "0") << s.err;
    EXPECT_EQ(within[3], "0") << s.err;
    EXPECT_LE(worst_of(s.err), 0.02) << s.err;
    std::smatch n;
    ASSERT_TRUE(std::regex_search(s.err, n, std::regex("rtl gemv: ([0-9]+) instructions"))) << s.err;
    EXPECT_EQ(std::stoll(n[1]),
              nlohmann::json::parse(read_file_text(cand + ".json")).at("counts").at("instructions").at("GEMV").get<long long>())
        << "every GEMV instruction on the RTL";
    RunResult d = run_n3("diff " + cand + " " + dir + "/ref");
    EXPECT_EQ(d.status, 0) << "chunk " << chunk << ":\n" << d.out << d.err;
    EXPECT_NE(d.out.find("reference-only=0"), std::string::npos) << d.out;
    RunResult m = run_n3("sim --backend systemc" + io + " --chunk " + c + " --dump " + dir + "/model" + c + " --stats " +
                         dir + "/model" + c + ".json");
    ASSERT_EQ(m.status, 0) << m.err;
    const double rtl = total_cycles(cand + ".json"), model = total_cycles(dir + "/model" + c + ".json");
    std::printf("chunk %d: total cycles rtl %.0f, model %.0f (%+.3f%%)\n", chunk, rtl, model, 100 * (model - rtl) / rtl);
    EXPECT_LE(std::fabs(model - rtl) / rtl, 0.02) << "rtl " << rtl << ", model " << model;
  }
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_GEMV
