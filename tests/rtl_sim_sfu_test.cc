// `n3 sim --backend systemc --rtl sfu` (docs/rtl_sfu.md "The SFU bridge"): the
// Verilated SFU in the SystemC model's SFU place. Every CVO (the
// element-wise functions, the row reductions and the fused row operators)
// runs on it, compared bit for bit with the functional core and held to the
// model's cycles (timing::sfu_cycles, calibrated from the RTL); a function
// the RTL lacked would be counted per function as not on the RTL.
#if defined(N3_HAVE_RTL_SFU) && defined(N3_HAVE_RTL_DMA) && defined(N3_HAVE_RTL_GEMV)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/npy.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

// (kv260 without the weight prefetch: run totals are compared with the RTL GEMV bridge's, which has none)
std::string tiny_io(const std::string& dir, int prompt, int steps) {
  return tiny_run_io(dir, prompt, steps) + hw_without_prefetch(dir.substr(dir.find_last_of('/') + 1) + "_hw");
}

long long match_ll(const std::string& err, const std::string& re, int group = 1) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(re))) return -1;
  return std::stoll(m[group]);
}

// "rtl sfu: 2332 instructions on the RTL" -> 2332.
long long sfu_on_rtl(const std::string& err) { return match_ll(err, "rtl sfu: ([0-9]+) instructions on the RTL"); }
// "rtl sfu: 722 instructions NOT on the RTL" -> 722; 0 when every one was.
long long sfu_not_on_rtl(const std::string& err) {
  if (err.find("rtl sfu: every CVO instruction ran on the RTL") != std::string::npos) return 0;
  return match_ll(err, "rtl sfu: ([0-9]+) instructions NOT on the RTL");
}

// The SFU lines' own checks: every instruction on the RTL within 2 % of the
// model, none beyond, the totals within 2 %.
void expect_sfu_within(const std::string& err, long long on_rtl) {
  EXPECT_EQ(match_ll(err, "rtl sfu: ([0-9]+) within 2%, ([0-9]+) beyond"), on_rtl) << err;
  EXPECT_EQ(match_ll(err, "rtl sfu: ([0-9]+) within 2%, ([0-9]+) beyond", 2), 0) << err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("rtl sfu: RTL ([0-9]+) cycles, model ([0-9]+) cycles"))) << err;
  const double rtl = std::stod(m[1]), model = std::stod(m[2]);
  ASSERT_GT(rtl, 0) << err;
  EXPECT_LE(std::fabs(model - rtl), 0.02 * rtl) << err;
}

