#include "golden/weight_names.h"

namespace n3 {

namespace {

void kv_specs(const ModelConfig& c, const LayerWeightNames& n, std::vector<WeightSpec>& out) {
  const int64_t D = c.hidden, KV = c.kv_dim();
  out.push_back({n.k, {KV, D}, WeightKind::Matrix, false});
  out.push_back({n.v, {KV, D}, WeightKind::Matrix, false});
  out.push_back({n.k_norm, {c.head_dim}, WeightKind::Vector, false});
}

}  // namespace

LayerWeightNames layer_weight_names(int layer) {
  const std::string p = "layers." + std::to_string(layer) + ".";
  LayerWeightNames n;
  n.q = p + "self_attn.q_proj.weight";
  n.k = p + "self_attn.k_proj.weight";
  n.v = p + "self_attn.v_proj.weight";
  n.o = p + "self_attn.o_proj.weight";
  n.q_norm = p + "self_attn.q_norm.weight";
  n.k_norm = p + "self_attn.k_norm.weight";
  n.gate = p + "mlp.gate_proj.weight";
  n.up = p + "mlp.up_proj.weight";
  n.down = p + "mlp.down_proj.weight";
  n.in_norm = p + "input_layernorm.weight";
  n.post_attn = p + "post_attention_layernorm.weight";
  n.pre_ffn = p + "pre_feedforward_layernorm.weight";
  n.post_ffn = p + "post_feedforward_layernorm.weight";
  n.post_pl = p + "post_per_layer_input_norm.weight";
  n.out_scale = p + "altup.correct_output_scale";
  n.corr = p + "altup.correction_coefs.weight";
  n.pred = p + "altup.prediction_coefs.weight";
  n.router = p + "altup.modality_router.weight";
  n.router_norm = p + "altup.router_norm.weight";
  n.ll = p + "laurel.linear_left.weight";
  n.lr = p + "laurel.linear_right.weight";
  n.laurel_norm = p + "laurel.post_laurel_norm.weight";
  n.pl_gate = p + "per_layer_input_gate.weight";
  n.pl_proj = p + "per_layer_projection.weight";
  return n;
}

const ModelWeightNames& model_weight_names() {
  static const ModelWeightNames n{"embed_tokens.weight", "embed_tokens_per_layer.weight",
                                  "per_layer_model_projection.weight", "per_layer_projection_norm.weight",
                                  "norm.weight"};
  return n;
}

std::string ModelWeightNames::altup_projection(int stream) const {
  return "altup_projections." + std::to_string(stream - 1) + ".weight";
}

std::string ModelWeightNames::altup_unembed_projection(int stream) const {
  return "altup_unembed_projections." + std::to_string(stream - 1) + ".weight";
}

// The order is the .n3w file's tensor order and the compiler's DDR order:
// changing it changes every weights file and compiled program.
std::vector<WeightSpec> weight_specs(const ModelConfig& c) {
  const int64_t D = c.hidden, P = c.pl_dim, NL = c.layers, S = c.altup_streams;
  const ModelWeightNames& g = model_weight_names();
  std::vector<WeightSpec> s;
  s.push_back({g.embed, {c.vocab, D}, WeightKind::Matrix, true});
  s.push_back({g.embed_per_layer, {c.vocab_pl, NL * P}, WeightKind::Matrix, true});
  s.push_back({g.per_layer_model_projection, {NL * P, D}, WeightKind::Matrix, false});
  s.push_back({g.per_layer_projection_norm, {P}, WeightKind::Vector, false});
  for (int k = 1; k < S; ++k) s.push_back({g.altup_projection(k), {D, D}, WeightKind::Matrix, false});
  for (int k = 1; k < S; ++k) s.push_back({g.altup_unembed_projection(k), {D, D}, WeightKind::Matrix, false});
  s.push_back({g.final_norm, {D}, WeightKind::Vector, false});
  for (int l = 0; l < c.layers; ++l) {
    const int64_t F = c.ffn[l], R = c.laurel_rank;
    const LayerWeightNames n = layer_weight_names(l);
    s.push_back({n.q, {c.q_dim(), D}, WeightKind::Matrix, false});
    if (c.owns_kv(l)) kv_specs(c, n, s);
    s.push_back({n.o, {D, c.q_dim()}, WeightKind::Matrix, false});
    s.push_back({n.q_norm, {c.head_dim}, WeightKind::Vector, false});
    s.push_back({n.gate, {F, D}, WeightKind::Matrix, false});
    s.push_back({n.up, {F, D}, WeightKind::Matrix, false});
    s.push_back({n.down, {D, F}, WeightKind::Matrix, false});
    for (const std::string* v : {&n.in_norm, &n.post_attn, &n.pre_ffn, &n.post_ffn, &n.post_pl})
      s.push_back({*v, {D}, WeightKind::Vector, false});
    s.push_back({n.out_scale, {D}, WeightKind::Vector, false});
    s.push_back({n.corr, {S, S}, WeightKind::FloatMatrix, false});
    s.push_back({n.pred, {S * S, S}, WeightKind::FloatMatrix, false});
    s.push_back({n.router, {S, D}, WeightKind::FloatMatrix, false});
    s.push_back({n.router_norm, {D}, WeightKind::Vector, false});
    s.push_back({n.ll, {R, D}, WeightKind::Matrix, false});
    s.push_back({n.lr, {D, R}, WeightKind::Matrix, false});
    s.push_back({n.laurel_norm, {D}, WeightKind::Vector, false});
    s.push_back({n.pl_gate, {P, D}, WeightKind::Matrix, false});
    s.push_back({n.pl_proj, {D, P}, WeightKind::Matrix, false});
  }
  return s;
}

std::vector<WeightSpec> unused_shared_kv_specs(const ModelConfig& c) {
  std::vector<WeightSpec> s;
  for (int l = c.first_shared(); l < c.layers; ++l) kv_specs(c, layer_weight_names(l), s);
  return s;
}

}  // namespace n3
