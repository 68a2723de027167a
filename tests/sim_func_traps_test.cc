// One program per trap kind (isa.yaml classes and docs/sim.md), each
// checked for the kind, the instruction index and a reason naming the cause.
#include <gtest/gtest.h>

#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

using sim::TrapKind;

struct Expect {
  TrapKind kind;
  int64_t pc;
  const char* reason;  // substring of the message
};

// Assembles without the static checks (these programs are meant to trap),
// runs, and checks the trap.
void expect_trap(const std::string& text, const Expect& e, sim::SimOptions opt = small_options()) {
  SCOPED_TRACE(text);
  sim::FuncSim s(assemble_text(text, /*verify=*/false), opt);
  try {
    s.run();
    FAIL() << "no trap; expected " << sim::trap_name(e.kind);
  } catch (const sim::Trap& t) {
    EXPECT_EQ(t.kind, e.kind) << t.what();
    EXPECT_EQ(t.pc, e.pc) << t.what();
    EXPECT_NE(std::string(t.what()).find(e.reason), std::string::npos) << t.what();
    const std::string head = std::string("trap ") + sim::trap_name(e.kind);
    EXPECT_EQ(std::string(t.what()).rfind(head, 0), 0u) << t.what();
  }
}

const char* kDescs = R"(
.desc x dtype=f32 space=l2 base=0x0 rows=1 cols=16 row_stride=64
.desc y dtype=f32 space=l2 base=0x100 rows=1 cols=16 row_stride=64
.desc w dtype=int4 space=ddr base=0x0 rows=16 cols=16 row_stride=8 scale_mode=row scale_base=0x100 scale_stride=4
.const one f32 1
)";

std::string prog(const std::string& body) { return std::string(kDescs) + body; }

TEST(SimFuncTraps, ReservedOpcode) {
  expect_trap(prog("    sys.sync\n    .word 0xa000000000000000\n    sys.halt\n"),
              {TrapKind::ReservedOpcode, 1, "opcode 10 is reserved"});
}

TEST(SimFuncTraps, ReservedEnumInInstructionAndInDescriptor) {
  expect_trap(prog("    .word 0x0002800000000000\n    sys.halt\n"), {TrapKind::ReservedEnum, 0, "mode = 5"});
  expect_trap(".desc bad raw=0x6:0x0:0x0:0x0\n.desc y dtype=f32 space=l2 base=0x100 rows=1 cols=16 "
              "row_stride=64\n    cvo.exp dst=y a=bad\n    sys.halt\n",
              {TrapKind::ReservedEnum, 0, "field dtype = 6"});
}

TEST(SimFuncTraps, ReservedBitsUnusedFieldsAndOwnEngineTokens) {
  expect_trap(prog("    .word 0x0000000000000001\n    sys.halt\n"), {TrapKind::ReservedBits, 0, "reserved bits"});
  // cvo.exp does not use b: field b (bits 19:8) must be zero.
  expect_trap(prog("    .word 0x4000000000000100\n    sys.halt\n"), {TrapKind::ReservedBits, 0, "field b is not used"});
  // A GEMV waiting on a token from the GEMV engine itself.
  expect_trap(prog("    .word 0x0200000000000000\n    sys.halt\n"), {TrapKind::ReservedBits, 0, "own engine"});
}

TEST(SimFuncTraps, BadOperand) {
  expect_trap(prog("    cvo.exp dst=y a=#100\n    sys.halt\n"), {TrapKind::BadOperand, 0, "beyond the table"});
  expect_trap(prog("    cvo.exp dst=y a=-\n    sys.halt\n"), {TrapKind::BadOperand, 0, "a descriptor is required"});
  expect_trap(prog("    cvo.scale dst=y a=x k=#9\n    sys.halt\n"), {TrapKind::BadOperand, 0, "constant slot 9"});
}

TEST(SimFuncTraps, OutOfRange) {
  // L2 is 1 MiB here.
  expect_trap(".desc big dtype=f32 space=l2 base=0xffff0 rows=2 cols=16 row_stride=64\n"
              ".desc y dtype=f32 space=l2 base=0x0 rows=2 cols=16 row_stride=64\n    cvo.exp dst=y a=big\n    sys.halt\n",
              {TrapKind::OutOfRange, 0, "leave l2"});
  // A run-time extent beyond the descriptor's bound.
  expect_trap(".desc v dtype=f32 space=l2 base=0x0 rows=4 cols=16 row_stride=64 dyn_reg=r1\n"
              "    alui.add rd=r1 rs1=r0 imm=5\n    cvo.exp dst=v a=v\n    sys.halt\n",
              {TrapKind::OutOfRange, 1, "r1 = 5 not in [1, 4]"});
  expect_trap(prog("    alui.add rd=r1 rs1=r0 imm=-16\n    ldst.lw space=ddr rd=r2 rs1=r1 imm=0\n    sys.halt\n"),
              {TrapKind::OutOfRange, 1, "scalar address -0x10 (-16) leaves ddr"});
}

