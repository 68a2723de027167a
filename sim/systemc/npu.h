// The SystemC model of the NPU: the control unit (fetch, decode, dispatch
// into per-engine queues, control instructions, tokens), the four engine
// units, the DDR/HP-port model and the L2, elaborated once per process
// (SystemC allows one elaboration); `run_npu` runs one program through it.
// docs/timing.md describes every unit's model and parameter.
#pragma once
#include <systemc>

#include <array>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/func_sim.h"
#include "sim/systemc/timing.h"

namespace n3::sc {

class DmaUnit;
class MacUnit;
class SfuUnit;
struct Context;

// Which unit plays one engine: null `make` for the timing model's; the RTL
// bridge (rtl_bridge/gemv_unit.h, gemm_unit.h, dma_unit.h, sfu_unit.h) supplies one that runs a
// Verilated engine in the unit's place (same queue, tokens and sockets).
// Part of the elaboration: `name` must not change between the runs of one
// process.
template <class Unit>
struct UnitChoice {
  std::function<std::unique_ptr<Unit>(sc_core::sc_module_name, Context&)> make;
  std::string name = "model";
};

// The control unit's decode stage as a second decoder beside the C++ one
// (`--rtl decoder`, rtl_bridge/decoder_unit.h): sees every instruction word
// the control unit fetches, in fetch order, at the time it is decoded, and
// checks its own decode of it. It does not change when anything dispatches:
// the words an RTL decodes are the ones the C++ decoder dispatches, and its
// throughput is held to timing.dispatch_cycles by the unit itself.
struct DecodeStage {
  virtual ~DecodeStage() = default;
  // From the control unit's thread, once per fetched word (dyn: 1 for the
  // run's first instruction, as sim::Issued::dyn).
  virtual void fetched(uint64_t word, uint32_t pc, uint64_t dyn) = 0;
  // From the control unit's thread after sys.halt: returns once every
  // fetched word was decoded and checked.
  virtual void drain() = 0;
};

// The control engine's execute stage as a second executor beside the
// functional core (`--rtl ctl`, rtl_bridge/ctl_unit.h): sees every control
// instruction the control unit executes, in order, with the registers
// before and after it, and checks its own execution of it. It does not
// change when anything happens: the model charges ctl_cycles, and the unit
// reports its own clocks against them.
struct CtlStage {
  struct Executed {
    uint64_t word = 0;
    uint32_t pc = 0, next_pc = 0;  // next_pc: where the functional core goes on
    uint64_t dyn = 0;              // 1 for the run's first instruction
    bool halted = false;
    std::array<int64_t, isa::kNumRegs> before{}, after{};  // the registers
    const sim::FuncSim* sim = nullptr;  // the program and memories, as at the call
  };
  virtual ~CtlStage() = default;
  // From the control unit's thread, once per control instruction, after the
  // functional core executed it.
  virtual void executed(const Executed& e) = 0;
  // After sys.halt: returns once every instruction was executed and checked.
  virtual void drain() = 0;
};

struct RunOptions {
  bool trace = false;      // record one slice per instruction
  bool progress = false;   // a progress line on stderr during long runs
  UnitChoice<MacUnit> gemv_unit;  // the GEMV engine
  UnitChoice<MacUnit> gemm_unit;  // the GEMM engine
  UnitChoice<DmaUnit> dma_unit;   // the DMA engine
  UnitChoice<SfuUnit> sfu_unit;     // the SFU (CVO)
  UnitChoice<DecodeStage> decoder;  // null make: the C++ decoder alone
  UnitChoice<CtlStage> ctl_stage;   // null make: the functional core alone
  // The elaborated design, for the one-design-per-process check.
  std::string design() const {
    return "gemv " + gemv_unit.name + ", gemm " + gemm_unit.name + ", dma " + dma_unit.name + ", sfu " + sfu_unit.name + ", decoder " + decoder.name +
           ", ctl " + ctl_stage.name;
  }
};

struct UnitReport {
  std::string name;
  uint64_t instructions = 0;
  double busy_ps = 0;
  std::vector<std::pair<std::string, double>> stall_ps;
};

// A memory-side unit's figures: the DDR channel, each HP port, each L2
// port, the weight buffers (bytes through them), each GEMV core (busy only).
struct ResourceReport {
  std::string name;
  double busy_ps = 0;
  uint64_t bytes = 0;
  bool timed = true, moves_bytes = true;  // which of the two it has
};

struct SliceReport {
  int track;
  uint32_t pc;
  double start_ps, dur_ps;
  uint8_t kind = 0;  // 0 instruction, 1 read, 2 write (a transfer on a memory track)
  int engine = 0;
};

struct Report {
  timing::Params params;
  double total_ps = 0;
  std::vector<UnitReport> units;  // CTL DMA GEMV GEMM SFU
  std::vector<ResourceReport> resources;
  std::vector<std::string> tracks;  // trace track names: the engines', then the memory resources'
  std::vector<uint64_t> hp_port_bytes;
  uint64_t ddr_read = 0, ddr_written = 0, l2_bytes = 0, macs = 0, gemm_macs = 0, sfu_work = 0;
  double ddr_busy_ps = 0;
  std::vector<SliceReport> slices;
  double cycles(double ps) const { return ps / params.core_ps(); }
};

// Runs the program loaded in `sim` (memory already loaded) to the end; the
// functional core's state afterwards is what FuncSim::run() leaves. Throws
// sim::Trap like run(). The first call elaborates the model (once per
// process); later calls, one program each (a model's prefill and decode
// programs), reuse it with fresh statistics and times relative to their
// start. One design point per process; after a trap no further run.
Report run_npu(sim::FuncSim& sim, const timing::Params& p, const RunOptions& o);

// SystemC's banner, infos and warnings off: the simulator's output is n3's
// (every run and cosim harness calls it before elaborating).
void quiet_reports();

}  // namespace n3::sc
