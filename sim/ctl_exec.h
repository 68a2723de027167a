// The control engine's execute step (ALU, ALUI, LDST, BR, SYS), as a pure
// function of the instruction word, its pc and the scalar registers: what
// FuncSim::exec_ctl does to the architectural state, without tokens, hazards
// or the memory access itself. FuncSim runs every control instruction
// through it, and `n3 cosim --unit ctl` (rtl_bridge/cosim_ctl.cc) compares
// the RTL's n3_ctl with it, so the semantics live here once.
#pragma once
#include <cstdint>
#include <string>

#include "isa/isa.h"
#include "sim/memory.h"

namespace n3::sim {

// `rs1 op x` on 64-bit two's complement registers, wrapping. zext_logic:
// ALUI's AND / OR / XOR zero-extend the 32-bit immediate (x's low 32 bits
// only). Returns false for REMU by 0 (the divide_by_zero trap).
bool alu_op(isa::AluOp op, int64_t a, int64_t b, bool zext_logic, int64_t* out);
// Whether a branch with condition c on (a, b) is taken.
bool br_taken(isa::BrCond c, int64_t a, int64_t b);

// The traps a control step can raise (FuncSim maps them to its TrapKind,
// sim::trap_kind; n3_ctl's out_trap carries these values).
enum class CtlTrap : uint8_t { None = 0, DivideByZero = 1, OutOfRange = 2, Misaligned = 3, PcOutOfRange = 4 };

struct CtlStep {
  bool trapped = false;
  CtlTrap trap = CtlTrap::None;
  std::string reason;                        // when trapped: FuncSim's trap text
  bool writes = false;  // rd is written (r0 counts: set_reg drops it)
  int rd = 0;
  int64_t value = 0;    // ALU / ALUI result (a load's comes from memory)
  uint32_t next = 0;    // the next pc (pc + 1 unless a branch is taken)
  bool mem = false;     // LDST: one scalar access
  bool store = false;
  isa::Space space = isa::Space::DDR;
  uint64_t addr = 0, bytes = 0;  // naturally aligned, inside the space
  bool taken = false;  // BR: the condition held
  bool halt = false;
};

// One legal control word at pc, with the registers before it (regs[0] is 0),
// a program of code_words words and the memories (their capacities and
// names; nothing is read or written).
// A load leaves the value to the caller: `load_value` sign-extends LW.
CtlStep ctl_step(uint64_t w, uint32_t pc, const int64_t* regs, uint64_t code_words, const Memory& mem);
int64_t load_value(bool wide, uint64_t raw);

}  // namespace n3::sim
