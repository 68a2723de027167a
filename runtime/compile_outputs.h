// What `n3 compile` writes for a compiled model: every program (.n3p and its
// assembly .s), the preload program of L2-resident weights, memory_map.json
// (where everything the programs touch lives, for `n3 sim --program`),
// report.json (the memory plan against the hardware) and, on request, the
// DDR image ddr.img. docs/compiler.md describes the files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/compiled_model.h"
#include "runtime/schedule.h"

namespace n3 {

struct CompileOutputs {
  bool image = false;            // write ddr.img (the model must hold weights)
  std::vector<int32_t> prompt;   // with image: ids in the input region at position 0
  std::string model_name;        // as given on the command line, for the report
  std::string hw_name;
  bool report = false;           // a schedule report per program (runtime/schedule.h), in report.json too
};

// The numbers `n3 compile` summarises on stdout.
struct CompileSummary {
  uint64_t ddr_bytes = 0, ddr_capacity = 0, l2_capacity = 0, l2_high_water = 0, l2_resident = 0;
  uint64_t l2_resident_base = 0, resident_weight_bytes = 0, streamed_weight_bytes = 0, weight_tile_bytes = 0;
  size_t resident_tensors = 0;
  int max_chunk = 0;
  std::vector<int> sizes;        // program sizes, smallest first
  std::vector<ScheduleReport> schedule;  // CompileOutputs::report: one per program, as sizes
};

// Writes the outputs into `dir` (which must exist and be empty, or be
// overwritable: the caller prepares it); each file atomically. Per-program
// progress lines go to stderr. `tile_bytes`: the weight-buffer tile size.
CompileSummary write_compiled(CompiledModel& m, const std::string& dir, const CompileOutputs& o, uint64_t tile_bytes);

}  // namespace n3
