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

// One decoder layer's tensors: matrices as M, vectors as V. k, v and k_norm
// exist only on cache-owning layers (ModelConfig::owns_kv).
template <class M, class V>
struct LayerTensors {
  M q, k, v, o;              // self_attn projections
  M gate, up, down;          // mlp
  M ll, lr;                  // laurel.linear_left, linear_right
  M pl_gate, pl_proj;        // per_layer_input_gate, per_layer_projection
  M router, pred, corr;      // altup: modality_router, prediction_coefs, correction_coefs (float32)
  V q_norm, k_norm;
  V in_norm, post_attn, pre_ffn, post_ffn, post_pl;  // input_layernorm ... post_per_layer_input_norm
  V laurel_norm, router_norm, out_scale;             // post_laurel_norm, altup.router_norm, correct_output_scale
};

// Their names ("layers.3.self_attn.q_proj.weight"), k, v and k_norm included.
using LayerWeightNames = LayerTensors<std::string, std::string>;
LayerWeightNames layer_weight_names(int layer);

// Layer l's tensors as a consumer holds them: matrix(name) for each matrix,
// vec(name) for each vector (the golden model's MatrixRef and float vectors,
// the CUDA path's device copies).
template <class M, class V, class LoadMatrix, class LoadVector>
LayerTensors<M, V> load_layer(const ModelConfig& c, int l, LoadMatrix matrix, LoadVector vec) {
  const LayerWeightNames n = layer_weight_names(l);
  LayerTensors<M, V> t{};  // value-initialised: null pointers where a layer has no K/V
  t.q = matrix(n.q);
  t.o = matrix(n.o);
  if (c.owns_kv(l)) {
    t.k = matrix(n.k);
    t.v = matrix(n.v);
    t.k_norm = vec(n.k_norm);
  }
  t.q_norm = vec(n.q_norm);
  t.gate = matrix(n.gate);
  t.up = matrix(n.up);
  t.down = matrix(n.down);
  t.ll = matrix(n.ll);
  t.lr = matrix(n.lr);
  t.pl_gate = matrix(n.pl_gate);
  t.pl_proj = matrix(n.pl_proj);
  t.router = matrix(n.router);
  t.pred = matrix(n.pred);
  t.corr = matrix(n.corr);
  t.in_norm = vec(n.in_norm);
  t.post_attn = vec(n.post_attn);
  t.pre_ffn = vec(n.pre_ffn);
  t.post_ffn = vec(n.post_ffn);
  t.post_pl = vec(n.post_pl);
  t.laurel_norm = vec(n.laurel_norm);
  t.router_norm = vec(n.router_norm);
  t.out_scale = vec(n.out_scale);
  return t;
}

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
