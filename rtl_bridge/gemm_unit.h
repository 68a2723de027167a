// The RTL GEMM engine in the SystemC model (`n3 sim --backend systemc --rtl
// gemm`, docs/rtl_gemm.md "The bridge"). RtlGemmUnit takes the timing
// model's MacUnit's place as the GEMM engine (engine 3): the same
// instruction queue, tokens, TLM sockets and weight buffers. Per gemm.mv it
// reads the operands into a shadow memory before the functional core
// executes the instruction, books the activation read on an L2 port, streams
// the weight tiles from DDR through the weight buffers as the timing model
// cuts them and lets the Verilated array (rtl::GemmRtl) take an N tile's
// weight beats only once its rows have landed, compares every result with
// the functional core's bit for bit (the first difference stops the run),
// writes the RTL's results back, and records the RTL's cycles next to the
// timing model's prediction for the same instruction and tile arrivals.
// The stream, shadow and comparison are shared with the GEMV bridge
// (mac_bridge.h). A gemm.mv whose weight kind the array lacks (float
// weights, GROUP scales: GemmRtl::takes_weights) runs on the timing model's
// MacUnit path instead, its result the functional core's, unchecked,
// counted per kind (gemm_model_only) so the summary says so, as the SFU
// bridge does for a function its RTL lacks; a job beyond the array's
// buffers is refused in one line.
#pragma once
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "rtl_bridge/mac_bridge.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

// The first GEMM result on which the RTL and the functional core differ.
struct GemmMismatch : RtlMismatch {
  explicit GemmMismatch(const std::string& what) : RtlMismatch(what) {}
};

// The records of every GEMM instruction the RTL unit of this process ran.
std::vector<MacInsnRecord>& gemm_rtl_records();
// The GEMM instructions that ran on the timing model, per weight kind
// ("f32 weights", "int4 group scales").
std::map<std::string, int64_t>& gemm_model_only();

// Makes `o` elaborate the RTL GEMM engine instead of the timing model's.
// The Verilated array is built for one design point: throws (one line,
// naming -DN3_RTL_HW) when `hw`'s GEMM rows, columns or MACs per PE differ.
// `vcd`: the RTL's waveform file ("" none), holding its first
// `vcd_instructions` instructions (< 0: all).
void use_rtl_gemm(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

// The `rtl gemm:` per-instruction comparison (print_mac_comparison).
void print_gemm_comparison(const std::vector<MacInsnRecord>& r, const std::map<std::string, int64_t>& model_only,
                           std::FILE* out);

}  // namespace n3::rtl
