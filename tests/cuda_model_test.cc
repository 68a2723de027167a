// The CUDA reference path (gpu_reference/) against the golden model, tensor
// by tensor: in NPU numerics every dumped tensor of prefill and KV-cached
// decode must have the golden model's bits; in reference numerics every
// tensor must be within 1e-5 of golden's (max|cuda - golden| / max|golden|).
// Models: the gemma3n-dev fixture (HF checkpoint, quantised on load) and
// synthetic tiny / mid configs (per-row and per-group INT4 scales). Also the
// Device backend: n3 run / n3 golden --backend cuda, graph replay, batched
// decode, KV eviction.
//
// numerics.kv_format = int8 (codes and a scale per token and KV head, its own
// attention kernels) is held to the same bits on tiny, mid and gemma3n-dev,
// over several formats, in prefill, decode past the sliding window, graph
// replay and eviction.
//
// Every test needing a GPU skips, saying why, when no usable GPU is present
// (CI); the one-line error of `--backend cuda` on such a machine is checked
// instead. Built without CUDA, the CudaModel tests are not compiled at all;
// the Device-API ones skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "golden/diff.h"
#include "golden/dump.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "golden/model.h"
#include "base/npy.h"
#include "golden/synth.h"
#include "host_driver/backends.h"
#include "runtime/numerics_select.h"
#include "tests/test_util.h"
#ifdef N3_HAVE_CUDA
#include "gpu_reference/model_cuda.h"
#endif

