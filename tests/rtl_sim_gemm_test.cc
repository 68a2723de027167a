// The RTL GEMM engine inside the SystemC model (`n3 sim --backend systemc
// --rtl gemm`, docs/rtl_gemm.md "The bridge"): the tiny model's prompt
// (prefill: every matrix product a gemm.mv) plus decode steps, with the RTL
// GEMM alone and with every RTL unit, dumps every tensor byte for byte as
// the run on the timing model alone and as `n3 golden --numerics npu`;
// every GEMM instruction whose weights the array has ran on the RTL (the
// summary's counts against --stats); a difference stops the run naming the instruction, tensor and
// element; a gemm.mv with weights the array lacks runs on the timing model
// and is counted; one beyond its buffers is refused in one line; the
// waveform is the GEMM engine's.
#ifdef N3_HAVE_RTL_GEMM
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "sim/memory.h"
#include "tests/fst_file.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

// Every file under `a` has a byte-identical twin under `b` and the other
// way round; "" or the first difference.
std::string same_tree(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::vector<std::string> ra, rb;
  for (const auto& e : fs::recursive_directory_iterator(a))
    if (e.is_regular_file()) ra.push_back(fs::relative(e.path(), a).string());
  for (const auto& e : fs::recursive_directory_iterator(b))
    if (e.is_regular_file()) rb.push_back(fs::relative(e.path(), b).string());
  std::sort(ra.begin(), ra.end());
  std::sort(rb.begin(), rb.end());
  if (ra.empty()) return "no files under " + a;
  if (ra != rb) return "the file lists differ (" + std::to_string(ra.size()) + " vs " + std::to_string(rb.size()) + ")";
  for (const std::string& f : ra)
    if (read_file_bytes(a + "/" + f) != read_file_bytes(b + "/" + f)) return f + " differs";
  return "";
}

long long gemm_count(const std::string& stats) {
  return nlohmann::json::parse(read_file_text(stats)).at("counts").at("instructions").at("GEMM").get<long long>();
}

// The prompt in one 13-token chunk and in chunks of 4 (T 13 and T 4 and 1:
// fewer tokens than the array's rows, ragged tiles), then decode steps.
void run_tiny(const std::string& tag, const std::string& units) {
  const std::string dir = temp_dir(tag), io = tiny_run_io(dir, 13, 3);
  RunResult g = run_n3("golden --numerics npu" + io + " --dump " + dir + "/ref");
  ASSERT_EQ(g.status, 0) << g.err;
  for (int chunk : {13, 4}) {
    const std::string c = " --chunk " + std::to_string(chunk), m = dir + "/model" + std::to_string(chunk),
                      r = dir + "/rtl" + std::to_string(chunk);
    RunResult ms = run_n3("sim --backend systemc" + io + c + " --dump " + m + " --stats " + m + ".json");
    ASSERT_EQ(ms.status, 0) << ms.err;
    RunResult rs = run_n3("sim --backend systemc --rtl " + units + io + c + " --dump " + r + " --stats " + r + ".json");
    ASSERT_EQ(rs.status, 0) << rs.err;
    std::printf("--rtl %s, chunk %d:\n%s", units.c_str(), chunk, rs.err.c_str());
    EXPECT_EQ(same_tree(r, m), "") << units << ", chunk " << chunk;
    RunResult d = run_n3("diff " + r + " " + dir + "/ref");
    EXPECT_EQ(d.status, 0) << units << ", chunk " << chunk << ":\n" << d.out << d.err;
    EXPECT_NE(d.out.find("reference-only=0"), std::string::npos) << d.out;
    // Every GEMM instruction of the run went through the RTL (the functional
    // core writes dst too, so one that skipped it would pass the dumps).
    std::smatch n;
    ASSERT_TRUE(std::regex_search(rs.err, n, std::regex("rtl gemm: ([0-9]+) instructions, RTL ([0-9]+) cycles")))
        << rs.err;
    EXPECT_GT(std::stoll(n[1]), 0) << rs.err;
    EXPECT_GT(std::stoll(n[2]), 0) << rs.err;
    // The rest, those with weights the array lacks (the tiny model's f32
    // matrices), ran on the timing model, and the summary says how many.
    std::smatch more;
    const long long model_only =
        std::regex_search(rs.err, more, std::regex("rtl gemm: ([0-9]+) more on the timing model")) ? std::stoll(more[1]) : 0;
    EXPECT_EQ(std::stoll(n[1]) + model_only, gemm_count(r + ".json")) << rs.err;
    EXPECT_EQ(gemm_count(r + ".json"), gemm_count(m + ".json"));
    EXPECT_NE(rs.err.find("rtl gemm: per-instruction |model - rtl| / rtl"), std::string::npos) << rs.err;
    EXPECT_TRUE(std::regex_search(rs.err, std::regex("rtl gemm: worst [0-9.]+%: instruction [0-9]+ \\(gemm\\.mv "
                                                     "\\[[0-9]+,[0-9]+\\]x\\[[0-9]+,[0-9]+\\]")))
        << rs.err;
    // The model's tile formula (timing::gemm_cycles) keeps to the RTL on
    // these T < rows, ragged shapes (docs/rtl_gemm.md "Measured": -1.4 and
    // -2.2 % in total, 7.2 % at worst; the MAC-rate formula was -18.5 and
    // -22.6 %, 48 % at worst).
    std::smatch tot, worst;
    ASSERT_TRUE(std::regex_search(rs.err, tot, std::regex("rtl gemm: [0-9]+ instructions, RTL [0-9]+ cycles \\([0-9]+ "
                                                          "waiting on weights\\), model [0-9]+ cycles \\(([-+0-9.]+)%\\)")))
        << rs.err;
    EXPECT_LE(std::fabs(std::stod(tot[1])), 3.0) << rs.err;
    ASSERT_TRUE(std::regex_search(rs.err, worst, std::regex("rtl gemm: worst ([0-9.]+)%"))) << rs.err;
    EXPECT_LE(std::stod(worst[1]), 10.0) << rs.err;
    // With every unit, the other engines' instructions keep to the model at
    // these chunk sizes too (issue 20's 2 %, asserted at the default chunk
    // in tests/rtl_sim_sfu_test.cc): chunk 13 puts a DMA row copy across a
    // 4 KB boundary, where the RTL cuts its read burst (timing::
    // dma_read_delay_cycles follows it; before, 6.8 % off).
    if (units.find("dma") != std::string::npos) {
      std::smatch dma, gemv;
      ASSERT_TRUE(std::regex_search(rs.err, dma, std::regex("rtl dma: [0-9]+ within 2%, ([0-9]+) beyond"))) << rs.err;
      EXPECT_EQ(dma[1], "0") << "chunk " << chunk << "\n" << rs.err;
      ASSERT_TRUE(std::regex_search(rs.err, gemv, std::regex("rtl gemv: [0-9]+ within 2%, [0-9]+ more within one cycle, "
                                                             "([0-9]+) beyond both")))
          << rs.err;
      EXPECT_EQ(gemv[1], "0") << "chunk " << chunk << "\n" << rs.err;
    }
  }
}

