// The `systemc` backend: the compiled model (runtime/compiled_model.h) with
// every program run through the SystemC timing model (sc::run_npu), which
// executes each instruction's effects on the functional core, so the bits
// are the func backend's and the simulated time comes with them.
// SystemcRunner sums the per-program reports of a model run (the preload,
// prefill chunks and decode steps, each run labelled) for --stats and
// --trace; docs/timing.md.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/compiled_model.h"
#include "runtime/device.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/report.h"
#endif

namespace n3 {

#ifdef N3_HAVE_SYSTEMC
class SystemcRunner {
 public:
  // keep: what the trace keeps of each run's slices; progress: run_npu's
  // progress line inside long programs.
  SystemcRunner(const HwConfig& hw, sc::TraceMode keep, bool record_slices, bool progress);
  // Runs the units `units` names ("decoder": every fetched word also decoded
  // by the RTL decoder; "gemv", "dma": those engines' instructions) on
  // their Verilated RTL (rtl_bridge/, docs/rtl.md), the waveforms to `vcd`
  // ("" none; rtl::rtl_vcd_path); throws where n3 was built without them.
  // `vcd_instructions`: each unit's waveform ends after its first N instructions (< 0: all).
  void use_rtl(const std::vector<std::string>& units, const std::string& vcd, int64_t vcd_instructions = -1);
  // The runner shares this object's totals: it must outlive the model using it.
  CompiledModel::Runner runner();
  const sc::Totals& totals() const { return totals_; }
  // The functional core's instruction, byte and MAC counts, summed.
  const sim::Stats& counts() const { return counts_; }

 private:
  timing::Params params_;
  sc::TraceMode keep_;
  bool record_slices_, progress_;
  std::vector<std::string> rtl_units_;
  std::string rtl_vcd_;
  int64_t rtl_vcd_instructions_ = -1;
  sc::Totals totals_;
  sim::Stats counts_;
  std::map<const comp::Compiled*, std::vector<std::string>> sections_;  // per program, from its assembly
};

// The systemc device on `run` (shared: the caller reads its totals after the run).
std::unique_ptr<Device> make_systemc_device(const DeviceOptions& opt, std::shared_ptr<SystemcRunner> run);
#endif

// Throws naming why when n3 was built without SystemC.
std::unique_ptr<Device> make_systemc_device(const DeviceOptions& opt);

}  // namespace n3
