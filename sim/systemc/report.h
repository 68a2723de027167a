// What a SystemC run writes: the --stats JSON (cycles and time at the
// configured clocks, per-unit busy and stall cycles, bytes per HP port,
// achieved vs peak bandwidth, MAC utilisation, per-layer and per-operator
// cycles from the destination tensors' symbol names) and the --trace
// Chrome/Perfetto JSON (one track per engine with one slice per
// instruction, one track per memory resource with one slice per transfer).
//
// A model run is many programs (prefill chunks, decode steps), each its own
// run_npu call; Totals sums their reports so the model form writes one stats
// file and one trace whose times run on across the programs.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/systemc/npu.h"

namespace n3::sc {

enum class TraceMode { None, Plain, Aggregate };

// A trace slice with its name resolved (the program it came from may be gone).
struct NamedSlice {
  int track;
  std::string name;
  double start_ps, end_ps;
  uint64_t instructions;  // instructions (or transfers) merged into it
  bool transfer = false;  // on a memory track
};

struct Totals {
  timing::Params params;
  double total_ps = 0, ddr_busy_ps = 0;
  std::vector<UnitReport> units;  // CTL DMA GEMV GEMM SFU
  std::vector<ResourceReport> resources;
  std::vector<std::string> tracks;
  std::vector<uint64_t> hp_port_bytes;
  uint64_t ddr_read = 0, ddr_written = 0, l2_bytes = 0, macs = 0, gemm_macs = 0, sfu_work = 0;
  std::map<std::string, double> layer_ps, op_ps;  // busy time by destination name (see stats_json)
  std::vector<std::pair<std::string, double>> runs;  // (label, ps) per program run
  std::vector<NamedSlice> slices;
  std::vector<long> open;  // per track: index of the slice that may still grow (Aggregate)
  double cycles(double ps) const { return ps / params.core_ps(); }
};

// The compiler names few descriptors, but its assembly text heads every part
// with a comment ("; layer 3 (local, ...)", "; attention: ...", "; FFN").
// Returns, per instruction, "layers.N.<part>" inside a layer and "<part>"
// outside (<part>: the comment up to its first ':' or ','); empty when the
// text's instruction count is not `instructions` (then the destination
// descriptor names are used).
std::vector<std::string> sections_from_asm(const std::string& text, size_t instructions);

// Adds one run of `prog` (its slices shifted to start at the current total);
// layer/operator times need the run's slices (RunOptions::trace). With
// `sections` (sections_from_asm), an instruction's operator is its section
// and mnemonic ("layers.3.attention gemv.qk": layer 3, operator
// "attention gemv.qk"), and the aggregated trace merges a unit's consecutive
// instructions of one section; without, its destination's name, else its
// mnemonic, for both.
void add_run(Totals& t, const Report& r, const isa::Program& prog, TraceMode mode, const std::string& label = "",
             const std::vector<std::string>* sections = nullptr);
std::string stats_json(const Totals& t, bool timing_only);
std::string trace_json(const Totals& t, bool aggregate);
std::string summary_line(const Totals& t);

std::string stats_json(const Report& r, const isa::Program& prog, bool timing_only);
// aggregate: consecutive instructions of one unit with the same operator
// (destination tensor name, else mnemonic) merge into one slice.
std::string trace_json(const Report& r, const isa::Program& prog, bool aggregate);
// One line for stderr: cycles, time, utilisation.
std::string summary_line(const Report& r);

}  // namespace n3::sc
