// The RTL instruction decoder in the SystemC model's control unit (`n3 sim
// --backend systemc --rtl decoder`, docs/rtl.md "The decoder bridge"). Every
// instruction word the control unit fetches (control instructions included)
// is driven through the Verilated n3_decoder (rtl/decoder/) in the decode
// stage, on the core clock, in fetch order; each of its decodes is compared
// with the C++ decoder's (decoder_outputs.h, as `n3 cosim --unit decoder`
// compares them) and the first difference stops the run (DecoderMismatch:
// pc, dynamic number, word, the output, rtl vs C++).
//
// Timing: the decoder is a 2-stage pipeline that accepts one word per clock
// (n3 cosim --unit decoder measures it; here every word's wait for in_ready
// is counted, and a test holds it at 0): its rate is the model's dispatch
// rate, timing.dispatch_cycles = 1, so the control unit keeps its dispatch
// interval and the run's cycles are the model's. The 2-clock latency is the
// fill of a fetch pipeline the model leaves out (docs/rtl.md).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "golden/hw_config.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

struct DecoderMismatch : RtlMismatch {
  explicit DecoderMismatch(const std::string& what) : RtlMismatch(what) {}
};

// The figures of every word the RTL decoder of this process decoded.
struct DecoderRunStats {
  int64_t words = 0;          // decoded and compared
  int64_t cycles = 0;         // RTL clocks with the clock running, the power-on reset's included
  int64_t reset_cycles = 0;   // of which the power-on reset
  int64_t stall_cycles = 0;   // clocks an offered word waited for in_ready (the RTL slower than one per clock)
  int64_t behind = 0;         // words fetched while an earlier one was not yet offered (reset at time 0, drift)
  int64_t latency_min = INT64_MAX, latency_max = 0;  // clocks from acceptance to the output transfer
  int64_t dispatch_cycles = 0;  // the model's dispatch interval (timing.dispatch_cycles)
};
DecoderRunStats& decoder_rtl_stats();

// Makes `o` elaborate the RTL decoder in the control unit's decode stage.
// `vcd`: the RTL's waveform file ("" none), ending after its first
// `vcd_instructions` words (< 0: all).
void use_rtl_decoder(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

void print_decoder_summary(const DecoderRunStats& s, std::FILE* out);

}  // namespace n3::rtl
