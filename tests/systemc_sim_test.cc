// The SystemC backend (sim/systemc/, docs/timing.md), run as `n3 sim` in a
// subprocess (SystemC elaborates once per process): bits identical to the
// functional simulator, timing-only cycles equal to full-mode cycles,
// micro-benchmarks within 5% of cycle counts derived by hand from
// configs/hw/kv260.yaml, a structurally valid Perfetto trace, and the
// analytical `n3 estimate` against pccx's published bounds.
#include <gtest/gtest.h>

#include <cstdlib>

#include <fstream>
#include <nlohmann/json.hpp>

#include "golden/hw_config.h"
#include "isa/isa.h"
#include "sim/memory.h"
#include "sim/systemc/timing.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/npu.h"
#endif
#include "tests/sim_func_util.h"
#include "tests/test_util.h"
#include "tests/trace_check.h"

namespace n3::test {
namespace {

using nlohmann::json;

std::string write_text(const std::string& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir + "/" + name) << text;
  return dir + "/" + name;
}

std::string assemble_to(const std::string& dir, const std::string& src) {
  const std::string out = dir + "/p.n3p";
  const RunResult r = run_n3("asm " + src + " -o " + out);
  EXPECT_EQ(r.status, 0) << r.err;
  return out;
}

json read_json(const std::string& path) { return json::parse(read_file_text(path)); }

// Deterministic random contents for every descriptor of a program, by dtype:
// floats in [-2, 2), small positive scales, random INT4/INT8 bytes, INT32 in [0, 8).
std::vector<sim::ImageRegion> random_image(const isa::Program& p, uint64_t seed) {
  Rng r(seed);
  std::vector<sim::ImageRegion> img;
  for (size_t i = 1; i < p.descs.size(); ++i) {
    sim::View v;
    v.slot = static_cast<uint32_t>(i);
    v.d = isa::decode_desc(p.descs[i].data());
    v.rows = v.d.rows;
    v.cols = v.d.cols;
    const int64_t rb = v.row_bytes();
    std::string bytes(static_cast<size_t>((v.d.rows - 1) * v.d.row_stride + rb), '\0');
    for (int64_t row = 0; row < v.d.rows; ++row) {
      char* q = &bytes[static_cast<size_t>(row * v.d.row_stride)];
      for (int64_t c = 0; c < v.d.cols; ++c) switch (v.d.dtype) {
          case isa::Dtype::F32: {
            const float f = r.unit() * 2.0f;
            std::memcpy(q + c * 4, &f, 4);
            break;
          }
          case isa::Dtype::BF16:
          case isa::Dtype::F16: {
            const float f = r.unit() * 2.0f;
            const uint16_t h = v.d.dtype == isa::Dtype::BF16 ? num::bf16_bits(f) : num::f16_bits(f);
            std::memcpy(q + c * 2, &h, 2);
            break;
          }
          case isa::Dtype::INT32: {
            const int32_t x = static_cast<int32_t>(r.below(8));
            std::memcpy(q + c * 4, &x, 4);
            break;
          }
          default:
            break;
        }
      if (v.d.dtype == isa::Dtype::INT4 || v.d.dtype == isa::Dtype::INT8)
        for (int64_t b = 0; b < rb; ++b) q[b] = static_cast<char>(r.next());
    }
    img.push_back({v.d.space, "d" + std::to_string(i), v.d.base, bytes});
    if (v.scaled()) {
      std::string s(static_cast<size_t>((v.d.rows - 1) * v.d.scale_stride + v.scale_bytes()), '\0');
      for (size_t k = 0; k + 4 <= s.size(); k += 4) {
        const float f = 0.01f + 0.01f * (r.unit() + 1.0f);
        std::memcpy(&s[k], &f, 4);
      }
      if (v.d.scale_mode == isa::ScaleMode::TWO_LEVEL)
        for (size_t k = 4; k < s.size(); ++k) s[k] = static_cast<char>(1 + r.below(200));
      img.push_back({v.d.space, "s" + std::to_string(i), v.d.scale_base, s});
    }
  }
  return img;
}

// Runs a program on both backends with the same random image; returns the
// systemc stats. Output images and dump tensors must be byte-identical.
json compare_backends(const std::string& name, const std::string& src_path) {
  const std::string dir = temp_dir("sc_" + name);
  const std::string prog = assemble_to(dir, src_path);
  const isa::Program p = isa::assemble(read_file_text(src_path), src_path);
  sim::write_image(dir + "/in.img", random_image(p, 7));
  const std::string common = " --program " + prog + " --mem-in " + dir + "/in.img";
  RunResult f = run_n3("sim --backend func" + common + " --mem-out " + dir + "/f.img --dump " + dir + "/df");
  EXPECT_EQ(f.status, 0) << name << ": " << f.err;
  RunResult s = run_n3("sim --backend systemc" + common + " --mem-out " + dir + "/s.img --dump " + dir + "/ds --stats " +
                       dir + "/s.json");
  EXPECT_EQ(s.status, 0) << name << ": " << s.err;
  EXPECT_EQ(read_file_bytes(dir + "/f.img"), read_file_bytes(dir + "/s.img")) << name << ": --mem-out differs";
  for (const isa::Symbol& sym : p.symbols) {
    if (sym.kind == isa::SymKind::Tensor) {
      EXPECT_EQ(read_file_bytes(dir + "/df/" + sym.name + ".npy"), read_file_bytes(dir + "/ds/" + sym.name + ".npy"))
          << name << ": tensor " << sym.name;
    }
  }
  RunResult t = run_n3("sim --backend systemc --timing-only" + common + " --stats " + dir + "/t.json");
  EXPECT_EQ(t.status, 0) << name << ": " << t.err;
  const json js = read_json(dir + "/s.json"), jt = read_json(dir + "/t.json");
  EXPECT_EQ(js["total_cycles"], jt["total_cycles"]) << name << ": timing-only cycles differ";
  EXPECT_TRUE(jt["timing_only"].get<bool>());
  return js;
}

TEST(SystemcSim, ExamplesBitIdenticalToFuncAndTimingOnlyCyclesEqual) {
  for (const char* e : {"gemv_int4", "attention_decode", "rmsnorm", "rope", "softmax"}) {
    const json j = compare_backends(e, example_path(std::string(e) + ".s"));
    EXPECT_GT(j["total_cycles"].get<double>(), 0.0) << e;
  }
}

// Programs of the SimFunc suites (GEMM = GEMV, a token-ordered pipeline over
// three engines, MEMCPY conversions) on both backends.
TEST(SystemcSim, SimFuncProgramsBitIdenticalToFunc) {
  const std::string dir = temp_dir("sc_progs");
  const std::string gemm = R"(
.desc w dtype=int4 space=ddr base=0x0 rows=48 cols=96 row_stride=48 scale_mode=row scale_base=0x1000 scale_stride=4
.desc x dtype=bf16 space=l2 base=0x0 rows=3 cols=96 row_stride=192
.desc a dtype=f32 space=l2 base=0x400 rows=3 cols=48 row_stride=192
.desc b dtype=f32 space=l2 base=0x800 rows=3 cols=48 row_stride=192
.tensor a desc=a
.tensor b desc=b
    gemv.mv dst=a src=x w=w
    gemm.mv dst=b src=x w=w
    sys.halt
)";
  compare_backends("gemm", write_text(dir, "gemm.s", gemm));
  const std::string pipe = R"(
.desc w dtype=int4 space=ddr base=0x0 rows=64 cols=128 row_stride=64 scale_mode=group scale_base=0x4000 scale_stride=8 group=64
.desc xd dtype=f32 space=ddr base=0x8000 rows=1 cols=128 row_stride=512
.desc x dtype=bf16 space=l2 base=0x0 rows=1 cols=128 row_stride=256
.desc y dtype=f32 space=l2 base=0x400 rows=1 cols=64 row_stride=256
.desc z dtype=bf16 space=l2 base=0x800 rows=1 cols=64 row_stride=128
.desc o dtype=f32 space=ddr base=0x9000 rows=1 cols=64 row_stride=256
.tensor y desc=y
.tensor o desc=o
    memcpy dst=x src=xd signal=gemv
    gemv.mv dst=y src=x w=w wait=dma signal=sfu
    cvo.gelu dst=z a=y wait=gemv signal=dma
    memcpy dst=o src=z wait=sfu signal=ctl
    sys.sync wait=dma
    sys.halt
)";
  compare_backends("pipeline", write_text(dir, "pipe.s", pipe));
}

