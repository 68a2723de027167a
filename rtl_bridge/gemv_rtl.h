// The RTL GEMV engine (rtl_bridge/rtl/gemv/, docs/rtl_gemv.md "GEMV engine") as a
// SystemC module: the Verilated model, its clock, and a driver that runs one
// GEMV instruction at a time on it. The driver cuts an instruction into the
// engine's canonical job (activation vectors, weight rows dealt to the
// cores, results tagged (row, vector)); every value it returns was computed
// by the RTL. Used by `n3 cosim --unit gemv` and by the SystemC bridge
// (`n3 sim --backend systemc --rtl gemv`).
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "rtl_bridge/gated_clock.h"
#include "rtl_bridge/waveform.h"
#include "rtl_bridge/weight_feed.h"

#include "golden/hw_config.h"
#include "sim/func_sim.h"

class Vn3_gemv_engine;

namespace n3::rtl {

// WeightFeed (weight_feed.h): where an instruction's w-operand rows come from.

struct GemvRun {
  std::vector<float> out;   // dst elements in row-major dst order, each the value the engine wrote (already rounded to dst's format)
  int64_t cycles = 0;       // core clock cycles from the command beat to the last result beat
  int64_t weight_stall_cycles = 0;  // cycles a core could take a weight beat but its row had not landed
  int64_t formula_cycles = 0;       // the engine's cycle formula for this job without stalls (docs/rtl.md)
};

// Buffer limits of the Verilated engine (the defaults of n3_gemv_engine's
// parameters; keep in step with rtl_bridge/rtl/gemv/n3_gemv_engine.sv).
struct GemvLimits {
  static constexpr int64_t kActElems = int64_t(1) << 20;  // vectors x len (rounded up to whole blocks)
  static constexpr int64_t kVectors = 4096;               // activation vectors per instruction
  static constexpr int64_t kRowLen = 16384;               // dot product length
  static constexpr int64_t kBfpVectors = 16;              // qk/pv with float KV: query heads per KV head
  static constexpr int64_t kScales = 65536;               // pv with INT8 values: positions x KV heads
};

class GemvRtl : public sc_core::sc_module {  // owns the Verilated Vn3_gemv_engine, its gated clock (GatedClock, period = 1e6/core_mhz ps) and signals
 public:
  GemvRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path /* "" none */);
  ~GemvRtl() override;
  // From an SC_THREAD: runs one GEMV instruction (gemv.mv/qk/pv; in.op("dst"/"src"/"w")) on the RTL, reading
  // its operands from `mem`, feeding w rows only as `feed` allows. Throws n3::Error (one line) on an
  // instruction the engine cannot take (e.g. longer than its buffers) naming why.
  GemvRun run(const sim::Issued& in, const sim::Memory& mem, WeightFeed& feed);

  // Random valid/ready stalls (cosim): each clock the activation stream and
  // each weight stream hold their beat back, and each result stream holds
  // ready low, with these probabilities. 0 (the default): never.
  void set_stalls(double act, double weight, double result, uint64_t seed);
  // Number formats of the following runs (bfp_block, mantissa widths; the
  // engine takes them per job). Default: the hardware file's.
  void set_formats(const num::Formats& f) { formats_ = f; }
  // Cycles simulated since construction (all runs).
  int64_t total_cycles() const { return total_cycles_; }
  // The waveform (the owner counts instructions on it: Waveform::stop_after).
  Waveform& waveform() { return wave_; }

  struct Job;  // an instruction in the engine's canonical form (gemv_rtl.cc)

 private:
  SC_HAS_PROCESS(GemvRtl);
  void fetcher();  // SC_THREAD: calls WeightFeed::wait_rows ahead of the streams
  void start_of_simulation() override;
  void end_of_simulation() override;
  GemvRun drive(Job& job, WeightFeed& feed);
  static int64_t formula_cycles(const Job& job, int bfp_block);

  struct Ports;
  HwConfig hw_;
  num::Formats formats_;
  GatedClock clock_;  // the core clock, running only while run() drives a job, and the reset at time 0
  std::unique_ptr<Ports> p_;
  std::unique_ptr<Vn3_gemv_engine> dut_;
  Waveform wave_;  // the waveform file, if any
  int64_t total_cycles_ = 0;
  double stall_act_ = 0, stall_w_ = 0, stall_r_ = 0;
  std::mt19937_64 stall_rng_;
  // The fetcher's view of the running job: w rows needed, in order, and how many have landed.
  Job* job_ = nullptr;
  WeightFeed* feed_ = nullptr;
  int64_t landed_ = 0;
  sc_core::sc_event fetch_go_;
};

}  // namespace n3::rtl
