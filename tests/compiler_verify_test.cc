// Fault injection: a compiled program mutated to drop a synchronisation,
// overlap two live buffers, mismatch a dtype or an operand shape is caught by the compiler's
// verifier (comp::verify_compiled) and, where it runs, by the functional
// simulator's hazard checker or dtype traps.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "golden/model_config.h"
#include "isa/isa.h"
#include "sim/func_sim.h"
#include "tests/test_util.h"

namespace n3 {
namespace {

struct Fixture {
  ModelConfig cfg = load_model_config(test::source_dir() + "/configs/models/tiny.yaml");
  num::Formats f;
  comp::HwLimits hw{1ull << 26, 1835008, 1 << 18, 256, 0, ""};
  comp::Layout lay = comp::plan_layout(cfg, f, hw, 2);
  comp::Compiled c = [&] {
    comp::CompileOptions o;
    o.tokens = 2;
    return comp::compile_forward(cfg, lay, f, hw, o);
  }();

  // Runs the program on zero weights; returns the trap kind, or -1 when it ran.
  int run(const isa::Program& p) const {
    sim::SimOptions o;
    o.formats = f;
    o.caps = {hw.ddr, hw.l2, hw.wbuf};
    sim::FuncSim s(p, o);
    try {
      s.run();
    } catch (const sim::Trap& t) {
      return int(t.kind);
    }
    return -1;
  }
};

bool mentions(const std::vector<std::string>& v, const std::string& what) {
  for (const std::string& s : v)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

TEST(CompilerVerify, CompiledProgramIsCleanAndRuns) {
  Fixture fx;
  EXPECT_TRUE(comp::verify_compiled(fx.c, fx.hw).empty());
  EXPECT_EQ(fx.run(fx.c.program), -1);
}

TEST(CompilerVerify, DroppedSynchronisationIsCaught) {
  Fixture fx;
  isa::Program& p = fx.c.program;
  // The first token: clear the first wait and the signal it pairs with
  // (tokens pair first in, first out: the first signal of that engine pair).
  size_t at = 0, prev = 0;
  int f = -1, e = -1;
  for (size_t i = 0; i < p.code.size() && f < 0; ++i)
    if (isa::def_of(p.code[i]) && isa::wait_bits(p.code[i])) {
      at = i;
      e = int(isa::def_of(p.code[i])->engine);
      for (f = 0; !((isa::wait_bits(p.code[i]) >> f) & 1); ++f) {
      }
    }
  ASSERT_GE(f, 0);
  for (size_t j = 0; j < at; ++j)
    if (isa::def_of(p.code[j]) && int(isa::def_of(p.code[j])->engine) == f && ((isa::signal_bits(p.code[j]) >> e) & 1)) {
      prev = j;
      break;
    }
  p.code[at] &= ~(uint64_t(1) << (isa::kHdr_wait_lo + f));
  p.code[prev] &= ~(uint64_t(1) << (isa::kHdr_signal_lo + e));
  EXPECT_TRUE(mentions(comp::verify_compiled(fx.c, fx.hw), "by a token"));
  EXPECT_EQ(fx.run(p), int(sim::TrapKind::Hazard));
}

TEST(CompilerVerify, OverlappingLiveBuffersAreCaught) {
  Fixture fx;
  // A view pushed 16 bytes into the next buffer.
  isa::Program& p = fx.c.program;
  size_t slot = 0;
  for (size_t s = 1; s < p.descs.size() && !slot; ++s) {
    const isa::DescRecord d = isa::decode_desc(p.descs[s].data());
    if (d.space == isa::Space::L2 && !d.row_reg && d.rows > 1) slot = s;
  }
  ASSERT_GT(slot, 0u);
  comp::Compiled moved = fx.c;
  moved.program.descs[slot][0] += uint64_t(16) << 8;  // base field [47:8]
  EXPECT_TRUE(mentions(comp::verify_compiled(moved, fx.hw), "not inside one buffer"));
  // Two allocations made to overlap.
  comp::Compiled over = fx.c;
  ASSERT_GE(over.l2_allocs.size(), 2u);
  over.l2_allocs[1].first -= 16;
  EXPECT_TRUE(mentions(comp::verify_compiled(over, fx.hw), "overlap"));
}

// The descriptor slot named by `field` in the first instruction `insn`
// accepts whose descriptor `desc` accepts; 0 when there is none.
size_t first_operand(const isa::Program& p, const char* field, const std::function<bool(const isa::OpcodeDef&)>& insn,
                     const std::function<bool(const isa::DescRecord&)>& desc) {
  for (uint64_t w : p.code) {
    const isa::OpcodeDef* d = isa::def_of(w);
    if (!d || !insn(*d)) continue;
    const int f = isa::field_index(*d, field);
    if (f < 0) continue;
    const uint64_t slot = isa::field_raw(w, d->fields[f]);
    if (slot && desc(isa::decode_desc(p.descs[slot].data()))) return size_t(slot);
  }
  return 0;
}

TEST(CompilerVerify, DtypeMismatchIsCaught) {
  Fixture fx;
  isa::Program& p = fx.c.program;
  // The destination of the first SFU instruction writing F32 becomes INT32
  // (same width, so only the dtype is wrong).
  const size_t dst = first_operand(
      p, "dst", [](const isa::OpcodeDef& d) { return d.engine == isa::Engine::SFU; },
      [](const isa::DescRecord& r) { return r.dtype == isa::Dtype::F32; });
  ASSERT_GT(dst, 0u);
  p.descs[dst][0] = (p.descs[dst][0] & ~isa::kDesc_dtype_mask) | uint64_t(isa::Dtype::INT32);
  EXPECT_TRUE(mentions(comp::verify_compiled(fx.c, fx.hw), "dtype mismatch"));
  const int k = fx.run(p);
  EXPECT_TRUE(k == int(sim::TrapKind::DtypeMismatch) || k == int(sim::TrapKind::BadOperand)) << k;
}

TEST(CompilerVerify, ShapeMismatchIsCaught) {
  Fixture fx;
  isa::Program& p = fx.c.program;
  // The weight of the first matrix product (gemm here: a 2-token chunk) loses one input column.
  const size_t slot = first_operand(
      p, "w", [](const isa::OpcodeDef& d) { return d.opcode == isa::Opcode::GEMM; },
      [](const isa::DescRecord& r) { return !r.dyn_reg && r.space == isa::Space::DDR; });
  ASSERT_GT(slot, 0u);
  const uint32_t cols = isa::decode_desc(p.descs[slot].data()).cols;
  p.descs[slot][1] -= uint64_t(1) << 24;  // cols is the second word's [47:24] (kDesc_cols_mask)
  ASSERT_EQ(isa::decode_desc(p.descs[slot].data()).cols + 1, cols);
  EXPECT_TRUE(mentions(comp::verify_compiled(fx.c, fx.hw), "do not match"));
  EXPECT_EQ(fx.run(p), int(sim::TrapKind::ShapeMismatch));
}

TEST(CompilerPlan, ChunkSizesComeFromL2) {
  Fixture fx;
  const int big = comp::largest_chunk(fx.cfg, fx.f, fx.hw);
  EXPECT_GE(big, 1);
  EXPECT_LE(comp::l2_bytes_for(fx.cfg, fx.f, fx.hw, big), fx.hw.l2);
  comp::HwLimits small = fx.hw;
  small.l2 = 4096;
  EXPECT_THROW(comp::largest_chunk(fx.cfg, fx.f, small), Error);
}

}  // namespace
}  // namespace n3