TEST(RtlSimSfu, TinyPromptAndDecodeWithEveryEngineOnTheRtlMatchGoldenAndTheModel) {
  const std::string dir = temp_dir("rtl_sim_sfu_tiny");
  const std::string io = tiny_io(dir, 13, 8);
  RunResult g = run_n3("golden --numerics npu" + io + " --dump " + dir + "/ref");
  ASSERT_EQ(g.status, 0) << g.err;
  RunResult m = run_n3("sim --backend systemc" + io + " --dump " + dir + "/model --stats " + dir + "/model.json");
  ASSERT_EQ(m.status, 0) << m.err;
  const double model_total = nlohmann::json::parse(read_file_text(dir + "/model.json")).at("total_cycles").get<double>();
  const std::string cand = dir + "/all";
  RunResult s = run_n3("sim --backend systemc --rtl gemv,sfu,dma" + io + " --dump " + cand + " --stats " + cand + ".json");
  ASSERT_EQ(s.status, 0) << s.err;
  RunResult d = run_n3("diff " + cand + " " + dir + "/ref");
  EXPECT_EQ(d.status, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("reference-only=0"), std::string::npos) << d.out;
  // Identical, not merely within the diff's tolerance: every tensor compared.
  EXPECT_GT(match_ll(d.out, "compared=([0-9]+)"), 0) << d.out;
  EXPECT_EQ(match_ll(d.out, "identical=([0-9]+)"), match_ll(d.out, "compared=([0-9]+)")) << d.out;
  EXPECT_EQ(match_ll(d.out, "within-tol=([0-9]+)"), 0) << d.out;
  EXPECT_EQ(match_ll(d.out, "differs=([0-9]+)"), 0) << d.out;
  // Every CVO went to the RTL or is counted as not on it; the element-wise
  // ones the model uses (add, mac, gelu, ...) did go to the RTL.
  const auto stats = nlohmann::json::parse(read_file_text(cand + ".json"));
  const long long cvo = stats.at("counts").at("instructions").at("SFU").get<long long>();
  const long long on = sfu_on_rtl(s.err), off = sfu_not_on_rtl(s.err);
  EXPECT_GT(on, 0) << s.err;
  EXPECT_EQ(off, 0) << s.err;
  EXPECT_EQ(on, cvo) << s.err;
  EXPECT_EQ(s.err.find("NOT on the RTL"), std::string::npos) << s.err;
  for (const char* f : {"add ", "mac ", "gelu ", "tanh ", "scale ", "rms ", "rmsnorm ", "softmax ", "rope ", "gtopk ",
                        "softcap ", "magmatch "})
    EXPECT_TRUE(std::regex_search(s.err, std::regex(std::string("rtl sfu: [0-9]+ instructions on the RTL.*[:,] ") + f +
                                                    "[0-9]+")))
        << f << "\n" << s.err;
  expect_sfu_within(s.err, on);
  // The GEMV's and the DMA's per-instruction cycles, each within its
  // bridge's tolerance of the model (GEMV: 2 % or one cycle; DMA: 2 %, the
  // model given the memory answers the RTL got), every instruction of the
  // unit on the RTL, and each unit's total within 2 %.
  const auto count = [&](const char* unit) {
    return stats.at("counts").at("instructions").at(unit).get<long long>();
  };
  const long long gemv = match_ll(s.err, "rtl gemv: ([0-9]+) instructions, RTL");
  EXPECT_GT(gemv, 0) << s.err;
  EXPECT_EQ(gemv, count("GEMV")) << s.err;  // (the GEMMs stay on the model: this run has no --rtl gemm)
  const std::string gw = "rtl gemv: ([0-9]+) within 2%, ([0-9]+) more within one cycle, ([0-9]+) beyond both";
  EXPECT_EQ(match_ll(s.err, gw) + match_ll(s.err, gw, 2), gemv) << s.err;
  EXPECT_EQ(match_ll(s.err, gw, 3), 0) << s.err;
  const long long dma = match_ll(s.err, "rtl dma: ([0-9]+) instructions compared byte for byte");
  EXPECT_GT(dma, 0) << s.err;
  EXPECT_EQ(dma, count("DMA")) << s.err;
  EXPECT_EQ(match_ll(s.err, "rtl dma: ([0-9]+) within 2%, ([0-9]+) beyond"), dma) << s.err;
  EXPECT_EQ(match_ll(s.err, "rtl dma: ([0-9]+) within 2%, ([0-9]+) beyond", 2), 0) << s.err;
  for (const char* u : {"gemv", "dma"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        s.err, m, std::regex(std::string("rtl ") + u + ": [^\\n]*RTL ([0-9]+) cycles[^\\n]*, model ([0-9]+) cycles")))
        << u << "\n" << s.err;
    const double rtl = std::stod(m[1]), model = std::stod(m[2]);
    EXPECT_GT(rtl, 0) << u;
    EXPECT_LE(std::fabs(model - rtl), 0.02 * rtl) << u << "\n" << s.err;
  }
  const double total = stats.at("total_cycles").get<double>();
  EXPECT_LE(std::fabs(total - model_total), 0.02 * model_total) << total << " vs " << model_total;
  std::printf("--rtl gemv,sfu,dma: run total %.0f cycles, timing model alone %.0f (%+.3f%%)\n", total, model_total,
              100.0 * (total - model_total) / model_total);
  for (const char* u : {"gemv", "sfu", "dma"})
    EXPECT_TRUE(std::regex_search(s.err, std::regex(std::string("rtl ") + u +
                                                    ": [0-9.]+ s wall, [0-9]+ RTL cycles simulated "
                                                    "\\([0-9]+ cycles per wall second\\)")))
        << u << "\n" << s.err;
  std::printf("%s", s.err.c_str());
}

// Random f32 data: moderate values with a few specials (NaN, infinities,
// signed zeros, subnormals) so the functions' edges are crossed.
std::string random_floats(size_t n, uint32_t seed, bool specials = true) {
  std::string b(n * 4, '\0');
  uint32_t s = seed;
  const uint32_t kSpecials[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000000u, 0x00000123u, 0x80400000u};
  for (size_t i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    float f = (float((s >> 8) & 0xffff) / 65536.0f - 0.5f) * 12.0f;
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (specials && (s >> 28) == 0 && i % 3 == 0) u = kSpecials[(s >> 4) % 7];
    std::memcpy(&b[i * 4], &u, 4);
  }
  return b;
}

