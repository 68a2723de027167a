// The .n3w container (golden/n3w_file.h): XXH64 known answers, convert of
// the dev fixture round-tripping exactly, atomic writes, and malformed files
// (each an n3::Error naming the file; through the CLI exit 2 and one line).
// Also the model YAMLs of configs/models round-tripping through the header's
// canonical YAML.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hf_checkpoint.h"
#include "golden/n3w_file.h"
#include "golden/quantize.h"
#include "base/rng.h"
#include "golden/safetensors.h"
#include "golden/synth.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::vector<uint8_t> b = read_file_bytes(path);
  return std::string(b.begin(), b.end());
}
void write_bytes(const std::string& path, const std::string& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}
template <typename T>
T get(const std::string& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}
template <typename T>
void put(std::string& b, size_t at, T v) {
  std::memcpy(&b[at], &v, sizeof(T));
}
// Recomputes the header checksum (docs/weights.md), so a test can damage a
// table field and reach the check behind the checksum.
void reseal(std::string& b) {
  const uint64_t data_start = get<uint64_t>(b, 40);
  std::string head = b.substr(0, data_start);
  put<uint64_t>(head, 56, 0);
  put<uint64_t>(b, 56, xxh64(head));
}

std::string tiny_yaml() { return test::source_dir() + "/configs/models/tiny.yaml"; }

// A valid tiny .n3w file's bytes, made once.
const std::string& tiny_file() {
  static const std::string bytes = [] {
    const std::string p = test::temp_dir("tiny") + "/tiny.n3w";
    synth_n3w(load_model_config(tiny_yaml()), 11, p, {});
    return read_bytes(p);
  }();
  return bytes;
}

// Record i of the tensor table starts here.
size_t record(const std::string& b, size_t i) { return get<uint64_t>(b, 32) + i * kN3wRecordBytes; }

// Opens `bytes` written to a file both through the library and the CLI;
// expects an n3::Error naming the file and containing `needle`.
void expect_rejected(const std::string& bytes, const std::string& needle, const std::string& tag) {
  const std::string dir = test::temp_dir(tag);
  const std::string path = dir + "/bad.n3w";
  write_bytes(path, bytes);
  try {
    open_n3w(path);
    ADD_FAILURE() << tag << ": open_n3w accepted a malformed file";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << tag << ": message does not name the file: " << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << tag << ": expected '" << needle << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << tag << ": multi-line message: " << msg;
  }
  test::RunResult r = test::run_n3("convert --model " + path + " -o " + dir + "/out.n3w");
  EXPECT_EQ(r.status, 2) << tag;
  EXPECT_TRUE(r.out.empty()) << tag << ": stdout: " << r.out;
  ASSERT_FALSE(r.err.empty()) << tag;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << tag << ": stderr is not one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << tag << ": " << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out.n3w")) << tag;
  EXPECT_FALSE(fs::exists(dir + "/out.n3w.tmp")) << tag;
}

