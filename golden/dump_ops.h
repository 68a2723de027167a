// The one list of tensors a run can dump, in canonical op order (the order
// in which golden/model.cc computes them). Every backend names its tensors from this table, so
// n3 diff can match them. docs/dumps.md documents each entry.
#pragma once
#include <optional>
#include <string>

namespace n3 {

enum class OpScope { Pre, Layer, Post };

struct OpDef {
  const char* name;    // per-layer ops are dumped as "layers.N.<name>"; Pre/Post ops as "<name>"
  OpScope scope;
  int token_axis;      // the axis along which chunks and decode steps concatenate
  bool always;         // in every dump (docs/dumps.md)
  const char* what;
};

// X-macro keeps enum and table in one place.
#define N3_DUMP_OPS(X)                                                                              \
  X(Embed, "embed", Pre, 0, false, "x0 = E[id] * sqrt(D), [T, D]")                                 \
  X(PerLayerInputs, "per_layer_inputs", Pre, 0, false, "pli, [T, L, P]")                            \
  X(AltupIn, "altup_in", Pre, 1, false, "AltUp streams entering layer 0, [S, T, D]")                \
  X(Router, "altup.router", Layer, 0, false, "router modalities m (predict), [T, S]")               \
  X(Pred, "altup.pred", Layer, 1, false, "AltUp predictions, [S, T, D]")                             \
  X(InputNorm, "input_norm", Layer, 0, false, "an = RMSNorm(pred[0]), [T, D]")                      \
  X(Laurel, "laurel", Layer, 0, false, "LAuReL output lo, [T, D]")                                  \
  X(AttnQ, "attn.q", Layer, 0, false, "q after q_norm and RoPE, [T, H, hd]")                        \
  X(AttnK, "attn.k", Layer, 0, false, "k after k_norm and RoPE (cache-owning layers), [T, KV, hd]") \
  X(AttnV, "attn.v", Layer, 0, false, "v after v_norm (cache-owning layers), [T, KV, hd]")          \
  X(AttnCtx, "attn.ctx", Layer, 0, false, "softmax(q k^T) v per head, [T, H*hd]")                   \
  X(AttnOut, "attn.out", Layer, 0, false, "attention output after o_proj, [T, D]")                  \
  X(AttnGated, "attn_gated", Layer, 0, false, "ag = a + RMSNorm(attn), [T, D]")                     \
  X(AttnLaurel, "attn_laurel", Layer, 0, false, "al = (ag + lo) / sqrt(2), [T, D]")                 \
  X(MlpGate, "mlp.gate", Layer, 0, false, "gate projection after Gaussian top-k, [T, F]")           \
  X(MlpUp, "mlp.up", Layer, 0, false, "up projection, [T, F]")                                      \
  X(MlpAct, "mlp.act", Layer, 0, false, "GELU(gate) * up, [T, F]")                                  \
  X(MlpDown, "mlp.down", Layer, 0, false, "down projection y, [T, D]")                              \
  X(FfnOut, "ffn_out", Layer, 0, false, "o = al + RMSNorm(y), [T, D]")                              \
  X(CorrRouter, "altup.corr_router", Layer, 0, false, "router modalities m2 (correct), [T, S]")     \
  X(Corr, "altup.corr", Layer, 1, false, "corrected streams before the per-layer input, [S, T, D]")\
  X(PleGate, "per_layer.gate", Layer, 0, false, "GELU(corr0*scale W_gate) * pli[n], [T, P]")        \
  X(PleOut, "per_layer.out", Layer, 0, false, "RMSNorm(f W_proj), added to streams 1.., [T, D]")    \
  X(LayerOut, "", Layer, 1, true, "decoder layer output, all streams, [S, T, D]")                   \
  X(Unembed, "altup_out", Post, 1, false, "streams after unembed projections and rescale, [S, T, D]")\
  X(FinalNorm, "final_norm", Post, 0, false, "RMSNorm(mean of streams), [T, D]")                    \
  X(Logits, "logits", Post, 0, true, "softcapped logits, [T, V]")

enum class Op {
#define N3_X(id, name, scope, axis, always, what) id,
  N3_DUMP_OPS(N3_X)
#undef N3_X
      kCount
};

const OpDef& op_def(Op op);
// Tensor name as dumped: "layers.3.attn.q", "layers.3", "logits"; decode-phase
// tensors carry the prefix "decode_". The compiler names its captures with it.
std::string tensor_name(Op op, int layer, bool decode);

// The op as a manifest's "op" field names it: OpDef::name, or "layer_out"
// for the layer output (whose OpDef::name is empty).
const char* manifest_op(Op op);

// What a tensor name names: its inverse, for the names tensor_name makes
// (layer -1 outside the layers); nothing for any other name.
struct TensorId {
  Op op;
  int layer;
  bool decode;
};
std::optional<TensorId> parse_tensor_name(const std::string& name);

}  // namespace n3
