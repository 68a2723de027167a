// The RTL DMA engine (rtl_bridge/rtl/dma/, docs/rtl_dma.md) as a
// SystemC module: the Verilated model, its gated clock, a memory model that
// serves its AXI-like channels from an n3 sim::Memory (with optional random
// stalls on every channel), and a driver that runs one MEMCPY / MEMSET on it.
// The driver sends the instruction as one command: both descriptor records
// as the ISA encodes them and the register values the dispatcher resolved
// (row offsets, run-time extents); the engine walks the descriptors into
// its jobs itself (n3_dma_walk). Every address and every byte the run
// writes was computed by the RTL. The model's cut (DmaRtl::cut) is used
// for the dispatcher's legality checks, the memory model's stream sizes
// and to check the RTL walk's job count.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "rtl_bridge/gated_clock.h"
#include "rtl_bridge/waveform.h"

#include "golden/hw_config.h"
#include "sim/func_sim.h"
#include "sim/systemc/timing.h"

class Vn3_dma_engine;

namespace n3::rtl {

// One job of the engine (n3_dma_engine's command port); the cut is shared
// with the SystemC model's timing (sim/systemc/timing.h).
using DmaJob = timing::DmaJob;

// The memory's timing behind the engine's channels (`n3 sim --rtl dma`: the
// SystemC model's DDR / L2 units, rtl_bridge/dma_unit.cc). The instruction's
// reads are one stream and its writes another, each booked as the model
// books it (one transfer of the src / dst view) when it begins: the first
// read burst's address, the first write beat. Each call answers, for the
// first `share` (0, 1] of the stream's beats, the time (ps, absolute) from
// which they are there: a read burst's beats are served no sooner, a write
// burst's response (B) no sooner.
struct DmaMemTiming {
  virtual ~DmaMemTiming() = default;
  virtual double read_share(isa::Space s, double share) = 0;
  virtual double write_share(isa::Space s, double share) = 0;
};

struct DmaRun {
  int64_t cycles = 0;  // core clocks from the first command transfer to the last completion, both counted
  int64_t mem_wait_cycles = 0;  // clocks a read beat or a write response waited on DmaMemTiming
  int64_t jobs = 0;  // jobs the RTL walk cut (checked equal to the model's cut)
  bool error_response = false;  // some job reported a non-OKAY response
  // Clocks (from the first command transfer, 0) of the first and last read
  // beat, the first W beat and the last write response (-1: none).
  int64_t first_r = -1, last_r = -1, first_w = -1, last_b = -1;
};

class DmaRtl : public sc_core::sc_module {
 public:
  static constexpr int kBusBytes = N3_RTL_DMA_BB;  // Verilated parameters (rtl_bridge/CMakeLists.txt)
  static constexpr int kBurst = N3_RTL_DMA_BURST;
  static constexpr int kLanes = N3_RTL_DMA_LANES;
  static uint64_t engine_addr(isa::Space s, uint64_t a) { return timing::dma_engine_addr(s, a); }

  DmaRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path /* "" none */);
  ~DmaRtl() override;
  // The model's jobs for MEMCPY / MEMSET `in` (resolved views), the cut the
  // RTL walk must reproduce. Throws n3::Error (one line) for an instruction
  // the functional simulator traps on.
  static std::vector<DmaJob> cut(const sim::Issued& in);
  // From an SC_THREAD: runs `in` on the RTL, reading and writing `mem`;
  // `timing` (may be null: data at once) times the bursts.
  DmaRun run(const sim::Issued& in, sim::Memory& mem, DmaMemTiming* timing = nullptr);
  // Random stalls (cosim): each clock every ready / valid the memory model
  // drives (ar_ready, r_valid, aw_ready, w_ready, b_valid) and done_ready is
  // held low with probability p. 0 (the default): never.
  void set_stalls(double p, uint64_t seed);
  int64_t total_cycles() const { return total_cycles_; }
  // The waveform (the owner counts instructions on it: Waveform::stop_after).
  Waveform& waveform() { return wave_; }

 private:
  SC_HAS_PROCESS(DmaRtl);
  void start_of_simulation() override;
  void end_of_simulation() override;
  struct Ports;
  HwConfig hw_;
  GatedClock clock_;  // the core clock, running only inside run(), and the reset at time 0
  std::unique_ptr<Ports> p_;
  std::unique_ptr<Vn3_dma_engine> dut_;
  Waveform wave_;  // the waveform file, if any
  int64_t total_cycles_ = 0;
  double stall_ = 0;
  std::mt19937_64 stall_rng_;
};

}  // namespace n3::rtl