// A program of element-wise functions (a and b broadcast as rows, columns
// and scalars, dst in f32 and bf16), the row reductions and RMS, and every
// fused row operator (RMSNORM with a weight row, a weight of a's shape and
// none; MAGMATCH with a target a row and one for all; ROPE with 4 heads a
// token): the memory with the RTL SFU is the functional core's, every
// instruction on the RTL is exact against the model (none slower: an
// instruction's command waits for no leftover of the one before), and
// `--vcd` writes the SFU's waveform.
TEST(RtlSimSfu, ProgramOfEveryKindGivesTheFunctionalCoresMemory) {
  const std::string dir = temp_dir("rtl_sim_sfu_prog");
  const std::string prog = R"(
.desc x dtype=f32 space=l2 base=0x0 rows=8 cols=100 row_stride=400
.desc row dtype=f32 space=l2 base=0x1000 rows=1 cols=100 row_stride=400
.desc col dtype=f32 space=l2 base=0x1200 rows=8 cols=1 row_stride=4
.desc one dtype=f32 space=l2 base=0x1240 rows=1 cols=1 row_stride=4
.desc y dtype=f32 space=l2 base=0x2000 rows=8 cols=100 row_stride=400
.desc yb dtype=bf16 space=l2 base=0x3000 rows=8 cols=100 row_stride=200
.desc z dtype=f32 space=l2 base=0x4000 rows=8 cols=100 row_stride=400
.desc r1 dtype=f32 space=l2 base=0x5000 rows=8 cols=1 row_stride=4
.desc r2 dtype=bf16 space=l2 base=0x5100 rows=8 cols=1 row_stride=2
.desc r3 dtype=f32 space=l2 base=0x5200 rows=8 cols=1 row_stride=4
.desc n dtype=f32 space=l2 base=0x6000 rows=8 cols=100 row_stride=400
.desc r4 dtype=bf16 space=l2 base=0x5300 rows=8 cols=1 row_stride=2
.desc ang dtype=f32 space=l2 base=0x1300 rows=2 cols=50 row_stride=200
    cvo.exp dst=yb a=x
    cvo.gelu dst=y a=x
    cvo.sin dst=z a=x
    cvo.rsqrt dst=n a=x
    cvo.add dst=y a=x b=row
    cvo.mul dst=z a=x b=col
    cvo.sub dst=n a=one b=x
    cvo.mac dst=y a=x b=row
    cvo.scale dst=yb a=x k=half
    cvo.rsum dst=r1 a=x
    cvo.rmax dst=r2 a=x
    cvo.rsumsq dst=r3 a=y
    cvo.rms dst=r4 a=x
    cvo.rmsnorm dst=n a=x b=row k=eps
    cvo.softmax dst=z a=x
    cvo.softmax dst=yb a=x
    cvo.rmsnorm dst=yb a=x k=eps
    cvo.rmsnorm dst=z a=x b=y k=eps
    cvo.rope dst=n a=x b=ang
    cvo.gtopk dst=y a=x k=mult
    cvo.softcap dst=yb a=x k=cap
    cvo.magmatch dst=z a=x b=col k=floor
    cvo.magmatch dst=n a=x b=one k=floor
    sys.halt
.const half f32 0.5
.const eps f32 1e-06
.const mult f32 1.6448536
.const cap f32 30.0
.const floor f32 1e-05
)";
  write_file_atomic(dir + "/p.s", prog);
  ASSERT_EQ(run_n3("asm " + dir + "/p.s -o " + dir + "/p.n3p").status, 0);
  write_file_atomic(dir + "/x.bin", random_floats(0x1400 / 4, 99));
  const std::string run = "sim --program " + dir + "/p.n3p --load l2:0=" + dir + "/x.bin";
  RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
  ASSERT_EQ(f.status, 0) << f.err;
  RunResult s = run_n3(run + " --backend systemc --rtl sfu --vcd " + dir + "/w.fst --mem-out " + dir + "/sfu.img");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(read_file_bytes(dir + "/sfu.img"), read_file_bytes(dir + "/func.img"));
  EXPECT_EQ(sfu_on_rtl(s.err), 23) << s.err;
  EXPECT_NE(s.err.find(": add 1, exp 1, gelu 1, gtopk 1, mac 1, magmatch 2, mul 1, rmax 1, rms 1, rmsnorm 3, rope 1, "
                       "rsqrt 1, rsum 1, rsumsq 1, scale 1, sin 1, softcap 1, softmax 2, sub 1\n"),
            std::string::npos)
      << s.err;
  EXPECT_EQ(sfu_not_on_rtl(s.err), 0) << s.err;
  expect_sfu_within(s.err, 23);
  EXPECT_EQ(match_ll(s.err, "RTL slower than the model on ([0-9]+)"), 0) << s.err;
  EXPECT_EQ(match_ll(s.err, "rtl sfu: RTL ([0-9]+) cycles, model ([0-9]+) cycles"),
            match_ll(s.err, "rtl sfu: RTL ([0-9]+) cycles, model ([0-9]+) cycles", 2))
      << s.err;
  const FstFile w = read_fst(dir + "/w.fst");
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
  EXPECT_GT(w.end_time, 0u);
  EXPECT_TRUE(w.mentions("npu.sfu.rtl")) << "the SFU's own model";
}

