// The `systemc` backend: the compiled model (FuncModel, device_func.h) with
// every program run through the SystemC timing model (sc::run_npu), which
// executes each instruction's effects on the functional core, so the bits
// are the func backend's and the simulated time comes with them.
// SystemcRunner sums the per-program reports of a model run (prefill chunks
// and decode steps) for --stats and --trace; docs/timing.md.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/device_func.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/report.h"
#endif

namespace n3 {

// Throws naming why when n3 was built without SystemC.
std::unique_ptr<Device> make_systemc_device(const DeviceOptions& opt);

#ifdef N3_HAVE_SYSTEMC
class SystemcRunner {
 public:
  // keep: what the trace keeps of each run's slices; progress: run_npu's
  // progress line inside long programs.
  SystemcRunner(const HwConfig& hw, sc::TraceMode keep, bool record_slices, bool progress);
  // The runner shares this object's totals: it must outlive the model using it.
  FuncModel::Runner runner();
  // Labels the following runs in the stats' `runs` list ("prefill", "decode").
  void set_label(std::string l) { label_ = std::move(l); }
  // Relabels runs [from, last): one model step runs one program, so any
  // earlier ones of that step are the model's one-time programs (the preload
  // of L2-resident weights).
  void relabel_before_last(size_t from, const std::string& l) {
    for (size_t i = from; i + 1 < totals_.runs.size(); ++i) totals_.runs[i].first = l;
  }
  const sc::Totals& totals() const { return totals_; }
  // The functional core's instruction, byte and MAC counts, summed.
  const sim::Stats& counts() const { return counts_; }

 private:
  timing::Params params_;
  sc::TraceMode keep_;
  bool record_slices_, progress_;
  std::string label_;
  sc::Totals totals_;
  sim::Stats counts_;
  std::map<const comp::Compiled*, std::vector<std::string>> sections_;  // per program, from its assembly
};
#endif

}  // namespace n3
