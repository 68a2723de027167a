// Replays the checked-in corpora of the file-reader fuzz targets
// (tests/fuzz_corpus/<target>/) through their own checks
// (fuzz/file_targets.h) in the ordinary build, so every input a fuzzer found
// interesting, and every regression input of a fixed defect, keeps passing
// without clang. A violated property aborts the test binary; on top of that,
// the real files among the seeds must load (a reader that refused everything
// would pass the property alone).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "base/file_util.h"
#include "fuzz/file_targets.h"
#include "golden/json_read.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

struct Replay {
  int files = 0;
  std::set<std::string> loaded;  // file names that loaded
};

Replay replay(const std::string& target, bool (*fn)(const uint8_t*, size_t)) {
  Replay r;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/tests/fuzz_corpus/" + target)) {
    const std::vector<uint8_t> b = read_file_bytes(e.path().string());
    SCOPED_TRACE(e.path().string());
    if (fn(b.data(), b.size())) r.loaded.insert(e.path().filename().string());
    ++r.files;
  }
  return r;
}

void expect_loaded(const Replay& r, const std::vector<std::string>& names) {
  for (const auto& n : names) EXPECT_TRUE(r.loaded.count(n)) << n << " was refused";
}

TEST(FileFuzzCorpus, Safetensors) {
  const Replay r = replay("safetensors", fuzz::fuzz_safetensors);
  expect_loaded(r, {"two.safetensors", "empty_tensor.safetensors"});
  // The header of a real checkpoint without its data: every tensor runs past the end.
  EXPECT_FALSE(r.loaded.count("hf_dev_header_only.safetensors"));
}

TEST(FileFuzzCorpus, SafetensorsIndex) {
  const Replay r = replay("safetensors_index", fuzz::fuzz_safetensors_index);
  expect_loaded(r, {"hub_dev.index.json", "minimal.json", "two_shards.json"});
  EXPECT_FALSE(r.loaded.count("regress-duplicate-key.json"));
  EXPECT_FALSE(r.loaded.count("regress-dotdot-shard.json"));
}

TEST(FileFuzzCorpus, N3w) { expect_loaded(replay("n3w", fuzz::fuzz_n3w), {"micro_per_row.n3w"}); }

TEST(FileFuzzCorpus, Npy) {
  expect_loaded(replay("npy", fuzz::fuzz_npy), {"ids_i32.npy", "f32_2x3.npy", "dump_layer.npy"});
}

TEST(FileFuzzCorpus, Manifest) {
  expect_loaded(replay("manifest", fuzz::fuzz_manifest), {"golden_dump.json", "minimal.json"});
}

TEST(FileFuzzCorpus, Image) {
  expect_loaded(replay("image", fuzz::fuzz_image), {"three_regions.img", "empty.img"});
}

// The corpus holds copies of configs/hw/*.yaml and configs/models/*.yaml as
// seeds; a copy goes stale when a key is added or retired, so the files that
// must load are the repository's own, through the same check.
void expect_repo_files_load(const std::string& dir, bool (*fn)(const uint8_t*, size_t)) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/" + dir)) {
    const std::vector<uint8_t> b = read_file_bytes(e.path().string());
    EXPECT_TRUE(fn(b.data(), b.size())) << e.path() << " was refused";
    ++n;
  }
  EXPECT_GE(n, 3) << dir;
}

TEST(FileFuzzCorpus, HwYaml) {
  replay("hw_yaml", fuzz::fuzz_hw_yaml);
  expect_repo_files_load("configs/hw", fuzz::fuzz_hw_yaml);
}

TEST(FileFuzzCorpus, ModelYaml) {
  expect_loaded(replay("model_yaml", fuzz::fuzz_model_yaml), {"micro.yaml"});
  expect_repo_files_load("configs/models", fuzz::fuzz_model_yaml);
}

// The regression inputs of the defects the fuzzers found (docs/fuzzing.md),
// read through the readers themselves: each is refused with one line naming
// the input and what is wrong.
std::vector<uint8_t> corpus_file(const std::string& target, const std::string& name) {
  return read_file_bytes(source_dir() + "/tests/fuzz_corpus/" + target + "/" + name);
}