// --- micro-benchmarks: cycles derived by hand from configs/hw/kv260.yaml ---
// core clock 400 MHz (2.5 ns); DDR roofline min(19.2 GB/s x 0.57, 4 x 16 B x
// 250 MHz) = min(10.944, 16) = 10.944 GB/s = 27.36 B per core clock; one DDR
// transfer's fixed latency 120 ns + 2 AXI cycles (8 ns) = 51.2 core clocks;
// L2 port 2 x 16 B per clock; GEMV 4 x 32 = 128 MAC per clock; SFU 1 element
// per clock. Weight tiles are half the 4 x 64 KB weight buffers (128 KiB).
constexpr double kDdrBytesPerClk = 10.944e9 / 400e6;  // 27.36
constexpr double kDdrLatency = 51.2;
// A DDR-bound MEMCPY's ends around its stream (timing.cc, fitted to the RTL
// DMA engine, docs/rtl.md): the engine asks for its reads 2.5 clocks after
// the instruction starts, and its last beat needs 6 more clocks to leave.
constexpr double kDmaSetup = 2.5 + 6;

double sim_cycles(const std::string& tag, const std::string& text, json* stats = nullptr, const std::string& args = "") {
  const std::string dir = temp_dir(tag);
  const std::string prog = assemble_to(dir, write_text(dir, "p.s", text));
  const RunResult r =
      run_n3("sim --backend systemc --timing-only --program " + prog + " --stats " + dir + "/s.json" + args);
  EXPECT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir + "/s.json");
  if (stats) *stats = j;
  return j["total_cycles"].get<double>();
}

