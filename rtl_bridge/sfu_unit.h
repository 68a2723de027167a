// The RTL SFU in the SystemC model (`n3 sim --backend systemc --rtl sfu`,
// docs/rtl_sfu.md "The SFU bridge"). RtlSfuUnit takes the timing model's
// SfuUnit's place: the same instruction queue, tokens and TLM sockets. Per
// CVO whose function the RTL has (sfu_vectors.h's kSfuFuncs: the
// element-wise functions, the row reductions RSUM, RMAX, RSUMSQ and RMS, and
// the fused row operators: every CVO function) it
//   - loads a, b and dst (MAC reads dst's old value) as they are before the
//     functional core executes the instruction into a shadow memory, through
//     the memories' debug transport;
//   - streams the elements through the Verilated unit (rtl::SfuRtl), with
//     a and b broadcast to dst's shape as the ISA defines (same shape,
//     [1, cols], [rows, 1], [1, 1]); a reduction streams a's rows, a row
//     operator a's rows once per pass with its b (weight, target, ROPE's
//     pair element and angle);
//   - compares dst's bytes with the functional core's (the first difference
//     stops the run: SfuMismatch names the instruction, the tensor and the
//     element) and writes them back;
//   - books the operands' memory traffic as SfuUnit::model does and records
//     the RTL's clocks next to the model's (timing::sfu_cycles).
// A CVO whose function the RTL lacked would run on the timing model's
// SfuUnit path instead: its result the functional core's, unchecked, counted
// per function (sfu_model_only) so the summary says so. None does now.
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

struct SfuMismatch : RtlMismatch {
  explicit SfuMismatch(const std::string& what) : RtlMismatch(what) {}
};

// One CVO instruction run on the RTL SFU.
struct SfuInsnRecord {
  uint32_t pc = 0;
  uint64_t dyn = 0;
  std::string func;         // "EXP"
  std::string what;         // "EXP [1,256] -> [1,256] bf16"
  double rtl_cycles = 0;    // the RTL: the command's transfer to the last result's (the unit's clocks after setup)
  double model_cycles = 0;  // the timing model's term for the same (timing::sfu_cycles)
  int64_t results = 0;      // dst elements
};

// The records of every CVO the RTL unit of this process has run, and the
// count per function of those it left to the model (none since the row operators joined).
std::vector<SfuInsnRecord>& sfu_rtl_records();
std::map<std::string, int64_t>& sfu_model_only();

// Makes `o` elaborate the RTL SFU instead of the timing model's (throws when
// `hw`'s compute.sfu_elems_per_clk differs from the Verilated build's).
// `vcd`: the RTL's waveform file ("" none).
void use_rtl_sfu(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions = -1);

// The per-instruction comparison: which functions ran on the RTL, the
// histogram of |model - rtl| / rtl, the worst instruction, the totals, and
// the instructions per function that did not run on the RTL.
void print_sfu_comparison(const std::vector<SfuInsnRecord>& r, const std::map<std::string, int64_t>& model_only,
                          std::FILE* out);

}  // namespace n3::rtl
