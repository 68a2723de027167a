// The RTL instruction decoder in the SystemC model's decode stage (`n3 sim
// --backend systemc --rtl decoder`, alone and with the engines `--rtl
// decoder,gemv,dma`; docs/rtl.md "The decoder bridge"): the tiny model's
// prompt plus decode steps gives every dumped tensor byte-identical to `n3
// golden --numerics npu`, every fetched instruction word (from --stats) went
// through the RTL and was compared with the C++ decoder, the RTL never held
// a word back (one word per clock, the model's timing.dispatch_cycles), so
// the run's cycles are the run's without the RTL decoder; a difference stops
// the run naming pc, dynamic number and word; example programs leave the
// functional core's memory; the waveform is the decoder's own.
#if defined(N3_HAVE_RTL_DMA) && defined(N3_HAVE_RTL_GEMV)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
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

// The summary line's figures (-1: no such line).
struct DecoderLine {
  long long words = -1, cycles = -1, reset = -1, lat_min = -1, lat_max = -1, waited = -1, dispatch = -1;
};
DecoderLine decoder_line(const std::string& err) {
  std::smatch m;
  DecoderLine d;
  if (!std::regex_search(err, m,
                         std::regex("rtl decoder: ([0-9]+) words decoded and compared with the C\\+\\+ decoder, ([0-9]+) "
                                    "RTL cycles \\(([0-9]+) of them the power-on reset\\); latency ([0-9]+)\\.\\.([0-9]+) "
                                    "cycles, ([0-9]+) clocks a word waited for in_ready \\(the model's dispatch "
                                    "interval: ([0-9]+) per word\\)")))
    return d;
  d.words = std::stoll(m[1]);
  d.cycles = std::stoll(m[2]);
  d.reset = std::stoll(m[3]);
  d.lat_min = std::stoll(m[4]);
  d.lat_max = std::stoll(m[5]);
  d.waited = std::stoll(m[6]);
  d.dispatch = std::stoll(m[7]);
  return d;
}

TEST(RtlSimDecoder, TinyPromptAndDecodeMatchGoldenWithEveryWordDecodedOnTheRtl) {
  const std::string dir = temp_dir("rtl_sim_decoder_tiny");
  const std::string io = tiny_run_io(dir, 13, 8);
  RunResult g = run_n3("golden --numerics npu" + io + " --dump " + dir + "/ref");
  ASSERT_EQ(g.status, 0) << g.err;
  // The same run on the C++ decoder alone (and the timing models of the
  // engines, or their RTL): the reference for the cycles.
  for (const std::string engines : {"", "gemv,dma"}) {
    const std::string units = engines.empty() ? "decoder" : "decoder," + engines;
    const std::string tag = engines.empty() ? "dec" : "all", cand = dir + "/" + tag;
    const std::string ref_opt = engines.empty() ? "" : " --rtl " + engines;
    RunResult m = run_n3("sim --backend systemc" + ref_opt + io + " --dump " + cand + "_ref --stats " + cand +
                         "_ref.json");
    ASSERT_EQ(m.status, 0) << m.err;
    RunResult s = run_n3("sim --backend systemc --rtl " + units + io + " --dump " + cand + " --stats " + cand + ".json");
    ASSERT_EQ(s.status, 0) << s.err;
    RunResult d = run_n3("diff " + cand + " " + dir + "/ref");
    EXPECT_EQ(d.status, 0) << units << ":\n" << d.out << d.err;
    EXPECT_NE(d.out.find("reference-only=0"), std::string::npos) << d.out;
    const auto stats = nlohmann::json::parse(read_file_text(cand + ".json"));
    const auto ref = nlohmann::json::parse(read_file_text(cand + "_ref.json"));
    const long long fetched = stats.at("counts").at("fetched").get<long long>();
    EXPECT_GT(fetched, 1000);
    const DecoderLine l = decoder_line(s.err);
    // Every fetched word, control instructions included, through the RTL.
    EXPECT_EQ(l.words, fetched) << s.err;
    // One word per clock: none waited for in_ready, so the model's dispatch
    // interval (1) is the RTL's; the pipeline's 2-clock latency.
    EXPECT_EQ(l.waited, 0) << s.err;
    EXPECT_EQ(l.dispatch, 1) << s.err;
    EXPECT_EQ(l.lat_min, 2) << s.err;
    EXPECT_EQ(l.lat_max, 2) << s.err;
    EXPECT_EQ(l.reset, 2) << s.err;
    EXPECT_GE(l.cycles, fetched + l.reset) << s.err;
    // The decode stage keeps the model's dispatch interval: the cycles are
    // the run's without the RTL decoder.
    EXPECT_EQ(stats.at("total_cycles").get<double>(), ref.at("total_cycles").get<double>()) << units;
    EXPECT_TRUE(std::regex_search(s.err, std::regex("rtl decoder: [0-9.]+ s wall, [0-9]+ RTL cycles simulated "
                                                    "\\([0-9]+ cycles per wall second\\)")))
        << s.err;
    EXPECT_EQ(s.err.find("rtl dma: per-instruction") != std::string::npos, !engines.empty()) << s.err;
    std::printf("--rtl %s: %lld words, total %.0f cycles (without the RTL decoder %.0f)\n%s", units.c_str(), fetched,
                stats.at("total_cycles").get<double>(), ref.at("total_cycles").get<double>(), s.err.c_str());
  }
}

