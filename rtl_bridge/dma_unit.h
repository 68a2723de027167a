// The RTL DMA engine in the SystemC model (`n3 sim --backend systemc --rtl
// dma`, docs/rtl.md "The DMA bridge"). RtlDmaUnit takes the timing model's
// DmaUnit's place: the same instruction queue, tokens and TLM sockets. Per
// MEMCPY / MEMSET it
//   - loads src and dst (data and scale records) as they are before the
//     functional core executes the instruction into a shadow memory, through
//     the memories' debug transport;
//   - runs the Verilated engine (rtl::DmaRtl) on the shadow: its AXI-like
//     read and write channels are served with the model's memory timing
//     (the instruction's reads and writes each one transfer on the model's
//     DDR / HP ports or L2 port, booked as DmaUnit::model books them when
//     the engine begins the stream; a burst is served with its share), so
//     the RTL's cycles include real memory stalls, other engines' traffic
//     included;
//   - compares dst's bytes and scale records with the functional core's
//     (the first difference stops the run: DmaMismatch names the
//     instruction, the tensor and the element) and writes them back;
//   - records the RTL's cycles next to the timing model's prediction for the
//     same instruction given the same memory answers (dma_rtl_records).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

struct DmaMismatch : RtlMismatch {
  explicit DmaMismatch(const std::string& what) : RtlMismatch(what) {}
};

// One DMA instruction run on the RTL engine.
struct DmaInsnRecord {
  uint32_t pc = 0;
  uint64_t dyn = 0;
  std::string what;         // "memcpy [1,256] ddr bf16 -> [1,256] l2 f32"
  double rtl_cycles = 0;    // the RTL: first command transfer to last completion
  double model_cycles = 0;  // the timing model with the memory's answers to the RTL's streams (dma_model_cycles)
  double mem_wait_cycles = 0;  // clocks the RTL waited on the memory's timing
  int64_t bytes = 0;        // dst bytes (data and scales)
};

// The records of every DMA instruction the RTL unit of this process has run.
std::vector<DmaInsnRecord>& dma_rtl_records();

// Makes `o` elaborate the RTL DMA engine instead of the timing model's
// (throws naming -DN3_RTL_HW when `hw`'s HP port width or DDR burst differ
// from the Verilated build's). `vcd`: the RTL's waveform file ("" none).
void use_rtl_dma(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

// The per-instruction comparison: the histogram of |model - rtl| / rtl, the
// worst instruction, the totals.
void print_dma_comparison(const std::vector<DmaInsnRecord>& r, std::FILE* out);

// The timing model's DMA duration for one instruction (sim/systemc/engines.cc
// DmaUnit::model), in core clocks, when the memory answers its read and
// write streams as `r` and `w` (cosim_dma.cc); dma_idle_stream: the answer
// of an idle machine (nullptr or an empty view: no stream);
// dma_memory_cycles: the model on an idle machine.
double dma_model_cycles(const timing::Params& p, const sim::Issued& in, const timing::DmaStream& r,
                        const timing::DmaStream& w);
timing::DmaStream dma_idle_stream(const timing::Params& p, const sim::View* v);
double dma_memory_cycles(const timing::Params& p, const sim::Issued& in, const sim::View* src, const sim::View& dst);

}  // namespace n3::rtl
