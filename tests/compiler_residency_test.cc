// The weight residency planner (compiler/residency.h): what it keeps in L2,
// in which order, within which budget; that the forward programs only read
// the resident copies (the verifier catches a write); that a model run with
// most of its weights resident stays bit-identical to the golden model; and
// that residency saves simulated DDR time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "compiler/residency.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "golden/model_config.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

using test::run_n3;

struct Plan {
  ModelConfig cfg = load_model_config(test::source_dir() + "/configs/models/tiny.yaml");
  num::Formats f;
  comp::HwLimits hw{1ull << 26, 1835008, 1 << 18, 256, 1313, ""};
};

TEST(CompilerResidency, FillsTheFreeL2InPriorityOrderWithinTheBudget) {
  Plan p;
  comp::Layout lay = comp::plan_layout(p.cfg, p.f, p.hw, 8);
  comp::plan_residency(lay, p.cfg, p.f, p.hw);
  ASSERT_FALSE(lay.resident.empty());
  const uint64_t act = std::max(comp::l2_bytes_for(p.cfg, p.f, p.hw, 1), comp::l2_bytes_for(p.cfg, p.f, p.hw, 8));
  EXPECT_GE(lay.l2_resident_base, act);          // activations below, weights above
  EXPECT_LE(comp::resident_bytes(lay), p.hw.l2 - act);
  for (size_t i = 1; i < lay.resident.size(); ++i)  // priority order, highest first
    EXPECT_GE(lay.resident[i - 1].score, lay.resident[i].score) << lay.resident[i].name;
  for (const comp::Resident& r : lay.resident) {
    EXPECT_NE(r.name, "embed_tokens.weight");
    EXPECT_GE(r.uses, 1) << r.name;
    EXPECT_GE(r.l2_base, lay.l2_resident_base) << r.name;
    EXPECT_LE(r.l2_base + r.data_bytes, p.hw.l2) << r.name;
  }
  // The tiny model's matrices all fit: everything but the embedding tables is resident.
  EXPECT_NE(lay.resident_of("layers.0.mlp.down_proj.weight"), nullptr);
}

TEST(CompilerResidency, BudgetCapAndZeroBudget) {
  Plan p;
  comp::Layout a = comp::plan_layout(p.cfg, p.f, p.hw, 8), b = a;
  comp::ResidencyOptions cap;
  cap.max_bytes = 4096;
  comp::plan_residency(a, p.cfg, p.f, p.hw, cap);
  EXPECT_GT(comp::resident_bytes(a), 0u);
  EXPECT_LE(comp::resident_bytes(a), 4096u);
  // Under a tight budget the small, latency-bound weights win.
  for (const comp::Resident& r : a.resident) EXPECT_LE(r.data_bytes + r.scale_bytes, 4096u) << r.name;
  cap.max_bytes = 0;
  comp::plan_residency(b, p.cfg, p.f, p.hw, cap);
  EXPECT_TRUE(b.resident.empty());
  EXPECT_EQ(b.l2_resident_base, p.hw.l2);
}

TEST(CompilerResidency, ForwardProgramsReadResidentCopiesAndAWriteIsCaught) {
  Plan p;
  comp::Layout lay = comp::plan_layout(p.cfg, p.f, p.hw, 4);
  comp::plan_residency(lay, p.cfg, p.f, p.hw);
  comp::CompileOptions o;
  o.tokens = 4;
  comp::Compiled c = comp::compile_forward(p.cfg, lay, p.f, p.hw, o);
  EXPECT_TRUE(comp::verify_compiled(c, p.hw).empty());
  EXPECT_NE(c.text.find("space=l2 base=0x" + [&] {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(lay.resident.front().l2_base));
    return std::string(b);
  }()), std::string::npos);
  // Mutation: the first instruction that writes L2 now claims to write the resident region.
  for (auto& acc : c.accesses)
    for (auto& a : acc)
      if (a.write && a.space == 1) {
        a.lo = lay.resident.front().l2_base;
        a.hi = a.lo + 16;
        goto mutated;
      }
mutated:
  bool caught = false;
  for (const std::string& s : comp::verify_compiled(c, p.hw)) caught |= s.find("writes resident weights") != std::string::npos;
  EXPECT_TRUE(caught);
  const comp::Compiled pre = comp::compile_preload(lay, p.hw);
  EXPECT_NE(pre.text.find("memcpy"), std::string::npos);
}

// The embedded dev checkpoint with chunk 8: most weights resident; prefill
// (20 tokens: chunks 8, 8, 4) and 3 decode steps bit-identical to golden, and
// the compile report lists them.
TEST(CompilerResidency, MostlyResidentRunIsBitIdenticalAndReported) {
  const std::string dir = test::temp_dir("residency");
  const std::string m = test::fixture("gemma3n-dev/hf"), ids = test::fixture("gemma3n-dev/prompt_ids.npy");
  test::RunResult r = run_n3("compile --model " + m + " --chunk 8 -o " + dir + "/c");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json rep = nlohmann::json::parse(read_file_text(dir + "/c/report.json"));
  EXPECT_GT(rep["resident_weight_bytes"].get<uint64_t>(), 1000000u) << rep.dump();
  EXPECT_TRUE(file_exists(dir + "/c/preload.n3p"));
  const std::string feed = dir + "/feed.npy";
  write_npy_i32(feed, {5, 77, 300});
  const std::string io = " --model " + m + " --ids " + ids + " --feed " + feed + " --dump-all --force";
  ASSERT_EQ(run_n3("golden --numerics npu" + io + " --dump " + dir + "/g").status, 0);
  test::expect_sims_match("--chunk 8" + io, dir, dir + "/g");
}

}  // namespace
}  // namespace n3
