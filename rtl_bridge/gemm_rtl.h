// The RTL GEMM engine (rtl_bridge/rtl/gemm/, docs/rtl_gemm.md) as a SystemC
// module: the Verilated array, its gated clock, and a driver that runs one
// gemm.mv instruction at a time on it. The driver cuts the instruction into
// the engine's canonical job (the activation rows, then the weight tiles,
// ROWS beats each, N tile major), collects the result beats, and returns
// what the RTL computed. Used by `n3 cosim --unit gemm` and by the SystemC
// bridge (`n3 sim --backend systemc --rtl gemm`, gemm_unit.h).
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
#include "rtl_bridge/weight_feed.h"
#include "sim/func_sim.h"

class Vn3_gemm_engine;

namespace n3::rtl {

struct GemmRun {
  std::vector<float> out;      // dst [T, N] row-major, each value as the engine wrote it
  int64_t cycles = 0;          // core clocks from the command beat to the last result beat
  int64_t formula_cycles = 0;  // the engine's cycle formula for this job without stalls (docs/rtl_gemm.md)
  int64_t act_cycles = 0;      // of them, the activation stream's beats (one a clock, without stalls)
  int64_t weight_stall_cycles = 0;  // clocks the engine could take a weight beat whose rows had not landed (WeightFeed)
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
  // the engine cannot take, naming why. With a `feed`, an N tile's weight
  // beats go only once its w rows have landed (WeightFeed::wait_rows) and
  // its rows are reported consumed once its last beat is in the engine's
  // PE banks; without, every row is there.
  GemmRun run(const sim::Issued& in, const sim::Memory& mem, WeightFeed* feed = nullptr);
  // Random valid/ready stalls per clock on the activation, weight and
  // result streams (0: never).
  void set_stalls(double act, double weight, double result, uint64_t seed);
  void set_formats(const num::Formats& f) { formats_ = f; }
  int64_t total_cycles() const { return total_cycles_; }
  Waveform& waveform() { return wave_; }
  // Whether the array has `w`'s weight kind: INT4 or INT8 with ROW scales,
  // INT4 with TWO_LEVEL (run() refuses the others in one line).
  static bool takes_weights(const sim::View& w);
  // The engine's cycles with every stream ready (docs/rtl_gemm.md).
  static int64_t formula_cycles(int64_t T, int64_t K, int64_t N, int afmt_bits, int bfp_block);
  // Of them, the clocks of the activation stream's beats (the model's L2
  // read of src; three clocks of setup follow before the array starts).
  static int64_t act_cycles(int64_t T, int64_t K, int afmt_bits, int bfp_block);

 private:
  SC_HAS_PROCESS(GemmRtl);
  struct Ports;
  // SC_THREAD: calls feed_->wait_rows ahead of the weight stream, one N
  // tile's rows at a time (the driver, which must sample the engine every
  // clock, only reads landed_).
  void fetcher();
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
  WeightFeed* feed_ = nullptr;
  int64_t fetch_rows_ = 0, fetch_tile_rows_ = 1;  // the job's N and rows per N tile, for fetcher
  int64_t landed_ = 0;                            // w rows [0, landed_) have landed
  sc_core::sc_event fetch_go_;
};

}  // namespace n3::rtl
