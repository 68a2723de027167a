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

TEST(FileFuzzCorpus, HwYaml) {
  expect_loaded(replay("hw_yaml", fuzz::fuzz_hw_yaml), {"kv260.yaml", "hbm-server.yaml", "lpddr5x-edge.yaml"});
}

TEST(FileFuzzCorpus, ModelYaml) {
  expect_loaded(replay("model_yaml", fuzz::fuzz_model_yaml), {"tiny.yaml", "mid.yaml", "micro.yaml"});
}

}  // namespace
}  // namespace n3::test