namespace n3 {
namespace {

// "" when the GPU tests can run, else why not.
std::string no_gpu() {
#ifdef N3_HAVE_CUDA
  return gpu::cuda_problem();
#else
  return "n3 was built without CUDA";
#endif
}

#define N3_NEED_GPU()                                        \
  do {                                                       \
    const std::string why = no_gpu();                        \
    if (!why.empty()) GTEST_SKIP() << "no GPU run: " << why; \
  } while (0)

std::string hw_path() { return test::source_dir() + "/configs/hw/kv260.yaml"; }

// A model to test: weights path plus prompt and decode ids.
struct Case {
  std::string name, weights;
  std::vector<int32_t> prompt, feed;
  int chunk = 0;  // prefill chunk size (0: whole prompt)
  // N3_CUDA_ROW_SLICE for the CUDA model (0: the default). The test models'
  // hidden sizes (64-256) take one block a token at the default 256, so the
  // sliced per-token kernels need a smaller slice to run here.
  int row_slice = 0;
  // Decode GEMVs: at most this many persistent blocks (N3_CUDA_GEMV_BLOCKS;
  // 0: as many as stay resident), or none (persist = false:
  // N3_CUDA_GEMV_PERSIST=0, gemv_int4_kernel for every matrix).
  int gemv_blocks = 0;
  bool persist = true;
  // false: N3_CUDA_ATTN_PRE=0, the attention group kernel loads V's blocks
  // after the wait (the path of contexts longer than its shared-memory slots).
  bool attn_pre = true;
  std::string hw = "";  // hardware file ("": configs/hw/kv260.yaml)
};

std::vector<int32_t> ramp(int n, int mul, int add, int vocab) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = (i * mul + add) % vocab;
  return v;
}

std::string synth_model(const std::string& yaml, int64_t group) {
  static std::map<std::string, std::string> made;
  const std::string key = yaml + "/" + std::to_string(group);
  if (made.count(key)) return made[key];
  const ModelConfig c = load_model_config(test::source_dir() + "/configs/models/" + yaml + ".yaml");
  const std::string path = test::temp_dir("cuda-synth") + "/" + yaml + ".n3w";
  SynthOptions o;
  o.group = group;
  synth_n3w(c, 7, path, o);
  return made[key] = path;
}

std::vector<Case> cases() {
  std::vector<Case> v;
  const std::string d = test::fixture("gemma3n-dev");
  const std::vector<int32_t> prompt = read_ids(d + "/prompt_ids.npy", 1 << 30),
                             tf = read_ids(d + "/tf_ids.npy", 1 << 30);
  v.push_back({"gemma3n-dev", d + "/hf", prompt, std::vector<int32_t>(tf.begin() + prompt.size(), tf.end())});
  // tiny: window 8, so a 13-token prompt and 4 steps exercise the sliding window and KV sharing.
  v.push_back({"tiny", synth_model("tiny", 0), ramp(13, 37, 5, 256), ramp(4, 11, 3, 256)});
  v.push_back({"tiny chunked", synth_model("tiny", 0), ramp(13, 37, 5, 256), ramp(4, 11, 3, 256), 5});
  v.push_back({"tiny per-group scales", synth_model("tiny", 32), ramp(11, 29, 1, 256), ramp(3, 7, 2, 256)});
  v.push_back({"mid", synth_model("mid", 0), ramp(24, 101, 9, 2048), ramp(4, 13, 5, 2048)});
  v.push_back({"gemma3n-dev, 32-element slices", d + "/hf", prompt,
               std::vector<int32_t>(tf.begin() + prompt.size(), tf.end()), 0, 32});
  v.push_back({"mid chunked, 64-element slices", synth_model("mid", 0), ramp(24, 101, 9, 2048),
               ramp(4, 13, 5, 2048), 7, 64});
  // Many tasks a warp: the next task's weights and scale fetched ahead, the
  // activation kept across segments reading the same vector (q/k/v/LAuReL,
  // gate/up) and reloaded where it changes (o/LAuReL-right).
  v.push_back({"mid, 2 persistent GEMV blocks", synth_model("mid", 0), ramp(24, 101, 9, 2048), ramp(4, 13, 5, 2048), 0,
               0, 2});
  v.push_back({"mid, no persistent GEMV", synth_model("mid", 0), ramp(24, 101, 9, 2048), ramp(4, 13, 5, 2048), 0, 0, 0,
               false});
  // mid's 64-wide heads take the split attention path (tiny's 16 do not).
  v.push_back({"mid, V blocks after the wait", synth_model("mid", 0), ramp(24, 101, 9, 2048), ramp(4, 13, 5, 2048), 0, 0,
               0, true, false});
  return v;
}

#ifdef N3_HAVE_CUDA

// Runs a case on the golden model and on the GPU, recording every op.
void run_both(const Case& c, const std::string& numerics, DumpCollector& gold, DumpCollector& cuda) {
  const HwConfig hw = load_hw_config(c.hw.empty() ? hw_path() : c.hw);
  auto w = open_weights_for(c.weights, numerics);
  GoldenModel gm(w, make_kernels(numerics, hw));
  std::optional<gpu::CudaModel> made;
  {
    // The case's switches for this model only; the caller's values (e.g.
    // N3_CUDA_GEMV_PERSIST=0 for the whole run) come back afterwards, also
    // when the constructor throws.
    test::ScopedEnv slice("N3_CUDA_ROW_SLICE", c.row_slice > 0 ? std::to_string(c.row_slice) : "");
    test::ScopedEnv blocks("N3_CUDA_GEMV_BLOCKS", c.gemv_blocks > 0 ? std::to_string(c.gemv_blocks) : "");
    test::ScopedEnv persist("N3_CUDA_GEMV_PERSIST", c.persist ? "" : "0");
    test::ScopedEnv pre("N3_CUDA_ATTN_PRE", c.attn_pre ? "" : "0");
    made.emplace(w, numerics, hw);  // reads them once
  }
  gpu::CudaModel& cm = *made;
  Sequence gs = gm.new_sequence();
  const int cs = cm.new_sequence();
  const size_t step = c.chunk > 0 ? size_t(c.chunk) : c.prompt.size();
  for (size_t b = 0; b < c.prompt.size(); b += step) {
    const std::vector<int32_t> part(c.prompt.begin() + b, c.prompt.begin() + std::min(c.prompt.size(), b + step));
    gm.forward(gs, part, Phase::Prefill, &gold);
    cm.forward(cs, part, Phase::Prefill, &cuda, false);
  }
  for (int32_t id : c.feed) {
    gm.forward(gs, {id}, Phase::Decode, &gold);
    cm.forward(cs, {id}, Phase::Decode, &cuda, true);
  }
}

// Every tensor name a run of `cfg` can dump, in canonical order.
std::vector<std::string> all_names(const ModelConfig& cfg) {
  std::vector<std::string> names;
  for (bool decode : {false, true})
    for (int o = 0; o < int(Op::kCount); ++o) {
      const Op op = Op(o);
      if (op_def(op).scope == OpScope::Layer)
        for (int l = 0; l < cfg.layers; ++l) names.push_back(tensor_name(op, l, decode));
      else
        names.push_back(tensor_name(op, -1, decode));
    }
  return names;
}

double rel_err(const Tensor& a, const Tensor& b) { return test::rel_max_err(a, b); }

// Every dumped tensor of a case in NPU numerics has golden's bits.
void expect_npu_bit_exact(const Case& c) {
  SCOPED_TRACE(c.name);
  DumpCollector gold(true), cuda(true);
  run_both(c, "npu", gold, cuda);
  const ModelConfig cfg = open_weights_for(c.weights, "npu")->config();
  int compared = 0, differing = 0;
  std::string first;
  for (const std::string& n : all_names(cfg)) {
    const Tensor* g = gold.find(n);
    const Tensor* k = cuda.find(n);
    ASSERT_EQ(g == nullptr, k == nullptr) << n << (g ? " missing from the CUDA run" : " only in the CUDA run");
    if (!g) continue;
    ASSERT_EQ(g->shape, k->shape) << n;
    const TensorDiff d = diff_tensor(n, *k, *g);
    ++compared;
    if (d.status != DiffStatus::Identical) {
      ++differing;
      if (first.empty()) {
        const ElementDiff& e = *d.worst;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%s: %lld of %lld elements differ; worst at flat %lld: cuda %.9g golden %.9g (%llu ulp)",
                      n.c_str(), (long long)d.differing_bits, (long long)d.elements, (long long)e.flat, e.candidate,
                      e.reference, (unsigned long long)e.ulp);
        first = buf;
      }
    }
  }
  EXPECT_EQ(differing, 0) << "first divergence (canonical order) " << first;
  std::printf("[%s] NPU numerics: %d tensors compared, %d differ%s%s\n", c.name.c_str(), compared, differing,
              first.empty() ? "" : "; first ", first.c_str());
}

