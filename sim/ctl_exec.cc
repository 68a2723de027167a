#include "sim/ctl_exec.h"

#include "sim/address_text.h"

namespace n3::sim {

using isa::AluOp;
using isa::BrCond;
using isa::LdstOp;
using isa::Opcode;

bool alu_op(AluOp op, int64_t a, int64_t b, bool zext_logic, int64_t* out) {
  const uint64_t ua = static_cast<uint64_t>(a);
  uint64_t ub = static_cast<uint64_t>(b);
  if (zext_logic && (op == AluOp::AND || op == AluOp::OR || op == AluOp::XOR)) ub &= 0xffffffffull;
  int64_t r = 0;
  switch (op) {
    case AluOp::ADD: r = static_cast<int64_t>(ua + ub); break;
    case AluOp::SUB: r = static_cast<int64_t>(ua - ub); break;
    case AluOp::MUL: r = static_cast<int64_t>(ua * ub); break;
    case AluOp::MIN: r = a < b ? a : b; break;
    case AluOp::MAX: r = a > b ? a : b; break;
    case AluOp::AND: r = static_cast<int64_t>(ua & ub); break;
    case AluOp::OR: r = static_cast<int64_t>(ua | ub); break;
    case AluOp::XOR: r = static_cast<int64_t>(ua ^ ub); break;
    case AluOp::SHL: r = static_cast<int64_t>(ua << (ub & 63)); break;
    case AluOp::SHR: r = static_cast<int64_t>(ua >> (ub & 63)); break;
    case AluOp::SRA: r = a >> (ub & 63); break;
    case AluOp::SLT: r = a < b ? 1 : 0; break;
    case AluOp::SLTU: r = ua < ub ? 1 : 0; break;
    case AluOp::REMU:
      if (ub == 0) return false;
      r = static_cast<int64_t>(ua % ub);
      break;
  }
  *out = r;
  return true;
}

bool br_taken(BrCond c, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (c) {
    case BrCond::AL: return true;
    case BrCond::EQ: return a == b;
    case BrCond::NE: return a != b;
    case BrCond::LT: return a < b;
    case BrCond::GE: return a >= b;
    case BrCond::LTU: return ua < ub;
    case BrCond::GEU: return ua >= ub;
  }
  return false;
}

int64_t load_value(bool wide, uint64_t raw) {
  return wide ? static_cast<int64_t>(raw) : static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(raw)));
}

CtlStep ctl_step(uint64_t w, uint32_t pc, const int64_t* regs, uint64_t code_words, const Memory& mem) {
  CtlStep s;
  s.next = pc + 1;
  auto trap = [&](CtlTrap k, std::string why) {
    s.trapped = true;
    s.trap = k;
    s.reason = std::move(why);
    s.writes = false;
    s.mem = false;
    return s;
  };
  const Opcode opc = isa::def_of(w)->opcode;
  switch (opc) {
    case Opcode::ALU:
    case Opcode::ALUI: {
      const bool imm = opc == Opcode::ALUI;
      AluOp op;
      int64_t a, b;
      if (imm) {
        const isa::AluiInsn i = isa::decode_alui(w);
        op = i.op, s.rd = i.rd, a = regs[i.rs1], b = i.imm;
      } else {
        const isa::AluInsn i = isa::decode_alu(w);
        op = i.op, s.rd = i.rd, a = regs[i.rs1], b = regs[i.rs2];
      }
      if (!alu_op(op, a, b, imm, &s.value)) return trap(CtlTrap::DivideByZero, "alu remu: divisor is 0");
      s.writes = true;
      break;
    }
    case Opcode::LDST: {
      const isa::LdstInsn i = isa::decode_ldst(w);
      const bool wide = i.op == LdstOp::LD || i.op == LdstOp::SD;
      s.store = i.op == LdstOp::SW || i.op == LdstOp::SD;
      s.bytes = wide ? 8 : 4;
      s.addr = static_cast<uint64_t>(regs[i.rs1]) + static_cast<uint64_t>(static_cast<int64_t>(i.imm));
      s.space = i.space;
      s.rd = i.rd;
      const SpaceMemory& m = mem.space(i.space);
      if (static_cast<int64_t>(s.addr) < 0 || !m.in_range(s.addr, s.bytes))
        return trap(CtlTrap::OutOfRange, "scalar address " + address_text(s.addr) + " leaves " + m.name() + " (" +
                                              std::to_string(m.capacity()) + " bytes)");
      if (s.addr % s.bytes)
        return trap(CtlTrap::Misaligned,
                    "scalar address " + address_text(s.addr) + " is not " + std::to_string(s.bytes) + "-byte aligned");
      s.mem = true;
      s.writes = !s.store;
      break;
    }
    case Opcode::BR: {
      const isa::BrInsn i = isa::decode_br(w);
      s.taken = br_taken(i.cond, regs[i.rs1], regs[i.rs2]);
      if (s.taken) {
        const int64_t target = int64_t(pc) + i.target;
        if (target < 0 || target > int64_t(code_words))
          return trap(CtlTrap::PcOutOfRange, "branch target " + std::to_string(target) + " is outside the program");
        s.next = static_cast<uint32_t>(target);
      }
      break;
    }
    case Opcode::SYS:
      s.halt = isa::decode_sys(w).func == isa::SysFunc::HALT;
      break;
    default:
      break;
  }
  return s;
}

}  // namespace n3::sim