TEST(RtlSimGemm, TinyPrefillAndDecodeOnTheRtlGemmMatchTheModelAndGolden) { run_tiny("rtl_sim_gemm_tiny", "gemm"); }

#if defined(N3_HAVE_RTL_GEMV) && defined(N3_HAVE_RTL_DMA) && defined(N3_HAVE_RTL_SFU) && defined(N3_HAVE_RTL_CTL)
TEST(RtlSimGemm, TinyPrefillAndDecodeWithEveryRtlUnitMatchTheModelAndGolden) {
  run_tiny("rtl_sim_gemm_all", "decoder,ctl,gemv,gemm,sfu,dma");
}
#endif

// A difference between the RTL and the functional core stops the run at the
// first one, naming the instruction, the tensor and the element (exit 1),
// and writes no dump.
TEST(RtlSimGemm, AMismatchStopsTheRunNamingInstructionTensorAndElement) {
  const std::string dir = temp_dir("rtl_sim_gemm_inject"), io = tiny_run_io(dir, 5, 1);
  setenv("N3_RTL_GEMM_INJECT", "2", 1);  // flip a bit of the third GEMM instruction's first result
  RunResult s = run_n3("sim --backend systemc --rtl gemm" + io + " --dump " + dir + "/out");
  unsetenv("N3_RTL_GEMM_INJECT");
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_TRUE(std::regex_search(s.err, std::regex("rtl gemm: instruction [0-9]+ \\(gemm\\.mv, dynamic #[0-9]+\\), "
                                                  "dst '[^']+' \\[[0-9]+,[0-9]+\\], element \\[0, 0\\]: rtl")))
      << s.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << "no partial output";
}

// A gemm.mv program on random data: the RTL leaves the functional core's
// memory and writes the GEMM engine's waveform (one unit: the file itself;
// with GEMV beside it, one file per unit); a gemm.mv with GROUP scales, a
// weight kind the array lacks, runs on the timing model and the summary
// counts it. (A job beyond the array's buffers: the next test.)
std::string gemm_program_head() {
  return
      ".isa 1\n"
      ".region weights space=ddr role=weights base=0x0 size=0x2500\n"
      ".region x space=l2 role=input base=0x0 size=0x40200\n"
      ".region y space=l2 role=output base=0x40200 size=0x20100\n"
      ".desc w_row dtype=int4 space=ddr base=0x0 rows=64 cols=256 row_stride=128 scale_mode=row scale_base=0x2000 "
      "scale_stride=4\n"
      ".desc w_grp dtype=int4 space=ddr base=0x0 rows=64 cols=256 row_stride=128 scale_mode=group scale_base=0x2100 "
      "scale_stride=16 group=64\n"
      ".desc x dtype=bf16 space=l2 base=0x0 rows=12 cols=256 row_stride=512\n"
      ".desc y dtype=f32 space=l2 base=0x40200 rows=12 cols=64 row_stride=256\n"
      ".desc y_grp dtype=f32 space=l2 base=0x40e00 rows=12 cols=64 row_stride=256\n"
      ".desc x_big dtype=bf16 space=l2 base=0x0 rows=513 cols=256 row_stride=512\n"
      ".desc y_big dtype=f32 space=l2 base=0x40200 rows=513 cols=64 row_stride=256\n"
      ".tensor y desc=y\n";
}

