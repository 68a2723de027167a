// The RTL GEMV engine in the SystemC model (`n3 sim --backend systemc --rtl
// gemv`, docs/rtl.md "The bridge"). RtlGemvUnit takes the timing model's
// MacUnit's place as the GEMV engine: the same instruction queue, tokens,
// TLM sockets and weight buffers. Per instruction it
//   - reads the operands as they are before the functional core executes
//     the instruction, through the memories' debug transport (TLM payloads
//     that carry data) into a shadow memory;
//   - books the activation read on an L2 port, streams the weight (or KV)
//     tiles from DDR through the weight buffers as the timing model does,
//     and lets the Verilated engine (rtl::GemvRtl) take each row only once
//     its tile has landed; a tile's buffer slot is released when the engine
//     has consumed its rows, so a stalled stream stalls the RTL;
//   - compares every result with the functional core's (the first
//     difference stops the run: GemvMismatch names the instruction, the
//     tensor and the element), writes the results back through the debug
//     transport and books the result write;
//   - records the RTL's cycles next to the timing model's prediction for the
//     same instruction and the same tile arrival times (gemv_rtl_records).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "rtl_bridge/mac_bridge.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

// The first GEMV result on which the RTL and the functional core differ.
struct GemvMismatch : RtlMismatch {
  explicit GemvMismatch(const std::string& what) : RtlMismatch(what) {}
};

// One GEMV instruction run on the RTL engine (its RTL and model cycles).
using GemvInsnRecord = MacInsnRecord;

// The records of every GEMV instruction the RTL unit of this process has
// run since the last clear (one process elaborates one model).
std::vector<GemvInsnRecord>& gemv_rtl_records();

// Makes `o` elaborate the RTL GEMV engine instead of the timing model's
// (the Verilated model is built for one design point: throws naming
// -DN3_RTL_HW when `hw`'s GEMV cores or lanes differ). `vcd`: the RTL's
// waveform file ("" none).
void use_rtl_gemv(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

// Prints the per-instruction comparison: the histogram of the relative
// cycle error |rtl - model| / rtl, the worst instructions, and the totals.
void print_gemv_comparison(const std::vector<GemvInsnRecord>& r, std::FILE* out);

}  // namespace n3::rtl
