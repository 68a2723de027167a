// The GEMM array's cycle formula (sim/systemc/timing.h gemm_cycles, the
// model's and the RTL's: docs/rtl_gemm.md "Cycles"). The RTL itself holds
// to it on every stall-free cosim vector (tests/rtl_gemm_test.cc); here,
// without Verilator: the shortcut over long tile runs equals the whole
// recurrence, and the regimes (weight-load bound below `rows` tokens, a
// ragged tile costing a whole one) come out as the RTL measured them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "golden/hw_config.h"
#include "sim/systemc/timing.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

// The RTL's schedule tile by tile (rtl_bridge/gemm_rtl.cc's comment):
// tile i loads from b_i = max(b_{i-1} + rows, s_{i-2} + T) (b_0 = 1) and
// enters at s_i = max(run_start, b_i + rows, s_{i-1} + T).
int64_t whole_recurrence(int64_t T, int64_t tiles, int64_t rows, int64_t run_start) {
  std::vector<int64_t> s(static_cast<size_t>(tiles)), b(static_cast<size_t>(tiles));
  for (size_t i = 0; i < s.size(); ++i) {
    b[i] = i == 0 ? 1 : b[i - 1] + rows;
    if (i >= 2) b[i] = std::max(b[i], s[i - 2] + T);
    s[i] = std::max(run_start, b[i] + rows);
    if (i >= 1) s[i] = std::max(s[i], s[i - 1] + T);
  }
  return s.back() + T - run_start;
}

TEST(GemmTiming, ShortcutEqualsTheWholeRecurrence) {
  std::mt19937_64 g(7);
  for (int n = 0; n < 100000; ++n) {
    const int64_t T = 1 + int64_t(g() % 200), tiles = 1 + int64_t(g() % 80), rows = 1 + int64_t(g() % 130),
                  start = int64_t(g() % 700);
    ASSERT_EQ(timing::gemm_array_clocks(T, tiles, rows, start), whole_recurrence(T, tiles, rows, start))
        << "T " << T << " tiles " << tiles << " rows " << rows << " start " << start;
  }
}

// kv260's 32 x 32 x 2 array on K = N = 2048 (2 048 tiles): below 32 tokens
// each tile after the two preloaded ones waits for its own 32-clock load;
// from 32 tokens the array is busy (docs/rtl_gemm.md's table, measured on the RTL).
TEST(GemmTiming, WeightLoadBoundBelowRowsTokens) {
  const timing::Params p = timing::load_params(load_hw_config(test::source_dir() + "/configs/hw/kv260.yaml"));
  ASSERT_EQ(p.compute.gemm_rows.value, 32);
  const auto less_act = [&](int64_t T, int64_t K, int64_t N) {
    const timing::GemmCycles c = timing::gemm_cycles(p, T, K, N, 2, 32);
    return c.total() - c.act;
  };
  EXPECT_EQ(less_act(1, 2048, 2048), 65541);
  EXPECT_EQ(less_act(8, 2048, 2048), 65555);
  EXPECT_EQ(less_act(16, 2048, 2048), 65571);
  EXPECT_EQ(less_act(32, 2048, 2048), 65603);
  EXPECT_EQ(less_act(64, 2048, 8192), 524355);
  // T >= rows, whole tiles: exactly MACs / array MACs a clock + setup + skew.
  EXPECT_EQ(less_act(64, 2048, 8192), 64.0 * 2048 * 8192 / (32 * 32 * 2) + 3 + 64);
  // A ragged tile costs a whole one: N = 2049 takes 65 column tiles.
  EXPECT_EQ(timing::gemm_cycles(p, 64, 2048, 2049, 2, 32).tiles, 65 * 32);
  EXPECT_GT(less_act(64, 2048, 2049), less_act(64, 2048, 2048) + 32 * 64 - 1);
  // The activations: one 32-byte L2 beat a clock, 16 bf16 or 8 f32 elements.
  EXPECT_EQ(timing::gemm_cycles(p, 4, 2048, 64, 2, 32).act, 4 * 128);
  EXPECT_EQ(timing::gemm_cycles(p, 4, 2048, 64, 4, 32).act, 4 * 256);
}

}  // namespace
}  // namespace n3