// Writes the program `body` (after gemm_program_head) and its random memory
// image into `dir` (p.n3p, in.img).
void write_gemm_program(const std::string& dir, const std::string& body) {
  write_file_atomic(dir + "/p.s", gemm_program_head() + body);
  RunResult a = run_n3("asm " + dir + "/p.s -o " + dir + "/p.n3p");
  ASSERT_EQ(a.status, 0) << a.err;
  // Small bf16 activations and any INT4 nibbles; scales small floats too.
  std::vector<sim::ImageRegion> regions(2);
  uint32_t s = 12345;
  for (size_t k = 0; k < 2; ++k) {
    regions[k].space = k ? isa::Space::L2 : isa::Space::DDR;
    regions[k].name = k ? "x" : "weights";
    for (size_t i = 0; i < (k ? 0x40200u : 0x2500u); i += 2) {
      s = s * 1103515245u + 12345u;
      const uint16_t h = uint16_t(0x3000 + ((s >> 8) & 0x0fff)) | uint16_t((s >> 4) & 0x8000);
      regions[k].bytes += char(h & 0xff);
      regions[k].bytes += char(h >> 8);
    }
  }
  sim::write_image(dir + "/in.img", regions);
}

TEST(RtlSimGemm, ProgramsGiveTheFunctionalCoresMemoryAndAWaveform) {
  const std::string dir = temp_dir("rtl_sim_gemm_prog");
  write_gemm_program(dir, "    gemm.mv dst=y src=x w=w_row\n    gemm.mv dst=y_grp src=x w=w_grp\n    sys.halt\n");
  const std::string run = "sim --mem-in " + dir + "/in.img --program " + dir + "/p.n3p";
  RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
  ASSERT_EQ(f.status, 0) << f.err;
  RunResult r = run_n3(run + " --backend systemc --rtl gemm --vcd " + dir + "/w.fst --mem-out " + dir + "/rtl.img");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file_bytes(dir + "/rtl.img"), read_file_bytes(dir + "/func.img"));
  EXPECT_NE(r.err.find("rtl gemm: 1 instructions"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rtl gemm: 1 more on the timing model, their weight kinds not in the array (int4 group scales 1)"),
            std::string::npos)
      << r.err;
  const FstFile w = read_fst(dir + "/w.fst");
  ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open the waveform";
  EXPECT_TRUE(w.has("w_bsc")) << "the GEMM engine's weight stream";
  EXPECT_GT(w.end_time, 0u);
  RunResult two = run_n3(run + " --backend systemc --rtl gemv,gemm --vcd " + dir + "/two.fst --mem-out " + dir + "/two.img");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_TRUE(read_fst(dir + "/two.gemm.fst").has("w_bsc"));
  EXPECT_EQ(read_file_bytes(dir + "/two.img"), read_file_bytes(dir + "/func.img"));
}

// A job beyond the array's buffers (513 tokens) is refused in one line and
// writes nothing. (Raised inside a SystemC thread: left out of the ASan
// suite with the mismatch tests, CMakePresets.json.)
TEST(RtlSimGemm, AJobBeyondTheArraysBuffersIsRefusedInOneLine) {
  const std::string dir = temp_dir("rtl_sim_gemm_big");
  write_gemm_program(dir, "    gemm.mv dst=y_big src=x_big w=w_row\n    sys.halt\n");
  RunResult g = run_n3("sim --mem-in " + dir + "/in.img --program " + dir + "/p.n3p --backend systemc --rtl gemm --mem-out " +
                       dir + "/big.img");
  EXPECT_EQ(g.status, 2) << g.err;
  EXPECT_EQ(std::count(g.err.begin(), g.err.end(), '\n'), 1) << g.err;
  EXPECT_NE(g.err.find("rtl gemm: instruction 0 (gemm.mv [513,256]x[64,256]): gemm (RTL engine): 513 tokens: the engine "
                       "takes 1 to 512"),
            std::string::npos)
      << g.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/big.img"));
}

TEST(RtlSimGemm, VersionListsTheUnit) {
  RunResult v = run_n3("--version");
  ASSERT_EQ(v.status, 0);
  EXPECT_TRUE(std::regex_search(v.out, std::regex("rtl units:.* gemm"))) << v.out;
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_GEMM