void expect_near_hand(double sim, double hand, const char* what) {
  EXPECT_NEAR(sim, hand, 0.05 * hand) << what << ": simulated " << sim << " cycles, hand " << hand;
  std::printf("[ micro    ] %-28s simulated %12.1f  hand %12.1f  (%+.2f%%)\n", what, sim, hand, 100.0 * (sim - hand) / hand);
}

// The micro-benchmark programs (several tests run them).
// W [4096, 4096] INT4 streamed from DDR into one GEMV.
const char* const kGemv4096 = R"(
.desc w dtype=int4 space=ddr base=0x0 rows=4096 cols=4096 row_stride=2048 scale_mode=row scale_base=0x1000000 scale_stride=4
.desc x dtype=bf16 space=l2 base=0x0 rows=1 cols=4096 row_stride=8192
.desc y dtype=bf16 space=l2 base=0x4000 rows=1 cols=4096 row_stride=8192
    gemv.mv dst=y src=x w=w
    sys.halt
)";
// A 1 MiB DDR -> L2 MEMCPY and an independent 32 K-element cvo.exp.
const char* const kMemcpyBesideExp = R"(
.desc s dtype=bf16 space=ddr base=0x0 rows=512 cols=1024 row_stride=2048
.desc d dtype=bf16 space=l2 base=0x0 rows=512 cols=1024 row_stride=2048
.desc a dtype=bf16 space=l2 base=0x100000 rows=16 cols=2048 row_stride=4096
    memcpy dst=d src=s
    cvo.exp dst=a a=a
    sys.halt
)";
// A GEMV with its weights in L2 writing an F32 result to DDR, and an
// independent DDR -> L2 MEMCPY of `kib` KiB (bf16 rows of 2 KiB).
std::string gemv_to_ddr_beside_memcpy(int kib) {
  const std::string rows = std::to_string(kib / 2);
  return ".desc w dtype=int4 space=l2 base=0x0 rows=1024 cols=1024 row_stride=512 scale_mode=row scale_base=0x80000 "
         "scale_stride=4\n"
         ".desc x dtype=bf16 space=l2 base=0x90000 rows=1 cols=1024 row_stride=2048\n"
         ".desc y dtype=f32 space=ddr base=0x0 rows=1 cols=1024 row_stride=4096\n"
         ".desc s dtype=bf16 space=ddr base=0x100000 rows=" + rows + " cols=1024 row_stride=2048\n"
         ".desc d dtype=bf16 space=l2 base=0xA0000 rows=" + rows + " cols=1024 row_stride=2048\n"
         "    gemv.mv dst=y src=x w=w\n    memcpy dst=d src=s\n    sys.halt\n";
}

