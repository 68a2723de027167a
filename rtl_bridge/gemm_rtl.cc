#include "rtl_bridge/gemm_rtl.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_gemm_engine.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include "base/error.h"
#include "isa/verify.h"
#include "sim/systemc/timing.h"

namespace n3::rtl {

using isa::Dtype;
using isa::ScaleMode;

namespace {

constexpr int kRows = N3_RTL_GEMM_ROWS;
constexpr int kCols = N3_RTL_GEMM_COLS;
constexpr int kMpe = N3_RTL_GEMM_MPE;
constexpr int kKt = kRows * kMpe;  // K elements per weight tile

// Verilator's SystemC port type of a W-bit port.
template <int W>
using Port = std::conditional_t<W == 1, bool,
                                std::conditional_t<W <= 32, uint32_t, std::conditional_t<W <= 64, uint64_t, sc_dt::sc_bv<W>>>>;

// 32-bit words (word 0 lowest) into / out of a port value.
template <int W>
Port<W> pack(const std::vector<uint32_t>& w) {
  if constexpr (W <= 64) {
    uint64_t v = w.empty() ? 0 : w[0];
    if (W > 32 && w.size() > 1) v |= uint64_t(w[1]) << 32;
    return static_cast<Port<W>>(v);
  } else {
    sc_dt::sc_bv<W> b;
    for (int i = 0; i < W / 32; ++i) b.set_word(i, i < int(w.size()) ? w[static_cast<size_t>(i)] : 0u);
    return b;
  }
}
template <int W>
uint32_t word(const Port<W>& v, int i) {
  if constexpr (W <= 64) return static_cast<uint32_t>(uint64_t(v) >> (32 * i));
  else return v.get_word(i);
}

float bits2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t f2bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
std::string shape(const sim::View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }
void check(bool ok, const std::string& what) { require(ok, "gemm (RTL engine): " + what); }

}  // namespace

GemmArray gemm_rtl_array() { return {kRows, kCols, kMpe}; }

struct GemmRtl::Ports {
  sc_core::sc_signal<bool> rst_n{"rst_n"}, cmd_valid{"cmd_valid"}, cmd_ready{"cmd_ready"}, cmd_int8{"cmd_int8"},
      cmd_two{"cmd_two"}, a_valid{"a_valid"}, a_ready{"a_ready"}, w_valid{"w_valid"}, w_ready{"w_ready"},
      r_valid{"r_valid"}, r_ready{"r_ready"}, busy{"busy"};
  sc_core::sc_signal<uint32_t> cmd_afmt{"cmd_afmt"}, cmd_ofmt{"cmd_ofmt"}, cmd_mbits{"cmd_mbits"}, cmd_blog{"cmd_blog"},
      cmd_ntok{"cmd_ntok"}, cmd_len{"cmd_len"}, cmd_ntiles{"cmd_ntiles"}, r_tok{"r_tok"}, r_tile{"r_tile"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> a_data{"a_data"};
  sc_core::sc_signal<Port<kCols * kMpe * 8>> w_data{"w_data"};
  sc_core::sc_signal<Port<kCols * 32>> w_scale{"w_scale"}, r_data{"r_data"};
  sc_core::sc_signal<Port<kCols * 8>> w_bsc{"w_bsc"};
};

GemmRtl::GemmRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path)
    : sc_module(n), formats_(hw.numerics.formats),
      clock_(sc_core::sc_time(1e6 / hw.clocks.core_mhz.value, sc_core::SC_PS)), wave_(vcd_path) {
  require(hw.timing.gemm_macs_per_pe.value == kMpe,
          "the RTL GEMM engine was built for gemm_macs_per_pe " + std::to_string(kMpe) + "; hardware '" + hw.name +
              "' has " + std::to_string(hw.timing.gemm_macs_per_pe.value) + " (rebuild with cmake -DN3_RTL_HW=<its file>)");
  p_ = std::make_unique<Ports>();
  dut_ = std::make_unique<Vn3_gemm_engine>("engine");
  Vn3_gemm_engine& d = *dut_;
  Ports& p = *p_;
  d.clk(clock_.clk());
  d.rst_n(p.rst_n);
  d.cmd_valid(p.cmd_valid);
  d.cmd_ready(p.cmd_ready);
  d.cmd_int8(p.cmd_int8);
  d.cmd_two(p.cmd_two);
  d.cmd_afmt(p.cmd_afmt);
  d.cmd_ofmt(p.cmd_ofmt);
  d.cmd_mbits(p.cmd_mbits);
  d.cmd_blog(p.cmd_blog);
  d.cmd_ntok(p.cmd_ntok);
  d.cmd_len(p.cmd_len);
  d.cmd_ntiles(p.cmd_ntiles);
  d.a_valid(p.a_valid);
  d.a_ready(p.a_ready);
  d.a_data(p.a_data);
  d.w_valid(p.w_valid);
  d.w_ready(p.w_ready);
  d.w_data(p.w_data);
  d.w_scale(p.w_scale);
  d.w_bsc(p.w_bsc);
  d.r_valid(p.r_valid);
  d.r_ready(p.r_ready);
  d.r_data(p.r_data);
  d.r_tok(p.r_tok);
  d.r_tile(p.r_tile);
  d.busy(p.busy);
  clock_.start(p.rst_n, {3, true, GatedClock::Edge::kFall}, total_cycles_);
  SC_THREAD(fetcher);
}

void GemmRtl::fetcher() {
  for (;;) {
    sc_core::wait(fetch_go_);
    for (int64_t end = 0; end < fetch_rows_;) {
      end = std::min(fetch_rows_, end + fetch_tile_rows_);
      feed_->wait_rows(end);
      landed_ = end;
    }
  }
}

GemmRtl::~GemmRtl() = default;

void GemmRtl::start_of_simulation() {
  wave_.open([this](VerilatedFstC* v) { dut_->trace(v, 99); });
}
void GemmRtl::end_of_simulation() { wave_.flush(); }

void GemmRtl::set_stalls(double act, double weight, double result, uint64_t seed) {
  stall_a_ = act;
  stall_w_ = weight;
  stall_r_ = result;
  rng_.seed(seed);
}

// With every stream ready (docs/rtl_gemm.md, "Cycles"), clock by clock
// from the command beat (clock 0): the activation rows through the blocker,
// one clock a beat (B < 16 elements a beat: a beat costs ceil(n / B)
// clocks: act_cycles), and three clocks more (the command beat, the
// quantiser's last block, the state change: gemm_setup_cycles) before the
// array's first token;
// tile i's ROWS weight beats go into a bank once the tile two before has
// left it (the first two load while the activations stream), and tile i
// enters the array when it has loaded and tile i - 1 has passed its T
// tokens; the last token leaves the array ROWS + COLS - 1 clocks after it
// entered, and its result beat follows.
bool GemmRtl::takes_weights(const sim::View& w) {
  const bool i8 = w.d.dtype == Dtype::INT8;
  return (w.d.dtype == Dtype::INT4 || i8) &&
         (w.d.scale_mode == ScaleMode::ROW || (!i8 && w.d.scale_mode == ScaleMode::TWO_LEVEL));
}

int64_t GemmRtl::act_cycles(int64_t T, int64_t K, int abits, int B) {
  return T * timing::blocker_clocks(K, 256 / abits, B);
}

// The model's formula (timing::gemm_array_clocks) at the Verilated shape:
// the cosim holds the RTL to it on every stall-free vector, so the model
// and the RTL cannot drift apart.
int64_t GemmRtl::formula_cycles(int64_t T, int64_t K, int64_t N, int abits, int B) {
  const int64_t run_start = act_cycles(T, K, abits, B) + 3;
  const int64_t tiles = (N + kCols - 1) / kCols * ((K + kKt - 1) / kKt);
  return run_start + timing::gemm_array_clocks(T, tiles, kRows, run_start) + kRows + kCols;
}

GemmRun GemmRtl::run(const sim::Issued& in, const sim::Memory& mem, WeightFeed* feed) {
  const num::Formats& F = formats_;
  const sim::View &y = in.op("dst"), &x = in.op("src"), &w = in.op("w");
  const int B = F.bfp_block;
  const int64_t T = x.rows, K = x.cols, N = w.rows;
  check(x.is_float() && y.is_float(), "src and dst must be float views");
  check(w.cols == K && y.rows == T && y.cols == N,
        "src " + shape(x) + ", w " + shape(w) + ", dst " + shape(y) + ": need src [T, K], w [N, K], dst [T, N]");
  const bool i8 = w.d.dtype == Dtype::INT8;
  check(w.d.dtype == Dtype::INT4 || i8, "w must be INT4 or INT8 (float weights are not in this engine)");
  check(w.d.scale_mode == ScaleMode::ROW || (!i8 && w.d.scale_mode == ScaleMode::TWO_LEVEL),
        "w: ROW scales (INT4, INT8) or TWO_LEVEL (INT4) only (GROUP scales are not in this engine)");
  const bool two = w.d.scale_mode == ScaleMode::TWO_LEVEL;
  check(B >= 8 && B <= 64 && (B & (B - 1)) == 0 && B % kMpe == 0, "numerics.bfp_block " + std::to_string(B) +
                                                                       " must be a power of two in [8, 64] and a multiple of gemm_macs_per_pe");
  check(!two || (w.d.group > 0 && w.d.group % B == 0),
        "w: scale group " + std::to_string(w.d.group) + " is not a multiple of numerics.bfp_block " + std::to_string(B));
  check(T >= 1 && T <= GemmLimits::kTokens, std::to_string(T) + " tokens: the engine takes 1 to " +
                                                 std::to_string(GemmLimits::kTokens));
  const int64_t lpad = (K + B - 1) / B * B;
  check(K >= 1 && T * lpad <= GemmLimits::kActElems, std::to_string(T) + " x " + std::to_string(lpad) +
                                                         " activation elements exceed the engine's buffer of " +
                                                         std::to_string(GemmLimits::kActElems));
  check(N >= 1 && N < (int64_t(1) << 24), "N = " + std::to_string(N) + " weight rows");
  const int abits = x.d.dtype == Dtype::F32 ? 32 : 16;
  const int64_t ntiles = (N + kCols - 1) / kCols, nk = (K + kKt - 1) / kKt;

  // The weight matrix as the driver streams it: one signed byte per element,
  // the row scales, and (TWO_LEVEL) each row's block scales by group.
  std::vector<uint8_t> wq(static_cast<size_t>(N * K));
  std::vector<uint32_t> rscale(static_cast<size_t>(N));
  std::vector<std::vector<uint8_t>> bsc(static_cast<size_t>(N));
  {
    std::vector<uint8_t> row(static_cast<size_t>(w.row_bytes())), rec(static_cast<size_t>(w.scale_bytes()));
    for (int64_t n = 0; n < N; ++n) {
      sim::read_row_bytes(mem, w, n, row.data());
      for (int64_t k = 0; k < K; ++k)
        wq[static_cast<size_t>(n * K + k)] = i8 ? row[static_cast<size_t>(k)] : uint8_t(row[static_cast<size_t>(k / 2)] >> (4 * (k % 2)) & 0xf);
      sim::read_scale_record(mem, w, n, rec.data());
      rscale[static_cast<size_t>(n)] = f2bits(sim::record_f32(rec.data(), 0));
      if (two) bsc[static_cast<size_t>(n)].assign(rec.begin() + 4, rec.end());
    }
  }

  const GatedClock::Run clocked = clock_.run();
  Ports& p = *p_;
  auto negedge = [this] {
    sc_core::wait(clock_.fall());
    ++total_cycles_;
  };
  while (!p.cmd_ready.read()) negedge();
  p.cmd_int8 = i8;
  p.cmd_two = two;
  p.cmd_afmt = static_cast<uint32_t>(x.fmt());
  p.cmd_ofmt = static_cast<uint32_t>(y.fmt());
  p.cmd_mbits = static_cast<uint32_t>(F.act_mant_bits);
  p.cmd_blog = static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(B)));
  p.cmd_ntok = static_cast<uint32_t>(T);
  p.cmd_len = static_cast<uint32_t>(K);
  p.cmd_ntiles = static_cast<uint32_t>(ntiles);
  p.cmd_valid = true;
  bool cmd_valid = true, cmd_fire = false;

  // The weight rows' landing runs ahead in the fetcher thread.
  feed_ = feed;
  landed_ = feed ? 0 : N;
  fetch_rows_ = N;
  fetch_tile_rows_ = kCols;
  if (feed) fetch_go_.notify(sc_core::SC_ZERO_TIME);
  int64_t consumed = 0;

  GemmRun run;
  run.out.assign(static_cast<size_t>(T * N), 0.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto stall = [&](double prob) { return prob > 0 && coin(rng_) < prob; };

  const int64_t epb = 256 / abits, vbeats = (K + epb - 1) / epb, a_total = T * vbeats;
  const int64_t w_total = ntiles * nk * kRows;
  int64_t a_idx = 0, a_vec = -1, w_idx = 0, got = 0, m_cmd = -1, m_last = -1;
  bool a_valid = false, a_fire = false, w_valid = false, w_fire = false;
  std::vector<uint8_t> a_bytes(static_cast<size_t>(x.row_bytes()));
  std::vector<uint32_t> words;
  std::vector<uint8_t> seen(static_cast<size_t>(ntiles * T), 0);
  for (int64_t m = 0;; ++m) {
    negedge();
    if (cmd_fire) {
      cmd_valid = cmd_fire = false;
      p.cmd_valid = false;
    }
    if (a_fire) ++a_idx, a_valid = a_fire = false;
    if (w_fire) {
      w_valid = w_fire = false;
      // An N tile's last beat is in a PE bank: its w rows' buffer space may go.
      if (++w_idx % (nk * kRows) == 0 && feed) feed->consumed_rows(consumed = std::min(N, w_idx / (nk * kRows) * kCols));
    }
    if (got == ntiles * T) break;

    if (!a_valid && a_idx < a_total && !stall(stall_a_)) {
      const int64_t v = a_idx / vbeats, b = a_idx % vbeats;
      if (v != a_vec) sim::read_row_bytes(mem, x, a_vec = v, a_bytes.data());
      words.assign(8, 0u);
      for (int i = 0; i < 8; ++i)
        for (int q = 0; q < 4; ++q) {
          const int64_t off = b * 32 + i * 4 + q;
          if (off < static_cast<int64_t>(a_bytes.size())) words[static_cast<size_t>(i)] |= uint32_t(a_bytes[static_cast<size_t>(off)]) << (8 * q);
        }
      p.a_data = pack<256>(words);
      a_valid = true;
    }
    p.a_valid = a_valid;

    // The beat's N tile's rows must have landed (WeightFeed); a clock the
    // engine would take a beat that has not is the stream's stall.
    const bool w_landed = w_idx >= w_total || landed_ >= std::min(N, (w_idx / (nk * kRows) + 1) * kCols);
    if (!w_valid && w_idx < w_total && !w_landed && p.w_ready.read()) ++run.weight_stall_cycles;
    if (!w_valid && w_idx < w_total && w_landed && !stall(stall_w_)) {
      // Beat w_idx: tile (nt, kt), array row r.
      const int64_t tile = w_idx / kRows, r = w_idx % kRows, nt = tile / nk, kt = tile % nk;
      const int64_t k0 = kt * kKt + r * kMpe;
      words.assign(static_cast<size_t>(kCols * kMpe / 4 + 1), 0u);
      std::vector<uint32_t> sw(static_cast<size_t>(kCols), 0u), bw(static_cast<size_t>(kCols / 4 + 1), 0u);
      for (int c = 0; c < kCols; ++c) {
        const int64_t n = nt * kCols + c;
        if (n >= N) continue;
        for (int e = 0; e < kMpe; ++e) {
          const int64_t k = k0 + e, byte = c * kMpe + e;
          if (k < K) words[static_cast<size_t>(byte / 4)] |= uint32_t(wq[static_cast<size_t>(n * K + k)]) << (8 * (byte % 4));
        }
        sw[static_cast<size_t>(c)] = rscale[static_cast<size_t>(n)];
        if (two && k0 < K) bw[static_cast<size_t>(c / 4)] |= uint32_t(bsc[static_cast<size_t>(n)][static_cast<size_t>(k0 / w.d.group)]) << (8 * (c % 4));
      }
      p.w_data = pack<kCols * kMpe * 8>(words);
      p.w_scale = pack<kCols * 32>(sw);
      p.w_bsc = pack<kCols * 8>(bw);
      w_valid = true;
    }
    p.w_valid = w_valid;
    const bool rready = !stall(stall_r_);
    p.r_ready = rready;

    // The transfers of the coming rising edge (the engine's readies and
    // valids come from registers, so reading them at the falling edge is exact).
    if (cmd_valid && p.cmd_ready.read()) {
      cmd_fire = true;
      m_cmd = m;
    }
    a_fire = a_valid && p.a_ready.read();
    w_fire = w_valid && p.w_ready.read();
    if (rready && p.r_valid.read()) {
      const int64_t t = p.r_tok.read(), nt = p.r_tile.read();
      check(t < T && nt < ntiles && !seen[static_cast<size_t>(nt * T + t)],
            "a result beat tagged token " + std::to_string(t) + ", N tile " + std::to_string(nt) +
                " that the job does not have or had already");
      seen[static_cast<size_t>(nt * T + t)] = 1;
      const Port<kCols * 32> rd = p.r_data.read();
      for (int c = 0; c < kCols; ++c)
        if (nt * kCols + c < N) run.out[static_cast<size_t>(t * N + nt * kCols + c)] = bits2f(word<kCols * 32>(rd, c));
      ++got;
      m_last = m;
    }
  }
  p.a_valid = false;
  p.w_valid = false;
  if (feed && consumed < N) feed->consumed_rows(N);
  run.cycles = m_last - m_cmd;
  run.formula_cycles = formula_cycles(T, K, N, abits, B);
  run.act_cycles = act_cycles(T, K, abits, B);
  return run;
}

}  // namespace n3::rtl
