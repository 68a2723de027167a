#include "rtl_bridge/dma_rtl.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <type_traits>

// Verilator's SystemC headers are not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_dma_engine.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include "base/error.h"
#include "isa/verify.h"

namespace n3::rtl {

using isa::Dtype;
using isa::ScaleMode;

namespace {

constexpr int kBB = DmaRtl::kBusBytes;
constexpr uint64_t kSpaceShift = 40;
void check(bool ok, const std::string& why) {
  if (!ok) throw Error("dma (RTL engine): " + why);
}

// One side of the engine's command: the descriptor record as the ISA
// encodes it and the values of the registers it names, as the dispatcher
// resolved them into the view (a ring's row offset reduced mod its rows).
struct Side {
  sc_dt::sc_bv<256> rec;
  uint64_t roff = 0;
  uint32_t dyn = 0;
};
Side side(const sim::View& v, const char* who) {
  Side s;
  if (!v.present()) return s;
  uint64_t w[isa::kDescWords];
  isa::encode(v.d, w);
  for (int k = 0; k < isa::kDescWords; ++k) s.rec.range(64 * k + 63, 64 * k) = w[k];
  const std::string n = who;
  check(v.d.row_reg != 0 || v.row_off == 0, n + ": a row offset without a row register");
  check(v.row_off >= 0 && v.row_off < (int64_t(1) << 40) && (!v.d.ring || v.row_off < int64_t(v.d.rows)),
        n + ": row offset " + std::to_string(v.row_off) + " not resolved (a ring's is below its rows)");
  s.roff = static_cast<uint64_t>(v.row_off);
  const bool dyn_rows = v.d.dyn_reg != 0 && v.d.dyn_dim == isa::DynDim::ROWS;
  const bool dyn_cols = v.d.dyn_reg != 0 && v.d.dyn_dim == isa::DynDim::COLS;
  check((dyn_rows || v.rows == int64_t(v.d.rows)) && (dyn_cols || v.cols == int64_t(v.d.cols)),
        n + ": extents differ from the descriptor's without a run-time extent register");
  s.dyn = static_cast<uint32_t>(dyn_rows ? v.rows : dyn_cols ? v.cols : 0);
  return s;
}

}  // namespace

std::vector<DmaJob> DmaRtl::cut(const sim::Issued& in) { return timing::dma_jobs(in); }

struct DmaRtl::Ports {
  sc_core::sc_signal<bool> rst_n{"rst_n"}, cmd_valid{"cmd_valid"}, cmd_ready{"cmd_ready"}, cmd_memset{"cmd_memset"},
      done_valid{"done_valid"}, done_ready{"done_ready"}, done_err{"done_err"}, ar_valid{"ar_valid"},
      ar_ready{"ar_ready"}, r_valid{"r_valid"}, r_ready{"r_ready"}, r_last{"r_last"}, aw_valid{"aw_valid"},
      aw_ready{"aw_ready"}, w_valid{"w_valid"}, w_ready{"w_ready"}, w_last{"w_last"}, b_valid{"b_valid"},
      b_ready{"b_ready"}, busy{"busy"};
  sc_core::sc_signal<uint32_t> cmd_dst_dyn{"cmd_dst_dyn"}, cmd_src_dyn{"cmd_src_dyn"}, cmd_konst{"cmd_konst"},
      jobs{"jobs"}, ar_len{"ar_len"}, r_resp{"r_resp"}, aw_len{"aw_len"}, b_resp{"b_resp"};
  // Up to 64 strobes: Verilator gives a port of 33 to 64 bits as uint64_t.
  sc_core::sc_signal<std::conditional_t<(kBB > 32), uint64_t, uint32_t>> w_strb{"w_strb"};
  sc_core::sc_signal<uint64_t> cmd_dst_roff{"cmd_dst_roff"}, cmd_src_roff{"cmd_src_roff"}, ar_addr{"ar_addr"},
      aw_addr{"aw_addr"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> cmd_dst{"cmd_dst"}, cmd_src{"cmd_src"};
  sc_core::sc_signal<sc_dt::sc_bv<kBB * 8>> r_data{"r_data"}, w_data{"w_data"};
};

DmaRtl::DmaRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path)
    : sc_module(n), hw_(hw), clock_(sc_core::sc_time(1e6 / hw.clocks.core_mhz.value, sc_core::SC_PS)), wave_(vcd_path) {
  require(timing::dma_bus_bytes(hw) == kBB && hw.timing.ddr_burst_bytes.value == kBB * kBurst &&
              hw.timing.dma_lanes.value == kLanes,
          "the RTL DMA engine was built for a " + std::to_string(kBB) + "-byte bus (hp_port_bits x dma_hp_ports / 8), ddr_burst_bytes " +
              std::to_string(kBB * kBurst) + ", dma_lanes " + std::to_string(kLanes) + "; hardware '" + hw.name +
              "' has " + std::to_string(timing::dma_bus_bytes(hw)) + ", " +
              std::to_string(hw.timing.ddr_burst_bytes.value) + " and " + std::to_string(hw.timing.dma_lanes.value) +
              " (rebuild with cmake -DN3_RTL_HW=<its file>)");
  p_ = std::make_unique<Ports>();
  dut_ = std::make_unique<Vn3_dma_engine>("engine");
  Vn3_dma_engine& d = *dut_;
  Ports& p = *p_;
  d.clk(clock_.clk());
  d.rst_n(p.rst_n);
  d.cmd_valid(p.cmd_valid);
  d.cmd_ready(p.cmd_ready);
  d.cmd_memset(p.cmd_memset);
  d.cmd_dst(p.cmd_dst);
  d.cmd_src(p.cmd_src);
  d.cmd_dst_roff(p.cmd_dst_roff);
  d.cmd_src_roff(p.cmd_src_roff);
  d.cmd_dst_dyn(p.cmd_dst_dyn);
  d.cmd_src_dyn(p.cmd_src_dyn);
  d.cmd_konst(p.cmd_konst);
  d.done_valid(p.done_valid);
  d.done_ready(p.done_ready);
  d.done_err(p.done_err);
  d.jobs(p.jobs);
  d.ar_valid(p.ar_valid);
  d.ar_ready(p.ar_ready);
  d.ar_addr(p.ar_addr);
  d.ar_len(p.ar_len);
  d.r_valid(p.r_valid);
  d.r_ready(p.r_ready);
  d.r_data(p.r_data);
  d.r_resp(p.r_resp);
  d.r_last(p.r_last);
  d.aw_valid(p.aw_valid);
  d.aw_ready(p.aw_ready);
  d.aw_addr(p.aw_addr);
  d.aw_len(p.aw_len);
  d.w_valid(p.w_valid);
  d.w_ready(p.w_ready);
  d.w_data(p.w_data);
  d.w_strb(p.w_strb);
  d.w_last(p.w_last);
  d.b_valid(p.b_valid);
  d.b_ready(p.b_ready);
  d.b_resp(p.b_resp);
  d.busy(p.busy);
  // Low for three clocks, released for one (a MEMCPY arriving during the reset waits for it).
  clock_.start(p.rst_n, {3, true, GatedClock::Edge::kNegedge}, total_cycles_);
}

DmaRtl::~DmaRtl() = default;

void DmaRtl::start_of_simulation() {
  wave_.open([this](VerilatedFstC* v) { dut_->trace(v, 99); });
}

void DmaRtl::end_of_simulation() { wave_.flush(); }

void DmaRtl::set_stalls(double p, uint64_t seed) {
  stall_ = p;
  stall_rng_.seed(seed);
}

DmaRun DmaRtl::run(const sim::Issued& in, sim::Memory& mem, DmaMemTiming* timing) {
  // The model's cut: the legality checks the dispatcher traps on, the
  // memory model's stream sizes, and the job count the RTL walk must match.
  const std::vector<DmaJob> jobs = cut(in);
  const bool is_memset = in.def->opcode == isa::Opcode::MEMSET;
  const Side dst = side(in.op("dst"), "dst"), src = is_memset ? Side{} : side(in.op("src"), "src");
  const GatedClock::Run clocked = clock_.run();  // the clock stops when the run ends, also on an exception
  Ports& p = *p_;
  auto negedge = [this] {
    sc_core::wait(clock_.clk().negedge_event());
    ++total_cycles_;
  };
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto stall = [&] { return stall_ > 0 && coin(stall_rng_) < stall_; };
  auto space_of = [](uint64_t a) {
    const uint64_t s = a >> kSpaceShift;
    check(s <= uint64_t(isa::Space::WBUF), "an address in no memory space");
    return static_cast<isa::Space>(s);
  };
  const uint64_t low = (uint64_t(1) << kSpaceShift) - 1;

  // The memory model's state: bursts accepted, beats served / taken.
  struct Burst {
    uint64_t addr;
    int beats, done;
    double ready_ps;  // read: its data are there; write: its response may go (DmaMemTiming)
  };
  std::deque<Burst> rq, wq;
  std::deque<double> b_ready_ps;  // per completed write burst: when its response may go
  int b_pending = 0;
  // The coming rising edge: a beat served now is taken then.
  // Data the memory's answer puts within a picosecond of that edge (the
  // kernel's time resolution; the answers are sums of ps in double) count
  // as there, as the model's timing::on_clock rounds (sim/systemc/timing.h).
  auto edge_ps = [this] { return (sc_core::sc_time_stamp() + clock_.period() / 2).to_seconds() * 1e12 + 1.0; };
  bool r_valid = false, b_valid = false;
  bool cmd_fire = false, ar_fire = false, r_fire = false, aw_fire = false, w_fire = false, b_fire = false,
       done_fire = false;
  bool sent = false, done = false;
  int64_t m_first = -1, m_last = -1, m_active = 0;
  DmaRun run;
  // The streams' beats, for each burst's share of its stream.
  int64_t read_beats = 0, write_beats = 0, read_at = 0, write_at = 0;
  for (const DmaJob& j : jobs) {
    const timing::DmaBeats b = timing::dma_job_beats(hw_, j);
    read_beats += b.read;
    write_beats += b.write;
  }
  sc_dt::sc_bv<kBB * 8> beat, w_data;
  // The payloads of the transfers, captured when decided: after the edge the
  // engine's outputs already show its next beat.
  Burst ar_burst{}, aw_burst{};
  bool w_last = false, done_err = false;
  uint64_t w_strb = 0;
  std::vector<uint8_t> bytes(kBB);
  const sc_core::sc_time quarter = clock_.period() / 4;

  for (int64_t m = 0;; ++m) {
    negedge();
    // The transfers of the rising edge just past.
    if (cmd_fire) {
      sent = true;
      p.cmd_valid = false;
      if (m_first < 0) m_first = m;
    }
    if (ar_fire) {
      rq.push_back(ar_burst);
      read_at += ar_burst.beats;
      check(read_at <= read_beats, "more read beats than the jobs' runs cover");
      if (timing) rq.back().ready_ps = timing->read_share(space_of(ar_burst.addr), double(read_at) / double(read_beats));
    }
    if (r_fire) {
      if (run.first_r < 0) run.first_r = m - m_first;
      run.last_r = m - m_first;
      r_valid = false;
      if (++rq.front().done == rq.front().beats) rq.pop_front();
    }
    if (aw_fire) wq.push_back(aw_burst);
    if (w_fire) {
      Burst& b = wq.front();
      // The burst's data cross the ports as the engine produces them: its
      // share of the stream is timed from its first beat.
      if (run.first_w < 0) run.first_w = m - m_first;
      if (b.done == 0) {
        write_at += b.beats;
        check(write_at <= write_beats, "more write beats than the jobs' runs cover");
        if (timing) b.ready_ps = timing->write_share(space_of(b.addr), double(write_at) / double(write_beats));
      }
      const uint64_t a = b.addr + static_cast<uint64_t>(b.done) * kBB;
      const bool last = b.done + 1 == b.beats;
      check(w_last == last, "w_last " + std::to_string(w_last) + " on beat " + std::to_string(b.done) + " of a " +
                                std::to_string(b.beats) + "-beat burst");
      const sc_dt::sc_bv<kBB * 8>& wd = w_data;
      const uint64_t strb = w_strb;
      sim::SpaceMemory& sm = mem.space(space_of(a));
      for (int i = 0; i < kBB; ++i) {
        if (!((strb >> i) & 1)) continue;
        const uint8_t v = static_cast<uint8_t>(wd.range(8 * i + 7, 8 * i).to_uint());
        const uint64_t at = (a & low) + static_cast<uint64_t>(i);
        check(sm.in_range(at, 1), "a write beyond " + sm.name());
        sm.write(at, &v, 1);
      }
      if (++b.done == b.beats) {
        b_ready_ps.push_back(b.ready_ps);
        wq.pop_front();
        ++b_pending;
      }
    }
    if (b_fire) {
      run.last_b = m - m_first;
      b_valid = false;
      --b_pending;
      b_ready_ps.pop_front();
    }
    if (done_fire) {
      done = true;
      m_last = m;
      run.error_response = done_err;
    }
    cmd_fire = ar_fire = r_fire = aw_fire = w_fire = b_fire = done_fire = false;
    if (done) break;

    // Inputs for the coming edge. A valid, once raised, stays until taken (AXI).
    if (!p.cmd_valid.read() && !sent) {  // the instruction: one command
      p.cmd_memset = is_memset;
      p.cmd_dst = dst.rec;
      p.cmd_src = src.rec;
      p.cmd_dst_roff = dst.roff;
      p.cmd_src_roff = src.roff;
      p.cmd_dst_dyn = dst.dyn;
      p.cmd_src_dyn = src.dyn;
      p.cmd_konst = in.konst;
      p.cmd_valid = true;
    }
    // Memory timing: the front read burst's data, the oldest write's response.
    const bool r_wait = !r_valid && !rq.empty() && rq.front().ready_ps > edge_ps();
    const bool b_wait = !b_valid && b_pending > 0 && b_ready_ps.front() > edge_ps();
    if (r_wait || b_wait) {
      ++run.mem_wait_cycles;
      m_active = m;  // waiting on the memory is no hang
    }
    if (!r_valid && !rq.empty() && !r_wait && !stall()) {
      const Burst& b = rq.front();
      const uint64_t a = b.addr + static_cast<uint64_t>(b.done) * kBB;
      const sim::SpaceMemory& sm = mem.space(space_of(a));
      check(sm.in_range(a & low, kBB), "a read beyond " + sm.name());
      sm.read(a & low, bytes.data(), kBB);
      for (int i = 0; i < kBB; ++i) beat.range(8 * i + 7, 8 * i) = bytes[static_cast<size_t>(i)];
      p.r_data = beat;
      p.r_last = b.done + 1 == b.beats;
      r_valid = true;
    }
    p.r_valid = r_valid;
    p.r_resp = 0;
    if (!b_valid && b_pending > 0 && !b_wait && !stall()) b_valid = true;
    p.b_valid = b_valid;
    p.b_resp = 0;
    p.ar_ready = !stall();
    p.aw_ready = !stall();
    p.w_ready = !wq.empty() && !stall();  // W waits for its burst's address
    p.done_ready = !stall();
    sc_core::wait(quarter);  // the engine's combinational outputs settle
    // The transfers of the coming rising edge.
    cmd_fire = p.cmd_valid.read() && p.cmd_ready.read();
    ar_fire = p.ar_valid.read() && p.ar_ready.read();
    r_fire = r_valid && p.r_ready.read();
    aw_fire = p.aw_valid.read() && p.aw_ready.read();
    w_fire = p.w_valid.read() && p.w_ready.read();
    b_fire = b_valid && p.b_ready.read();
    done_fire = p.done_valid.read() && p.done_ready.read();
    if (ar_fire) ar_burst = {p.ar_addr.read(), static_cast<int>(p.ar_len.read()) + 1, 0, 0.0};
    if (aw_fire) aw_burst = {p.aw_addr.read(), static_cast<int>(p.aw_len.read()) + 1, 0, 0.0};
    if (w_fire) {
      w_data = p.w_data.read();
      w_strb = p.w_strb.read();
      w_last = p.w_last.read();
    }
    if (done_fire) done_err = p.done_err.read();
    if (ar_fire || r_fire || aw_fire || w_fire || b_fire || done_fire || cmd_fire) m_active = m;
    check(m - m_active < 100000, "the engine hangs: no transfer for 100000 clocks");
  }
  check(rq.empty() && wq.empty() && b_pending == 0, "bursts left over after the last job");
  p.cmd_valid = false;
  // The walk cut the instruction as the model does (its addresses are
  // checked by the bytes, its job shapes by the cycles, timing::dma_cycles).
  run.jobs = static_cast<int64_t>(p.jobs.read());
  check(run.jobs == static_cast<int64_t>(jobs.size()),
        "the walk cut " + std::to_string(run.jobs) + " jobs, the model " + std::to_string(jobs.size()));
  run.cycles = m_last - m_first + 1;  // both ends inclusive: the engine is busy on each
  return run;
}

}  // namespace n3::rtl
