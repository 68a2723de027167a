// The engine units of the NPU, one sc_module per hardware unit (DMA, GEMV,
// GEMM, SFU), each with its in-order instruction queue (an sc_fifo of
// issued instructions whose depth is timing.queue_depth) and the token
// handshake of the ISA. A unit takes the next instruction, waits for its
// tokens, has the functional core execute its effects
// (sim::FuncSim::exec_head), then holds the instruction for the duration its
// model computes and signals on completion. The memory side is reached only
// through the TLM-2.0 initiator sockets `ddr`, `l2` and the sc_port `wbuf`
// (WbufIf), so a Verilated RTL unit can replace an engine by consuming the
// same queue and tokens, or a memory unit behind a TLM target socket.
#pragma once
#include <systemc>

#include <memory>
#include <ostream>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "sim/systemc/memory_units.h"

namespace n3::sim {
// sc_fifo prints its contents by operator<<.
inline std::ostream& operator<<(std::ostream& o, const Issued& in) { return o << "insn@" << in.pc; }
}  // namespace n3::sim

namespace n3::sc {

// An engine's in-order instruction queue; peek() shows the next instruction
// without taking it (the weight prefetch looks at what comes next).
class IssueQueue : public sc_core::sc_fifo<sim::Issued> {
 public:
  explicit IssueQueue(int depth) : sc_core::sc_fifo<sim::Issued>(depth) {}
  const sim::Issued* peek() const { return num_available() > 0 ? &m_buf[m_ri] : nullptr; }
};

class EngineUnit : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EngineUnit);
  EngineUnit(sc_core::sc_module_name n, Context& c, int engine);

  IssueQueue queue;  // the dispatcher writes, the unit reads
  tlm_utils::simple_initiator_socket<EngineUnit> ddr, l2;
  sc_core::sc_port<TokenIf> tokens;

 protected:
  struct Timed {
    double end_ps;      // completion (writes visible)
    double compute_ps;  // what the unit needed with data always there
    // Of the time beyond compute_ps, how much the unit waited on DDR (the
    // rest on L2); negative: all of it on DDR if the instruction touched DDR.
    double ddr_wait_ps = -1;
  };
  // The unit's timing model of one instruction starting now.
  virtual Timed model(const sim::Issued& in) = 0;
  // Called after the tokens, before the functional core executes the
  // instruction: an RTL unit reads its operands here, as they were before.
  virtual void before_exec(const sim::Issued&) {}
  // Called when the instruction is at the head of the unit's queue, before
  // its tokens are waited for (may advance time; the MAC unit's weight prefetch).
  virtual void before_tokens(const sim::Issued&) {}

  // Moves a view's bytes to or from its space: DDR through `ports` HP ports,
  // L2 and WBUF through an L2 port. Returns the completion time in ps.
  double move(const sim::View& v, bool write, double not_before_ps, int64_t ports);
  double ddr_move(int64_t bytes, bool write, double not_before_ps, int64_t ports, uint64_t addr);
  // One loosely-timed transaction; returns the data-available time in ps.
  double transact(tlm_utils::simple_initiator_socket<EngineUnit>& s, int space, uint64_t addr, int64_t bytes,
                  int64_t ports, bool write, double not_before_ps);

  Context& c_;
  const int engine_;
  const sim::Issued* cur_ = nullptr;
  bool touched_ddr_ = false;  // this instruction moved DDR bytes
  double last_start_ps_ = 0;  // when the last transaction's first resource started

 private:
  void run();
};

// MEMCPY / MEMSET: setup, then source reads and destination writes stream
// concurrently; DDR sides through timing.dma_hp_ports HP ports.
class DmaUnit : public EngineUnit {
 public:
  DmaUnit(sc_core::sc_module_name n, Context& c) : EngineUnit(n, c, 1) {}

 protected:
  Timed model(const sim::Issued& in) override;
};

// One GEMV core: its MAC rate and busy time. The GEMV unit deals an
// instruction's outputs to its cores in turn (output i to core i mod n), so
// a core's share is ceil or floor of outputs / n.
class MacCore : public sc_core::sc_module {
 public:
  MacCore(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  double busy_ps = 0;
};

// GEMV cores (engine GEMV) and the systolic array (engine GEMM): weights
// (or the KV window) stream through the engine's weight buffers (wbuf) tile
// by tile from DDR through all HP ports while the MACs consume the previous
// tile; the result is written once the last tile is computed and drained.
//
// Weight prefetch (timing.wbuf_prefetch_tiles; the GEMV and the GEMM array): the next queued
// instruction's first tiles stream into free weight buffer slots once the
// current instruction's last tile is asked for, and while that instruction
// waits for its tokens, if its weights lie in the program's read-only
// `weights` region (a KV window or a spilled activation may still be written
// by the instruction it waits for). Only the stream starts early; the MACs
// start after the tokens, and the functional core executes then.
class MacUnit : public EngineUnit {
 public:
  MacUnit(sc_core::sc_module_name n, Context& c, int engine);
  sc_core::sc_port<WbufIf> wbuf;
  const std::vector<std::unique_ptr<MacCore>>& cores() const { return cores_; }

 protected:
  Timed model(const sim::Issued& in) override;
  void before_tokens(const sim::Issued& in) override;
  // Streams `next`'s tiles after those already prefetched into slots free
  // by `free_by_ps` (never delaying the current or the next instruction), up
  // to timing.wbuf_prefetch_tiles; `head`: stop once its tokens are there.
  void prefetch(const sim::Issued& next, bool head, double free_by_ps);
  // The bytes of the weight stream's tile `off` (whole rows, cut as timing::gemv_tile_bytes).
  int64_t stream_tile_bytes(const sim::View& w) const;

  std::vector<std::unique_ptr<MacCore>> cores_;  // the GEMV engine's (the GEMM array has none)
  struct Prefetched {
    WbufIf::Slot slot;
    double landed_ps;
  };
  std::vector<Prefetched> pre_;  // instruction pre_dyn_'s first tiles, in stream order
  uint64_t pre_dyn_ = 0;
};

// The SFU / CVO unit: a pipeline of sfu_elems_per_clk elements per clock,
// one pass per row read (fused row operators need several), plus latency.
class SfuUnit : public EngineUnit {
 public:
  SfuUnit(sc_core::sc_module_name n, Context& c) : EngineUnit(n, c, 4) {}

 protected:
  Timed model(const sim::Issued& in) override;
};

}  // namespace n3::sc