TEST(SystemcMicro, LargeInt4GemvStreamsWeightsFromDdr) {
  // W [4096, 4096] INT4 in DDR (8 MiB) + one F32 row scale per row (16 KiB)
  // = 8 404 992 B in 64 tiles of 131 072 B and a last one of 16 384 B.
  // Streaming (27.36 B/clk) dominates compute (128 MAC/clk: a full tile is
  // 131 072 x 131 072 / 8 404 992 = 2 044.0 clocks, the last 255.5), so:
  // setup 8; the first 64 tiles arrive after 8 388 608 / 27.36 = 306 601.2
  // clocks + latency 51.2; tile 63's compute (2 044.0) outlasts the last
  // tile's stream (598.8), then the last tile's compute (255.5), drain 12
  // and the 8 KiB bf16 result into L2 (8192 / 32 = 256):
  // 8 + 306 601.2 + 51.2 + 2 044.0 + 255.5 + 12 + 256 = 309 227.9 clocks.
  const double tile = 131072.0 * 131072 / 8404992, last = 131072.0 * 16384 / 8404992;
  const double hand = 8 + 8388608.0 / kDdrBytesPerClk + kDdrLatency + tile + last + 12 + 256;
  json j;
  const double c = sim_cycles("gemv", kGemv4096, &j);
  expect_near_hand(c, hand, "GEMV 4096x4096 INT4 (DDR)");
  // Achieved DDR bandwidth is the roofline's (the stream dominates).
  EXPECT_NEAR(j["bandwidth"]["achieved_gbps"].get<double>(), 10.944, 0.03 * 10.944);
  EXPECT_GT(j["units"]["GEMV"]["stall_reasons"]["ddr"].get<double>(), 100000.0);
}

TEST(SystemcMicro, LongSfuOp) {
  // cvo.exp over [256, 2048] bf16 in L2 (524 288 elements) at 1 element per
  // clock: setup 4 + 524 288 + pipeline latency 16 = 524 308 clocks (the L2
  // traffic, 2 x 1 MiB over two 32 B/clk ports, takes 32 768 and hides).
  const double hand = 4 + 524288 + 16;
  const double c = sim_cycles("sfu", R"(
.desc a dtype=bf16 space=l2 base=0x0 rows=256 cols=2048 row_stride=4096
    cvo.exp dst=a a=a
    sys.halt
)");
  expect_near_hand(c, hand, "SFU exp 512K elements");
}

TEST(SystemcMicro, DdrBoundMemcpy) {
  // 1 MiB bf16 DDR -> L2: 8.5 + 1 048 576 / 27.36 = 38 325.1 + latency
  // 51.2 = 38 384.8 clocks (the L2 side, 1 MiB / 32 B = 32 768, is faster;
  // the DMA engine, 512 rows of 10 + 2 048 / 64 clocks = 21 504, too).
  const double hand = kDmaSetup + 1048576.0 / kDdrBytesPerClk + kDdrLatency;
  const double c = sim_cycles("memcpy", R"(
.desc s dtype=bf16 space=ddr base=0x0 rows=512 cols=1024 row_stride=2048
.desc d dtype=bf16 space=l2 base=0x0 rows=512 cols=1024 row_stride=2048
    memcpy dst=d src=s
    sys.halt
)");
  expect_near_hand(c, hand, "MEMCPY 1 MiB DDR->L2");
}