TEST(N3w, Xxh64KnownAnswers) {
  // Reference values of the xxHash project (XXH64, seed 0), also those of
  // Debian's libxxhash and Python's xxhash.
  EXPECT_EQ(xxh64(std::string()), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64(std::string("abc")), 0x44BC2CF5AD770999ull);
  EXPECT_EQ(xxh64(std::string("Nobody inspects the spammish repetition")), 0xFBCEA83C8A378BF1ull);
  // Streaming in uneven pieces equals hashing at once, across the 32-byte stripes.
  std::string s(1000, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = char(mix64(i));
  for (uint64_t seed : {0ull, 99ull}) {
    Xxh64 h(seed);
    for (size_t off = 0, step = 1; off < s.size(); off += step, step = step * 7 % 61 + 1)
      h.update(s.data() + off, std::min(step, s.size() - off));
    EXPECT_EQ(h.digest(), xxh64(s, seed));
  }
}

TEST(N3w, ConvertDevFixtureRoundTripsExactly) {
  auto hf = open_hf_checkpoint(test::fixture("gemma3n-dev/hf"));
  const std::string path = test::temp_dir("conv") + "/dev.n3w";
  const uint64_t bytes = quantize_to_n3w(*hf, path, {});
  EXPECT_EQ(bytes, fs::file_size(path));
  auto w = open_n3w(path);
  EXPECT_TRUE(w->config() == hf->config());
  int checked = 0;
  for (const WeightSpec& s : weight_specs(hf->config())) {
    ASSERT_TRUE(w->has(s.name)) << s.name;
    if (s.kind == WeightKind::Vector) {
      EXPECT_EQ(w->vec(s.name), hf->vec(s.name)) << s.name;
      ++checked;
      continue;
    }
    const MatrixRef a = w->matrix(s.name), b = hf->matrix(s.name);
    EXPECT_EQ(a.dtype, s.kind == WeightKind::Matrix ? WDType::INT4 : WDType::F32) << s.name;
    ASSERT_EQ(a.rows, b.rows);
    ASSERT_EQ(a.cols, b.cols);
    if (a.dtype == WDType::INT4) {
      EXPECT_EQ(a.group, a.cols) << s.name;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 64, 0u) << s.name;
    std::vector<float> ra(a.cols), rb(b.cols);
    int64_t bad = 0;
    for (int64_t r = 0; r < a.rows; ++r) {
      dequant_row(a, r, ra.data());
      dequant_row(b, r, rb.data());
      bad += std::memcmp(ra.data(), rb.data(), 4 * a.cols) != 0;
    }
    EXPECT_EQ(bad, 0) << s.name << ": rows differing from the checkpoint";
    ++checked;
  }
  EXPECT_EQ(checked, int(weight_specs(hf->config()).size()));
  EXPECT_FALSE(w->has("layers.9.self_attn.k_proj.weight"));  // KV-shared layer: not stored
  EXPECT_THROW(w->matrix("norm.weight"), Error);                // a vector is not a matrix
  EXPECT_THROW(w->vec("no.such.tensor"), Error);
  // open_weights dispatches a file to the .n3w reader.
  EXPECT_NE(open_weights(path)->describe().find("n3 weights file"), std::string::npos);
}

TEST(N3w, ConvertCliWritesTheSameFileAndNothingOnStdout) {
  const std::string dir = test::temp_dir("convcli");
  auto hf = open_hf_checkpoint(test::fixture("gemma3n-dev/hf"));
  quantize_to_n3w(*hf, dir + "/lib.n3w", {});
  test::RunResult r = test::run_n3("convert --model " + test::fixture("gemma3n-dev/hf") + " -o " + dir + "/cli.n3w");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("wrote"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(dir + "/lib.n3w"), read_bytes(dir + "/cli.n3w"));
  EXPECT_FALSE(fs::exists(dir + "/cli.n3w.tmp"));
  // Converting an .n3w (one scale per row) again reproduces it byte for byte.
  r = test::run_n3("convert -q --model " + dir + "/cli.n3w -o " + dir + "/again.n3w");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(read_bytes(dir + "/cli.n3w"), read_bytes(dir + "/again.n3w"));
}

TEST(N3w, GroupedConvertStoresGroupScales) {
  auto hf = open_hf_checkpoint(test::fixture("gemma3n-dev/hf"));
  const std::string path = test::temp_dir("group") + "/g32.n3w";
  quantize_to_n3w(*hf, path, QuantizeOptions{32, nullptr});
  auto w = open_n3w(path);
  const MatrixRef a = w->matrix("layers.0.mlp.down_proj.weight"), b = hf->matrix("layers.0.mlp.down_proj.weight");
  ASSERT_EQ(a.group, 32);
  ASSERT_EQ(a.groups_per_row(), a.cols / 32);
  std::vector<float> ra(a.cols), rb(b.cols);
  double worst = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    dequant_row(a, r, ra.data());
    dequant_row(b, r, rb.data());
    for (int64_t g = 0; g < a.groups_per_row(); ++g) {
      float amax = 0;
      for (int64_t i = g * 32; i < g * 32 + 32; ++i) amax = std::max(amax, std::fabs(rb[i]));
      ASSERT_EQ(a.scales[r * a.groups_per_row() + g], amax / 8) << "row " << r << " group " << g;
      // Half a step at most, except where w / scale rounds to 8 and clamps to 7.
      for (int64_t i = g * 32; i < g * 32 + 32; ++i) {
        const double steps = std::fabs(double(ra[i]) - double(rb[i])) / (amax / 8);
        if (rb[i] / (amax / 8) < 7.5f) worst = std::max(worst, steps);
        else EXPECT_LE(steps, 1.0 + 1e-6) << "row " << r << " element " << i;
      }
    }
  }
  EXPECT_LE(worst, 0.5 + 1e-6) << "error beyond half a quantisation step";
  // Smaller tensors than the group keep one scale per row.
  EXPECT_EQ(w->matrix("layers.0.laurel.linear_right.weight").group, 8);
}

