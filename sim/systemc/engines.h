// The engine units of the NPU, one sc_module per hardware unit (DMA, GEMV,
// GEMM, SFU), each with its in-order instruction queue (an sc_fifo whose
// depth is timing.queue_depth) and the token handshake of the ISA. A unit
// takes the next instruction, waits for its tokens, has the functional core
// execute its effects (sim::FuncSim::exec_head), then holds the instruction
// for the duration its model computes and signals on completion. A
// Verilated RTL unit can replace one by consuming the same queue and tokens.
#pragma once
#include <systemc>

#include <deque>

#include "sim/systemc/memory_units.h"

namespace n3::sc {

class EngineUnit : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EngineUnit);
  EngineUnit(sc_core::sc_module_name n, Context& c, int engine, DdrHp& ddr, L2& l2);

  // The dispatcher's side: a slot in the queue, then the instruction.
  sc_core::sc_fifo<int> queue;
  void enqueue(const sim::Issued& in) {
    pending_.push_back(in);
    queue.nb_write(1);
  }

 protected:
  struct Timed {
    double end_ps;      // completion (writes visible)
    double compute_ps;  // what the unit needed with data always there
  };
  // The unit's timing model of one instruction starting now.
  virtual Timed model(const sim::Issued& in) = 0;

  // Moves a view's bytes to or from its space: DDR through `ports` HP ports,
  // L2 and WBUF through an L2 port. Returns the completion time in ps.
  double move(const sim::View& v, bool write, double not_before_ps, int64_t ports);

  Context& c_;
  const int engine_;
  DdrHp& ddr_;
  L2& l2_;

 private:
  void run();
  std::deque<sim::Issued> pending_;
};

// MEMCPY / MEMSET: setup, then source reads and destination writes stream
// concurrently; DDR sides through timing.dma_hp_ports HP ports.
class DmaUnit : public EngineUnit {
 public:
  DmaUnit(sc_core::sc_module_name n, Context& c, DdrHp& d, L2& l) : EngineUnit(n, c, 1, d, l) {}

 protected:
  Timed model(const sim::Issued& in) override;
};

// GEMV cores (engine GEMV) and the systolic array (engine GEMM): weights
// (or the KV window) stream in tiles of half the weight buffers (double
// buffering) from DDR through all HP ports while the MAC array consumes the
// previous tile.
class MacUnit : public EngineUnit {
 public:
  MacUnit(sc_core::sc_module_name n, Context& c, int engine, DdrHp& d, L2& l) : EngineUnit(n, c, engine, d, l) {}

 protected:
  Timed model(const sim::Issued& in) override;
};

// The SFU / CVO unit: a pipeline of sfu_elems_per_clk elements per clock,
// one pass per row read (fused row operators need several), plus latency.
class SfuUnit : public EngineUnit {
 public:
  SfuUnit(sc_core::sc_module_name n, Context& c, DdrHp& d, L2& l) : EngineUnit(n, c, 4, d, l) {}

 protected:
  Timed model(const sim::Issued& in) override;
};

}  // namespace n3::sc