TEST(SystemcMicro, TwoEnginesOverlap) {
  // The MEMCPY above (38 384.8) and an independent cvo.exp over 32 768
  // elements (4 + 32 768 + 16 = 32 788) with no token between them run
  // concurrently: the total is the longer one (38 384.8), not the sum (71 173).
  const double hand = kDmaSetup + 1048576.0 / kDdrBytesPerClk + kDdrLatency;
  json j;
  const double c = sim_cycles("overlap", kMemcpyBesideExp, &j);
  expect_near_hand(c, hand, "MEMCPY || SFU exp 32K");
  EXPECT_LT(c, 0.6 * (hand + 32788));
  EXPECT_NEAR(j["units"]["SFU"]["busy_cycles"].get<double>(), 32788, 0.05 * 32788);
}

TEST(SystemcMicro, AFutureDdrWriteDoesNotBlockAnotherEngine) {
  // A GEMV with its weights in L2 (1024 x 1024 INT4: a 512 KiB L2 read of
  // ~16 500 clocks, then 1 048 576 / 128 = 8 192 MAC clocks) writes its F32
  // result to DDR after computing, and a 64 KiB DDR -> L2 MEMCPY runs beside
  // it with no token between them. The MEMCPY must take the free channel at
  // once, not wait behind the GEMV's write: 8.5 + 65 536 / 27.36 = 2 395.3 +
  // latency 51.2 = 2 455.0 clocks of DMA time, not ~8 300 + 2 455.0.
  const double hand = kDmaSetup + 65536.0 / kDdrBytesPerClk + kDdrLatency;
  json j;
  sim_cycles("ddr_future", gemv_to_ddr_beside_memcpy(64), &j);
  expect_near_hand(j["units"]["DMA"]["busy_cycles"].get<double>(), hand, "MEMCPY beside a GEMV's DDR write");
  EXPECT_GT(j["units"]["GEMV"]["busy_cycles"].get<double>(), 8192.0);
  // The memory units report what crossed them.
  EXPECT_EQ(j["memory_units"]["DDR channel"]["bytes"].get<uint64_t>(), 65536u + 4096u);
  EXPECT_GT(j["memory_units"]["L2 port 0"]["busy_cycles"].get<double>(), 0.0);
  // A copy longer than the time to the GEMV's write (512 KiB: 8.5 + 524 288 /
  // 27.36 + 51.2 = 19 222.0 clocks) runs without a pause: the write is booked
  // when the result exists (~16 500 clocks), so it queues behind the copy
  // instead of splitting the channel's free time in two.
  const double hand2 = kDmaSetup + 524288.0 / kDdrBytesPerClk + kDdrLatency;
  sim_cycles("ddr_future_long", gemv_to_ddr_beside_memcpy(512), &j);
  expect_near_hand(j["units"]["DMA"]["busy_cycles"].get<double>(), hand2, "512 KiB MEMCPY beside it");
}

TEST(SystemcMicro, GemvAndGemmShareTheWeightBuffers) {
  // A GEMV and a GEMM, no token between them, each stream a 1024 x 1024 INT4
  // matrix (524 288 + 4 096 scale bytes) from DDR through the one set of
  // weight buffers (slots handed to one engine at a time). The channel moves
  // both: 2 x 528 384 / 27.36 = 38 624.4 clocks, + latency 51.2, + the GEMM's
  // setup 3, array drain 64 and [2, 1024] bf16 result into L2 (4 096 / 32 =
  // 128) = 38 870.6 clocks. With 2 tokens the array is bound by its weight
  // loads (32 clocks a 32 x 64 tile: 2 x 2 + 510 x 32 = 16 324 clocks for
  // the 512 tiles, docs/rtl_gemm.md "Cycles"), and it takes a 128 KiB slot
  // once the slot has landed: its last full slot lands at the channel's end,
  // and its share, 16 324 x 131 072 / 528 384 = 4 049.3 clocks, follows.
  const double hand = 2 * 528384.0 / kDdrBytesPerClk + kDdrLatency + 3 + 64 + 128 + 16324.0 * 131072 / 528384;
  json j;
  const double c = sim_cycles("wbuf_shared", R"(
.desc w1 dtype=int4 space=ddr base=0x0 rows=1024 cols=1024 row_stride=512 scale_mode=row scale_base=0x80000 scale_stride=4
.desc w2 dtype=int4 space=ddr base=0x100000 rows=1024 cols=1024 row_stride=512 scale_mode=row scale_base=0x180000 scale_stride=4
.desc x dtype=bf16 space=l2 base=0x0 rows=1 cols=1024 row_stride=2048
.desc x2 dtype=bf16 space=l2 base=0x1000 rows=2 cols=1024 row_stride=2048
.desc y dtype=bf16 space=l2 base=0x4000 rows=1 cols=1024 row_stride=2048
.desc y2 dtype=bf16 space=l2 base=0x8000 rows=2 cols=1024 row_stride=2048
    gemv.mv dst=y src=x w=w1
    gemm.mv dst=y2 src=x2 w=w2
    sys.halt
)", &j);
  expect_near_hand(c, hand, "GEMV + GEMM, shared WBUF");
  EXPECT_EQ(j["memory_units"]["weight buffers"]["bytes"].get<uint64_t>(), 2u * 528384u);
  // Both streamed at once (neither waited for the other to finish).
  EXPECT_GT(j["units"]["GEMV"]["busy_cycles"].get<double>(), 0.9 * c);
  EXPECT_GT(j["units"]["GEMM"]["busy_cycles"].get<double>(), 0.9 * c);
}

