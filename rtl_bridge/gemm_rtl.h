// The RTL GEMM engine (rtl_bridge/rtl/gemm/, docs/rtl_gemm.md) as a SystemC
// module: the Verilated array, its gated clock, and a driver that runs one
// gemm.mv instruction at a time on it. The driver cuts the instruction into
// the engine's canonical job (the activation rows, then the weight tiles,
// ROWS beats each, N tile major), collects the result beats, and returns
// what the RTL computed. Used by `n3 cosim --unit gemm`.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "golden/hw_config.h"
#include "rtl_bridge/gated_clock.h"
#include "rtl_bridge/waveform.h"
#include "sim/func_sim.h"

class Vn3_gemm_engine;

namespace n3::rtl {

struct GemmRun {
  std::vector<float> out;      // dst [T, N] row-major, each value as the engine wrote it
  int64_t cycles = 0;          // core clocks from the command beat to the last result beat
  int64_t formula_cycles = 0;  // the engine's cycle formula for this job without stalls (docs/rtl_gemm.md)
  int64_t act_cycles = 0;      // of them, the activation stream's beats (one a clock, without stalls)
};

// The Verilated array's shape (N3_RTL_GEMM_* at build time).
struct GemmArray {
  int64_t rows, cols, macs_per_pe;
};
GemmArray gemm_rtl_array();

// Buffer limits of the Verilated engine (n3_gemm_engine's parameter defaults).
struct GemmLimits {
  static constexpr int64_t kTokens = 512;
  static constexpr int64_t kActElems = int64_t(1) << 19;  // T x K rounded up to whole blocks
};

class GemmRtl : public sc_core::sc_module {
 public:
  GemmRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path /* "" none */);
  ~GemmRtl() override;
  // From an SC_THREAD: runs one gemm.mv (or gemv.mv: the same products) on
  // the RTL, operands read from `mem`. Throws n3::Error (one line) on a job
  // the engine cannot take, naming why.
  GemmRun run(const sim::Issued& in, const sim::Memory& mem);
  // Random valid/ready stalls per clock on the activation, weight and
  // result streams (0: never).
  void set_stalls(double act, double weight, double result, uint64_t seed);
  void set_formats(const num::Formats& f) { formats_ = f; }
  int64_t total_cycles() const { return total_cycles_; }
  Waveform& waveform() { return wave_; }
  // The engine's cycles with every stream ready (docs/rtl_gemm.md).
  static int64_t formula_cycles(int64_t T, int64_t K, int64_t N, int afmt_bits, int bfp_block);
  // Of them, the clocks of the activation stream's beats (the model's L2
  // read of src; three clocks of setup follow before the array starts).
  static int64_t act_cycles(int64_t T, int64_t K, int afmt_bits, int bfp_block);

 private:
  struct Ports;
  void start_of_simulation() override;
  void end_of_simulation() override;
  num::Formats formats_;
  GatedClock clock_;
  std::unique_ptr<Ports> p_;
  std::unique_ptr<Vn3_gemm_engine> dut_;
  Waveform wave_;
  int64_t total_cycles_ = 0;
  double stall_a_ = 0, stall_w_ = 0, stall_r_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace n3::rtl