TEST(N3w, WriterLeavesNoOutputWhenNotFinished) {
  const std::string dir = test::temp_dir("atomic");
  const std::string path = dir + "/w.n3w";
  write_bytes(path, "previous contents");
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  {
    N3wWriter w(path, load_model_config(tiny_yaml()), 0);
    // The old output and at most a hidden temporary (none where the file
    // system gives unnamed ones, O_TMPFILE: base/atomic_file.h).
    const std::vector<std::string> during = entries();
    ASSERT_GE(during.size(), 1u);
    ASSERT_LE(during.size(), 2u);
    EXPECT_EQ(during.back(), "w.n3w");
    if (during.size() == 2) {
      EXPECT_EQ(during[0].rfind(".w.n3w.tmp.", 0), 0u) << during[0];
    }
    EXPECT_THROW(w.finish(), Error);  // nothing written yet
    EXPECT_THROW(w.append_f32(0, 1, nullptr), Error);  // tensor 0 is INT4
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"w.n3w"});
  EXPECT_EQ(read_bytes(path), "previous contents");
}

TEST(N3w, ConvertOfNonFiniteWeightFailsWithoutOutput) {
  const std::string dir = test::temp_dir("nan");
  const std::string src = test::fixture("gemma3n-dev/hf");
  SafetensorsFile st(src + "/model.safetensors");
  std::vector<SafetensorsOut> out;
  for (const auto& [name, e] : st.entries()) {
    out.push_back({name, e.dtype, e.shape, std::string(reinterpret_cast<const char*>(e.data), e.nbytes)});
    if (name == "model.layers.2.mlp.up_proj.weight") {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&out.back().bytes[4 * (5 * e.shape[1] + 3)], &nan, 4);  // row 5
    }
  }
  fs::create_directories(dir + "/hf");
  write_safetensors(dir + "/hf/model.safetensors", out);
  fs::copy_file(src + "/config.json", dir + "/hf/config.json");
  test::RunResult r = test::run_n3("convert --model " + dir + "/hf -o " + dir + "/x.n3w");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("layers.2.mlp.up_proj.weight' row 5"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.n3w"));
  EXPECT_FALSE(fs::exists(dir + "/x.n3w.tmp"));
}

TEST(N3w, RejectsTruncatedFiles) {
  const std::string& good = tiny_file();
  expect_rejected(good.substr(0, good.size() - 100), "truncated", "trunc-end");
  expect_rejected(good.substr(0, 40), "truncated", "trunc-header");
  expect_rejected(std::string(), "bad magic", "empty");
}

TEST(N3w, RejectsBadMagic) {
  std::string b = tiny_file();
  b[1] = 'X';
  expect_rejected(b, "bad magic", "magic");
  std::string c = tiny_file();
  c[5] = '\r';  // "\r\n" -> "\r\r": a newline translation
  expect_rejected(c, "signature is damaged", "magic-crlf");
}

TEST(N3w, RejectsOtherVersionsSayingHowToFix) {
  std::string b = tiny_file();
  put<uint32_t>(b, 8, 2);
  expect_rejected(b, "version 2, but this n3 reads version 1", "version");
  expect_rejected(b, "n3 convert", "version-fix");
}

TEST(N3w, RejectsOffsetsOutsideTheFile) {
  std::string b = tiny_file();
  put<uint64_t>(b, record(b, 3) + 192, b.size() / 64 * 64);  // data offset of tensor 3 at the end
  reseal(b);
  expect_rejected(b, "lies outside the data region", "offset-end");
  std::string c = tiny_file();
  put<uint64_t>(c, record(c, 0) + 208, 1ull << 62);  // scales offset of tensor 0 far past the end
  reseal(c);
  expect_rejected(c, "scales [", "offset-far");
  std::string d = tiny_file();
  put<uint64_t>(d, 40, d.size() + 64);  // data region start past the end
  expect_rejected(d, "out of bounds", "data-start");
  std::string e = tiny_file();
  put<uint64_t>(e, record(e, 1) + 192, get<uint64_t>(e, record(e, 0) + 192));  // two tensors share bytes
  reseal(e);
  expect_rejected(e, "overlap", "overlap");
}

TEST(N3w, RejectsChecksumMismatches) {
  std::string b = tiny_file();
  const size_t rec = record(b, 4);
  const uint64_t off = get<uint64_t>(b, rec + 192), n = get<uint64_t>(b, rec + 200);
  char name[160];
  std::memcpy(name, b.data() + rec, 160);
  b[off + n / 2] ^= 0x10;  // one data bit of tensor 4
  expect_rejected(b, "checksum mismatch in tensor '" + std::string(name) + "' (data)", "data-flip");
  std::string c = tiny_file();
  c[70] ^= 0x01;  // inside the config text
  expect_rejected(c, "header checksum mismatch", "header-flip");
}