TEST(SystemcMicro, WeightPrefetchStreamsWhileTheGemvWaitsForTokens) {
  // A 32 K-element cvo.exp (~32 800 clocks) and a GEMV that waits for it,
  // its 1024 x 1024 INT4 matrix (516 B rows with their scales, 528 384 B,
  // 19 312 clocks at 27.36 B/clk) in the read-only weights region. With
  // timing.wbuf_prefetch_tiles 2 both weight buffer halves fill with whole
  // rows (254 rows, 131 064 B, 4 790 clocks each) while the SFU runs; the
  // third tile streams once the MACs are done with the first (1024 x 254 /
  // 128 = 2 032 clocks after the tokens): the GEMV ends 2 x 4 790 - 2 032 =
  // 7 549 clocks sooner. The same bytes move.
  const std::string prog = R"(
.region weights space=ddr role=weights base=0x0 size=0x90000
.desc w dtype=int4 space=ddr base=0x0 rows=1024 cols=1024 row_stride=512 scale_mode=row scale_base=0x80000 scale_stride=4
.desc a dtype=bf16 space=l2 base=0x100000 rows=16 cols=2048 row_stride=4096
.desc x dtype=bf16 space=l2 base=0x0 rows=1 cols=1024 row_stride=2048
.desc y dtype=bf16 space=l2 base=0x4000 rows=1 cols=1024 row_stride=2048
    cvo.exp dst=a a=a signal=gemv
    gemv.mv dst=y src=x w=w wait=sfu
    sys.halt
)";
  json off, on, kv;
  const double c_off =
      sim_cycles("prefetch_off", prog, &off, " --hw " + hw_variant("prefetch_off_hw", {{"timing.wbuf_prefetch_tiles", "0"}}));
  const double c_on =
      sim_cycles("prefetch_on", prog, &on, " --hw " + hw_variant("prefetch_on_hw", {{"timing.wbuf_prefetch_tiles", "2"}}));
  const double saved = 2 * 131064.0 / kDdrBytesPerClk - 1024.0 * 254 / 128;
  EXPECT_NEAR(c_off - c_on, saved, 0.05 * saved) << "off " << c_off << ", on " << c_on;
  EXPECT_EQ(on["bandwidth"]["ddr_bytes_read"], off["bandwidth"]["ddr_bytes_read"]);
  EXPECT_EQ(on["memory_units"]["weight buffers"]["bytes"], off["memory_units"]["weight buffers"]["bytes"]);
  // Weights outside a read-only region (a KV window the waited-for
  // instruction may write) are not prefetched.
  std::string not_weights = prog;
  not_weights.replace(not_weights.find("role=weights"), 12, "role=kv");
  const double c_kv =
      sim_cycles("prefetch_kv", not_weights, &kv, " --hw " + hw_variant("prefetch_kv_hw", {{"timing.wbuf_prefetch_tiles", "2"}}));
  EXPECT_NEAR(c_kv, c_off, 1.0);
}

