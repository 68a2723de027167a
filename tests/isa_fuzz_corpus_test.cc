// Replays the checked-in fuzz corpora (tests/fuzz_corpus/<target>/) through
// the fuzz targets' own checks (fuzz/targets.h), so the default build keeps
// every input a fuzzer ever found interesting passing, without clang.
#include <gtest/gtest.h>

#include <filesystem>

#include "fuzz/targets.h"
#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

int replay(const std::string& target, int (*fn)(const uint8_t*, size_t)) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/tests/fuzz_corpus/" + target)) {
    const std::vector<uint8_t> b = read_file_bytes(e.path().string());
    SCOPED_TRACE(e.path().string());
    fn(b.data(), b.size());  // aborts on a violated property
    ++n;
  }
  return n;
}

TEST(IsaFuzzCorpus, Decode) { EXPECT_GT(replay("decode", fuzz::fuzz_decode), 0); }
TEST(IsaFuzzCorpus, Asm) { EXPECT_GT(replay("asm", fuzz::fuzz_asm), 0); }
TEST(IsaFuzzCorpus, Load) { EXPECT_GT(replay("load", fuzz::fuzz_load), 0); }
TEST(SimFuncFuzzCorpus, Sim) { EXPECT_GT(replay("sim", fuzz::fuzz_sim), 0); }

}  // namespace
}  // namespace n3::test
