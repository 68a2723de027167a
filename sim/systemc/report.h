// What a SystemC run writes: the --stats JSON (cycles and time at the
// configured clocks, per-unit busy and stall cycles, bytes per HP port,
// achieved vs peak bandwidth, MAC utilisation, per-layer and per-operator
// cycles from the destination tensors' symbol names) and the --trace
// Chrome/Perfetto JSON (one track per unit, one slice per instruction).
#pragma once
#include <string>

#include "isa/program.h"
#include "sim/systemc/npu.h"

namespace n3::sc {

std::string stats_json(const Report& r, const isa::Program& prog, bool timing_only);
// aggregate: consecutive instructions of one unit with the same operator
// (destination tensor name, else mnemonic) merge into one slice.
std::string trace_json(const Report& r, const isa::Program& prog, bool aggregate);
// One line for stderr: cycles, time, utilisation.
std::string summary_line(const Report& r);

}  // namespace n3::sc