TEST(N3w, RejectsATensorSetOtherThanTheConfigs) {
  std::string b = tiny_file();
  const size_t rec = record(b, 2);
  std::memcpy(&b[rec], "layers.0.mlp.nope", 17);
  reseal(b);
  expect_rejected(b, "is not part of a Gemma 3n decoder", "unknown-name");
  std::string c = tiny_file();
  put<uint32_t>(c, 12, get<uint32_t>(c, 12) - 1);  // drop the last record
  reseal(c);
  expect_rejected(c, "missing tensor", "missing");
  std::string d = tiny_file();
  put<int64_t>(d, record(d, 0) + 168, 255);  // embed_tokens with 255 rows
  reseal(d);
  expect_rejected(d, "shape [255, 64] but the config implies [256, 64]", "shape");
}

TEST(N3w, ModelYamlGivenAsWeightsGetsAHint) {
  test::RunResult r = test::run_n3("convert --model " + tiny_yaml() + " -o " + test::temp_dir("y") + "/x.n3w");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("n3 synth"), std::string::npos) << r.err;
}

// Every model YAML shipped in configs/models parses strictly and survives the
// canonical YAML that .n3w headers hold.
TEST(ModelConfig, EveryShippedModelYamlRoundTrips) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(test::source_dir() + "/configs/models")) {
    if (e.path().extension() != ".yaml") continue;
    const ModelConfig c = load_model_config(e.path().string());
    const std::string y = model_config_to_yaml(c);
    const ModelConfig back = parse_model_config(y, e.path().string() + " (canonical)", true);
    EXPECT_TRUE(back == c) << e.path() << "\n" << y;
    EXPECT_EQ(model_config_to_yaml(back), y) << e.path();
    EXPECT_EQ(c.name, e.path().stem().string()) << "a model's name is its file name";
    ++n;
  }
  EXPECT_GE(n, 4);
}

TEST(ModelConfig, E4BAndE2BAreTheBriefsNumbers) {
  for (const char* m : {"gemma3n-e4b", "gemma3n-e2b"}) {
    const bool e4b = std::string(m) == "gemma3n-e4b";
    const ModelConfig c = load_model_config(test::source_dir() + "/configs/models/" + m + ".yaml");
    const int L = e4b ? 35 : 30;
    EXPECT_EQ(c.hidden, 2048);
    EXPECT_EQ(c.layers, L);
    EXPECT_EQ(c.ffn, std::vector<int>(L, e4b ? 16384 : 8192));
    EXPECT_EQ(c.kv_shared, e4b ? 15 : 10);
    EXPECT_EQ(c.q_heads, 8);
    EXPECT_EQ(c.kv_heads, 2);
    EXPECT_EQ(c.head_dim, 256);
    EXPECT_EQ(c.vocab, 262400);
    EXPECT_EQ(c.vocab_pl, 262144);
    EXPECT_EQ(c.pl_dim, 256);
    EXPECT_EQ(c.sliding_window, 512);
    EXPECT_EQ(c.laurel_rank, 64);
    EXPECT_EQ(c.altup_streams, 4);
    for (int l = 0; l < L; ++l) {
      EXPECT_EQ(c.is_global(l), (l + 1) % 5 == 0) << m << " layer " << l;
      EXPECT_EQ(c.sparsity[l], l < 10 ? 0.95f : 0.0f) << m << " layer " << l;
    }
    EXPECT_EQ(c.kv_source(L - 1), 19);  // global shared layers read layer 19
    EXPECT_EQ(c.kv_source(L - 2), 18);  // local ones layer 18
    EXPECT_EQ(c.rope_global, 1e6);
    EXPECT_EQ(c.rope_local, 1e4);
    EXPECT_EQ(c.rms_eps, 1e-6);
    EXPECT_EQ(c.softcap, 30.0);
    EXPECT_EQ(c.max_positions, 32768);
    if (e4b) {
      int64_t params = 0;
      for (const auto& s : weight_specs(c)) params += numel(s.shape);
      EXPECT_GT(params, 6.7e9);  // brief: about 6.8 G text parameters
      EXPECT_LT(params, 7.0e9);
    }
  }
}

}  // namespace
}  // namespace n3
