// The RTL control engine's execute stage in the SystemC model (`n3 sim
// --backend systemc --rtl ctl`, docs/rtl_ctl.md "The control engine bridge").
// Every control instruction the control unit executes on the functional
// core is executed again by the Verilated n3_ctl (rtl/ctl/), in order, on
// the core clock: its register write, next pc, HALT and memory request are
// compared with what the functional core did (sim/ctl_exec.cc's ctl_step
// for the request, the core's registers and pc for the rest), and the first
// difference stops the run (CtlMismatch: pc, dynamic number, word, the
// field, rtl vs model). A load's data is the word the core read.
//
// Timing: the model charges timing.ctl_cycles per control instruction and
// does not wait for the RTL; the RTL's clocks per instruction are counted
// per kind and printed against ctl_cycles (it falls behind on REMU and
// LDST, which take more than one clock).
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "golden/hw_config.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

struct CtlMismatch : RtlMismatch {
  explicit CtlMismatch(const std::string& what) : RtlMismatch(what) {}
};

struct CtlRunStats {
  int64_t instructions = 0;  // executed and compared
  int64_t cycles = 0;        // RTL clocks with the clock running, the reset and register seeding included
  int64_t reset_cycles = 0, seed_cycles = 0;
  int64_t behind = 0;        // instructions executed while an earlier one was still waiting for the RTL
  std::map<std::string, std::pair<int64_t, int64_t>> kinds;  // kind: instructions, RTL clocks (acceptance to result)
  int64_t ctl_cycles = 0;    // the model's charge per control instruction
};
CtlRunStats& ctl_rtl_stats();

// Makes `o` elaborate the RTL execute stage beside the functional core.
void use_rtl_ctl(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

void print_ctl_summary(const CtlRunStats& s, std::FILE* out);

}  // namespace n3::rtl
