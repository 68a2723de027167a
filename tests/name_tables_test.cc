// The one-table-per-fact helpers: the weight-name table agrees with
// weight_specs, dump names parse back to what made them, a compiled program's
// captures all come from the dump-op table, and the Gaussian top-k multiplier
// is HF's.
#include <gtest/gtest.h>

#include <set>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "golden/dump_ops.h"
#include "golden/model_config.h"
#include "golden/weight_names.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

ModelConfig tiny() { return load_model_config(test::source_dir() + "/configs/models/tiny.yaml"); }

TEST(WeightNames, SpellHfNames) {
  const LayerWeightNames n = layer_weight_names(3);
  EXPECT_EQ(n.q, "layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(n.out_scale, "layers.3.altup.correct_output_scale");
  EXPECT_EQ(n.post_pl, "layers.3.post_per_layer_input_norm.weight");
  const ModelWeightNames& g = model_weight_names();
  EXPECT_EQ(g.embed, "embed_tokens.weight");
  EXPECT_EQ(g.final_norm, "norm.weight");
  EXPECT_EQ(g.altup_projection(1), "altup_projections.0.weight");
  EXPECT_EQ(g.altup_unembed_projection(3), "altup_unembed_projections.2.weight");
}

// weight_specs lists exactly the names of the table: every field of every
// layer (k, v and k_norm only where the layer owns its cache), once each.
TEST(WeightNames, SpecsListEveryNameOfTheTableOnce) {
  const ModelConfig c = tiny();
  ASSERT_GT(c.kv_shared, 0);
  std::multiset<std::string> want;
  const ModelWeightNames& g = model_weight_names();
  want.insert({g.embed, g.embed_per_layer, g.per_layer_model_projection, g.per_layer_projection_norm, g.final_norm});
  for (int s = 1; s < c.altup_streams; ++s) want.insert({g.altup_projection(s), g.altup_unembed_projection(s)});
  std::multiset<std::string> unused;
  for (int l = 0; l < c.layers; ++l) {
    const LayerWeightNames n = layer_weight_names(l);
    want.insert({n.q, n.o, n.q_norm, n.gate, n.up, n.down, n.in_norm, n.post_attn, n.pre_ffn,
                 n.post_ffn, n.post_pl, n.out_scale, n.corr, n.pred, n.router, n.router_norm,
                 n.ll, n.lr, n.laurel_norm, n.pl_gate, n.pl_proj});
    (c.owns_kv(l) ? want : unused).insert({n.k, n.v, n.k_norm});
  }
  std::multiset<std::string> got, got_unused;
  for (const WeightSpec& s : weight_specs(c)) got.insert(s.name);
  for (const WeightSpec& s : unused_shared_kv_specs(c)) got_unused.insert(s.name);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_unused, unused);
}

// load_layer asks for every layer tensor of weight_specs once, a matrix as a
// matrix and a vector as a vector, and for no other.
TEST(WeightNames, LoadLayerLoadsEachLayerTensorOnceByItsKind) {
  const ModelConfig c = tiny();
  std::multiset<std::string> matrices, vectors;
  auto matrix = [&](const std::string& n) { return matrices.insert(n), 1; };
  auto vec = [&](const std::string& n) { return vectors.insert(n), 2; };
  for (int l = 0; l < c.layers; ++l) {
    const LayerTensors<int, int> t = load_layer<int, int>(c, l, matrix, vec);
    EXPECT_EQ(t.k, c.owns_kv(l) ? 1 : 0) << l;  // untouched on KV-shared layers
    EXPECT_EQ(t.k_norm, c.owns_kv(l) ? 2 : 0) << l;
  }
  std::multiset<std::string> want_m, want_v;
  for (const WeightSpec& s : weight_specs(c))
    if (s.name.rfind("layers.", 0) == 0) (s.kind == WeightKind::Vector ? want_v : want_m).insert(s.name);
  EXPECT_EQ(matrices, want_m);
  EXPECT_EQ(vectors, want_v);
}

TEST(DumpNames, ParseInvertsTensorName) {
  for (int i = 0; i < int(Op::kCount); ++i) {
    const Op op = Op(i);
    const bool per_layer = op_def(op).scope == OpScope::Layer;
    for (int layer : {0, 7, 123})
      for (bool decode : {false, true}) {
        const std::string name = tensor_name(op, per_layer ? layer : -1, decode);
        const std::optional<TensorId> id = parse_tensor_name(name);
        ASSERT_TRUE(id) << name;
        EXPECT_EQ(id->op, op) << name;
        EXPECT_EQ(id->layer, per_layer ? layer : -1) << name;
        EXPECT_EQ(id->decode, decode) << name;
      }
  }
}

TEST(DumpNames, OtherNamesParseToNothing) {
  for (const char* n : {"", "layers.", "layers.x", "layers.3.", "layers.3x", "layers.3.nope", "layers.3.logits",
                        "attn.q", "layers.12345678901", "decode_", "logits.", "nope", "kv.0.k"})
    EXPECT_FALSE(parse_tensor_name(n)) << n;
}

TEST(DumpNames, ManifestOpIsTheTableNameOrLayerOut) {
  EXPECT_STREQ(manifest_op(Op::AttnQ), "attn.q");
  EXPECT_STREQ(manifest_op(Op::Logits), "logits");
  EXPECT_STREQ(manifest_op(Op::LayerOut), "layer_out");  // its table name is empty
}

// The compiler names every capture from dump_ops.h: each Tensor symbol of a
// compiled program parses, and the always-present ones are all there.
TEST(DumpNames, CompiledCapturesComeFromTheTable) {
  const ModelConfig c = tiny();
  const num::Formats f;
  const comp::HwLimits hw{1ull << 26, 1835008, 1 << 18, 256, 1313, ""};
  const comp::Layout lay = comp::plan_layout(c, f, hw, 4);
  comp::CompileOptions opt;
  opt.tokens = 2;
  const comp::Compiled prog = comp::compile_forward(c, lay, f, hw, opt);
  std::set<std::string> always;
  int tensors = 0;
  for (const isa::Symbol& s : prog.program.symbols) {
    if (s.kind != isa::SymKind::Tensor) continue;
    ++tensors;
    const std::optional<TensorId> id = parse_tensor_name(s.name);
    ASSERT_TRUE(id) << s.name;
    EXPECT_FALSE(id->decode) << s.name;
    if (op_def(id->op).always) always.insert(s.name);
  }
  EXPECT_GT(tensors, 20 * c.layers);
  std::set<std::string> want{tensor_name(Op::Logits, -1, false)};
  for (int l = 0; l < c.layers; ++l) want.insert(tensor_name(Op::LayerOut, l, false));
  EXPECT_EQ(always, want);
}

TEST(TopK, MultiplierIsHfsIcdfInFloat32) {
  ModelConfig c = tiny();
  c.sparsity.assign(size_t(c.layers), 0.0f);
  c.sparsity[0] = 0.95f;
  EXPECT_FLOAT_EQ(c.topk_multiplier(0), 1.6448536f);  // torch Normal(0, 1).icdf(0.95) in float32
  EXPECT_EQ(c.topk_multiplier(1), 0.0f);              // dense
  c.sparsity[1] = 0.5f;
  EXPECT_NEAR(c.topk_multiplier(1), 0.0f, 1e-7f);
}

}  // namespace
}  // namespace n3
