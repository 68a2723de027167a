#include "sim/systemc/engines.h"

#include <algorithm>
#include <cmath>

namespace n3::sc {

using isa::Space;

EngineUnit::EngineUnit(sc_core::sc_module_name n, Context& c, int engine)
    : sc_core::sc_module(n),
      queue(static_cast<int>(c.p.timing.queue_depth.value)),
      ddr("ddr"),
      l2("l2"),
      c_(c),
      engine_(engine) {
  SC_THREAD(run);
}

double EngineUnit::transact(tlm_utils::simple_initiator_socket<EngineUnit>& s, int space, uint64_t addr,
                            int64_t bytes, int64_t ports, bool write, double not_before_ps) {
  XferExt x;
  x.engine = engine_;
  x.pc = cur_->pc;
  x.space = space;
  x.ports = ports;
  tlm::tlm_generic_payload t;
  t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  t.set_address(addr);
  t.set_data_ptr(nullptr);  // timing only: the bytes are the functional core's
  t.set_data_length(static_cast<unsigned>(bytes));
  t.set_streaming_width(static_cast<unsigned>(bytes));
  t.set_extension(&x);
  struct Detach {  // the extension lives on this stack frame: never let the payload free it
    tlm::tlm_generic_payload& t;
    XferExt* x;
    ~Detach() { t.clear_extension(x); }
  } detach{t, &x};
  sc_core::sc_time delay(std::max(0.0, not_before_ps - c_.now_ps()), sc_core::SC_PS);
  s->b_transport(t, delay);
  require(t.is_response_ok(), "systemc: memory transaction refused at instruction " + std::to_string(cur_->pc));
  // TLM-2.0: the returned delay counts from the time at return (the target may have waited).
  last_start_ps_ = x.start_ps;
  return c_.now_ps() + delay.to_seconds() * 1e12;
}

double EngineUnit::ddr_move(int64_t bytes, bool write, double not_before_ps, int64_t ports, uint64_t addr) {
  touched_ddr_ = true;
  return transact(ddr, int(Space::DDR), addr, bytes, ports, write, not_before_ps);
}

double EngineUnit::move(const sim::View& v, bool write, double not_before_ps, int64_t ports) {
  const int64_t bytes = timing::view_bytes(v);
  if (!bytes) return not_before_ps;
  const uint64_t addr = v.row_addr(0);
  if (v.d.space == Space::DDR) return ddr_move(bytes, write, not_before_ps, ports, addr);
  return transact(l2, int(v.d.space), addr, bytes, 1, write, not_before_ps);
}

void EngineUnit::run() {
  try {
    UnitStats& st = c_.units[static_cast<size_t>(engine_)];
    while (true) {
      double t0 = c_.now_ps();
      const sim::Issued in = queue.read();
      st.stall_ps["idle"] += c_.now_ps() - std::max(t0, c_.run_start_ps);
      t0 = c_.now_ps();
      before_tokens(in);
      tokens->acquire(engine_, isa::wait_bits(in.word));
      st.stall_ps["tokens"] += c_.now_ps() - t0;
      const double start = c_.now_ps();
      before_exec(in);
      c_.sim->exec_head(engine_);  // the bits, at the instruction's start
      cur_ = &in;
      touched_ddr_ = false;
      const Timed t = model(in);
      c_.wait_until(t.end_ps);
      const double dur = c_.now_ps() - start;
      st.busy_ps += dur;
      // Time beyond the unit's own need waited on memory, DDR or L2.
      if (dur > t.compute_ps) {
        const double wait = dur - t.compute_ps;
        const double on_ddr = t.ddr_wait_ps < 0 ? (touched_ddr_ ? wait : 0.0) : std::min(wait, t.ddr_wait_ps);
        if (on_ddr > 0) st.stall_ps["ddr"] += on_ddr;
        if (wait > on_ddr) st.stall_ps["l2"] += wait - on_ddr;
      }
      ++st.instructions;
      if (c_.record_slices) c_.slices.push_back({engine_, in.pc, start, dur, 0, engine_});
      ++c_.completed[static_cast<size_t>(engine_)];
      tokens->push(engine_, isa::signal_bits(in.word));
    }
  } catch (...) {
    c_.fail(std::current_exception());
  }
}

EngineUnit::Timed DmaUnit::model(const sim::Issued& in) {
  // The engine's own clocks (timing::dma_cycles, fitted to the RTL engine:
  // its jobs' chunks with a memory answering the next clock), delayed by the
  // memory: the reads are one transfer of src asked for at the first AR, the
  // writes one of dst asked for at the first W beat (DDR over dma_hp_ports
  // HP ports, then the latency; L2 over a port). The engine cannot convert
  // before its first data nor finish before its last response, so the
  // latencies add to its pipeline's head and tail instead of hiding under
  // its clocks (docs/timing.md "DMA").
  const double now = c_.now_ps(), clk = c_.p.core_ps();
  const int64_t ports = c_.p.timing.dma_hp_ports.value;
  auto stream = [&](const sim::View& v, bool write, double ask) {
    timing::DmaStream s;
    if (timing::view_bytes(v) == 0) return s;
    const double end = move(v, write, ask, ports);
    s.on = true;
    s.latency_ps = v.d.space == Space::DDR ? timing::ddr_latency_ps(c_.p) : 0.0;
    s.queue_ps = std::max(0.0, last_start_ps_ - ask);
    s.occupancy_ps = std::max(0.0, end - s.latency_ps - last_start_ps_);
    return s;
  };
  const double engine = timing::dma_cycles(c_.p, in);
  timing::DmaStream r;
  if (in.def->opcode == isa::Opcode::MEMCPY) r = stream(in.op("src"), false, now + timing::dma_read_ask_cycles() * clk);
  const timing::DmaReadDelay rd = timing::dma_read_delay_cycles(c_.p, in, r);
  const timing::DmaStream w = stream(in.op("dst"), true, now + timing::dma_write_ask_cycles(c_.p, in, rd) * clk);
  const double dw = timing::dma_write_delay_cycles(c_.p, in, rd, w);
  return {now + (engine + rd.total + dw) * clk, engine * clk};
}

MacUnit::MacUnit(sc_core::sc_module_name n, Context& c, int engine) : EngineUnit(n, c, engine) {
  if (engine == 2)
    for (int64_t i = 0; i < c.p.compute.gemv_cores.value; ++i)
      cores_.push_back(std::make_unique<MacCore>(("core" + std::to_string(i)).c_str()));
}

int64_t MacUnit::stream_tile_bytes(const sim::View& w) const {
  return engine_ == 3 ? wbuf->tile_bytes() : timing::gemv_tile_bytes(wbuf->tile_bytes(), timing::weight_row_bytes(w));
}

void MacUnit::before_tokens(const sim::Issued& in) {
  if (!tokens->ready(engine_, isa::wait_bits(in.word))) prefetch(in, true, c_.now_ps());
}

void MacUnit::prefetch(const sim::Issued& next, bool head, double free_by_ps) {
  if (pre_dyn_ != next.dyn) pre_.clear(), pre_dyn_ = next.dyn;
  const int64_t most = c_.p.timing.wbuf_prefetch_tiles.value;
  if (int64_t(pre_.size()) >= most) return;  // the GEMV's and the GEMM array's streams alike
  const sim::View& w = next.op("w");
  if (w.d.space != Space::DDR) return;
  const int64_t wbytes = timing::view_bytes(w);
  const uint64_t lo = w.d.base, hi = lo + uint64_t(wbytes);  // (row_addr(0): the view's first byte)
  bool read_only = false;
  for (const isa::Region& r : c_.sim->program().regions)
    read_only |= r.role == isa::RegionRole::Weights && r.space == Space::DDR && lo >= r.base && hi <= r.base + r.size;
  if (!read_only) return;
  const sim::Issued* was = cur_;
  cur_ = &next;  // the transfers' trace slices name it
  const int64_t tile = stream_tile_bytes(w);
  for (int64_t off = int64_t(pre_.size()) * tile; off < wbytes && int64_t(pre_.size()) < most; off += tile) {
    // Stop once the instruction may start: its own stream takes the rest.
    if (head && tokens->ready(engine_, isa::wait_bits(next.word))) break;
    WbufIf::Slot slot;
    if (!wbuf->try_take(&slot, free_by_ps)) break;  // held longer, or by another engine: no waiting on it
    c_.wait_until(slot.free_ps);
    const double landed =
        ddr_move(std::min(tile, wbytes - off), false, c_.now_ps(), c_.p.memory.hp_ports.value, lo + uint64_t(off));
    wbuf->park(slot.index, landed);
    pre_.push_back({slot, landed});
  }
  cur_ = was;
}

EngineUnit::Timed MacUnit::model(const sim::Issued& in) {
  const timing::Params& p = c_.p;
  const double now = c_.now_ps(), clk = p.core_ps();
  const bool gemm = engine_ == 3;
  const int64_t macs = timing::insn_macs(in);
  c_.macs += static_cast<uint64_t>(macs);
  double compute_all, setup, drain, act = 0, land = 0, row_work = 0;
  if (gemm) {
    c_.gemm_macs += static_cast<uint64_t>(macs);
    // timing::gemm_cycles, the RTL array's formula: weight tiles through two
    // banks (bound by their loads when T < rows), then the skew out.
    const timing::GemmCycles g = timing::gemm_cycles(p, in);
    compute_all = g.compute * clk;
    setup = g.setup * clk;
    act = g.act * clk;
    row_work = g.tile_work * clk;
    drain = g.drain * clk;
  } else {
    // timing::gemv_cycles: outputs dealt to the cores in turn, the unit
    // finishes with its busiest core, then drains through the adder trees.
    const timing::GemvCycles g = timing::gemv_cycles(p, timing::gemv_shape(in, p.numerics.formats.bfp_block));
    compute_all = g.compute * clk;
    setup = g.setup * clk;
    act = g.act * clk;
    land = g.land_to_mac * clk;
    row_work = g.row_work * clk;
    drain = g.drain * clk;
    const int64_t outs = std::max<int64_t>(in.op("dst").numel(), 1), per_out = macs / outs;
    const int64_t n = p.compute.gemv_cores.value;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t share = outs / n + (k < outs % n ? 1 : 0);
      cores_[static_cast<size_t>(k)]->busy_ps +=
          std::ceil(double(share * per_out) / double(p.compute.gemv_macs_per_clk.value)) * clk;
    }
  }
  // Activations in: one L2 read before the first MAC.
  // (GEMV: no sooner than the engine's activation load, timing::gemv_cycles.)
  const double x_ready = std::max(move(in.op("src"), false, now + setup, 1), now + setup + act);
  const sim::View& w = in.op("w");
  const int64_t wbytes = timing::view_bytes(w);
  double compute_end = x_ready, ddr_wait = 0;
  if (w.d.space == Space::DDR) {
    // Tile by tile through the weight buffers: a tile streams once its slot
    // is free, and the MACs take it when it has landed and the previous one is done.
    // The GEMV engine takes a weight row whole into a core (the RTL,
    // rtl_bridge/gemv_rtl.cc), so its stream fills a buffer with whole rows
    // (timing::gemv_tile_bytes). A row longer than a buffer spans tiles: its
    // first tile keeps its slot until the next has landed and the row has
    // gone into its core (`land`: its beats in), so the slot is held as
    // usual and extended once that landing is known, before this stream
    // takes the slot again. (Byte-cut tiles split a row at every tile edge:
    // the RTL then held each slot ~64 clocks past the next landing, and the
    // model, not knowing, ran E2B 1.6 % ahead of the RTL; docs/rtl.md.)
    // Tiles prefetched before the tokens (before_tokens) come first, as
    // long as no other engine has taken their slots since.
    const int64_t per_row = timing::weight_row_bytes(w), tile = stream_tile_bytes(w);
    size_t next_pre = pre_dyn_ == in.dyn ? 0 : pre_.size();
    int split = -1;  // the slot of the previous tile, if it ends inside a row
    for (int64_t off = 0; off < wbytes; off += tile) {
      const int64_t b = std::min(tile, wbytes - off);
      double arrived;
      WbufIf::Slot slot;
      if (next_pre < pre_.size() && wbuf->reclaim(pre_[next_pre].slot)) {
        slot = pre_[next_pre].slot;
        arrived = std::max(now, pre_[next_pre++].landed_ps);
      } else {
        next_pre = pre_.size();  // a lost tile: the rest stream in turn
        slot = wbuf->take();
        const double not_before = std::max(now + setup, slot.free_ps);
        c_.wait_until(not_before);  // lets other engines' transfers interleave with this stream
        arrived = ddr_move(b, false, not_before, p.memory.hp_ports.value, w.d.base + uint64_t(off));
      }
      // The MACs take a tile at the first clock edge after it landed.
      const double landed = timing::on_clock(arrived, now, clk);
      if (split >= 0) wbuf->extend(split, landed + land);
      split = -1;
      ddr_wait += std::max(0.0, landed + land - compute_end);  // the MACs idle until the tile is in
      compute_end = std::max(compute_end, landed + land) + compute_all * double(b) / double(wbytes);
      // (timing::mac_stream_end_ps: the last row's own work follows its arrival whole.)
      if (off + b >= wbytes) compute_end = std::max(compute_end, landed + land + row_work);
      wbuf->hold(slot.index, b, compute_end);
      if (!gemm && off + b < wbytes && (off + b) % per_row != 0) split = slot.index;
    }
    pre_.clear();
    // Every tile asked for: the next queued product may stream into the slots
    // as they free before this instruction ends (its MACs finish meanwhile).
    if (const sim::Issued* next = queue.peek()) prefetch(*next, false, compute_end + drain);
  } else {
    // Weights on chip: they stream from L2 row by row at the port's rate
    // (the MACs take each row once it is in), or sit in WBUF (MAC rate).
    if (w.d.space == Space::L2) {
      const double w_ready = move(w, false, now + setup, 1);
      std::vector<std::pair<double, int64_t>> rows = timing::rows_landing(w.rows, last_start_ps_, w_ready, w.rows);
      for (auto& r : rows) r.first = timing::on_clock(r.first, now, clk);
      if (gemm) rows = timing::gemm_row_blocks(rows, p.compute.gemm_cols.value);
      compute_end = timing::mac_stream_end_ps(compute_end, rows, compute_all, land, row_work);
    } else {
      compute_end += compute_all;
    }
  }
  // The result moves once it exists: booked then, not ahead, so no other
  // engine's transfer waits behind a reservation in the future.
  c_.wait_until(compute_end + drain);
  const double end = move(in.op("dst"), true, compute_end + drain, 1);
  return {end, setup + act + compute_all + drain, ddr_wait};
}

EngineUnit::Timed SfuUnit::model(const sim::Issued& in) {
  const timing::Params& p = c_.p;
  const double now = c_.now_ps(), clk = p.core_ps();
  const int64_t work = timing::sfu_work(p, in);
  c_.sfu_work += static_cast<uint64_t>(work);
  const double setup = double(p.timing.sfu_setup_cycles.value) * clk;
  const double compute = setup + timing::sfu_cycles(p, in) * clk;
  double end = now + compute;
  const int64_t ports = p.timing.dma_hp_ports.value;
  for (const char* f : {"a", "b"}) end = std::max(end, move(in.op(f), false, now + setup, ports));
  end = std::max(end, move(in.op("dst"), true, now + setup, ports));
  return {end, compute};
}

}  // namespace n3::sc
