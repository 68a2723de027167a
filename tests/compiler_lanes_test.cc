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

#include "base/file_util.h"
#include "base/npy.h"
#include "compiler/emit.h"
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
  comp::Compiled compile(int lanes, int skew = 1) const {
    comp::CompileOptions o;
    o.tokens = kT;
    o.lanes = lanes;
    o.lane_skew = skew;
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
  size_t gemm_after = 0;             // the first GEMM instruction after it
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
  for (size_t j = m.mul + 1; j < v.size() && !m.gemm_after; ++j)
    if (v[j].rfind("gemm.mv ", 0) == 0) m.gemm_after = j;
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
// lanes in lockstep (skew 0) it is the other lane's up product, which the
// array runs while the SFU works on this lane; this lane's own product is
// the one before. With the default skew of one step, lane A runs ahead: its
// multiply follows its own up product and the other lane's up product comes
// right after it (dispatch runs ahead of the SFU, so the array has it queued
// while the SFU multiplies), not reading what the multiply writes.
TEST(CompilerLanes, TheOtherLanesProductSitsBetweenAProductAndItsRowOperator) {
  Fixture fx;
  const comp::Compiled one = fx.compile(1), lockstep = fx.compile(0, 0), skewed = fx.compile(0);
  const FfnMul a = first_ffn_mul(one), b = first_ffn_mul(lockstep), c = first_ffn_mul(skewed);
  ASSERT_GE(a.gemms_before.size(), 2u);
  ASSERT_GE(b.gemms_before.size(), 2u);
  ASSERT_GE(c.gemms_before.size(), 2u);
  EXPECT_TRUE(reads_what_writes(one, a.mul, a.gemms_before[0]));
  EXPECT_FALSE(reads_what_writes(lockstep, b.mul, b.gemms_before[0]));
  EXPECT_TRUE(reads_what_writes(lockstep, b.mul, b.gemms_before[1]));
  EXPECT_TRUE(reads_what_writes(skewed, c.mul, c.gemms_before[0]));
  ASSERT_GT(c.gemm_after, c.mul);
  const std::vector<std::string> v = instructions(skewed);
  EXPECT_NE(v[c.gemm_after].find("up_proj"), std::string::npos) << v[c.gemm_after];
  EXPECT_FALSE(reads_what_writes(skewed, c.gemm_after, c.mul)) << "the other lane's product is independent";
  // The lanes cost instructions (each product once per lane), not tokens' correctness.
  EXPECT_GT(lockstep.instructions, one.instructions);
  EXPECT_EQ(skewed.instructions, lockstep.instructions);
  EXPECT_TRUE(comp::verify_compiled(lockstep, fx.lim).empty());
  EXPECT_TRUE(comp::verify_compiled(skewed, fx.lim).empty());
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


// Three lanes, a step apart, with the overlap buffers: tiny's chosen chunk
// on kv260 (213) takes three lanes (Schedule.TheChosenChunkKeepsThreeLanes...);
// a 260-token prompt (programs 213, 32, 8, 4, 2, 1: three lanes, then two,
// then none) and decode steps on func and systemc, every tensor equal to golden.
TEST(CompilerLanes, ThreeLaneChunkMatchesGolden) {
  const std::string dir = test::temp_dir("lanes_three");
  const test::RunResult c = test::run_n3("compile --model " + test::tiny_n3w() + " -o " + dir + "/c");
  ASSERT_EQ(c.status, 0) << c.err;
  ASSERT_NE((c.out + c.err).find("<- chosen  (3 lanes)"), std::string::npos) << c.out << c.err;
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < 260; ++i) ids.push_back((i * 37 + 11) % 256);
  for (int i = 0; i < 3; ++i) feed.push_back((i * 13 + 1) % 256);
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  const std::string io = " --model " + test::tiny_n3w() + " --ids " + dir + "/ids.npy --feed " + dir +
                         "/feed.npy --dump-all --force";
  ASSERT_EQ(test::run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
  test::expect_sims_match(io, dir, dir + "/g");
}

// Emitter::merge_lanes with a skew of one on a hand-made pair of lanes: per
// lane an SFU op writing X, a GEMM product X -> Y, then an SFU op writing Y
// in place. Lane A runs one step ahead (its product before lane B's first
// op), except where that would write a tensor whose capture, taken after
// lane B's step, is still pending: then A's in-place op waits for it.
std::vector<std::string> merged(bool capture_y) {
  comp::Emitter e;
  const comp::Buf x = e.l2(16, 16, "bf16"), y = e.l2(16, 16, "bf16");
  e.set_lane_skew(1);
  e.begin_lanes(2);
  for (int l = 0; l < 2; ++l) {
    e.lane(l);
    const std::string tag = l == 0 ? "a" : "b";
    const comp::Buf xl = comp::view(x, 8, 16, uint64_t(l) * 8 * 32), yl = comp::view(y, 8, 16, uint64_t(l) * 8 * 32);
    e.op(comp::Emitter::SFU, "cvo.scale dst=" + e.d(xl) + " a=" + e.d(xl) + " k=" + e.kf(2.0f) + " ; x" + tag);
    e.op(comp::Emitter::GEMM, "gemm.mv dst=" + e.d(yl) + " src=" + e.d(xl) + " w=" + e.d(xl) + " ; p" + tag);
    if (capture_y) e.capture("y", e.d(y));
    e.op(comp::Emitter::SFU, "cvo.scale dst=" + e.d(yl) + " a=" + e.d(yl) + " k=" + e.kf(2.0f) + " ; y" + tag);
  }
  e.merge_lanes();
  std::vector<std::string> order;
  std::istringstream in(e.finish());
  for (std::string line; std::getline(in, line);)
    if (const size_t c = line.find(" ; "); line.rfind("    ", 0) == 0 && c != std::string::npos)
      order.push_back(line.substr(c + 3, 2));
  return order;
}

TEST(CompilerLanes, ALaneRunsOneStepAheadUnlessACaptureIsPending) {
  EXPECT_EQ(merged(false), (std::vector<std::string>{"xa", "pa", "xb", "ya", "pb", "yb"}));
  EXPECT_EQ(merged(true), (std::vector<std::string>{"xa", "pa", "xb", "pb", "ya", "yb"}));
}

// The attention loop in a chunk of 16 or more alternates two score buffers
// and register sets: token 1's QK^T is dispatched before token 0's softmax,
// into the other buffer, so the GEMV computes it while the SFU runs token
// 0's softmax. Decode keeps the plain loop.
TEST(CompilerLanes, AttentionOverlapsTheNextTokensScoresWithThisSoftmax) {
  Fixture fx;
  const std::vector<std::string> v = instructions(fx.compile(0));
  std::vector<size_t> qk, sm;
  for (size_t i = 0; i < v.size() && (qk.size() < 2 || sm.empty()); ++i) {
    if (v[i].rfind("gemv.qk ", 0) == 0) qk.push_back(i);
    if (v[i].rfind("cvo.softmax ", 0) == 0) sm.push_back(i);
  }
  ASSERT_EQ(qk.size(), 2u);
  ASSERT_EQ(sm.size(), 1u);
  EXPECT_LT(qk[1], sm[0]);
  EXPECT_NE(v[qk[0]].substr(0, v[qk[0]].find(' ', 12)), v[qk[1]].substr(0, v[qk[1]].find(' ', 12)))
      << "the two tokens' scores go to two buffers";
  comp::CompileOptions o;
  o.tokens = 1;
  const comp::Layout lay1 = comp::plan_layout(fx.cfg, fx.hw.numerics.formats, fx.lim, 1);
  const std::vector<std::string> d = instructions(comp::compile_forward(fx.cfg, lay1, fx.hw.numerics.formats, fx.lim, o));
  std::vector<size_t> dqk, dsm;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i].rfind("gemv.qk ", 0) == 0) dqk.push_back(i);
    if (d[i].rfind("cvo.softmax ", 0) == 0) dsm.push_back(i);
  }
  ASSERT_GE(dqk.size(), 2u);
  ASSERT_GE(dsm.size(), 1u);
  const size_t second_qk = dqk[1], first_sm = dsm[0];
  EXPECT_GT(second_qk, first_sm) << "decode: one token, the plain loop";
}

