#include "golden/weight_names.h"

namespace n3 {

namespace {

std::string L(int l) { return "layers." + std::to_string(l) + "."; }

void kv_specs(const ModelConfig& c, int l, std::vector<WeightSpec>& out) {
  const int64_t D = c.hidden, KV = c.kv_dim();
  out.push_back({L(l) + "self_attn.k_proj.weight", {KV, D}, WeightKind::Matrix, false});
  out.push_back({L(l) + "self_attn.v_proj.weight", {KV, D}, WeightKind::Matrix, false});
  out.push_back({L(l) + "self_attn.k_norm.weight", {c.head_dim}, WeightKind::Vector, false});
}

}  // namespace

std::vector<WeightSpec> weight_specs(const ModelConfig& c) {
  const int64_t D = c.hidden, P = c.pl_dim, NL = c.layers, S = c.altup_streams;
  std::vector<WeightSpec> s;
  s.push_back({"embed_tokens.weight", {c.vocab, D}, WeightKind::Matrix, true});
  s.push_back({"embed_tokens_per_layer.weight", {c.vocab_pl, NL * P}, WeightKind::Matrix, true});
  s.push_back({"per_layer_model_projection.weight", {NL * P, D}, WeightKind::Matrix, false});
  s.push_back({"per_layer_projection_norm.weight", {P}, WeightKind::Vector, false});
  for (int k = 0; k < S - 1; ++k)
    s.push_back({"altup_projections." + std::to_string(k) + ".weight", {D, D}, WeightKind::Matrix, false});
  for (int k = 0; k < S - 1; ++k)
    s.push_back({"altup_unembed_projections." + std::to_string(k) + ".weight", {D, D},
                 WeightKind::Matrix, false});
  s.push_back({"norm.weight", {D}, WeightKind::Vector, false});
  for (int l = 0; l < c.layers; ++l) {
    const int64_t F = c.ffn[l], R = c.laurel_rank;
    s.push_back({L(l) + "self_attn.q_proj.weight", {c.q_dim(), D}, WeightKind::Matrix, false});
    if (c.owns_kv(l)) kv_specs(c, l, s);
    s.push_back({L(l) + "self_attn.o_proj.weight", {D, c.q_dim()}, WeightKind::Matrix, false});
    s.push_back({L(l) + "self_attn.q_norm.weight", {c.head_dim}, WeightKind::Vector, false});
    s.push_back({L(l) + "mlp.gate_proj.weight", {F, D}, WeightKind::Matrix, false});
    s.push_back({L(l) + "mlp.up_proj.weight", {F, D}, WeightKind::Matrix, false});
    s.push_back({L(l) + "mlp.down_proj.weight", {D, F}, WeightKind::Matrix, false});
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm", "post_per_layer_input_norm"})
      s.push_back({L(l) + n + ".weight", {D}, WeightKind::Vector, false});
    s.push_back({L(l) + "altup.correct_output_scale", {D}, WeightKind::Vector, false});
    s.push_back({L(l) + "altup.correction_coefs.weight", {S, S}, WeightKind::FloatMatrix, false});
    s.push_back({L(l) + "altup.prediction_coefs.weight", {S * S, S}, WeightKind::FloatMatrix, false});
    s.push_back({L(l) + "altup.modality_router.weight", {S, D}, WeightKind::FloatMatrix, false});
    s.push_back({L(l) + "altup.router_norm.weight", {D}, WeightKind::Vector, false});
    s.push_back({L(l) + "laurel.linear_left.weight", {R, D}, WeightKind::Matrix, false});
    s.push_back({L(l) + "laurel.linear_right.weight", {D, R}, WeightKind::Matrix, false});
    s.push_back({L(l) + "laurel.post_laurel_norm.weight", {D}, WeightKind::Vector, false});
    s.push_back({L(l) + "per_layer_input_gate.weight", {P, D}, WeightKind::Matrix, false});
    s.push_back({L(l) + "per_layer_projection.weight", {D, P}, WeightKind::Matrix, false});
  }
  return s;
}

std::vector<WeightSpec> unused_shared_kv_specs(const ModelConfig& c) {
  std::vector<WeightSpec> s;
  for (int l = c.first_shared(); l < c.layers; ++l) kv_specs(c, l, s);
  return s;
}

}  // namespace n3