TEST(CudaModel, NpuNumericsBitExactWithGoldenOnEveryTensor) {
  N3_NEED_GPU();
  for (const Case& c : cases()) expect_npu_bit_exact(c);
}

// numerics.kv_format = int8 with kv260's other formats and variants of them
// (int8 KV needs f32 scores: num::formats_problem refuses f16 ones, so the
// variants move the activation, stream and logits formats, the attention
// mantissa width and the block size instead). tiny (head_dim 16, window 8)
// and gemma3n-dev run the group kernel with a thread a (head, position) for
// q.k; mid (head_dim 64, window 16) the lane groups and, in decode, the
// split scores kernel; bfp_block 16 the generic kernel. Every case runs
// prefill and decode past the sliding window.
std::vector<Case> int8_cases() {
  const auto hw = [](const std::string& tag, std::vector<std::pair<std::string, std::string>> v) {
    v.push_back({"numerics.kv_format", "int8"});
    return test::hw_variant("cuda_int8_" + tag, v);
  };
  const std::string base = hw("base", {}),
                    f16 = hw("f16", {{"numerics.act_format", "f16"}, {"numerics.logits_format", "bf16"}}),
                    f32 = hw("f32", {{"numerics.act_format", "f32"}, {"numerics.stream_format", "bf16"}}),
                    m8 = hw("m8", {{"numerics.attn_mantissa_bits", "8"}}),
                    b16 = hw("b16", {{"numerics.bfp_block", "16"}});
  std::vector<Case> v;
  for (const Case& c : cases()) {
    if (c.name != "gemma3n-dev" && c.name != "tiny" && c.name != "tiny chunked" && c.name != "mid" &&
        c.name != "mid chunked, 64-element slices")
      continue;
    Case k = c;
    k.name += ", int8 KV";
    k.hw = base;
    v.push_back(k);
  }
  const std::vector<Case> all = cases();
  const Case& tiny = all[1];
  const Case& mid = all[4];
  for (const auto& [tag, path] : {std::pair<std::string, std::string>{"act f16, logits bf16", f16},
                                  {"act f32, streams bf16", f32},
                                  {"8-bit attention mantissas", m8},
                                  {"16-element blocks", b16}})
    for (const Case* c : {&tiny, &mid}) {
      Case k = *c;
      k.name += ", int8 KV, " + tag;
      k.hw = path;
      v.push_back(k);
    }
  return v;
}