template <typename F>
std::string refusal(F&& load) {
  try {
    load();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded";
  return "";
}

void expect_one_line(const std::string& m, const std::string& part) {
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.rfind("X", 0), 0u) << m;  // names the input
  EXPECT_NE(m.find(part), std::string::npos) << m;
}

// A newline in a malformed shape, a region name or a tensor name came back
// in the message, splitting it: n3::Error now writes control characters as \xNN.
TEST(FileFuzzRegression, NewlineInNpyShape) {
  const auto b = corpus_file("npy", "regress-newline-in-shape.npy");
  expect_one_line(refusal([&] { parse_npy(b.data(), b.size(), "X"); }), "bad shape 3((");
  EXPECT_NE(refusal([&] { parse_npy(b.data(), b.size(), "X"); }).find("\\x0a"), std::string::npos);
}

TEST(FileFuzzRegression, NewlineInImageRegionName) {
  const auto b = corpus_file("image", "regress-newline-in-region-name.img");
  sim::Capacities c;
  c.ddr = c.l2 = c.wbuf = 1 << 20;
  sim::Memory mem(c);
  expect_one_line(refusal([&] { sim::load_image_bytes(b.data(), b.size(), "X", mem); }),
                  "region 0 (\\x07\\x08\\x09\\x0a");
}

TEST(FileFuzzRegression, ControlCharactersInN3wTensorName) {
  const auto raw = corpus_file("n3w", "regress-control-char-in-message.n3w");
  const std::string b = fuzz::n3w_fix_header(raw.data(), raw.size());
  expect_one_line(refusal([&] { parse_n3w(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "X"); }),
                  "is not part of a Gemma 3n decoder");
}

TEST(FileFuzzRegression, NewlineInYamlParserMessage) {
  const auto b = corpus_file("model_yaml", "regress-newline-in-yaml-error.json");
  const std::string t(b.begin(), b.end());
  expect_one_line(refusal([&] { parse_model_config(t, "X", true); }), "malformed YAML/JSON: unknown escape character: \\x0a");
}

// A mapping or sequence as a key made yaml-cpp's conversion throw its own
// exception, past the CLI's one-line error (std::terminate in the fuzzer).
TEST(FileFuzzRegression, MappingAsHardwareKey) {
  const auto b = corpus_file("hw_yaml", "regress-sequence-key.yaml");
  expect_one_line(refusal([&] { parse_hw_config(std::string(b.begin(), b.end()), "X"); }),
                  "X:21: a key must be a plain name");
}

TEST(FileFuzzRegression, SequenceAsModelKey) {
  const auto b = corpus_file("model_yaml", "regress-sequence-key.yaml");
  for (bool strict : {true, false})  // (the lenient reader too: it checks every key for repeats)
    expect_one_line(refusal([&] { parse_model_config(std::string(b.begin(), b.end()), "X", strict); }),
                    "a key must be a plain name");
}

// nlohmann casts a JSON float to an integer: 4.9e22 as a shape dimension (or a
// layer) was undefined behaviour (UBSan in fuzz_manifest); the same
// conversion read safetensors shapes and offsets.
TEST(FileFuzzRegression, FloatAsManifestInteger) {
  const auto b = corpus_file("manifest", "regress-float-as-integer.json");
  expect_one_line(refusal([&] { parse_manifest(std::string(b.begin(), b.end()), "X"); }),
                  "X: malformed manifest: tensor layers.1: shape is out of range (is 4.888888888888889e+22; at most 2^63 - 1)");
  // (A float within range is not an integer; one past 2^63, like 2^63 written
  // as an integer that nlohmann reads as a float, is out of range, as the
  // hardware reader says of 1e30.)
  expect_one_line(refusal([&] {
                    parse_manifest(R"({"format": "n3-dump", "version": 1,
                                       "tensors": [{"name": "x", "file": "x.npy", "shape": [2.5]}]})", "X");
                  }),
                  "X: malformed manifest: tensor x: shape must be an integer (is 2.5)");
}

