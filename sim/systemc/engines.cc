#include "sim/systemc/engines.h"

#include <algorithm>
#include <cmath>

namespace n3::sc {

using isa::Space;

EngineUnit::EngineUnit(sc_core::sc_module_name n, Context& c, int engine, DdrHp& ddr, L2& l2)
    : sc_core::sc_module(n), queue(static_cast<int>(c.p.queue_depth)), c_(c), engine_(engine), ddr_(ddr), l2_(l2) {
  SC_THREAD(run);
}

double EngineUnit::move(const sim::View& v, bool write, double not_before_ps, int64_t ports) {
  const int64_t bytes = timing::view_bytes(v);
  if (!bytes) return not_before_ps;
  if (v.d.space == Space::DDR) return ddr_.reserve(engine_, bytes, ports, write, not_before_ps).end_ps;
  return l2_.reserve(bytes, not_before_ps).end_ps;
}

void EngineUnit::run() {
  try {
    UnitStats& st = c_.units[static_cast<size_t>(engine_)];
    while (true) {
      double t0 = c_.now_ps();
      queue.read();
      st.stall_ps["idle"] += c_.now_ps() - std::max(t0, c_.run_start_ps);
      const sim::Issued in = std::move(pending_.front());
      pending_.pop_front();
      t0 = c_.now_ps();
      c_.tokens.acquire(engine_, isa::wait_bits(in.word));
      st.stall_ps["tokens"] += c_.now_ps() - t0;
      const double start = c_.now_ps();
      c_.sim->exec_head(engine_);  // the bits, at the instruction's start
      const Timed t = model(in);
      c_.wait_until(t.end_ps);
      const double dur = c_.now_ps() - start;
      st.busy_ps += dur;
      if (dur > t.compute_ps) st.stall_ps["memory"] += dur - t.compute_ps;
      ++st.instructions;
      if (c_.record_slices) c_.slices.push_back({engine_, in.pc, start, dur});
      ++c_.completed[static_cast<size_t>(engine_)];
      c_.tokens.push(engine_, isa::signal_bits(in.word));
    }
  } catch (...) {
    c_.fail(std::current_exception());
  }
}

EngineUnit::Timed DmaUnit::model(const sim::Issued& in) {
  const double now = c_.now_ps(), setup = double(c_.p.dma_setup_cycles) * c_.p.core_ps();
  const sim::View& dst = in.op("dst");
  double end = now + setup;
  if (in.def->opcode == isa::Opcode::MEMCPY) end = std::max(end, move(in.op("src"), false, now + setup, c_.p.dma_hp_ports));
  end = std::max(end, move(dst, true, now + setup, c_.p.dma_hp_ports));
  return {end, setup};
}

EngineUnit::Timed MacUnit::model(const sim::Issued& in) {
  const timing::Params& p = c_.p;
  const double now = c_.now_ps(), clk = p.core_ps();
  const bool gemm = engine_ == 3;
  const double rate = gemm ? double(p.gemm_rows * p.gemm_cols * p.gemm_macs_per_pe) : double(p.gemv_macs_per_clk_total());
  const int64_t macs = timing::insn_macs(in);
  c_.macs += static_cast<uint64_t>(macs);
  if (gemm) c_.gemm_macs += static_cast<uint64_t>(macs);
  const double setup = double(gemm ? p.gemm_setup_cycles : p.gemv_setup_cycles) * clk;
  const double drain = double(gemm ? p.gemm_rows + p.gemm_cols : p.gemv_drain_cycles) * clk;
  const double compute_all = std::ceil(double(macs) / rate) * clk;
  // Activations in: one L2 read before the first MAC.
  const double x_ready = move(in.op("src"), false, now + setup, 1);
  const sim::View& w = in.op("w");
  const int64_t wbytes = timing::view_bytes(w);
  double compute_end = x_ready;
  if (w.d.space == Space::DDR) {
    // Tiles of half the weight buffers, double-buffered: tile i may start
    // streaming once tile i-2's compute has freed its half.
    const int64_t tile = p.weight_tile_bytes();
    const int64_t ntiles = (wbytes + tile - 1) / tile;
    std::vector<double> done(static_cast<size_t>(ntiles));
    for (int64_t i = 0; i < ntiles; ++i) {
      const int64_t b = std::min(tile, wbytes - i * tile);
      double not_before = now + setup;
      if (i >= 2) not_before = std::max(not_before, done[static_cast<size_t>(i - 2)]);
      c_.wait_until(not_before);  // lets other engines' transfers interleave with this stream
      const Xfer x = ddr_.reserve(engine_, b, p.hp_ports, false, not_before);
      compute_end = std::max(compute_end, x.end_ps) + compute_all * double(b) / double(wbytes);
      done[static_cast<size_t>(i)] = compute_end;
    }
  } else {
    // Weights on chip: they stream from L2 (WBUF feeds the cores at MAC rate).
    const double w_ready = w.d.space == Space::L2 ? l2_.reserve(wbytes, now + setup).end_ps : now + setup;
    compute_end = std::max(compute_end + compute_all, w_ready);
  }
  const double end = move(in.op("dst"), true, compute_end + drain, 1);
  return {end, setup + compute_all + drain};
}

EngineUnit::Timed SfuUnit::model(const sim::Issued& in) {
  const timing::Params& p = c_.p;
  const double now = c_.now_ps(), clk = p.core_ps();
  const int64_t work = timing::sfu_work(in);
  c_.sfu_work += static_cast<uint64_t>(work);
  const double setup = double(p.sfu_setup_cycles) * clk;
  const double compute = setup + (std::ceil(double(work) / p.sfu_elems_per_clk) + double(p.sfu_latency_cycles)) * clk;
  double end = now + compute;
  for (const char* f : {"a", "b"}) end = std::max(end, move(in.op(f), false, now + setup, p.dma_hp_ports));
  end = std::max(end, move(in.op("dst"), true, now + setup, p.dma_hp_ports));
  return {end, compute};
}

}  // namespace n3::sc