TEST(CudaModel, Int8KvNpuNumericsBitExactWithGoldenOnEveryTensor) {
  N3_NEED_GPU();
  for (const Case& c : int8_cases()) expect_npu_bit_exact(c);
}

TEST(CudaModel, ReferenceNumericsWithin1e5OfGolden) {
  N3_NEED_GPU();
  for (const Case& c : cases()) {
    if (c.name != "gemma3n-dev" && c.name != "tiny" && c.name != "mid") continue;
    SCOPED_TRACE(c.name);
    DumpCollector gold(true), cuda(true);
    run_both(c, "reference", gold, cuda);
    const ModelConfig cfg = open_weights_for(c.weights, "reference")->config();
    double worst = 0;
    std::string worst_name;
    int compared = 0;
    for (const std::string& n : all_names(cfg)) {
      const Tensor* g = gold.find(n);
      const Tensor* k = cuda.find(n);
      ASSERT_EQ(g == nullptr, k == nullptr) << n;
      if (!g) continue;
      ASSERT_EQ(g->shape, k->shape) << n;
      const double e = rel_err(*k, *g);
      EXPECT_LE(e, 1e-5) << n << ": max|cuda - golden| / max|golden| = " << e;
      if (e > worst || compared == 0) worst = e, worst_name = n;
      ++compared;
    }
    std::printf(
        "[%s] reference numerics: %d tensors, worst max|cuda-golden|/max|golden| = %.3g (%s; bar 1e-5, %.1f%% used)\n",
        c.name.c_str(), compared, worst, worst_name.c_str(), 100 * worst / 1e-5);
  }
}

TEST(CudaModel, GraphReplayEqualsDirectLaunches) {
  N3_NEED_GPU();
  const HwConfig hw = load_hw_config(hw_path());
  const Case c = cases()[0];
  auto w = open_weights_for(c.weights, "npu");
  gpu::CudaModel a(w, "npu", hw), b(w, "npu", hw);
  a.use_graphs(true);
  b.use_graphs(false);
  const int sa = a.new_sequence(), sb = b.new_sequence();
  a.forward(sa, c.prompt, Phase::Prefill, nullptr, true);
  b.forward(sb, c.prompt, Phase::Prefill, nullptr, true);
  int32_t id = 3;
  for (int i = 0; i < 6; ++i) {
    const Tensor la = a.forward(sa, {id}, Phase::Decode, nullptr, true);
    const Tensor lb = b.forward(sb, {id}, Phase::Decode, nullptr, true);
    const TensorDiff d = diff_tensor("decode_logits", la, lb);
    ASSERT_EQ(d.status, DiffStatus::Identical) << "step " << i;
    id = int32_t(std::max_element(la.data.begin(), la.data.end()) - la.data.begin());
  }
}