TEST(FileFuzzRegression, FloatAsSafetensorsDimension) {
  const auto b = corpus_file("safetensors", "regress-float-dimension.safetensors");
  expect_one_line(refusal([&] { parse_safetensors(b.data(), b.size(), "X"); }),
                  "X: tensor 'a': shape holds a number out of range (has 1e+30; at most 2^64 - 1)");
}

// Issue 22 review, the .npy header: numpy's literal_eval keeps the last of
// two equal keys where this reader took the first, and numpy refuses a key
// it does not know; both were accepted. Refused, naming the key.
TEST(FileFuzzRegression, NpyRepeatedOrUnknownHeaderKey) {
  const auto twice = corpus_file("npy", "regress-repeated-key.npy");
  expect_one_line(refusal([&] { parse_npy(twice.data(), twice.size(), "X"); }),
                  "X: npy header gives key 'descr' twice");
  const auto unknown = corpus_file("npy", "regress-unknown-key.npy");
  expect_one_line(refusal([&] { parse_npy(unknown.data(), unknown.size(), "X"); }),
                  "X: npy header has an unknown key 'x' (expected descr, fortran_order, shape)");
}

// A .npy with header `dict` (format version `major`), padded as numpy pads it.
std::string npy_bytes(const std::string& dict, int major = 1) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY", 6) + char(major) + '\0' + char(h.size()) + '\0' + h + std::string(8, '\0');
}

// The wrong reasons: a descr without a byte order ('abc', 'i4') was called
// big-endian, and format version 3 or 9 a truncated header.
TEST(FileFuzzRegression, NpyUnsupportedDtypeAndVersionAreNamed) {
  auto parse = [](const std::string& b) {
    return refusal([&] { parse_npy(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "X"); });
  };
  for (const std::string d : {"abc", "i4", "<c8", "|x"}) {
    const std::string m = parse(npy_bytes("{'descr': '" + d + "', 'fortran_order': False, 'shape': (2,), }"));
    expect_one_line(m, "X: npy descr '" + d + "' is not a supported dtype (supported: <f2 <f4 <f8");
    EXPECT_EQ(m.find("big-endian"), std::string::npos) << m;
  }
  expect_one_line(parse(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }")),
                  "X: big-endian npy data is not supported (>f4)");
  for (int v : {0, 3, 9})
    expect_one_line(parse(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v)),
                    "X: unsupported .npy format version " + std::to_string(v) + " (supported: 1.0, 2.0)");
  // The same header as version 1 loads (or the refusals above could be another's).
  const std::string ok = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
  EXPECT_EQ(parse_npy(reinterpret_cast<const uint8_t*>(ok.data()), ok.size(), "X").shape, Shape{2});
}

// Issue 22 review, the manifest: "tensors" as an object ended in nlohmann's
// "cannot use at() with number"; a dimension of 2^63 was "must be an integer".
TEST(FileFuzzRegression, ManifestEntryKindsAndRangeAreNamed) {
  const auto obj = corpus_file("manifest", "regress-tensors-object.json");
  expect_one_line(refusal([&] { parse_manifest(std::string(obj.begin(), obj.end()), "X"); }),
                  "X: malformed manifest: 'tensors' must be a list of objects (is object)");
  const auto big = corpus_file("manifest", "regress-shape-2p63.json");
  expect_one_line(refusal([&] { parse_manifest(std::string(big.begin(), big.end()), "X"); }),
                  "X: malformed manifest: tensor x: shape is out of range (is 9223372036854775808; at most 2^63 - 1)");
  const std::string head = R"({"format": "n3-dump", "version": 1, "tensors": )";
  expect_one_line(refusal([&] { parse_manifest(head + "[1]}", "X"); }),
                  "X: malformed manifest: tensor #0 is not an object (is 1)");
  expect_one_line(refusal([&] { parse_manifest(head + R"([{"name": 7, "file": "x.npy", "shape": []}]})", "X"); }),
                  "X: malformed manifest: tensor #0: 'name' must be a string (is 7)");
  expect_one_line(refusal([&] { parse_manifest(head + R"([{"file": "x.npy", "shape": []}]})", "X"); }),
                  "X: malformed manifest: tensor #0 lacks 'name'");
}

