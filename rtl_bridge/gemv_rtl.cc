#include "rtl_bridge/gemv_rtl.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

// Verilator's SystemC headers (the model's first: it brings in systemc.h,
// which verilated.h expects) are not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_gemv_engine.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include "base/error.h"
#include "golden/numerics/mac.h"
#include "isa/verify.h"

namespace n3::rtl {

using isa::Dtype;
using isa::ScaleMode;

namespace {

constexpr int kCores = N3_RTL_GEMV_CORES;
constexpr int kLanes = N3_RTL_GEMV_LANES;
constexpr int kSlots = kLanes / 8 > 0 ? kLanes / 8 : 1;  // group scales per weight beat (n3_gemv_core NS)
// n3_gemv_pkg codes.
enum : uint32_t { WK_INT4 = 0, WK_INT8 = 1, WK_FLOAT = 2, WK_BFP = 3 };
enum : uint32_t { SM_ROW = 0, SM_GROUP = 1, SM_TWO = 2 };
constexpr uint32_t kOneF32 = 0x3f800000u;

uint32_t f2bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
int elem_bits(Dtype t) {
  switch (t) {
    case Dtype::INT4: return 4;
    case Dtype::INT8: return 8;
    case Dtype::BF16:
    case Dtype::F16: return 16;
    default: return 32;
  }
}
std::string shape(const sim::View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }

}  // namespace

// One weight row as the engine takes it: raw element bytes and sideband.
struct RowData {
  std::vector<uint8_t> bytes;  // len elements of ebits each
  uint32_t scale = kOneF32;
  uint32_t vlo = 0;
  std::vector<uint32_t> gsc;   // group (f32) or block (8-bit) scales, one per group
};

struct GemvRtl::Job {
  uint32_t wkind = 0, smode = 0, ascale = 0, afmt = 0, wfmt = 0, ofmt = 0, mbits = 0, blog = 5;
  int64_t group = 0, nvec = 0, len = 0, rows = 0, vp = 1, nsc = 0, sstride = 0;
  int abits = 32, wbits = 32;
  std::vector<uint32_t> scales;                                  // ascale: KV head-major
  std::function<void(int64_t, std::vector<uint8_t>&)> act_row;   // raw bytes of vector v
  std::function<void(int64_t, RowData&)> w_row;                  // weight row u
  std::function<int64_t(int64_t, int64_t)> dst;                  // dst index of (row u, vector vi)
  std::function<int64_t(int64_t)> w_end;                         // w rows [0, end) row u needs
  std::function<int64_t(int64_t)> w_done;                        // w rows free once rows [0, u) are in the engine
  int64_t w_total = 0;                                           // w rows of the instruction
  int64_t outputs = 0;
};

struct GemvRtl::Ports {
  sc_core::sc_signal<bool> rst_n{"rst_n"}, cmd_valid{"cmd_valid"}, cmd_ready{"cmd_ready"}, cmd_ascale{"cmd_ascale"},
      a_valid{"a_valid"}, a_ready{"a_ready"}, busy{"busy"};
  sc_core::sc_signal<uint32_t> cmd_wkind{"cmd_wkind"}, cmd_smode{"cmd_smode"}, cmd_afmt{"cmd_afmt"},
      cmd_wfmt{"cmd_wfmt"}, cmd_ofmt{"cmd_ofmt"}, cmd_mbits{"cmd_mbits"}, cmd_blog{"cmd_blog"},
      cmd_group{"cmd_group"}, cmd_nvec{"cmd_nvec"}, cmd_len{"cmd_len"}, cmd_rows{"cmd_rows"}, cmd_vp{"cmd_vp"},
      cmd_nsc{"cmd_nsc"}, cmd_sstride{"cmd_sstride"}, w_valid{"w_valid"}, w_ready{"w_ready"}, r_valid{"r_valid"},
      r_ready{"r_ready"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> a_data{"a_data"};
  sc_core::sc_signal<sc_dt::sc_bv<kCores * kLanes * 32>> w_data{"w_data"};
  sc_core::sc_signal<sc_dt::sc_bv<kCores * 32>> w_scale{"w_scale"}, w_tag{"w_tag"}, w_vlo{"w_vlo"}, r_data{"r_data"},
      r_tag{"r_tag"}, r_vi{"r_vi"};
  sc_core::sc_signal<sc_dt::sc_bv<kCores * kSlots * 32>> w_gsc{"w_gsc"};
};

GemvRtl::GemvRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path)
    : sc_module(n), hw_(hw), formats_(hw.numerics.formats), clock_(sc_core::sc_time(1e6 / hw.clocks.core_mhz.value, sc_core::SC_PS)), wave_(vcd_path) {
  require(hw.compute.gemv_cores.value == kCores && hw.compute.gemv_macs_per_clk.value == kLanes,
          "the RTL GEMV engine was built for gemv_cores " + std::to_string(kCores) + ", gemv_macs_per_clk " +
              std::to_string(kLanes) + "; hardware '" + hw.name + "' has " +
              std::to_string(hw.compute.gemv_cores.value) + " and " + std::to_string(hw.compute.gemv_macs_per_clk.value) +
              " (rebuild with cmake -DN3_RTL_HW=<its file>)");
  p_ = std::make_unique<Ports>();
  dut_ = std::make_unique<Vn3_gemv_engine>("engine");
  Vn3_gemv_engine& d = *dut_;
  Ports& p = *p_;
  d.clk(clock_.clk());
  d.rst_n(p.rst_n);
  d.cmd_valid(p.cmd_valid);
  d.cmd_ready(p.cmd_ready);
  d.cmd_wkind(p.cmd_wkind);
  d.cmd_smode(p.cmd_smode);
  d.cmd_ascale(p.cmd_ascale);
  d.cmd_afmt(p.cmd_afmt);
  d.cmd_wfmt(p.cmd_wfmt);
  d.cmd_ofmt(p.cmd_ofmt);
  d.cmd_mbits(p.cmd_mbits);
  d.cmd_blog(p.cmd_blog);
  d.cmd_group(p.cmd_group);
  d.cmd_nvec(p.cmd_nvec);
  d.cmd_len(p.cmd_len);
  d.cmd_rows(p.cmd_rows);
  d.cmd_vp(p.cmd_vp);
  d.cmd_nsc(p.cmd_nsc);
  d.cmd_sstride(p.cmd_sstride);
  d.a_valid(p.a_valid);
  d.a_ready(p.a_ready);
  d.a_data(p.a_data);
  d.w_valid(p.w_valid);
  d.w_ready(p.w_ready);
  d.w_data(p.w_data);
  d.w_scale(p.w_scale);
  d.w_tag(p.w_tag);
  d.w_vlo(p.w_vlo);
  d.w_gsc(p.w_gsc);
  d.r_valid(p.r_valid);
  d.r_ready(p.r_ready);
  d.r_data(p.r_data);
  d.r_tag(p.r_tag);
  d.r_vi(p.r_vi);
  d.busy(p.busy);
  SC_THREAD(fetcher);
  // Low for three clocks, released for one; counted on fall() as drive() counts (see GatedClock::clock()).
  clock_.start(p.rst_n, {3, true, GatedClock::Edge::kFall}, total_cycles_);
}

GemvRtl::~GemvRtl() = default;

void GemvRtl::start_of_simulation() {
  wave_.open([this](VerilatedFstC* v) { dut_->trace(v, 99); });
}

void GemvRtl::end_of_simulation() { wave_.flush(); }

void GemvRtl::set_stalls(double act, double weight, double result, uint64_t seed) {
  stall_act_ = act;
  stall_w_ = weight;
  stall_r_ = result;
  stall_rng_.seed(seed);
}

void GemvRtl::fetcher() {
  for (;;) {
    sc_core::wait(fetch_go_);
    Job& j = *job_;
    int64_t have = 0;
    for (int64_t u = 0; u < j.rows; ++u) {
      const int64_t e = j.w_end(u);
      if (e <= have) continue;
      feed_->wait_rows(e);
      have = landed_ = e;
    }
  }
}

namespace {

// The shapes exec_gemv accepts (sim/exec_gemv.cc); the functional core traps
// on anything else, the driver refuses it in one line.
void check(bool ok, const std::string& what) { require(ok, "gemv (RTL engine): " + what); }

}  // namespace

// The engine's cycles for a job with every stream ready (docs/rtl.md, "GEMV
// engine", cycle formula), from the command beat (clock 0) to the last result
// beat, following the pipeline clock by clock:
//   activations: the blocker moves min(beat left, block left) elements a clock;
//   first row: its beats, during the activations (BFP rows: after them, and
//   through the core's blocker, one clock more);
//   MAC: n = ceil(rows / CORES) * vp passes of c clocks on the busiest core,
//   the finish stage taking 1 clock (integer sums) or 6 (lane tree).
int64_t GemvRtl::formula_cycles(const Job& j, int B) {
  auto pieces = [B](int64_t len, int64_t per_beat) {  // blocker clocks for one vector / row
    int64_t n = 0;
    for (int64_t at = 0; at < len; at += per_beat) {
      const int64_t cnt = std::min(per_beat, len - at);
      n += B >= per_beat ? 1 : (cnt + B - 1) / B;
    }
    return n;
  };
  const bool fl = j.wkind == WK_FLOAT, bfp = j.wkind == WK_BFP, tree = fl || (j.wkind == WK_INT4 && j.smode == SM_GROUP);
  const int64_t epb = 256 / j.abits, R = (j.len + kLanes - 1) / kLanes;
  const int64_t e_run = fl ? j.nvec * ((j.len + epb - 1) / epb) + 1 : (j.nsc + 7) / 8 + j.nvec * pieces(j.len, epb) + 2;
  // The MAC starts once the activations are in and the first row has landed;
  // integer and float rows load while the activations do.
  const int64_t start = bfp ? e_run + pieces(j.len, kLanes) + 2 : std::max(e_run, R) + 1;
  int64_t c = 0;  // MAC clocks of one pass
  if (fl) c = R;
  else
    for (int64_t at = 0; at < j.len; at += B) c += (std::min<int64_t>(B, j.len - at) + kLanes - 1) / kLanes;
  const int64_t n = (j.rows + kCores - 1) / kCores * j.vp;
  const int64_t mac = tree ? c + (n - 1) * std::max<int64_t>(c, 6) + 6 : n * c + 1;
  return start + mac;
}

GemvRun GemvRtl::run(const sim::Issued& in, const sim::Memory& mem, WeightFeed& feed) {
  const num::Formats& F = formats_;
  const auto mode = static_cast<isa::GemvMode>(isa::field_raw(in.word, in.def->fields[in.def->subop_field]));
  const sim::View &y = in.op("dst"), &x = in.op("src"), &w = in.op("w");
  Job j;
  const int B = F.bfp_block;
  j.blog = static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(B)));
  check(x.is_float() && y.is_float(), "src and dst must be float views");
  j.afmt = static_cast<uint32_t>(x.fmt());
  j.ofmt = static_cast<uint32_t>(y.fmt());
  j.abits = elem_bits(x.d.dtype);
  j.wbits = elem_bits(w.d.dtype);
  j.act_row = [&mem, &x](int64_t v, std::vector<uint8_t>& b) {
    b.resize(static_cast<size_t>(x.row_bytes()));
    sim::read_row_bytes(mem, x, v, b.data());
  };
  if (mode == isa::GemvMode::MV) {
    const int64_t T = x.rows, K = x.cols, N = w.rows;
    check(w.cols == K && y.rows == T && y.cols == N,
          "src " + shape(x) + ", w " + shape(w) + ", dst " + shape(y) + ": need src [T, K], w [N, K], dst [T, N]");
    const bool quant = w.d.dtype == Dtype::INT4 || w.d.dtype == Dtype::INT8;
    check(quant || w.is_float(), "w must be INT4, INT8 or a float view");
    if (w.d.dtype == Dtype::INT4) {
      j.wkind = WK_INT4;
      j.smode = w.d.scale_mode == ScaleMode::GROUP ? SM_GROUP : w.d.scale_mode == ScaleMode::TWO_LEVEL ? SM_TWO : SM_ROW;
      if (j.smode != SM_ROW) {
        check(w.d.group % B == 0, "w: scale group " + std::to_string(w.d.group) + " is not a multiple of numerics.bfp_block " +
                                      std::to_string(B));
        j.group = w.d.group;
      }
    } else if (w.d.dtype == Dtype::INT8) {
      check(w.d.scale_mode == ScaleMode::ROW, "w: INT8 weights take ROW scales");
      j.wkind = WK_INT8;
    } else {
      check(32 % kLanes == 0, "float weights need gemv_macs_per_clk dividing 32 (the lane tree), not " + std::to_string(kLanes));
      j.wkind = WK_FLOAT;
      j.wfmt = static_cast<uint32_t>(w.fmt());
    }
    j.mbits = static_cast<uint32_t>(F.act_mant_bits);
    j.nvec = T;
    j.len = K;
    j.rows = N;
    j.vp = T;
    const int64_t ng = j.group ? (K + j.group - 1) / j.group : 0;
    const uint32_t sm = j.smode, wk = j.wkind;
    j.w_row = [&mem, &w, sm, wk, ng](int64_t u, RowData& r) {
      r.bytes.resize(static_cast<size_t>(w.row_bytes()));
      sim::read_row_bytes(mem, w, u, r.bytes.data());
      r.vlo = 0;
      r.scale = kOneF32;
      r.gsc.clear();
      if (wk == WK_FLOAT) return;
      std::vector<uint8_t> rec(static_cast<size_t>(w.scale_bytes()));
      sim::read_scale_record(mem, w, u, rec.data());
      if (sm != SM_GROUP) r.scale = f2bits(sim::record_f32(rec.data(), 0));
      for (int64_t g = 0; g < ng; ++g)
        r.gsc.push_back(sm == SM_GROUP ? f2bits(sim::record_f32(rec.data(), g)) : rec[static_cast<size_t>(4 + g)]);
    };
    j.dst = [N](int64_t u, int64_t vi) { return vi * N + u; };
    j.w_end = [](int64_t u) { return u + 1; };
    j.w_done = [](int64_t u) { return u; };
    j.w_total = N;
  } else {
    // qk: S[h, j] = q_h . k_j[g(h)]; pv: ctx[h, c] = sum_j p[h, j] v_j[g(h), c] (grouped-query layout).
    const bool qk = mode == isa::GemvMode::QK;
    const int64_t H = x.rows, d = qk ? x.cols : y.cols;
    check(d > 0 && w.cols % d == 0, "w " + shape(w) + ": row width is not a multiple of the head size " + std::to_string(d));
    const int64_t G = w.cols / d, n = w.rows;
    check(H % G == 0, std::to_string(H) + " query heads do not group over " + std::to_string(G) + " KV heads");
    const bool i8 = w.d.dtype == Dtype::INT8;
    check(i8 || w.is_float(), "w (KV) must be INT8 or a float view");
    check(!i8 || (w.d.scale_mode == ScaleMode::GROUP && w.d.group == d) || (w.d.scale_mode == ScaleMode::ROW && G == 1),
          "w: an INT8 KV cache needs one scale per token and KV head");
    if (qk)
      check(y.rows == H && y.cols == n, "dst " + shape(y) + ": need [" + std::to_string(H) + ", " + std::to_string(n) + "]");
    else
      check(y.rows == H && x.cols == n, "src " + shape(x) + ", w " + shape(w) + ", dst " + shape(y) +
                                            ": need src [H, n], w [n, G*d], dst [H, d]");
    const int64_t per = H / G;
    j.mbits = static_cast<uint32_t>(F.attn_mant_bits);
    j.nvec = H;
    j.vp = per;
    j.wkind = i8 ? WK_INT8 : WK_BFP;
    if (!i8) j.wfmt = static_cast<uint32_t>(w.fmt());
    j.w_total = n;
    const bool rowscale = w.d.scale_mode == ScaleMode::ROW;
    if (qk) {
      j.len = d;
      j.rows = n * G;
      const int64_t eb = j.wbits / 8;
      j.w_row = [&mem, &w, G, d, per, eb, i8, rowscale](int64_t u, RowData& r) {
        const int64_t t = u / G, kh = u % G;
        std::vector<uint8_t> row(static_cast<size_t>(w.row_bytes()));
        sim::read_row_bytes(mem, w, t, row.data());
        r.bytes.assign(row.begin() + kh * d * eb, row.begin() + (kh + 1) * d * eb);
        r.vlo = static_cast<uint32_t>(kh * per);
        r.scale = kOneF32;
        r.gsc.clear();
        if (i8) {
          std::vector<uint8_t> rec(static_cast<size_t>(w.scale_bytes()));
          sim::read_scale_record(mem, w, t, rec.data());
          r.scale = f2bits(sim::record_f32(rec.data(), rowscale ? 0 : kh));
        }
      };
      j.dst = [G, n, per](int64_t u, int64_t vi) { return ((u % G) * per + vi) * n + u / G; };
      j.w_end = [G](int64_t u) { return u / G + 1; };
      j.w_done = [G](int64_t u) { return u / G; };
    } else {
      j.len = n;
      j.rows = G * d;
      // V^T is the weight of this product: the whole window is read once and
      // dealt out by columns (the engine takes rows of the transposed matrix).
      auto cols = std::make_shared<std::vector<uint8_t>>();
      const int64_t eb = j.wbits / 8, W = w.cols;
      cols->resize(static_cast<size_t>(n * W * eb));
      std::vector<uint8_t> rec(static_cast<size_t>(w.scale_bytes()));
      for (int64_t t = 0; t < n; ++t) {
        std::vector<uint8_t> row(static_cast<size_t>(w.row_bytes()));
        sim::read_row_bytes(mem, w, t, row.data());
        for (int64_t c = 0; c < W; ++c)
          std::memcpy(cols->data() + (c * n + t) * eb, row.data() + c * eb, static_cast<size_t>(eb));
        if (i8) {
          sim::read_scale_record(mem, w, t, rec.data());
          if (j.scales.empty()) j.scales.resize(static_cast<size_t>(G * n));
          for (int64_t kh = 0; kh < G; ++kh)
            j.scales[static_cast<size_t>(kh * n + t)] = f2bits(sim::record_f32(rec.data(), rowscale ? 0 : kh));
        }
      }
      if (i8) {
        j.ascale = 1;
        j.nsc = G * n;
        j.sstride = n;
      }
      j.w_row = [cols, n, d, per, eb](int64_t u, RowData& r) {
        r.bytes.assign(cols->begin() + u * n * eb, cols->begin() + (u + 1) * n * eb);
        r.vlo = static_cast<uint32_t>((u / d) * per);
        r.scale = kOneF32;
        r.gsc.clear();
      };
      j.dst = [d, per](int64_t u, int64_t vi) { return ((u / d) * per + vi) * d + u % d; };
      j.w_end = [n](int64_t) { return n; };
      const int64_t U = j.rows;
      j.w_done = [n, U](int64_t u) { return u == U ? n : 0; };
    }
  }
  j.outputs = j.rows * j.vp;
  // The engine's buffers (n3_gemv_engine parameters).
  const int64_t lpad = (j.len + B - 1) / B * B;
  check(j.len <= GemvLimits::kRowLen, "dot products of " + std::to_string(j.len) + " elements exceed the engine's row buffer of " +
                                          std::to_string(GemvLimits::kRowLen));
  check(j.nvec <= GemvLimits::kVectors, std::to_string(j.nvec) + " activation vectors exceed the engine's " +
                                            std::to_string(GemvLimits::kVectors));
  check(j.nvec * lpad <= GemvLimits::kActElems, std::to_string(j.nvec) + " x " + std::to_string(lpad) +
                                                    " activation elements exceed the engine's buffer of " +
                                                    std::to_string(GemvLimits::kActElems));
  check(j.wkind != WK_BFP || j.vp <= GemvLimits::kBfpVectors,
        std::to_string(j.vp) + " query heads per KV head exceed the engine's " + std::to_string(GemvLimits::kBfpVectors));
  check(j.nsc <= GemvLimits::kScales, std::to_string(j.nsc) + " INT8 value scales exceed the engine's " +
                                          std::to_string(GemvLimits::kScales));
  check(j.rows < (int64_t(1) << 32), "too many weight rows");
  const GatedClock::Run clocked = clock_.run();  // the clock stops when the job ends, also on an exception
  GemvRun r = drive(j, feed);
  r.formula_cycles = formula_cycles(j, B);
  return r;
}