// Decode as `n3 run` does it (graph replay, programmatic launches, nothing
// recorded, so no synchronisation between kernels), on mid: the split
// attention with its pre-wait key and V blocks. A 496-token prompt and 24
// steps take the global layers (and the KV-shared layer reading one)
// through all 8 V slots a thread up to 512 positions, then past them (a
// graph captured for 1024 rows, V loaded after the wait); both with the V
// blocks before the wait and after it.
TEST(CudaModel, GraphDecodeLogitsEqualGoldenAcrossThePrecomputeBound) {
  N3_NEED_GPU();
  const HwConfig hw = load_hw_config(hw_path());
  auto w = open_weights_for(synth_model("mid", 0), "npu");
  const std::vector<int32_t> prompt = ramp(496, 101, 9, 2048);
  for (const bool pre : {true, false}) {
    SCOPED_TRACE(pre ? "V blocks before the wait" : "V blocks after the wait");
    std::optional<gpu::CudaModel> made;
    {
      test::ScopedEnv e("N3_CUDA_ATTN_PRE", pre ? "" : "0");
      made.emplace(w, "npu", hw);
    }
    gpu::CudaModel& cm = *made;
    cm.use_graphs(true);
    GoldenModel gm(w, make_kernels("npu", hw));
    Sequence gs = gm.new_sequence();
    const int cs = cm.new_sequence();
    gm.forward(gs, prompt, Phase::Prefill, nullptr, true);
    Tensor lc = cm.forward(cs, prompt, Phase::Prefill, nullptr, true);
    int32_t id = int32_t(std::max_element(lc.data.begin(), lc.data.end()) - lc.data.begin());
    for (int i = 0; i < 24; ++i) {  // positions 496..519
      const Tensor lg = gm.forward(gs, {id}, Phase::Decode, nullptr, true);
      lc = cm.forward(cs, {id}, Phase::Decode, nullptr, true);
      ASSERT_EQ(diff_tensor("decode_logits", lc, lg).status, DiffStatus::Identical) << "decode step " << i;
      id = int32_t(std::max_element(lg.data.begin(), lg.data.end()) - lg.data.begin());
    }
  }
}

// The same with an INT8 cache (mid: the split scores kernel loading key
// codes before its wait, the group kernel staging V's scales before it):
// 100 prompt tokens and 24 steps, past the window and over several
// position blocks, on graph replay.
TEST(CudaModel, Int8KvGraphDecodeLogitsEqualGolden) {
  N3_NEED_GPU();
  const HwConfig hw = load_hw_config(test::hw_variant("cuda_int8_graph", {{"numerics.kv_format", "int8"}}));
  auto w = open_weights_for(synth_model("mid", 0), "npu");
  const std::vector<int32_t> prompt = ramp(100, 101, 9, 2048);
  gpu::CudaModel cm(w, "npu", hw);
  cm.use_graphs(true);
  GoldenModel gm(w, make_kernels("npu", hw));
  Sequence gs = gm.new_sequence();
  const int cs = cm.new_sequence();
  const Tensor lg0 = gm.forward(gs, prompt, Phase::Prefill, nullptr, true);
  Tensor lc = cm.forward(cs, prompt, Phase::Prefill, nullptr, true);
  ASSERT_EQ(diff_tensor("prefill_logits", lc, lg0).status, DiffStatus::Identical);
  int32_t id = int32_t(std::max_element(lc.data.begin(), lc.data.end()) - lc.data.begin());
  for (int i = 0; i < 24; ++i) {
    const Tensor lg = gm.forward(gs, {id}, Phase::Decode, nullptr, true);
    lc = cm.forward(cs, {id}, Phase::Decode, nullptr, true);
    ASSERT_EQ(diff_tensor("decode_logits", lc, lg).status, DiffStatus::Identical) << "decode step " << i;
    id = int32_t(std::max_element(lg.data.begin(), lg.data.end()) - lg.data.begin());
  }
}

#endif  // N3_HAVE_CUDA

// Through the Device API: cuda and golden give the same bits for batched
// decode of two interleaved sequences, and past the KV cap with eviction
// (with an INT8 cache too: its codes and scales move with the rows).
std::string hw_evict(int cap, int sinks, const std::string& kv_format = "f16") {
  std::string s = read_file_text(hw_path());
  auto set = [&](const std::string& key, const std::string& val) {
    const size_t p = s.find("  " + key + ": {value: ");
    const size_t b = s.find("value: ", p) + 7, e = s.find(',', b);
    s.replace(b, e - b, val);
  };
  set("cap_tokens", std::to_string(cap));
  set("policy", "evict");
  set("sink_tokens", std::to_string(sinks));
  set("kv_format", kv_format);
  const std::string path = test::temp_dir("hw") + "/hw.yaml";
  std::ofstream(path) << s;
  return path;
}

