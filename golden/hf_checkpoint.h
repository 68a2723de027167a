// HuggingFace Gemma 3n checkpoints: config.json plus one model.safetensors or
// shards listed in model.safetensors.index.json; float32, bfloat16 or
// float16; text-only (`model.`) or multimodal (`model.language_model.`)
// names. Memory-mapped; every tensor checked against the config.
#pragma once
#include <memory>
#include <string>

#include "golden/weights.h"

namespace n3 {

std::unique_ptr<WeightSource> open_hf_checkpoint(const std::string& dir);

}  // namespace n3