// A float or suffixed dimension in an .npy shape ("4.0", "4x") was read as 4.
TEST(FileFuzzRegression, NpyShapeDimensionMustBeWhole) {
  auto npy = [](const std::string& shape) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string b = std::string("\x93NUMPY\x01\x00", 8);
    b += char(h.size() & 0xff);
    b += char(h.size() >> 8);
    return b + h + std::string(16, '\0');
  };
  for (const std::string bad : {"(4.0,)", "(2, 2x)", "(4e0,)"}) {
    const std::string b = npy(bad);
    expect_one_line(refusal([&] { parse_npy(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "X"); }),
                    "X: bad shape " + bad);
  }
  for (const std::string good : {"(4,)", "(2, 2)", "(4L,)"}) {
    const std::string b = npy(good);
    EXPECT_NO_THROW(parse_npy(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "X")) << good;
  }
}

// A manifest nested 100 000 deep (200 KB) killed n3 diff with SIGSEGV: the
// message printed the value, recursing off the stack. Every user JSON now
// refuses nesting past kMaxJsonDepth while it is parsed; 64 levels still read.
TEST(FileFuzzRegression, DeeplyNestedJsonIsRefused) {
  const std::string head = R"({"format": "n3-dump", "version": 1, "tensors": )";
  const std::string deep = head + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_one_line(refusal([&] { parse_manifest(deep, "X"); }), "X: JSON nested deeper than 64 levels");
  const std::string meta = R"({"format": "n3-dump", "version": 1, "tensors": [], "meta": )";
  expect_one_line(refusal([&] { parse_manifest(meta + std::string(5000, '[') + std::string(5000, ']') + "}", "X"); }),
                  "X: JSON nested deeper than 64 levels");
  // The limit exactly: 64 nested arrays parse, 65 do not.
  EXPECT_NO_THROW(parse_json_file(std::string(64, '[') + std::string(64, ']'), "X"));
  expect_one_line(refusal([&] { parse_json_file(std::string(65, '[') + std::string(65, ']'), "X"); }),
                  "X: JSON nested deeper than 64 levels");
  std::string hdr = R"({"a": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
  std::vector<char> st(8);
  const uint64_t n = hdr.size();
  for (int i = 0; i < 8; ++i) st[size_t(i)] = char((n >> (8 * i)) & 0xff);
  st.insert(st.end(), hdr.begin(), hdr.end());
  expect_one_line(refusal([&] { parse_safetensors(reinterpret_cast<const uint8_t*>(st.data()), st.size(), "X"); }),
                  "JSON nested deeper than 64 levels");
}

// data_offsets of 2^64 (read by nlohmann as a float) was "must hold
// non-negative integers (has 1.8446744073709552e+19)".
TEST(FileFuzzRegression, SafetensorsOffsetBeyond2To64IsOutOfRange) {
  const auto b = corpus_file("safetensors", "regress-offset-2p64.safetensors");
  expect_one_line(refusal([&] { parse_safetensors(b.data(), b.size(), "X"); }),
                  "X: tensor 'a': data_offsets holds a number out of range (has 1.8446744073709552e+19; at most 2^64 - 1)");
}

// Each factor in range, the int product not: q_dim() would overflow.
TEST(FileFuzzRegression, QDimOverflow) {
  const auto b = corpus_file("model_yaml", "regress-q-dim-overflow.yaml");
  expect_one_line(refusal([&] { parse_model_config(std::string(b.begin(), b.end()), "X", true); }),
                  "num_attention_heads x head_dim (65536 x 65536) exceeds 2^31 - 1");
}

