// Every tensor a Gemma 3n text decoder of a given config has, with its name
// and shape: the one table that the HF reader, the n3 weights file, n3 synth,
// the golden model, the compiler and the CUDA upload share. Names are HF's
// without the "model." / "model.language_model." prefix; this file and
// weight_names.cc are the only places that spell them (docs/weights.md).
#pragma once
#include <string>
#include <vector>

#include "golden/model_config.h"
#include "base/tensor.h"

namespace n3 {

// The names of one decoder layer's tensors ("layers.3.self_attn.q_proj.weight").
// k, v and k_norm exist only on cache-owning layers (ModelConfig::owns_kv).
struct LayerWeightNames {
  std::string q, k, v, o, q_norm, k_norm;                                      // self_attn
  std::string gate, up, down;                                                  // mlp
  std::string input_norm, post_attn_norm, pre_ffn_norm, post_ffn_norm, post_pl_norm;
  std::string out_scale, corr, pred, router, router_norm;                      // altup
  std::string laurel_left, laurel_right, laurel_norm;
  std::string pl_gate, pl_proj;                                                // per-layer input
};
LayerWeightNames layer_weight_names(int layer);

// The names of the tensors outside the layers.
struct ModelWeightNames {
  std::string embed;                       // token embedding, also the tied LM head
  std::string embed_per_layer;             // per-layer-input embedding
  std::string per_layer_model_projection;  // [L * P, D]
  std::string per_layer_projection_norm;
  std::string final_norm;
  // AltUp's projection of x0 into stream s, and back out of it (s = 1 .. S-1).
  std::string altup_projection(int stream) const;
  std::string altup_unembed_projection(int stream) const;
};
const ModelWeightNames& model_weight_names();

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
