// The RTL SFU (rtl_bridge/rtl/sfu/, docs/rtl_sfu.md "SFU element pipeline", "SFU row operators") as a
// SystemC module: the Verilated model, its gated clock, and a driver that
// streams one command's elements through it (`n3 cosim --unit sfu`, and
// the bridge into the SystemC model, `--rtl sfu`: rtl_bridge/sfu_unit.h).
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "golden/hw_config.h"
#include "golden/numerics/formats.h"
#include "isa/isa.h"
#include "rtl_bridge/sfu_vectors.h"
#include "rtl_bridge/gated_clock.h"
#include "rtl_bridge/waveform.h"

class Vn3_sfu;

namespace n3::rtl {

struct SfuRun {
  int64_t cycles = 0;   // clocks from the first element's transfer in to the last result's out, both counted
  int64_t latency = 0;  // clocks from the transfer in of the first result's last beat to the result's transfer out
  int64_t beats = 0;    // input beats
};

class SfuRtl : public sc_core::sc_module {
 public:
  static constexpr int kLanes = N3_RTL_SFU_LANES;  // the Verilated parameter (rtl_bridge/CMakeLists.txt)

  SfuRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path /* "" none */);
  ~SfuRtl() override;
  // From an SC_THREAD: one command (function f, the instruction's constant
  // k's f32 bits, or ROPE's row length d; dst's format), then the elements in beats of kLanes; `out` gets each result
  // (the f32 bits of the value in dst's format), in order. A row reduction
  // (RSUM, RMAX, RSUMSQ, RMS) takes `rows`, the row lengths (summing to the
  // elements): each row from a fresh beat, in_last on its last; `out` gets
  // one result per row. ROPE takes rows the same way (its element's index in
  // the row says which half of the pair it is), and RMSNORM, SOFTMAX, GTOPK
  // and MAGMATCH too, streaming each row once per pass (sfu_passes: the
  // unit re-reads the row as it would from L2), in_last on each pass's last
  // beat; those give a result per element. `hasb`: RMSNORM's weight streams in b.
  SfuRun run(isa::CvoFunc f, uint32_t k, num::Fmt fmt, const std::vector<SfuElem>& in, std::vector<uint32_t>& out,
             const std::vector<int64_t>& rows = {}, bool hasb = false);
  // Random stalls (cosim): each clock in_valid (while no beat is offered)
  // and out_ready are held low with probability p. 0 (the default): never.
  void set_stalls(double p, uint64_t seed);
  int64_t total_cycles() const { return total_cycles_; }
  Waveform& waveform() { return wave_; }

 private:
  SC_HAS_PROCESS(SfuRtl);
  void start_of_simulation() override;
  void end_of_simulation() override;
  struct Ports;
  GatedClock clock_;  // the core clock, running only inside run(), and the reset at time 0
  std::unique_ptr<Ports> p_;
  std::unique_ptr<Vn3_sfu> dut_;
  Waveform wave_;
  int64_t total_cycles_ = 0;
  double stall_ = 0;
  std::mt19937_64 stall_rng_;
};

}  // namespace n3::rtl