// A name of control characters and 0xff bytes was accepted, and the
// canonical YAML written for it read back as another name.
TEST(FileFuzzRegression, BinaryModelName) {
  const auto b = corpus_file("model_yaml", "regress-binary-name.yaml");
  // (lenient: the fuzzer read it as config.json, whose unknown keys, such as
  // its mangled altu\x1cp_active_idx, are ignored)
  expect_one_line(refusal([&] { parse_model_config(std::string(b.begin(), b.end()), "X", false); }),
                  "is not UTF-8 text without control characters");
  // Text in any script stays a name, and survives the canonical YAML.
  const auto t = read_file_bytes(source_dir() + "/configs/models/tiny.yaml");
  std::string y(t.begin(), t.end());
  y.replace(y.find("name: tiny"), 10, "name: \"d\xc3\xa9j\xc3\xa0 \xe6\xa8\xa1\xe5\x9e\x8b\"");
  const ModelConfig c = parse_model_config(y, "X", true);
  EXPECT_EQ(c.name, "d\xc3\xa9j\xc3\xa0 \xe6\xa8\xa1\xe5\x9e\x8b");
  EXPECT_TRUE(parse_model_config(model_config_to_yaml(c), "Y", true) == c);
}

// nlohmann's parser keeps one of two equal keys: a safetensors header naming
// a tensor twice, or an index mapping a tensor to two shards, loaded one of
// them silently. Every user JSON now goes through parse_json_file.
TEST(FileFuzzRegression, DuplicateSafetensorsTensor) {
  const auto b = corpus_file("safetensors", "regress-duplicate-tensor.safetensors");
  expect_one_line(refusal([&] { parse_safetensors(b.data(), b.size(), "X"); }),
                  "X: safetensors header: key 'a' appears twice in the top-level object");
}

TEST(FileFuzzRegression, DuplicateIndexKey) {
  const auto b = corpus_file("safetensors_index", "regress-duplicate-key.json");
  expect_one_line(refusal([&] { parse_safetensors_index(std::string(b.begin(), b.end()), "X"); }),
                  "X: key 'model.a' appears twice in 'weight_map'");
  // The same keys in different objects are not repeats.
  EXPECT_EQ(parse_safetensors_index(R"({"metadata": {"a": 1}, "weight_map": {"a": "s.safetensors"}})", "X"),
            std::vector<std::string>{"s.safetensors"});
}

// config.json is read as YAML (yaml-cpp, which also keeps both keys): its
// top level around text_config and nested maps follow the same rule.
TEST(FileFuzzRegression, DuplicateConfigJsonKeyAtAnyDepth) {
  const std::string twice = R"({"text_config": {"hidden_size": 64}, "text_config": {}})";
  expect_one_line(refusal([&] { parse_model_config(twice, "X", false); }), "X:1: key 'text_config' is given twice");
  expect_one_line(
      refusal([&] { parse_model_config("{\"text_config\": {\"rope_scaling\": {\"f\": 1,\n \"f\": 2}}}", "X", false); }),
      "X:2: key 'f' is given twice in 'text_config.rope_scaling'");
  expect_one_line(refusal([&] { parse_model_config(R"({"vision_config": [{"a": 1, "a": 1}]})", "X", false); }),
                  "key 'a' is given twice in 'vision_config'");
  // Nested aliases would make the walk exponential: refused by size.
  std::string laughs = "a0: &a0 [x, x]\n";
  for (int i = 1; i < 40; ++i)
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
              std::to_string(i - 1) + "]\n";
  expect_one_line(refusal([&] { parse_model_config(laughs, "X", false); }), "nested aliases");
}

TEST(FileFuzzRegression, DuplicateManifestKeyAtDepth) {
  const auto b = corpus_file("manifest", "golden_dump.json");
  std::string t(b.begin(), b.end());
  const size_t at = t.find("\"format\"");
  ASSERT_NE(at, std::string::npos);
  t.insert(at, "\"format\": \"n3-dump\", ");
  expect_one_line(refusal([&] { parse_manifest(t, "X"); }), "X: key 'format' appears twice in the top-level object");
  // A repeated key inside a nested object names the path to it.
  expect_one_line(refusal([&] { parse_json_file(std::string(R"({"a": [{"b": {"c": 1, "c": 2}}]})"), "X"); }),
                  "X: key 'c' appears twice in 'a.b'");
}

}  // namespace
}  // namespace n3::test
