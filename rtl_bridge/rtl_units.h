// The RTL units `n3 sim --backend systemc --rtl LIST` can put in their
// engines' places (docs/rtl.md): which exist in this build, how the list
// reads, the waveform files, and the summaries after the run.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "rtl_bridge/shadow.h"  // RtlMismatch
#include "rtl_bridge/waveform.h"  // check_waveform_path
#include "sim/systemc/npu.h"

namespace n3::rtl {

// The waveform file of `unit` for `--vcd vcd` with `n` units: `vcd`
// itself for one unit (as `--rtl gemv` always wrote); for several, the
// unit's name before the extension (w.fst: w.gemv.fst, w.gemm.fst, w.dma.fst, w.sfu.fst), one
// file per Verilated model, each an FST of its own that GTKWave opens.
inline std::string rtl_vcd_path(const std::string& vcd, const std::string& unit, size_t n) {
  if (n <= 1) return vcd;
  const size_t slash = vcd.find_last_of('/'), dot = vcd.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return vcd + "." + unit;
  return vcd.substr(0, dot) + "." + unit + vcd.substr(dot);
}

// Elaborates each of `units` ("decoder", "ctl", "gemv", "gemm", "dma", "sfu"; as parse_rtl_list gives them)
// in its engine's place in `o`. `vcd` ("" none): the waveform; with one unit
// the file itself, with several one file per unit (rtl_vcd_path), each
// holding its unit's first `vcd_instructions` instructions (< 0: all).
void use_rtl_units(sc::RunOptions* o, const HwConfig& hw, const std::vector<std::string>& units, const std::string& vcd,
                   int64_t vcd_instructions = -1);

// Prints each unit's comparison (histogram, worst, totals) and the wall
// time with the RTL cycles simulated per wall second.
void print_rtl_summaries(const std::vector<std::string>& units, double wall_s, std::FILE* out);

}  // namespace n3::rtl