// The same prefetch feeds the GEMM array (prefill): a 2-token gemm.mv
// waiting for the same cvo.exp, its 1024 x 1024 INT4 matrix in the weights
// region. With timing.wbuf_prefetch_tiles 2 both 128 KiB weight buffer
// slots (131 072 B, 4 790.6 clocks of streaming each) fill while the SFU
// runs; the array takes a slot's tiles in 16 324 x 131 072 / 528 384 =
// 4 049.3 clocks (weight-load bound, docs/rtl_gemm.md), and the third slot
// streams once the first is free, so the GEMM ends at least one slot's
// streaming sooner and at most two slots' (measured: 5 404 clocks of
// 56 367). The same bytes move.
TEST(SystemcMicro, WeightPrefetchAlsoFeedsTheGemmArray) {
  const std::string prog = R"(
.region weights space=ddr role=weights base=0x0 size=0x90000
.desc w dtype=int4 space=ddr base=0x0 rows=1024 cols=1024 row_stride=512 scale_mode=row scale_base=0x80000 scale_stride=4
.desc a dtype=bf16 space=l2 base=0x100000 rows=16 cols=2048 row_stride=4096
.desc x2 dtype=bf16 space=l2 base=0x1000 rows=2 cols=1024 row_stride=2048
.desc y2 dtype=bf16 space=l2 base=0x8000 rows=2 cols=1024 row_stride=2048
    cvo.exp dst=a a=a signal=gemm
    gemm.mv dst=y2 src=x2 w=w wait=sfu
    sys.halt
)";
  json off, on;
  const double c_off =
      sim_cycles("gemm_prefetch_off", prog, &off, " --hw " + hw_variant("gemm_pf_off", {{"timing.wbuf_prefetch_tiles", "0"}}));
  const double c_on =
      sim_cycles("gemm_prefetch_on", prog, &on, " --hw " + hw_variant("gemm_pf_on", {{"timing.wbuf_prefetch_tiles", "2"}}));
  const double slot = 131072.0 / kDdrBytesPerClk;
  EXPECT_GE(c_off - c_on, slot) << "off " << c_off << ", on " << c_on;
  EXPECT_LE(c_off - c_on, 2 * slot + 1) << "off " << c_off << ", on " << c_on;
  EXPECT_EQ(on["bandwidth"]["ddr_bytes_read"], off["bandwidth"]["ddr_bytes_read"]);
  EXPECT_EQ(on["memory_units"]["weight buffers"]["bytes"], off["memory_units"]["weight buffers"]["bytes"]);
}

// TLM-2.0 conformance: with N3_SC_TARGETS_WAIT the DDR and L2 targets wait
// inside b_transport until a transfer starts (as a transactor driving RTL
// would) and return the rest as the delay; the initiators read it against
// the time at return, so every micro-benchmark gives the same cycles.
TEST(SystemcMicro, TargetsThatWaitInBTransportGiveTheSameCycles) {
  const std::vector<std::string> progs = {kGemv4096, kMemcpyBesideExp, gemv_to_ddr_beside_memcpy(512)};
  for (size_t i = 0; i < progs.size(); ++i) {
    json a, b;
    const double plain = sim_cycles("tlm_plain" + std::to_string(i), progs[i], &a);
    double waiting;
    {
      test::ScopedEnv wait("N3_SC_TARGETS_WAIT", "1");
      waiting = sim_cycles("tlm_wait" + std::to_string(i), progs[i], &b);
    }
    EXPECT_NEAR(waiting, plain, 1e-6 * plain) << "program " << i;
    EXPECT_EQ(a["units"], b["units"]) << "program " << i;
  }
}