// The instruction slices of one engine's track of a --trace file (start,
// end in us), in order of start.
std::vector<std::pair<double, double>> trace_slices(const std::string& path, const std::string& track) {
  const auto j = nlohmann::json::parse(read_file_text(path));
  const auto& ev = j.is_object() ? j.at("traceEvents") : j;
  int tid = -1;
  for (const auto& e : ev)
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e.at("args").value("name", "") == track)
      tid = e.at("tid").get<int>();
  std::vector<std::pair<double, double>> out;
  for (const auto& e : ev)
    if (e.value("cat", "") == "instruction" && e.value("tid", -2) == tid) {
      const double t = e.at("ts").get<double>();
      out.push_back({t, t + e.at("dur").get<double>()});
    }
  std::sort(out.begin(), out.end());
  return out;
}

// `--vcd W.fst --vcd-instructions N` with the SFU alone, the DMA alone and
// all three units: each unit's file holds its own signals (no other unit's),
// (the GEMV's too with all three), and its last time lies between the end
// of that unit's N-th instruction in the run's --trace (less two clocks:
// the slice ends after the driver's last sample, measured half a clock for
// the SFU and the DMA, 1.5 for the GEMV) and the start of its (N+1)-th (plus
// a clock), where the whole run's file goes on to the unit's last one. The
// SFU's file holds exactly N commands (cmd_valid rises once a CVO), the
// whole run's one a CVO. The run's memory is unchanged by the limit.
TEST(RtlSimSfu, WaveformOfTheFirstNInstructionsOfEachUnit) {
  const std::string dir = temp_dir("rtl_sim_sfu_vcd");
  const std::string io = tiny_io(dir, 3, 1);
  const double clk_us = 1.0 / 400.0;  // kv260's core clock, 400 MHz
  const int n = 7;
  for (const std::string units : {"sfu", "dma", "gemv,sfu,dma"}) {
    const std::string tag = dir + "/" + units;
    RunResult full = run_n3("sim --backend systemc --rtl " + units + io + " --dump " + tag + ".full --vcd " + tag +
                            ".all.fst --trace " + tag + ".json");
    ASSERT_EQ(full.status, 0) << full.err;
    RunResult first = run_n3("sim --backend systemc --rtl " + units + io + " --dump " + tag + ".first --vcd " + tag +
                             ".fst --vcd-instructions " + std::to_string(n));
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_EQ(run_n3("diff " + tag + ".first " + tag + ".full").status, 0) << units;
    const bool several = units.find(',') != std::string::npos;
    const std::vector<std::string> check = several ? std::vector<std::string>{"gemv", "sfu", "dma"}
                                                   : std::vector<std::string>{units};
    for (const std::string& u : check) {
      const std::string suffix = several ? "." + u + ".fst" : ".fst";
      const FstFile w = read_fst(tag + suffix), all = read_fst(tag + ".all" + suffix);
      ASSERT_TRUE(w.opened && all.opened) << units << " " << u << ": GTKWave's reader cannot open it";
      EXPECT_TRUE(w.mentions("npu." + u + ".rtl") && w.has("cmd_valid") && w.has("clk")) << units << " " << u;
      for (const char* other : {"gemv", "sfu", "dma"})
        if (other != u) {
          EXPECT_FALSE(w.mentions(std::string("npu.") + other + ".rtl")) << units << " " << u;
        }
      EXPECT_EQ(w.names, all.names) << units << " " << u;
      const auto s = trace_slices(tag + ".json", u == "sfu" ? "SFU" : u == "dma" ? "DMA" : "GEMV");
      ASSERT_GT(s.size(), size_t(n)) << units << " " << u;
      const double end = w.us(w.end_time), all_end = all.us(all.end_time);
      std::printf("--rtl %s, %s: the first %d end at %.4f us (instruction %d [%.4f, %.4f], %d [%.4f, %.4f]); the whole "
                  "run's at %.4f (its last instruction ends %.4f)\n",
                  units.c_str(), u.c_str(), n, end, n, s[n - 1].first, s[n - 1].second, n + 1, s[n].first, s[n].second,
                  all_end, s.back().second);
      EXPECT_GE(end, s[n - 1].second - 2 * clk_us) << units << " " << u;
      EXPECT_LE(end, s[n].first + clk_us) << units << " " << u;
      EXPECT_GE(all_end, s.back().second - 2 * clk_us) << units << " " << u;
      if (u == "sfu") {
        EXPECT_EQ(rises(tag + suffix, "cmd_valid").size(), size_t(n)) << units;
        EXPECT_EQ(rises(tag + ".all" + suffix, "cmd_valid").size(), s.size()) << units;
      }
    }
  }
}