// A difference between the RTL and the C++ decoder stops the run at the
// first one (exit 1), naming pc, dynamic number, word and output, with no
// partial output; without the injection the same run passes.
TEST(RtlSimDecoder, AMismatchStopsTheRunNamingPcAndWord) {
  const std::string dir = temp_dir("rtl_sim_decoder_inject");
  const std::string io = tiny_run_io(dir, 5, 2);
  setenv("N3_RTL_DECODER_INJECT", "40", 1);  // the 41st word decoded: its engine's bit 0 flipped
  RunResult s = run_n3("sim --backend systemc --rtl decoder" + io + " --dump " + dir + "/out");
  unsetenv("N3_RTL_DECODER_INJECT");
  EXPECT_EQ(s.status, 1) << s.err;
  EXPECT_TRUE(std::regex_search(s.err, std::regex("n3 sim: rtl decoder: pc [0-9]+ \\(dynamic #[0-9]+\\), word "
                                                  "0x[0-9a-f]{16}: engine rtl 0x[0-9a-f]+ vs C\\+\\+ 0x[0-9a-f]+\n")))
      << s.err;
  EXPECT_FALSE(file_exists(dir + "/out")) << "no partial output";
  RunResult ok = run_n3("sim --backend systemc --rtl decoder" + io + " --dump " + dir + "/out");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(RtlSimDecoder, RefusesBadUnitListsInOneLine) {
  const std::string dir = temp_dir("rtl_sim_decoder_refuse");
  const std::string io = " --model " + tiny_n3w() + " --ids " + dir + "/ids.npy --dump " + dir + "/a";
  write_npy_i32(dir + "/ids.npy", {1, 2, 3});
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"sim --backend systemc --rtl decoder,decoder" + io, "given twice"},
      {"sim --backend systemc --rtl decoders" + io, "decoder, ctl, gemv, gemm, dma, sfu (is 'decoders'"},
      {"sim --backend func --rtl decoder" + io, "needs --backend systemc"},
  };
  for (const auto& [cmd, why] : bad) {
    RunResult r = run_n3(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_FALSE(file_exists(dir + "/a")) << cmd;
  }
}

// A program whose halt waits for no token ends when the halt executes; the
// words still in the decoder then (the halt's own) are clocked out in zero
// model time, so the program's cycles are the model's (the control unit has
// no fetch latency to put them in).
TEST(RtlSimDecoder, TheDrainAfterTheHaltAddsNoCycles) {
  const std::string dir = temp_dir("rtl_sim_decoder_halt");
  write_file_atomic(dir + "/p.s", ".desc a dtype=bf16 space=ddr base=0x0 rows=1 cols=8 row_stride=16\n    sys.halt\n");
  ASSERT_EQ(run_n3("asm " + dir + "/p.s -o " + dir + "/p.n3p").status, 0);
  const std::string run = "sim --backend systemc --program " + dir + "/p.n3p";
  RunResult m = run_n3(run + " --stats " + dir + "/m.json");
  ASSERT_EQ(m.status, 0) << m.err;
  RunResult d = run_n3(run + " --rtl decoder --stats " + dir + "/d.json");
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(decoder_line(d.err).words, 1) << d.err;
  EXPECT_EQ(nlohmann::json::parse(read_file_text(dir + "/d.json")).at("total_cycles").get<double>(),
            nlohmann::json::parse(read_file_text(dir + "/m.json")).at("total_cycles").get<double>());
}

// Every example program: the memory with the RTL decoder (and with every
// RTL unit) is the functional core's, every fetched word was decoded on the
// RTL; with three units `--vcd W.fst` writes W.decoder.fst, the decoder's own.
TEST(RtlSimDecoder, ExamplePrograms) {
  for (const std::string ex : {"attention_decode", "gemv_int4", "rmsnorm", "rope", "softmax"}) {
    const std::string dir = temp_dir("rtl_sim_decoder_" + ex);
    ASSERT_EQ(run_n3("asm " + source_dir() + "/isa/examples/" + ex + ".s -o " + dir + "/p.n3p").status, 0) << ex;
    const std::string run = "sim --program " + dir + "/p.n3p";
    RunResult f = run_n3(run + " --backend func --mem-out " + dir + "/func.img");
    ASSERT_EQ(f.status, 0) << ex << f.err;
    RunResult d = run_n3(run + " --backend systemc --rtl decoder --mem-out " + dir + "/dec.img --stats " + dir +
                         "/dec.json");
    ASSERT_EQ(d.status, 0) << ex << d.err;
    const long long fetched =
        nlohmann::json::parse(read_file_text(dir + "/dec.json")).at("counts").at("fetched").get<long long>();
    EXPECT_GT(fetched, 1) << ex;
    EXPECT_EQ(read_file_bytes(dir + "/dec.img"), read_file_bytes(dir + "/func.img")) << ex;
    EXPECT_EQ(decoder_line(d.err).words, fetched) << ex << d.err;
    EXPECT_EQ(decoder_line(d.err).waited, 0) << ex << d.err;
    if (ex != "attention_decode") continue;
    RunResult b = run_n3(run + " --backend systemc --rtl decoder,gemv,dma --vcd " + dir + "/w.fst --mem-out " + dir +
                         "/all.img");
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(read_file_bytes(dir + "/all.img"), read_file_bytes(dir + "/func.img"));
    const FstFile w = read_fst(dir + "/w.decoder.fst");
    ASSERT_TRUE(w.opened) << "GTKWave's reader cannot open it";
    EXPECT_GT(w.end_time, 0u);
    EXPECT_TRUE(w.mentions("npu.decoder.rtl")) << "the decoder's own model";
    EXPECT_FALSE(w.mentions("npu.gemv.rtl"));
  }
}

}  // namespace
}  // namespace n3::test
#endif  // N3_HAVE_RTL_DMA && N3_HAVE_RTL_GEMV
