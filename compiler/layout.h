// Memory planning of a compiled Gemma 3n: where every weight tensor lives in
// DDR (derived from the config's weight list, golden/weight_names.h), the KV
// rings of the cache-owning layers, the run-time input region and the logits
// output region, sized for the lowering's largest spill (compiler/lower.h).
// The plan's types are in compiler/memory_plan.h. docs/compiler.md, "Memory
// plan".
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/memory_plan.h"
#include "golden/model_config.h"
#include "golden/numerics/formats_config.h"
#include "golden/weights.h"

namespace n3::comp {

// `max_chunk` bounds the prefill chunk (sliding rings hold window + max_chunk - 1 positions).
Layout plan_layout(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int max_chunk);

// The input region's int32 words for a forward over `ids` at position pos0
// whose K/V go to row row0 of the global rings (row0 == pos0 until the host
// evicts rows): [0] pos0, [1] row0, [2..3] 0, [4 .. 4+max_chunk) positions,
// [4+max_chunk ..) ids.
std::vector<int32_t> input_words(const Layout& lay, int64_t pos0, int64_t row0, const std::vector<int32_t>& ids);

// The DDR bytes of the weights and constants (weights already quantised to
// INT4 with one scale per row where the layout says INT4). Calls put(addr,
// bytes, n) for every placed tensor.
void write_weights(const Layout& lay, const WeightSource& w, const ModelConfig& cfg,
                   const std::function<void(uint64_t, const void*, uint64_t)>& put);

}  // namespace n3::comp
