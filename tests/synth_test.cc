// n3 synth (golden/synth.h): determinism (seeds, threads, CLI vs library),
// the value recipe of docs/weights.md, exact re-quantisation, and that the
// golden model runs synthetic weights healthily (finite layers, stream-0 RMS
// near the embedding's, logits that are not flat).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/model.h"
#include "golden/n3w_file.h"
#include "golden/quantize.h"
#include "base/rng.h"
#include "golden/synth.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;

std::string model_yaml(const std::string& m) { return test::source_dir() + "/configs/models/" + m + ".yaml"; }
std::string bytes_of(const std::string& path) {
  std::vector<uint8_t> b = read_file_bytes(path);
  return std::string(b.begin(), b.end());
}

TEST(Synth, SameSeedSameBytesWhateverTheThreadCount) {
  const std::string dir = test::temp_dir("det");
  const ModelConfig c = load_model_config(model_yaml("tiny"));
  synth_n3w(c, 5, dir + "/a.n3w", {});
  synth_n3w(c, 5, dir + "/b.n3w", {});
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  synth_n3w(c, 5, dir + "/one.n3w", {});
  omp_set_num_threads(3);
  synth_n3w(c, 5, dir + "/three.n3w", {});
  omp_set_num_threads(threads);
  synth_n3w(c, 6, dir + "/other.n3w", {});
  const std::string a = bytes_of(dir + "/a.n3w");
  EXPECT_EQ(a, bytes_of(dir + "/b.n3w"));
  EXPECT_EQ(a, bytes_of(dir + "/one.n3w"));
  EXPECT_EQ(a, bytes_of(dir + "/three.n3w"));
  EXPECT_NE(a, bytes_of(dir + "/other.n3w"));
  EXPECT_EQ(a.size(), bytes_of(dir + "/other.n3w").size());

  // The command line writes the library's bytes, results nowhere but the file.
  test::RunResult r = test::run_n3("synth --model " + model_yaml("tiny") + " --seed 5 -o " + dir + "/cli.n3w");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(a, bytes_of(dir + "/cli.n3w"));
  EXPECT_FALSE(fs::exists(dir + "/cli.n3w.tmp"));
}

// The recipe of docs/weights.md, checked on the file's values.
TEST(Synth, ValuesFollowTheRecipe) {
  const std::string path = test::temp_dir("recipe") + "/mid.n3w";
  const ModelConfig c = load_model_config(model_yaml("mid"));
  synth_n3w(c, 1, path, {});
  auto w = open_n3w(path);
  int64_t counts[16] = {0}, total = 0;
  for (const WeightSpec& s : weight_specs(c)) {
    if (s.kind == WeightKind::Vector) {
      // q_norm/k_norm carry head_dim^-1/4 (no 1/sqrt(d) attention scale in Gemma 3n).
      const bool qk = s.name.find("q_norm") != std::string::npos || s.name.find("k_norm") != std::string::npos;
      const float k = qk ? float(1.0 / std::sqrt(std::sqrt(double(s.shape[0])))) : 1.0f;
      for (float v : w->vec(s.name)) ASSERT_TRUE(v >= 0.5f * k && v < 1.5f * k) << s.name << " " << v;
      continue;
    }
    const MatrixRef m = w->matrix(s.name);
    if (s.kind == WeightKind::FloatMatrix) {
      ASSERT_EQ(m.dtype, WDType::F32);
      std::vector<float> v = w->vec(s.name);
      for (float x : v) ASSERT_LT(std::fabs(x), 0.3f * 3.47f) << s.name;
      continue;
    }
    ASSERT_EQ(m.dtype, WDType::INT4) << s.name;
    const double base = synth_base_scale(s);
    for (int64_t r = 0; r < m.rows; ++r) {
      const float sc = m.scales[r];
      ASSERT_TRUE(sc >= 0.5 * base * 0.999999 && sc < 1.5 * base * 1.000001) << s.name << " row " << r << " " << sc;
      const uint8_t* p = m.data + r * m.row_bytes();
      bool has_min = false;
      for (int64_t i = 0; i < m.cols; ++i) {
        const int q = (p[i >> 1] >> ((i & 1) * 4)) & 0xf;
        has_min |= q == 8;
        ++counts[q];
        ++total;
      }
      ASSERT_TRUE(has_min) << s.name << " row " << r << " has no -8";
      --counts[8];  // the one forced -8 per row is not a draw
      --total;
    }
  }
  // q symmetric on [-7, 7]: P(0) = 2/16, P(-8) = 0 apart from the forced
  // one, every other value 1/16, each within 2% over millions of draws.
  for (int q = 0; q < 16; ++q) {
    const double want = q == 0 ? 2.0 / 16 : q == 8 ? 0.0 : 1.0 / 16;
    EXPECT_NEAR(double(counts[q]) / total, want, 0.02 / 16) << "nibble " << q;
  }
  // The AltUp coefficients: N(0, 0.3^2) on aggregate.
  double ss = 0;
  int64_t n = 0;
  for (int l = 0; l < c.layers; ++l)
    for (float x : w->vec("layers." + std::to_string(l) + ".altup.modality_router.weight")) ss += double(x) * x, ++n;
  EXPECT_NEAR(std::sqrt(ss / n), 0.3, 0.01);
}

