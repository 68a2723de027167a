// Every tensor a Gemma 3n text decoder of a given config has, with its shape:
// the one list that the HF reader, the n3 weights file and n3 synth share.
#pragma once
#include <string>
#include <vector>

#include "golden/model_config.h"
#include "base/tensor.h"

namespace n3 {

enum class WeightKind {
  Matrix,       // quantised to INT4 in .n3w files
  FloatMatrix,  // small AltUp coefficient matrices, kept float32
  Vector,       // norm weights and scalars, float32
};

struct WeightSpec {
  std::string name;
  Shape shape;
  WeightKind kind;
  bool is_embedding;  // per-token-row scales; looked up, not multiplied (except the tied LM head)
};

std::vector<WeightSpec> weight_specs(const ModelConfig& c);
// K/V projections and k_norm that HF < 5.6 checkpoints carry on KV-shared
// layers and never use: accepted and ignored when present.
std::vector<WeightSpec> unused_shared_kv_specs(const ModelConfig& c);

}  // namespace n3
