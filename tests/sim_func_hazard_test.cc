// The hazard checker: conflicting accesses of two engines must be ordered by
// tokens (directly, transitively, or through the control engine's dispatch
// order); anything else traps, whatever order this run happened to use.
#include <gtest/gtest.h>

#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

const char* kDescs = R"(
.desc x dtype=f32 space=l2 base=0x0 rows=4 cols=16 row_stride=64
.desc x01 dtype=f32 space=l2 base=0x0 rows=2 cols=16 row_stride=64
.desc x23 dtype=f32 space=l2 base=0x80 rows=2 cols=16 row_stride=64
.desc y dtype=f32 space=l2 base=0x200 rows=4 cols=16 row_stride=64
.desc z dtype=f32 space=l2 base=0x400 rows=4 cols=16 row_stride=64
.desc w dtype=f32 space=l2 base=0x600 rows=16 cols=16 row_stride=64
.desc scalar dtype=int32 space=l2 base=0x800 rows=1 cols=1 row_stride=16
.const one f32 1
.const seven i32 7
)";

// Runs `body`; returns "" or the trap message.
std::string run(const std::string& body, bool hazards = true) {
  sim::SimOptions o = small_options();
  o.hazards = hazards;
  sim::FuncSim s(assemble_text(std::string(kDescs) + body, false), o);
  try {
    s.run();
  } catch (const sim::Trap& t) {
    return t.what();
  }
  return "";
}

TEST(SimFuncHazard, RawNeedsAToken) {
  EXPECT_NE(run("    memset dst=x k=one\n    cvo.exp dst=y a=x\n    sys.halt\n").find("RAW hazard"), std::string::npos);
  EXPECT_EQ(run("    memset dst=x k=one signal=sfu\n    cvo.exp dst=y a=x wait=dma\n    sys.halt\n"), "");
}

TEST(SimFuncHazard, WarAndWaw) {
  // The SFU reads x; the DMA then overwrites it without waiting.
  EXPECT_NE(run("    cvo.exp dst=y a=x\n    memset dst=x k=one\n    sys.halt\n").find("WAR hazard"), std::string::npos);
  EXPECT_EQ(run("    cvo.exp dst=y a=x signal=dma\n    memset dst=x k=one wait=sfu\n    sys.halt\n"), "");
  EXPECT_NE(run("    memset dst=y k=one\n    cvo.exp dst=y a=x\n    sys.halt\n").find("WAW hazard"), std::string::npos);
}

TEST(SimFuncHazard, SameEngineIsOrdered) {
  EXPECT_EQ(run("    cvo.exp dst=y a=x\n    cvo.tanh dst=x a=y\n    cvo.add dst=z a=x b=y\n    sys.halt\n"), "");
  EXPECT_EQ(run("    memset dst=x k=one\n    memcpy dst=y src=x\n    sys.halt\n"), "");
}

TEST(SimFuncHazard, TransitiveOrderThroughTokens) {
  // DMA -> GEMV -> SFU: the SFU may read what the DMA wrote.
  EXPECT_EQ(run("    memset dst=x k=one signal=gemv\n    gemv.mv dst=z src=y w=w wait=dma signal=sfu\n"
                "    cvo.exp dst=y a=x wait=gemv\n    sys.halt\n"),
            "");
}

TEST(SimFuncHazard, ControlBarrierOrdersLaterDispatches) {
  // sys.sync waits for the DMA's token; everything dispatched after it is ordered after the DMA.
  EXPECT_EQ(run("    memset dst=x k=one signal=ctl\n    sys.sync wait=dma\n    cvo.exp dst=y a=x\n    sys.halt\n"), "");
  // A token to the control engine alone does not order an engine that did not wait.
  EXPECT_NE(run("    memset dst=x k=one signal=ctl\n    cvo.exp dst=y a=x\n    sys.sync wait=dma\n    sys.halt\n")
                .find("RAW hazard"),
            std::string::npos);
}

TEST(SimFuncHazard, DisjointRangesDoNotConflict) {
  EXPECT_EQ(run("    memset dst=x01 k=one\n    cvo.exp dst=x23 a=x23\n    sys.halt\n"), "");
  EXPECT_NE(run("    memset dst=x01 k=one\n    cvo.exp dst=y a=x\n    sys.halt\n").find("[0x0, 0x80)"), std::string::npos);
}

TEST(SimFuncHazard, ScalarLoadsAreChecked) {
  EXPECT_NE(run("    memset dst=scalar k=seven\n    ldst.lw space=l2 rd=r1 rs1=r0 imm=2048\n    sys.halt\n").find("RAW hazard"),
            std::string::npos);
  EXPECT_EQ(run("    memset dst=scalar k=seven signal=ctl\n    ldst.lw space=l2 rd=r1 rs1=r0 imm=2048 wait=dma\n    sys.halt\n"),
            "");
}

TEST(SimFuncHazard, CheckerOffRunsTheSameProgram) {
  EXPECT_EQ(run("    memset dst=x k=one\n    cvo.exp dst=y a=x\n    sys.halt\n", /*hazards=*/false), "");
}

TEST(SimFuncHazard, TokensInLoopsBalance) {
  // A producer/consumer loop: DMA fills, SFU consumes and hands the buffer back.
  EXPECT_EQ(run("    alui.add rd=r1 rs1=r0 imm=20\n"
                "    cvo.exp dst=z a=z signal=dma\n"  // seeds the 'x is free' token
                "loop:\n"
                "    memset dst=x k=one wait=sfu signal=sfu\n"
                "    cvo.exp dst=y a=x wait=dma signal=dma\n"
                "    alui.add rd=r1 rs1=r1 imm=-1\n"
                "    br.ne rs1=r1 rs2=r0 target=loop\n"
                "    memset dst=z k=one wait=sfu\n"
                "    sys.halt\n"),
            "");
}

}  // namespace
}  // namespace n3::test