// The LM head of a vocabulary of 32 768 or more runs in slices, each
// softcapped as it lands (the softcap of one overlaps the next product): a
// tiny model with a 65 536-token vocabulary, a 20-token prompt at chunk 16
// (two lanes) and decode steps, every tensor equal to golden on func and
// systemc; its programs have 4 LM-head products per lane.
TEST(CompilerLanes, VocabularySlicesMatchGolden) {
  const std::string dir = test::temp_dir("lanes_vocab");
  std::string y = read_file_text(test::source_dir() + "/configs/models/tiny.yaml");
  const size_t at = y.find("vocab_size: 256\n");
  ASSERT_NE(at, std::string::npos);
  y.replace(at, 16, "vocab_size: 65536\n");
  write_file_atomic(dir + "/m.yaml", y);
  ASSERT_EQ(test::run_n3("synth -q --model " + dir + "/m.yaml --seed 3 -o " + dir + "/m.n3w").status, 0);
  ASSERT_EQ(test::run_n3("compile --model " + dir + "/m.n3w --chunk 16 -o " + dir + "/c").status, 0);
  const std::string text = read_file_text(dir + "/c/prefill_16.s");
  size_t heads = 0;
  for (size_t p = text.find("w=embed_tokens.weight"); p != std::string::npos; p = text.find("w=embed_tokens.weight", p + 1))
    if (text.rfind("gemm.mv", p) > text.rfind('\n', p)) ++heads;
  EXPECT_EQ(heads, 8u);
  std::vector<int32_t> ids, feed;
  for (int i = 0; i < 20; ++i) ids.push_back((i * 7919 + 5) % 65536);
  for (int i = 0; i < 3; ++i) feed.push_back((i * 104729 + 7) % 65536);
  write_npy_i32(dir + "/ids.npy", ids);
  write_npy_i32(dir + "/feed.npy", feed);
  const std::string io = " --model " + dir + "/m.n3w --ids " + dir + "/ids.npy --feed " + dir + "/feed.npy --dump-all --force";
  ASSERT_EQ(test::run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
  test::expect_sims_match("--chunk 16" + io, dir, dir + "/g");
}

}  // namespace
}  // namespace n3
