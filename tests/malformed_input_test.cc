// Bad input gets a one-line error naming what and where, exit status 2 and no
// partial output (docs/host_driver.md, "The command line"). Each case runs the real n3 binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>

#include "base/file_util.h"
#include "base/npy.h"
#include "golden/safetensors.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

namespace fs = std::filesystem;

const std::string kDev = test::fixture("gemma3n-dev");

// Runs n3 golden on `model` and expects exit 2, one stderr line containing
// `needle`, and no dump directory left behind.
void expect_refused(const std::string& model, const std::string& needle, const std::string& ids = kDev + "/prompt_ids.npy",
                    const std::string& extra = "") {
  const std::string dump = test::temp_dir("dump") + "/out";
  test::RunResult r = test::run_n3("golden --numerics reference --model " + model + " --ids " + ids + " --dump " +
                                   dump + " " + extra);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be one line: " << r.err;
  EXPECT_FALSE(fs::exists(dump)) << "partial output left in " << dump;
}

// A copy of the dev checkpoint whose safetensors file is replaced by `bytes`.
std::string checkpoint_with(const std::string& bytes) {
  const std::string d = test::temp_dir("ckpt");
  fs::copy_file(kDev + "/hf/config.json", d + "/config.json");
  std::ofstream(d + "/model.safetensors", std::ios::binary) << bytes;
  return d;
}

std::string dev_bytes() { return read_file_text(kDev + "/hf/model.safetensors"); }

TEST(MalformedInput, TruncatedSafetensors) {
  std::string b = dev_bytes();
  expect_refused(checkpoint_with(b.substr(0, b.size() - 1000)), "run past the end of the file");
  expect_refused(checkpoint_with(b.substr(0, 5)), "truncated safetensors file");
}

TEST(MalformedInput, HeaderLengthPastEnd) {
  std::string b = dev_bytes();
  uint64_t huge = uint64_t(1) << 40;
  std::memcpy(b.data(), &huge, 8);
  expect_refused(checkpoint_with(b), "header length");
}

// Rewrites the dev checkpoint through the safetensors writer, editing one tensor.
std::string rewritten(const std::function<void(std::vector<SafetensorsOut>&)>& edit) {
  SafetensorsFile f(kDev + "/hf/model.safetensors");
  std::vector<SafetensorsOut> ts;
  for (const auto& [name, e] : f.entries())
    ts.push_back({name, e.dtype, e.shape, std::string(reinterpret_cast<const char*>(e.data), e.nbytes)});
  edit(ts);
  const std::string d = test::temp_dir("ckpt");
  fs::copy_file(kDev + "/hf/config.json", d + "/config.json");
  write_safetensors(d + "/model.safetensors", ts);
  return d;
}

TEST(MalformedInput, OffsetsPastEndOfData) {
  // A header entry whose data_offsets point past the data section.
  std::string b = dev_bytes();
  uint64_t hl;
  std::memcpy(&hl, b.data(), 8);
  std::string header = b.substr(8, hl);
  const std::string key = "\"data_offsets\":[0,";
  size_t p = header.find(key);
  ASSERT_NE(p, std::string::npos);
  size_t e = header.find(']', p);
  std::string repl = "\"data_offsets\":[999999990,999999999";
  std::string nh = header.substr(0, p) + repl + header.substr(e);
  nh.resize(std::max(nh.size(), header.size()), ' ');
  uint64_t nl = nh.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &nl, 8);
  expect_refused(checkpoint_with(out + nh + b.substr(8 + hl)), "run past the end of the file");
}

// Two tensors sharing bytes used to load (issue 22); the format forbids it.
TEST(MalformedInput, OverlappingDataOffsets) {
  const std::string h =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  std::string f(8, '\0');
  const uint64_t n = h.size();
  std::memcpy(f.data(), &n, 8);
  expect_refused(checkpoint_with(f + h + std::string(12, '\0')), "tensors 'a' and 'b' overlap");
}

TEST(MalformedInput, WrongDtype) {
  expect_refused(rewritten([](std::vector<SafetensorsOut>& ts) {
                   for (auto& t : ts)
                     if (t.name == "model.norm.weight") t.dtype = "I32";
                 }),
                 "model.norm.weight': dtype I32 unsupported");
}

TEST(MalformedInput, WrongShape) {
  expect_refused(rewritten([](std::vector<SafetensorsOut>& ts) {
                   for (auto& t : ts)
                     if (t.name == "model.layers.3.mlp.up_proj.weight") t.shape = {256, 256};
                 }),
                 "model.layers.3.mlp.up_proj.weight': shape [256, 256] but the config implies [512, 128]");
}

TEST(MalformedInput, MissingTensor) {
  expect_refused(rewritten([](std::vector<SafetensorsOut>& ts) {
                   ts.erase(std::remove_if(ts.begin(), ts.end(),
                                           [](const SafetensorsOut& t) {
                                             return t.name == "model.layers.7.laurel.linear_left.weight";
                                           }),
                            ts.end());
                 }),
                 "missing tensor 'model.layers.7.laurel.linear_left.weight'");
}

TEST(MalformedInput, BadConfigYamlAndJson) {
  const std::string d = test::temp_dir("ckpt");
  fs::copy_file(kDev + "/hf/model.safetensors", d + "/model.safetensors");
  std::ofstream(d + "/config.json") << "{\"hidden_size\": 128, ";
  expect_refused(d, "config.json:");
  const std::string y = test::temp_dir("yaml") + "/m.yaml";
  std::ofstream(y) << "hidden_size: [64\n";
  test::RunResult r = test::run_n3("synth --model " + y + " --seed 1 -o " + test::temp_dir("o") + "/x.n3w");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("m.yaml:"), std::string::npos) << r.err;
}

TEST(MalformedInput, IdsOutOfRange) {
  const std::string ids = test::temp_dir("ids") + "/ids.npy";
  write_npy_i32(ids, {1, 2, 512});
  expect_refused(kDev + "/hf", "token id 512 at index 2 is out of range [0, 512)", ids);
  write_npy_raw(ids, "f4", {2}, "\0\0\0\0\0\0\0\0", 8);
  expect_refused(kDev + "/hf", "token ids must be int32 or int64", ids);
}

TEST(MalformedInput, NonEmptyDumpDirectoryIsRefusedWithoutForce) {
  const std::string dump = test::temp_dir("dump");
  std::ofstream(dump + "/keep.txt") << "user data";
  const std::string base = "golden --numerics reference --model " + kDev + "/hf --ids " + kDev +
                           "/prompt_ids.npy --dump " + dump;
  test::RunResult r = test::run_n3(base);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dump + "/manifest.json"));
  r = test::run_n3(base + " --force");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dump + "/manifest.json"));
  EXPECT_TRUE(fs::exists(dump + "/keep.txt"));  // --force replaces dumps, never user files
}

}  // namespace
}  // namespace n3