GemvRun GemvRtl::drive(Job& j, WeightFeed& feed) {
  Ports& p = *p_;
  auto negedge = [this] {
    sc_core::wait(clock_.fall());
    ++total_cycles_;
  };
  while (!p.cmd_ready.read()) negedge();
  p.cmd_wkind = j.wkind;
  p.cmd_smode = j.smode;
  p.cmd_ascale = j.ascale != 0;
  p.cmd_afmt = j.afmt;
  p.cmd_wfmt = j.wfmt;
  p.cmd_ofmt = j.ofmt;
  p.cmd_mbits = j.mbits;
  p.cmd_blog = j.blog;
  p.cmd_group = static_cast<uint32_t>(j.group);
  p.cmd_nvec = static_cast<uint32_t>(j.nvec);
  p.cmd_len = static_cast<uint32_t>(j.len);
  p.cmd_rows = static_cast<uint32_t>(j.rows);
  p.cmd_vp = static_cast<uint32_t>(j.vp);
  p.cmd_nsc = static_cast<uint32_t>(j.nsc);
  p.cmd_sstride = static_cast<uint32_t>(j.sstride);
  bool cmd_valid = true, cmd_fire = false;
  p.cmd_valid = true;

  // The weight rows' landing runs ahead in the fetcher thread.
  landed_ = 0;
  job_ = &j;
  feed_ = &feed;
  fetch_go_.notify(sc_core::SC_ZERO_TIME);

  GemvRun run;
  run.out.assign(static_cast<size_t>(j.outputs), 0.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto stall = [&](double prob) { return prob > 0 && coin(stall_rng_) < prob; };

  // Activation stream: scale beats (8 words), then per vector ceil(len / epb) beats of 32 bytes.
  const int64_t epb = 256 / j.abits;
  const int64_t sbeats = (j.nsc + 7) / 8, vbeats = (j.len + epb - 1) / epb, a_total = sbeats + j.nvec * vbeats;
  int64_t a_idx = 0, a_vec = -1;
  bool a_valid = false, a_fire = false;
  std::vector<uint8_t> a_bytes;
  sc_dt::sc_bv<256> abv;

  // Weight streams: core c takes rows c, c + C, ...; ceil(len / LANES) beats a row.
  const int64_t wbeats = (j.len + kLanes - 1) / kLanes, beat_bytes = kLanes * j.wbits / 8;
  struct CoreFeed {
    int64_t u = 0, k = 0;  // row, beat
    bool loaded = false, valid = false, fire = false, rready = false;
    RowData row;
    std::vector<std::vector<uint32_t>> slots;  // per beat: the group scales riding on it
  };
  std::vector<CoreFeed> cf(kCores);
  for (int c = 0; c < kCores; ++c) cf[static_cast<size_t>(c)].u = c;
  std::vector<uint32_t> wwords(static_cast<size_t>(kCores * kLanes)), gwords(static_cast<size_t>(kCores * kSlots));
  std::vector<uint32_t> sc_scale(kCores), sc_tag(kCores), sc_vlo(kCores);
  sc_dt::sc_bv<kCores * kLanes * 32> wbv;
  sc_dt::sc_bv<kCores * kSlots * 32> gbv;
  sc_dt::sc_bv<kCores * 32> sbv, tbv, vbv;

  std::vector<uint8_t> streamed(static_cast<size_t>(j.rows), 0);
  int64_t rows_in = 0, consumed = 0, got = 0, m_cmd = -1, m_last = -1;

  for (int64_t m = 0;; ++m) {
    negedge();
    // The transfers decided at the last negedge happened at the rising edge since.
    if (cmd_fire) {
      cmd_valid = cmd_fire = false;
      p.cmd_valid = false;
    }
    if (a_fire) {
      ++a_idx;
      a_valid = a_fire = false;
    }
    bool wdirty = false;
    for (int c = 0; c < kCores; ++c) {
      CoreFeed& f = cf[static_cast<size_t>(c)];
      if (!f.fire) continue;
      f.fire = f.valid = false;
      if (++f.k == wbeats) {
        streamed[static_cast<size_t>(f.u)] = 1;
        f.k = 0;
        f.u += kCores;
        f.loaded = false;
      }
    }
    // A row the engine has taken whole lives in a core's row buffer: its w
    // rows' space in the weight buffers may go (pv: all of V, at the end).
    while (rows_in < j.rows && streamed[static_cast<size_t>(rows_in)]) ++rows_in;
    if (j.w_done(rows_in) > consumed) feed.consumed_rows(consumed = j.w_done(rows_in));
    if (got == j.outputs) break;

    // Activations: a beat once it may go (the scales are the w operand's: they wait for it).
    if (!a_valid && a_idx < a_total && (a_idx >= sbeats || landed_ >= j.w_total) && !stall(stall_act_)) {
      if (a_idx < sbeats) {
        for (int i = 0; i < 8; ++i) {
          const int64_t s = a_idx * 8 + i;
          abv.set_word(i, s < j.nsc ? j.scales[static_cast<size_t>(s)] : 0u);
        }
      } else {
        const int64_t v = (a_idx - sbeats) / vbeats, b = (a_idx - sbeats) % vbeats;
        if (v != a_vec) {
          j.act_row(v, a_bytes);
          a_vec = v;
        }
        for (int i = 0; i < 8; ++i) {
          uint32_t wd = 0;
          const int64_t off = b * 32 + i * 4;
          for (int q = 0; q < 4; ++q)
            if (off + q < static_cast<int64_t>(a_bytes.size())) wd |= uint32_t(a_bytes[static_cast<size_t>(off + q)]) << (8 * q);
          abv.set_word(i, wd);
        }
      }
      p.a_data = abv;
      a_valid = true;
    }
    p.a_valid = a_valid;

    // Weights.
    const uint32_t wready = p.w_ready.read();
    bool waiting = false;
    for (int c = 0; c < kCores; ++c) {
      CoreFeed& f = cf[static_cast<size_t>(c)];
      if (f.valid || f.u >= j.rows) continue;
      if (landed_ < j.w_end(f.u)) {
        waiting |= ((wready >> c) & 1) != 0;
        continue;
      }
      if (stall(stall_w_)) continue;
      if (!f.loaded) {
        j.w_row(f.u, f.row);
        f.slots.assign(static_cast<size_t>(wbeats), std::vector<uint32_t>(kSlots, 0u));
        for (size_t g = 0; g < f.row.gsc.size(); ++g) {
          const int64_t e = static_cast<int64_t>(g) * j.group;
          f.slots[static_cast<size_t>(e / kLanes)][static_cast<size_t>((e % kLanes) / 8)] = f.row.gsc[g];
        }
        f.loaded = true;
        sc_scale[c] = f.row.scale;
        sc_tag[c] = static_cast<uint32_t>(f.u);
        sc_vlo[c] = f.row.vlo;
      }
      for (int i = 0; i < kLanes; ++i) {
        uint32_t wd = 0;
        const int64_t off = f.k * beat_bytes + i * 4;
        for (int q = 0; q < 4; ++q)
          if (i * 4 + q < beat_bytes && off + q < static_cast<int64_t>(f.row.bytes.size()))
            wd |= uint32_t(f.row.bytes[static_cast<size_t>(off + q)]) << (8 * q);
        wwords[static_cast<size_t>(c * kLanes + i)] = wd;
      }
      for (int s = 0; s < kSlots; ++s)
        gwords[static_cast<size_t>(c * kSlots + s)] = f.slots[static_cast<size_t>(f.k)][static_cast<size_t>(s)];
      f.valid = true;
      wdirty = true;
    }
    if (waiting) ++run.weight_stall_cycles;
    if (wdirty) {
      for (int i = 0; i < kCores * kLanes; ++i) wbv.set_word(i, wwords[static_cast<size_t>(i)]);
      for (int i = 0; i < kCores * kSlots; ++i) gbv.set_word(i, gwords[static_cast<size_t>(i)]);
      for (int c = 0; c < kCores; ++c) {
        sbv.set_word(c, sc_scale[static_cast<size_t>(c)]);
        tbv.set_word(c, sc_tag[static_cast<size_t>(c)]);
        vbv.set_word(c, sc_vlo[static_cast<size_t>(c)]);
      }
      p.w_data = wbv;
      p.w_gsc = gbv;
      p.w_scale = sbv;
      p.w_tag = tbv;
      p.w_vlo = vbv;
    }
    uint32_t wv = 0, rr = 0;
    for (int c = 0; c < kCores; ++c) {
      CoreFeed& f = cf[static_cast<size_t>(c)];
      wv |= uint32_t(f.valid) << c;
      f.rready = !stall(stall_r_);
      rr |= uint32_t(f.rready) << c;
    }
    p.w_valid = wv;
    p.r_ready = rr;

    // Decide the transfers of the coming rising edge (every ready and valid
    // of the engine comes from a register, so reading them now is exact).
    if (cmd_valid && p.cmd_ready.read()) {
      cmd_fire = true;
      m_cmd = m;
    }
    a_fire = a_valid && p.a_ready.read();
    for (int c = 0; c < kCores; ++c) cf[static_cast<size_t>(c)].fire = cf[static_cast<size_t>(c)].valid && ((wready >> c) & 1);
    const uint32_t rv = p.r_valid.read();
    if (rv & rr) {
      const sc_dt::sc_bv<kCores * 32> rd = p.r_data.read(), rt = p.r_tag.read(), ri = p.r_vi.read();
      for (int c = 0; c < kCores; ++c) {
        if (!((rv & rr) >> c & 1)) continue;
        const int64_t u = static_cast<int64_t>(rt.get_word(c)), vi = static_cast<int64_t>(ri.get_word(c));
        require(u < j.rows && vi < j.vp, "gemv (RTL engine): a result tagged row " + std::to_string(u) + ", vector " +
                                             std::to_string(vi) + " that the job does not have");
        run.out[static_cast<size_t>(j.dst(u, vi))] = bits2f(rd.get_word(c));
        ++got;
        m_last = m;
      }
    }
  }
  p.a_valid = false;
  p.w_valid = 0;
  run.cycles = m_last - m_cmd;
  return run;
}

}  // namespace n3::rtl
