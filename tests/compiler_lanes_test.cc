// Overlap across units in prefill (issue 23, item 2; docs/compiler.md,
// "Overlap across units"): a chunk's rows split into lanes whose operators
// are emitted interleaved step by step, so the GEMM array has the other
// lane's product queued while the SFU runs a lane's row operators. These
// tests fail when the interleaving is lost: by the program order, by the
// modelled time under the program's own tokens, and (with SystemC) by the
// simulated time, each against the same chunk compiled without lanes.
// Bit-exactness with lanes: CompilerLanes.FortyTokenPromptMatchesGolden here,
// CompilerSpill.* (chunk 48) and Schedule.ChosenSpilledChunkStaysBitIdentical
// (chunk 32), all with --dump-all.
#include <gtest/gtest.h>

#include <sstream>

#include "base/npy.h"
#include "compiler/layout.h"
#include "compiler/lower.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "runtime/schedule.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

constexpr int kT = 32;

struct Fixture {
  ModelConfig cfg = load_model_config(test::source_dir() + "/configs/models/tiny.yaml");
  HwConfig hw = load_hw_config(test::source_dir() + "/configs/hw/kv260.yaml");
  comp::HwLimits lim = hw_limits(hw);
  comp::Layout lay = comp::plan_layout(cfg, hw.numerics.formats, lim, kT);
  comp::Compiled compile(int lanes) const {
    comp::CompileOptions o;
    o.tokens = kT;
    o.lanes = lanes;
    return comp::compile_forward(cfg, lay, hw.numerics.formats, lim, o);
  }
};

// The program's instructions in order (the assembly's indented lines; the
// index is Compiled::accesses's).
std::vector<std::string> instructions(const comp::Compiled& c) {
  std::vector<std::string> v;
  std::istringstream in(c.text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("    ", 0) == 0) v.push_back(line.substr(4));
  return v;
}

// Whether instruction i reads bytes instruction j writes.
bool reads_what_writes(const comp::Compiled& c, size_t i, size_t j) {
  for (const auto& r : c.accesses[i])
    for (const auto& w : c.accesses[j])
      if (!r.write && w.write && r.space == w.space && r.lo < w.hi && w.lo < r.hi) return true;
  return false;
}

// The first FFN product's consumer: the first cvo.mul after the first
// cvo.gelu (gelu(gate) * up, layer 0), and the GEMM instructions before it.
struct FfnMul {
  size_t mul = 0;
  std::vector<size_t> gemms_before;  // nearest first
};
FfnMul first_ffn_mul(const comp::Compiled& c) {
  const std::vector<std::string> v = instructions(c);
  FfnMul m;
  size_t gelu = v.size();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].rfind("cvo.gelu ", 0) == 0) {
      gelu = i;
      break;
    }
  for (size_t i = gelu; i < v.size(); ++i)
    if (v[i].rfind("cvo.mul ", 0) == 0) {
      m.mul = i;
      break;
    }
  for (size_t j = m.mul; j-- > 0;)
    if (v[j].rfind("gemm.mv ", 0) == 0) m.gemms_before.push_back(j);
  return m;
}

TEST(CompilerLanes, AChunkOfSixteenOrMoreGetsTwoLanes) {
  EXPECT_EQ(comp::default_lanes(1), 1);
  EXPECT_EQ(comp::default_lanes(8), 1);
  EXPECT_EQ(comp::default_lanes(16), 2);
  EXPECT_EQ(comp::default_lanes(64), 2);
  EXPECT_EQ(comp::default_lanes(64, /*chain=*/true), 1);
}

// Without lanes the GEMM instruction right before the FFN's gelu(g) * u is
// the up product it waits for: the SFU and the array take turns. With two
// lanes it is the other lane's up product, which the array runs while the
// SFU works on this lane; this lane's own product is the one before.
TEST(CompilerLanes, TheOtherLanesProductSitsBetweenAProductAndItsRowOperator) {
  Fixture fx;
  const comp::Compiled one = fx.compile(1), two = fx.compile(0);
  const FfnMul a = first_ffn_mul(one), b = first_ffn_mul(two);
  ASSERT_GE(a.gemms_before.size(), 2u);
  ASSERT_GE(b.gemms_before.size(), 2u);
  EXPECT_TRUE(reads_what_writes(one, a.mul, a.gemms_before[0]));
  EXPECT_FALSE(reads_what_writes(two, b.mul, b.gemms_before[0]));
  EXPECT_TRUE(reads_what_writes(two, b.mul, b.gemms_before[1]));
  // The lanes cost instructions (each product once per lane), not tokens' correctness.
  EXPECT_GT(two.instructions, one.instructions);
  EXPECT_TRUE(comp::verify_compiled(two, fx.lim).empty());
}

// The same chunk with and without lanes, timed under each program's own
// tokens (program_work's overlap model) and, where built, on the SystemC
// model: the lanes must be faster, though every product streams its weights
// once per lane.
TEST(CompilerLanes, LanesBeatTheSameChunkWithoutThem) {
  Fixture fx;
  const comp::Compiled one = fx.compile(1), two = fx.compile(0);
  const ProgramWork w1 = program_work(one, fx.lay, fx.hw, kT), w2 = program_work(two, fx.lay, fx.hw, kT);
  EXPECT_LT(w2.overlap_s, w1.overlap_s);
  EXPECT_GT(w2.weight_bytes, w1.weight_bytes);  // the price: weights streamed per lane
  EXPECT_DOUBLE_EQ(w2.sfu_work, w1.sfu_work);   // the same row operators, split
  EXPECT_DOUBLE_EQ(w2.gemm_macs, w1.gemm_macs);
  const ScheduleReport r1 = schedule_report(one, fx.lay, fx.hw, kT, true),
                       r2 = schedule_report(two, fx.lay, fx.hw, kT, true);
  if (r1.sim_s < 0) GTEST_SKIP() << "built without SystemC";
  EXPECT_LT(r2.sim_s, r1.sim_s) << "lanes " << r2.sim_s << " s, none " << r1.sim_s << " s";
}

// A 40-token prompt at chunk 32 (two lanes of 16 rows; then chunk 8, none)
// and decode steps on func and systemc: every materialised tensor matches
// the golden model (captures of a laned chunk see both lanes' rows).
TEST(CompilerLanes, FortyTokenPromptMatchesGolden) {
  const std::string dir = test::temp_dir("lanes_tiny");
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < 40; ++i) ids.push_back((i * 37 + 11) % 256);
  for (int i = 0; i < 6; ++i) feed.push_back((i * 13 + 1) % 256);
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  const std::string io = " --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy --feed " + dir +
                         "/feed.npy --dump-all --force";
  ASSERT_EQ(test::run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
  test::expect_sims_match("--chunk 32" + io, dir, dir + "/g");
}

}  // namespace
}  // namespace n3
