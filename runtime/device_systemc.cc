#include "runtime/device_systemc.h"

#include "base/error.h"
#include "runtime/device_compiled.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/npu.h"
#endif
#ifdef N3_HAVE_RTL
#include "rtl_bridge/rtl_units.h"
#endif

namespace n3 {

#ifdef N3_HAVE_SYSTEMC

SystemcRunner::SystemcRunner(const HwConfig& hw, sc::TraceMode keep, bool record_slices, bool progress)
    : params_(timing::load_params(hw)), keep_(keep), record_slices_(record_slices || keep != sc::TraceMode::None),
      progress_(progress) {}

void SystemcRunner::use_rtl(const std::vector<std::string>& units, const std::string& vcd, int64_t vcd_instructions) {
#ifdef N3_HAVE_RTL
  rtl_units_ = units;
  rtl_vcd_ = vcd;
  rtl_vcd_instructions_ = vcd_instructions;
#else
  (void)vcd;
  (void)vcd_instructions;
  if (!units.empty())
    throw Error("--rtl " + units[0] + ": this n3 was built without Verilator: the RTL units are left out (docs/rtl.md)");
#endif
}

CompiledModel::Runner SystemcRunner::runner() {
  return [this](sim::FuncSim& s, const comp::Compiled& c, const std::string& label) {
    sc::RunOptions o;
    o.trace = record_slices_;
    o.progress = progress_;
#ifdef N3_HAVE_RTL
    rtl::use_rtl_units(&o, params_, rtl_units_, rtl_vcd_, rtl_vcd_instructions_);
#endif
    const sc::Report r = sc::run_npu(s, params_, o);
    auto it = sections_.find(&c);
    if (it == sections_.end() && record_slices_)
      it = sections_.emplace(&c, sc::sections_from_asm(c.text, c.program.code.size())).first;
    sc::add_run(totals_, r, c.program, keep_, label, it == sections_.end() ? nullptr : &it->second);
    const sim::Stats& st = s.stats();
    for (size_t e = 0; e < st.insns.size(); ++e) counts_.insns[e] += st.insns[e];
    for (size_t i = 0; i < st.bytes_read.size(); ++i) {
      counts_.bytes_read[i] += st.bytes_read[i];
      counts_.bytes_written[i] += st.bytes_written[i];
    }
    counts_.macs += st.macs;
    counts_.sfu_elems += st.sfu_elems;
    counts_.fetched += st.fetched;
    return r.total_ps;
  };
}

std::unique_ptr<Device> make_systemc_device(const DeviceOptions& opt, std::shared_ptr<SystemcRunner> run) {
  // The closure keeps the runner alive as long as the device.
  CompiledModel::Runner inner = run->runner();
  return make_compiled_device(opt, "systemc",
                              [run, inner](sim::FuncSim& s, const comp::Compiled& c, const std::string& label) {
                                return inner(s, c, label);
                              });
}

std::unique_ptr<Device> make_systemc_device(const DeviceOptions& opt) {
  return make_systemc_device(
      opt, std::make_shared<SystemcRunner>(load_hw_config(opt.hw_path), sc::TraceMode::None, false, false));
}

#else

std::unique_ptr<Device> make_systemc_device(const DeviceOptions&) {
  throw Error("backend 'systemc' is not available: n3 was built without SystemC (pkg-config systemc not found)");
}

#endif

}  // namespace n3