TEST(Synth, RequantisingASynthFileIsExact) {
  const std::string dir = test::temp_dir("requant");
  const ModelConfig c = load_model_config(model_yaml("tiny"));
  for (int64_t group : {0, 16}) {
    const std::string a = dir + "/a" + std::to_string(group) + ".n3w", b = dir + "/b" + std::to_string(group) + ".n3w";
    synth_n3w(c, 9, a, SynthOptions{group, nullptr});
    auto src = open_n3w(a);
    if (group) {
      EXPECT_EQ(src->matrix("layers.0.mlp.up_proj.weight").group, group);
    }
    quantize_to_n3w(*src, b, QuantizeOptions{group, nullptr});
    EXPECT_EQ(bytes_of(a), bytes_of(b)) << "group " << group;
  }
}

TEST(Synth, CliRejectsBadInputWithOneLine) {
  const std::string dir = test::temp_dir("synthcli");
  struct Case {
    std::string args, needle;
  } cases[] = {
      {"--model " + model_yaml("tiny") + " --seed -3 -o " + dir + "/x.n3w", "--seed"},
      {"--model " + model_yaml("tiny") + " --seed 1x -o " + dir + "/x.n3w", "--seed"},
      {"--model " + dir + "/none.yaml -o " + dir + "/x.n3w", "none.yaml"},
      {"--seed 1 -o " + dir + "/x.n3w", "model"},
      {"--model " + model_yaml("tiny") + " -o " + dir + "/no/such/dir/x.n3w", "no/such/dir/x.n3w"},
      {"--model " + model_yaml("tiny") + " --group -4 -o " + dir + "/x.n3w", "group"},
  };
  for (const Case& k : cases) {
    test::RunResult r = test::run_n3("synth " + k.args);
    EXPECT_EQ(r.status, 2) << k.args;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << k.args << ": " << r.err;
    EXPECT_NE(r.err.find(k.needle), std::string::npos) << k.args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir + "/x.n3w")) << k.args;
    EXPECT_FALSE(fs::exists(dir + "/x.n3w.tmp")) << k.args;
  }
  test::RunResult h = test::run_n3("synth --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("--seed"), std::string::npos);
}

// Runs a prompt through the golden model (reference numerics) on synthetic
// weights and checks the health the recipe is for.
void check_health(const std::string& model, uint64_t seed, int T) {
  const std::string path = test::temp_dir("health") + "/m.n3w";
  synth_n3w(load_model_config(model_yaml(model)), seed, path, {});
  auto w = std::shared_ptr<const WeightSource>(open_n3w(path));
  const ModelConfig& c = w->config();
  GoldenModel gm(w, make_reference_kernels());
  std::vector<int32_t> ids;
  CounterRng rng{seed + 1000};
  for (int t = 0; t < T; ++t) ids.push_back(int32_t(rng.at(t) % uint64_t(c.vocab_pl)));
  DumpCollector dump(true);
  Sequence seq = gm.new_sequence();
  gm.forward(seq, ids, Phase::Prefill, &dump);

  auto rms = [](const float* x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(x[i]) * x[i];
    return std::sqrt(s / double(n));
  };
  const Tensor* embed = dump.find("embed");
  ASSERT_NE(embed, nullptr);
  const double e_rms = rms(embed->ptr(), embed->size());
  double lo = 1e30, hi = 0;
  for (int l = 0; l < c.layers; ++l) {
    const Tensor* h = dump.find("layers." + std::to_string(l));
    ASSERT_NE(h, nullptr);
    for (float v : h->data) ASSERT_TRUE(std::isfinite(v)) << model << " layer " << l;
    const double r0 = rms(h->ptr(), int64_t(T) * c.hidden) / e_rms;  // stream 0 = the first [T, D]
    EXPECT_GE(r0, 0.1) << model << " layer " << l;
    EXPECT_LE(r0, 10.0) << model << " layer " << l;
    lo = std::min(lo, r0), hi = std::max(hi, r0);
  }
  const Tensor* logits = dump.find("logits");
  ASSERT_NE(logits, nullptr);
  double min_std = 1e30;
  for (int t = 0; t < T; ++t) {
    const float* x = logits->row(t);
    double m = 0, s = 0;
    for (int v = 0; v < c.vocab; ++v) m += x[v];
    m /= c.vocab;
    for (int v = 0; v < c.vocab; ++v) s += (x[v] - m) * (x[v] - m);
    ASSERT_TRUE(std::isfinite(s));
    min_std = std::min(min_std, std::sqrt(s / c.vocab));
  }
  EXPECT_GT(min_std, 0.5) << model;
  EXPECT_LT(min_std, 30.0) << model;
  // Different tokens give different predictions: positions' logits are not one vector.
  double max_cos = -1;
  for (int t = 1; t < T; ++t) {
    double ab = 0, aa = 0, bb = 0;
    for (int v = 0; v < c.vocab; ++v) {
      const double a = logits->row(0)[v], b = logits->row(t)[v];
      ab += a * b, aa += a * a, bb += b * b;
    }
    max_cos = std::max(max_cos, ab / std::sqrt(aa * bb));
  }
  EXPECT_LT(max_cos, 0.95) << model;
  std::printf("[%s seed %llu, T=%d] stream-0 RMS / embedding RMS in [%.3g, %.3g] (bar [0.1, 10]); "
              "min logit std over positions %.3g (bar > 0.5); max cosine of position 0's logits to another's %.3g\n",
              model.c_str(), (unsigned long long)seed, T, lo, hi, min_std, max_cos);
}

TEST(Synth, GoldenModelRunsTinyHealthily) {
  for (uint64_t seed : {1, 2, 3}) check_health("tiny", seed, 24);
}

TEST(Synth, GoldenModelRunsMidHealthily) {
  for (uint64_t seed : {1, 2}) check_health("mid", seed, 40);
}

}  // namespace
}  // namespace n3