TEST(SystemcTrace, ValidJsonKnownTracksNoOverlap) {
  const std::string dir = temp_dir("sc_trace");
  const std::string prog = assemble_to(dir, example_path("attention_decode.s"));
  for (const char* agg : {"", " --trace-aggregate"}) {
    const RunResult r = run_n3("sim --backend systemc --program " + prog + " --trace " + dir + "/t.json" + agg);
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = read_json(dir + "/t.json");  // throws on invalid JSON
    const test::TraceSummary ts = test::check_trace(j, *agg != 0, std::string("attention_decode") + agg);
    EXPECT_EQ(ts.tracks, 12u);  // 5 engines, DDR channel, 4 HP ports, 2 L2 ports
    EXPECT_GT(ts.transfers, 0u);
    const uint64_t slices = ts.slices;
    EXPECT_GE(slices, *agg ? 4u : 12u);
    // Plain slices are named by disassembly and produced tensor.
    if (!*agg) {
      EXPECT_NE(read_file_text(dir + "/t.json").find("gemv.qk dst=s src=q w=k_win wait=dma signal=sfu -> s"), std::string::npos);
    }
  }
}

TEST(SystemcHw, DesignPointsLoadWithTimingAndEstimateMatchesPccx) {
  for (const char* h : {"kv260", "lpddr5x-edge", "hbm-server"}) {
    const HwConfig hw = load_hw_config(source_dir() + "/configs/hw/" + h + ".yaml");
    const timing::Params p = timing::load_params(hw);
    EXPECT_GT(p.ddr_bytes_per_s(p.memory.hp_ports.value), 0.0) << h;
    for (const HwKeyInfo& k : hw_keys(hw)) {
      if (k.origin->given) {
        EXPECT_FALSE(k.origin->source.empty()) << h << " " << k.key;
      }
    }
  }
  // pccx v002: the KV260's effective DDR bounds E4B decode at ~4.5-5.4 tok/s,
  // the GEMV MAC rate at ~11.5 tok/s (docs/timing.md).
  const RunResult r = run_n3("estimate --prompt 0 --model " + source_dir() + "/configs/models/gemma3n-e4b.yaml");
  ASSERT_EQ(r.status, 0) << r.err;
  auto value = [&](const std::string& key) {
    const size_t at = r.out.find(key);
    EXPECT_NE(at, std::string::npos) << key << " in " << r.out;
    return std::stod(r.out.substr(at + key.size()));
  };
  EXPECT_NEAR(value("roofline tok/s: "), 4.95, 0.45);
  EXPECT_NEAR(value("compute bound tok/s: "), 11.5, 0.3);
}

#ifdef N3_HAVE_SYSTEMC
// One elaboration, several programs (the model form runs a prefill and then
// decode programs): the same program twice gives the same cycles and the
// functional simulator's bits each time.
TEST(SystemcReuse, SeveralProgramsInOneProcess) {
  const timing::Params p = timing::load_params(load_hw_config(source_dir() + "/configs/hw/kv260.yaml"));
  double first = 0;
  for (const char* e : {"gemv_int4.s", "softmax.s", "gemv_int4.s"}) {
    const isa::Program prog = assemble_example(e);
    const std::vector<sim::ImageRegion> img = random_image(prog, 3);
    sim::FuncSim ref(prog, small_options()), s(prog, small_options());
    for (sim::FuncSim* m : {&ref, &s})
      for (const sim::ImageRegion& r : img) m->memory().space(r.space).write(r.addr, r.bytes.data(), r.bytes.size());
    ref.run();
    const sc::Report rep = sc::run_npu(s, p, {});
    ASSERT_EQ(ref.captures().size(), s.captures().size()) << e;
    for (size_t i = 0; i < ref.captures().size(); ++i)
      EXPECT_EQ(bit_diff(s.captures()[i].data, ref.captures()[i].data), "") << e << " " << ref.captures()[i].name;
    EXPECT_GT(rep.total_ps, 0.0);
    // Idle time a unit spent before this run (since the previous one) is not this run's.
    for (const sc::UnitReport& u : rep.units)
      for (const auto& [k, v] : u.stall_ps) EXPECT_LE(v, rep.total_ps + 10.0) << e << " " << u.name << " " << k;
    if (std::string(e) == "gemv_int4.s") {
      if (first == 0) {
        first = rep.total_ps;
      } else {
        EXPECT_NEAR(rep.total_ps, first, 10.0) << "a reused model times the same program differently (ps rounding aside)";
      }
    }
  }
}
#endif

}  // namespace
}  // namespace n3::test
