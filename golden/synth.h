// n3 synth: seeded random weights for any model config, written straight to
// an .n3w file in INT4 (docs/weights.md, "synth"). Every value is a pure
// function of (seed, tensor name, row, position) through a counter-based RNG,
// so the file is byte-identical for a seed whatever the thread count, and
// rows are generated in parallel, block by block, never a whole tensor.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "golden/model_config.h"
#include "golden/weight_names.h"

namespace n3 {

struct SynthOptions {
  int64_t group = 0;  // INT4 elements per scale; 0 = one scale per row
  std::function<void(uint64_t done, uint64_t total)> progress;  // bytes, after each tensor
};

// The per-row (per-group) scale before its U(0.5, 1.5) factor:
// gain / sqrt(fan_in) / std(q), std(q) = sqrt(17.5) ~ 4.18 for synth's q
// (symmetric on [-7, 7]); gain 1 with fan_in = cols for projections, gain
// 4 / sqrt(cols) with fan_in 1 for the embedding tables (so E[id] * sqrt(cols)
// has RMS ~4).
double synth_base_scale(const WeightSpec& s);

// Returns the size of the file written.
uint64_t synth_n3w(const ModelConfig& c, uint64_t seed, const std::string& path, const SynthOptions& opt);

}  // namespace n3