// RMS over one row of each edge length (1 .. 3, either side of the 32
// accumulator lanes' wraps, of 2^12 and of 2^16), and RMSNORM, GTOPK and
// MAGMATCH over rows up to 4097: the 1/n the unit forms from its count of
// each row's elements gives the functional core's memory, every instruction
// compared bit for bit (finite data: a NaN would hide 1/n). Every length
// the ISA allows goes through the 1/n itself in RtlSfu.OneOverNOfEveryRowLength.
std::string row_length_program(const std::vector<int64_t>& rms, const std::vector<int64_t>& rowops,
                               const std::string& space) {
  std::string p, code;
  auto desc = [&](const std::string& name, const std::string& sp, uint64_t base, int64_t cols) {
    char b[200];
    std::snprintf(b, sizeof b, ".desc %s dtype=f32 space=%s base=0x%llx rows=1 cols=%lld row_stride=%lld\n",
                  name.c_str(), sp.c_str(), static_cast<unsigned long long>(base), static_cast<long long>(cols),
                  static_cast<long long>((cols * 4 + 15) / 16 * 16));
    p += b;
  };
  int64_t longest = 1;
  for (int64_t n : rms) longest = std::max(longest, n);
  for (int64_t n : rowops) longest = std::max(longest, n);
  // L2: results (one a RMS), the target, then a row operator's output row.
  desc("one", "l2", 0x100, 1);
  for (size_t i = 0; i < rms.size(); ++i) {
    const std::string x = "x" + std::to_string(i), r = "r" + std::to_string(i);
    desc(x, space, space == "l2" ? 0x10000 : 0, rms[i]);
    desc(r, "l2", 0x200 + 16 * i, 1);
    code += "    cvo.rms dst=" + r + " a=" + x + "\n";
  }
  for (size_t i = 0; i < rowops.size(); ++i) {
    const std::string x = "a" + std::to_string(i), y = "y" + std::to_string(i);
    desc(x, space, space == "l2" ? 0x10000 : 0, rowops[i]);
    desc(y, "l2", 0x10000 + uint64_t(longest * 4 + 15) / 16 * 16, rowops[i]);
    code += "    cvo.rmsnorm dst=" + y + " a=" + x + " k=eps\n    cvo.gtopk dst=" + y + " a=" + x +
            " k=mult\n    cvo.magmatch dst=" + y + " a=" + x + " b=one k=floor\n";
  }
  return p + code + "    sys.halt\n.const eps f32 1e-06\n.const mult f32 1.6448536\n.const floor f32 1e-05\n";
}