TEST(CudaDevice, BatchedDecodeAndEvictionMatchGolden) {
  N3_NEED_GPU();
  const Case c = cases()[0];
  for (const std::string& hw : {hw_path(), hw_evict(24, 4), hw_evict(24, 4, "int8")}) {
    SCOPED_TRACE(hw);
    auto g = open_device("golden", DeviceOptions{c.weights, hw, "npu"});
    auto k = open_device("cuda", DeviceOptions{c.weights, hw, "npu"});
    EXPECT_EQ(k->backend(), "cuda");
    const std::vector<int32_t> p2 = ramp(7, 13, 2, g->config().vocab);
    const int g1 = g->open_sequence(), g2 = g->open_sequence(), k1 = k->open_sequence(), k2 = k->open_sequence();
    Logits lg1 = g->prefill(g1, c.prompt), lk1 = k->prefill(k1, c.prompt);
    Logits lg2 = g->prefill(g2, p2), lk2 = k->prefill(k2, p2);
    ASSERT_EQ(diff_tensor("prefill", lk1.values, lg1.values).status, DiffStatus::Identical);
    ASSERT_EQ(diff_tensor("prefill", lk2.values, lg2.values).status, DiffStatus::Identical);
    int32_t a = 5, b = 9;
    for (int i = 0; i < 10; ++i) {  // 20 + 10 > 24: the first sequence slides with eviction
      const Logits lg = g->decode({g1, g2}, {a, b}), lk = k->decode({k1, k2}, {a, b});
      ASSERT_EQ(diff_tensor("decode", lk.values, lg.values).status, DiffStatus::Identical) << "step " << i;
      EXPECT_EQ(k->cached(k1), g->cached(g1));
      EXPECT_EQ(k->position(k1), g->position(g1));
      const float* r0 = lg.values.row(0);
      const float* r1 = lg.values.row(1);
      const int V = g->config().vocab;
      a = int32_t(std::max_element(r0, r0 + V) - r0);
      b = int32_t(std::max_element(r1, r1 + V) - r1);
    }
  }
}

TEST(CudaCli, GoldenDumpAndRunOnTheCudaBackend) {
  const std::string d = test::fixture("gemma3n-dev"), dir = test::temp_dir("cuda-cli");
  const std::string args =
      " --model " + d + "/hf --ids " + d + "/prompt_ids.npy --feed " + d + "/prompt_ids.npy --dump-all";
  const std::string why = no_gpu();
  if (!why.empty()) {
    // No GPU (or no CUDA build): one line on stderr, exit 2, never a crash.
    test::RunResult r =
        test::run_n3("run --backend cuda --model " + d + "/hf --ids " + d + "/prompt_ids.npy --max-new 2");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    GTEST_SKIP() << "no GPU run: " << why << " (checked the one-line error instead)";
  }
  ASSERT_EQ(test::run_n3("golden" + args + " --dump " + dir + "/gold").status, 0);
  test::RunResult r = test::run_n3("golden --backend cuda" + args + " --dump " + dir + "/cuda");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run_n3("diff " + dir + "/cuda " + dir + "/gold --quiet");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // n3 run: greedy ids equal the golden backend's.
  r = test::run_n3("run --backend cuda --model " + d + "/hf --ids " + d + "/prompt_ids.npy --max-new 8 --out " + dir +
                   "/k.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("cuda backend"), std::string::npos) << r.err;
  ASSERT_EQ(test::run_n3("run --backend golden --model " + d + "/hf --ids " + d + "/prompt_ids.npy --max-new 8 --out " +
                         dir + "/g.npy")
                .status,
            0);
  EXPECT_EQ(read_ids(dir + "/k.npy", 1 << 30), read_ids(dir + "/g.npy", 1 << 30));
}

}  // namespace
}  // namespace n3