// A negative address is shown as the program computed it (r0 + imm=-512),
// not as its 64-bit pattern 0xfffffffffffffe00.
TEST(SimFuncTraps, NegativeScalarAddressIsShownSigned) {
  for (const char* op : {"ldst.lw space=ddr rd=r2", "ldst.sd space=l2 rd=r2", "ldst.ld space=l2 rd=r2"}) {
    sim::FuncSim s(assemble_text(prog(std::string("    ") + op + " rs1=r0 imm=-512\n    sys.halt\n"), false),
                   small_options());
    try {
      s.run();
      ADD_FAILURE() << op << ": no trap";
    } catch (const sim::Trap& t) {
      const std::string m = t.what();
      EXPECT_EQ(t.kind, TrapKind::OutOfRange) << m;
      EXPECT_NE(m.find("scalar address -0x200 (-512) leaves"), std::string::npos) << m;
      EXPECT_EQ(m.find("fffff"), std::string::npos) << m;
    }
  }
}

TEST(SimFuncTraps, Misaligned) {
  expect_trap(".desc x dtype=f32 space=l2 base=0x8 rows=1 cols=16 row_stride=64\n    cvo.exp dst=x a=x\n    sys.halt\n",
              {TrapKind::Misaligned, 0, "not 16-byte aligned"});
  expect_trap(prog("    ldst.lw space=l2 rd=r1 rs1=r0 imm=2\n    sys.halt\n"), {TrapKind::Misaligned, 0, "4-byte aligned"});
}

TEST(SimFuncTraps, DtypeMismatch) {
  // Static: an INT32 tensor as GEMV weights (the weight class is INT4, INT8 or float).
  expect_trap(".desc i dtype=int32 space=l2 base=0x0 rows=16 cols=16 row_stride=64\n" + prog("") +
                  "    gemv.mv dst=y src=x w=i\n    sys.halt\n",
              {TrapKind::DtypeMismatch, 0, "int32 is not weight"});
  // Run time: MEMCPY has no float -> INT4 conversion.
  expect_trap(prog("    memcpy dst=w src=x\n    sys.halt\n"), {TrapKind::DtypeMismatch, 0, "no conversion from f32 to int4"});
}

TEST(SimFuncTraps, ShapeMismatch) {
  expect_trap(".desc z dtype=f32 space=l2 base=0x200 rows=1 cols=15 row_stride=64\n" + prog("") +
                  "    gemv.mv dst=z src=x w=w\n    sys.halt\n",
              {TrapKind::ShapeMismatch, 0, "need src [T, K], w [N, K], dst [T, N]"});
}

TEST(SimFuncTraps, Hazard) {
  // The DMA writes y; the SFU reads it with no token between them.
  expect_trap(prog("    memset dst=y k=one\n    cvo.exp dst=x a=y\n    sys.halt\n"),
              {TrapKind::Hazard, 1, "RAW hazard on L2"});
}

TEST(SimFuncTraps, Deadlock) {
  expect_trap(prog("    cvo.exp dst=y a=x wait=dma\n    sys.halt\n"), {TrapKind::Deadlock, 1, "SFU waits at instruction 0"});
  expect_trap(prog("    sys.sync wait=gemv\n    sys.halt\n"), {TrapKind::Deadlock, 0, "control engine waits"});
}

TEST(SimFuncTraps, TokenOverflow) {
  expect_trap(prog("    alui.add rd=r1 rs1=r0 imm=300\nloop:\n    sys.sync signal=dma\n    alui.add rd=r1 rs1=r1 imm=-1\n"
                   "    br.ne rs1=r1 rs2=r0 target=loop\n    sys.halt\n"),
              {TrapKind::TokenOverflow, 1, "already holds 255 tokens"});
}

TEST(SimFuncTraps, TokenLeftover) {
  expect_trap(prog("    memset dst=y k=one signal=sfu\n    sys.halt\n"), {TrapKind::TokenLeftover, 1, "DMA -> SFU"});
}

TEST(SimFuncTraps, PcOutOfRange) {
  expect_trap(prog("    sys.sync\n"), {TrapKind::PcOutOfRange, -1, "no sys.halt"});
}

TEST(SimFuncTraps, StepLimit) {
  sim::SimOptions o = small_options();
  o.max_steps = 1000;
  expect_trap(prog("loop:\n    br.al target=loop\n"), {TrapKind::StepLimit, 0, "fetched 1000"}, o);
}

TEST(SimFuncTraps, DivideByZero) {
  expect_trap(prog("    alui.add rd=r1 rs1=r0 imm=7\n    alu.remu rd=r2 rs1=r1 rs2=r0\n    sys.halt\n"),
              {TrapKind::DivideByZero, 1, "divisor is 0"});
}

TEST(SimFuncTraps, EveryKindIsDocumented) {
  const std::string doc = read_file_text(source_dir() + "/docs/sim.md");
  for (int k = 0; k < sim::kNumTrapKinds; ++k) {
    const std::string name = std::string("`") + sim::trap_name(static_cast<TrapKind>(k)) + "`";
    EXPECT_NE(doc.find(name), std::string::npos) << name << " is missing from docs/sim.md";
  }
}

TEST(SimFuncTraps, EveryKindHasATest) {
  // The suite above covers each of the kinds; this pins the count so a new
  // kind cannot be added without a test program.
  EXPECT_EQ(sim::kNumTrapKinds, 15);
  for (int k = 0; k < sim::kNumTrapKinds; ++k) EXPECT_STRNE(sim::trap_name(static_cast<TrapKind>(k)), "?");
}

}  // namespace
}  // namespace n3::test