TEST(RtlSimSfu, RowsOfEdgeLengthsGiveTheFunctionalCoresMemory) {
  const std::string dir = temp_dir("rtl_sim_sfu_rowlen");
  const std::vector<int64_t> rms = {1, 2, 3, 31, 32, 33, 63, 64, 65, 4095, 4096, 4097, 65535, 65536, 65537},
                             rowops = {1, 2, 3, 32, 33, 4097};
  write_file_atomic(dir + "/p.s", row_length_program(rms, rowops, "l2"));
  ASSERT_EQ(run_n3("asm " + dir + "/p.s -o " + dir + "/p.n3p").status, 0);
  write_file_atomic(dir + "/one.bin", random_floats(4, 7, false));
  write_file_atomic(dir + "/x.bin", random_floats(65540, 11, false));
  const std::string run = "sim --program " + dir + "/p.n3p --load l2:0x100=" + dir + "/one.bin --load l2:0x10000=" +
                          dir + "/x.bin";
  RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
  ASSERT_EQ(f.status, 0) << f.err;
  RunResult s = run_n3(run + " --backend systemc --rtl sfu --mem-out " + dir + "/sfu.img");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(read_file_bytes(dir + "/sfu.img"), read_file_bytes(dir + "/func.img"));
  const long long n = static_cast<long long>(rms.size() + 3 * rowops.size());
  EXPECT_EQ(sfu_on_rtl(s.err), n) << s.err;
  expect_sfu_within(s.err, n);
}

// Opt-in (N3_RTL_LARGE=1): RMS of the longest row the ISA allows, 2^24 - 1
// elements (64 MiB of f32 in DDR; about 17 M clocks of the RTL).
TEST(RtlSimSfu, RmsOfTheLongestRow) {
  if (!opt_in("N3_RTL_LARGE")) GTEST_SKIP() << "set N3_RTL_LARGE=1 to run RMS over a row of 2^24 - 1 elements";
  const std::string dir = temp_dir("rtl_sim_sfu_longest");
  const int64_t n = (int64_t(1) << 24) - 1;
  write_file_atomic(dir + "/p.s", row_length_program({n}, {}, "ddr"));
  ASSERT_EQ(run_n3("asm " + dir + "/p.s -o " + dir + "/p.n3p").status, 0);
  write_file_atomic(dir + "/one.bin", random_floats(4, 7, false));
  write_file_atomic(dir + "/x.bin", random_floats(size_t(n), 13, false));
  const std::string run =
      "sim --program " + dir + "/p.n3p --load l2:0x100=" + dir + "/one.bin --load ddr:0=" + dir + "/x.bin";
  RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
  ASSERT_EQ(f.status, 0) << f.err;
  RunResult s = run_n3(run + " --backend systemc --rtl sfu --mem-out " + dir + "/sfu.img");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(read_file_bytes(dir + "/sfu.img"), read_file_bytes(dir + "/func.img"));
  EXPECT_EQ(sfu_on_rtl(s.err), 1) << s.err;
  expect_sfu_within(s.err, 1);
}

// A difference between the RTL and the functional core stops the run at the
// first one, naming the instruction, the tensor and the element (exit 1),
// with no partial output; without the injection the run passes.
TEST(RtlSimSfu, AMismatchStopsTheRunNamingInstructionTensorAndElement) {
  const std::string dir = temp_dir("rtl_sim_sfu_inject");
  const std::string io = tiny_io(dir, 3, 1);
  // Flip a bit of the first dst byte of the 3rd RTL CVO (the first RMSNORM,
  // a row operator) and of the 4th (a SCALE).
  for (const auto& [k, fn] : {std::pair<const char*, const char*>{"2", "rmsnorm"}, {"3", "scale"}}) {
    setenv("N3_RTL_SFU_INJECT", k, 1);
    RunResult s = run_n3("sim --backend systemc --rtl sfu" + io + " --dump " + dir + "/out");
    unsetenv("N3_RTL_SFU_INJECT");
    EXPECT_EQ(s.status, 1) << s.err;
    EXPECT_TRUE(std::regex_search(s.err, std::regex(std::string("n3 sim: rtl sfu: instruction [0-9]+ \\(cvo\\.") + fn +
                                                    ", dynamic "
                                                    "#[0-9]+\\), dst '[^']+' \\[[0-9]+,[0-9]+\\] [a-z0-9]+, element "
                                                    "\\[0, 0\\] \\(byte 0 of the row\\): rtl 0x[0-9a-f]{2}, "
                                                    "functional 0x[0-9a-f]{2}\n")))
        << k << " " << fn << "\n" << s.err;
    EXPECT_FALSE(file_exists(dir + "/out")) << "no partial output";
  }
  RunResult ok = run_n3("sim --backend systemc --rtl sfu" + io + " --dump " + dir + "/out");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_SFU && N3_HAVE_RTL_DMA && N3_HAVE_RTL_GEMV
