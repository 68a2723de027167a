#include "sim/func_sim.h"

#include <cstring>

#include "golden/dump_ops.h"
#include "isa/dis.h"
#include "isa/verify.h"
#include "sim/address_text.h"

namespace n3::sim {

using namespace isa;

namespace {

constexpr int kCtl = static_cast<int>(Engine::CTL);

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

TrapKind trap_of(Problem p) {
  switch (p) {
    case Problem::ReservedOpcode:
      return TrapKind::ReservedOpcode;
    case Problem::ReservedEnum:
      return TrapKind::ReservedEnum;
    default:
      return TrapKind::ReservedBits;
  }
}

// a * b + c <= limit without overflow (all non-negative).
bool fits(uint64_t a, uint64_t b, uint64_t c, uint64_t limit) {
  const unsigned __int128 v = static_cast<unsigned __int128>(a) * b + c;
  return v <= limit;
}

}  // namespace

const char* trap_name(TrapKind k) {
  switch (k) {
#define N3_X(id, name, what) \
  case TrapKind::id:         \
    return name;
    N3_TRAP_KINDS(N3_X)
#undef N3_X
  }
  return "?";
}

const char* trap_what(TrapKind k) {
  switch (k) {
#define N3_X(id, name, what) \
  case TrapKind::id:         \
    return what;
    N3_TRAP_KINDS(N3_X)
#undef N3_X
  }
  return "?";
}

TrapKind trap_kind(CtlTrap t) {
  switch (t) {
    case CtlTrap::DivideByZero: return TrapKind::DivideByZero;
    case CtlTrap::OutOfRange: return TrapKind::OutOfRange;
    case CtlTrap::Misaligned: return TrapKind::Misaligned;
    case CtlTrap::PcOutOfRange: return TrapKind::PcOutOfRange;
    case CtlTrap::None: break;
  }
  throw Error("sim: trap_kind of no trap");
}

Trap::Trap(TrapKind k, int64_t pc, const std::string& dis, const std::string& reason)
    : Error(std::string("trap ") + trap_name(k) +
            (pc >= 0 ? " at instruction " + std::to_string(pc) + " (" + dis + ")" : std::string()) + ": " + reason),
      kind(k),
      pc(pc),
      dis(dis),
      reason(reason) {}

const View& Issued::op(const char* field) const {
  const int i = field_index(*def, field);
  return views[static_cast<size_t>(i)];
}

float Issued::kf32() const {
  float f;
  std::memcpy(&f, &konst, 4);
  return f;
}

namespace {
// The contract's always-present tensors (golden/dump_ops.h: logits and layers.N).
bool always_present(const std::string& n) {
  const std::optional<TensorId> id = parse_tensor_name(n);
  return id && !id->decode && op_def(id->op).always;
}
}  // namespace

FuncSim::FuncSim(Program prog, SimOptions opt) : prog_(std::move(prog)), opt_(opt), mem_(opt.caps) {
  const std::string fp = num::formats_problem(opt_.formats);
  require(fp.empty(), "sim: " + fp);
  require(!prog_.code.empty(), "sim: the program has no instructions");
  capture_at_.resize(prog_.code.size());
  for (size_t i = 0; i < prog_.symbols.size(); ++i) {
    const Symbol& s = prog_.symbols[i];
    if (s.kind != SymKind::Tensor) continue;
    if (!opt_.capture_all && !always_present(s.name)) continue;
    if (s.at >= 0) capture_at_[static_cast<size_t>(s.at)].push_back(i);
    else capture_end_.push_back(i);
  }
  for (const Region& r : prog_.regions) {
    const SpaceMemory& m = mem_.space(r.space);
    require(m.in_range(r.base, r.size), "sim: region " + r.name + " [" + hex(r.base) + ", +" + hex(r.size) +
                                            ") does not fit " + m.name() + " (" + std::to_string(m.capacity()) +
                                            " bytes)");
  }
}

std::string FuncSim::dis(uint32_t pc) const {
  return pc < prog_.code.size() ? disassemble_word(prog_.code[pc], &prog_, pc) : "end of program";
}

void FuncSim::trap(TrapKind k, const Issued& in, const std::string& reason) const { trap_at(k, in.pc, reason); }

void FuncSim::trap_at(TrapKind k, int64_t pc, const std::string& reason) const {
  throw Trap(k, pc, pc >= 0 ? dis(static_cast<uint32_t>(pc)) : "", reason);
}

void FuncSim::run() {
  while (!halted_) step();
  finish();
}

FuncSim::Next FuncSim::peek() const {
  if (stats_.fetched >= opt_.max_steps)
    trap_at(TrapKind::StepLimit, pc_, "fetched " + std::to_string(stats_.fetched) + " instructions (--max-steps)");
  if (pc_ >= prog_.code.size())
    trap_at(TrapKind::PcOutOfRange, -1,
            "fetch reached instruction " + std::to_string(pc_) + " of a " + std::to_string(prog_.code.size()) +
                "-instruction program (no sys.halt on this path)");
  const uint64_t w = prog_.code[pc_];
  const Check c = check_word(w);
  if (!c.ok()) throw Trap(trap_of(c.problem), pc_, ".word " + hex(w), c.message);
  Next n;
  n.engine = static_cast<int>(def_of(w)->engine);
  n.wait = wait_bits(w);
  n.signal = signal_bits(w);
  n.pc = pc_;
  return n;
}

void FuncSim::exec_control() {
  const uint64_t w = prog_.code[pc_];
  ++stats_.fetched;
  const OpcodeDef& d = *def_of(w);
  require(tokens_ready(kCtl, wait_bits(w)), "sim: exec_control before its tokens arrived");
  exec_ctl(d, *subop_of(d, w), w, pc_);
}

const Issued& FuncSim::dispatch() {
  const uint32_t pc = pc_;
  const uint64_t w = prog_.code[pc];
  ++stats_.fetched;
  const OpcodeDef& d = *def_of(w);
  Issued in = resolve(d, *subop_of(d, w), w, pc);
  in.dyn = stats_.fetched;
  auto& q = queues_[static_cast<int>(d.engine)].q;
  q.push_back(std::move(in));
  ++pc_;
  return q.back();
}

bool FuncSim::head_ready(int e) const {
  const Queue& q = queues_[static_cast<size_t>(e)];
  return !q.q.empty() && tokens_ready(e, wait_bits(q.q.front().word));
}

void FuncSim::exec_head(int e) {
  require(head_ready(e), "sim: exec_head before the instruction's tokens arrived");
  exec_engine(e);
}

void FuncSim::step() {
  const Next n = peek();
  if (n.engine == kCtl) {
    while (!tokens_ready(kCtl, n.wait))
      if (!run_ready()) {
        std::string from;
        for (int f = 0; f < kNumEngines; ++f)
          if (((n.wait >> f) & 1) && tokens_[f][kCtl].empty()) from += std::string(from.empty() ? "" : ", ") + name_of(static_cast<Engine>(f));
        deadlock(n.pc, "the control engine waits for a token from " + from + " that no queued instruction will push");
      }
    exec_control();
    return;
  }
  dispatch();
  run_ready();
}

View FuncSim::resolve_desc(uint32_t slot, const OperandDef& od, const std::string& who, uint32_t pc) {
  View v;
  if (slot == 0) {
    if (!od.optional) trap_at(TrapKind::BadOperand, pc, who + ": a descriptor is required");
    return v;
  }
  if (slot >= prog_.descs.size())
    trap_at(TrapKind::BadOperand, pc, who + ": descriptor slot " + std::to_string(slot) + " is beyond the table (" +
                                          std::to_string(prog_.descs.size()) + " entries)");
  const std::string dn = who + " (descriptor " + std::to_string(slot) +
                         (prog_.name_of(SymKind::Desc, slot).empty() ? "" : " " + prog_.name_of(SymKind::Desc, slot)) + ")";
  const Check c = check_desc(prog_.descs[slot].data());
  if (!c.ok()) trap_at(trap_of(c.problem), pc, dn + ": " + c.message);
  v.slot = slot;
  v.d = decode_desc(prog_.descs[slot].data());
  const DescCheck dc = desc_problem(v.d);
  if (!dc.ok()) trap_at(dc.issue == DescIssue::Misaligned ? TrapKind::Misaligned : TrapKind::BadOperand, pc, dn + ": " + dc.message);
  if (!((od.dtypes >> static_cast<int>(v.d.dtype)) & 1))
    trap_at(TrapKind::DtypeMismatch, pc, dn + ": " + dtype_text(v.d.dtype) + " is not " + od.dtype_class + " (" +
                                             dtype_mask_text(od.dtypes) + ")");
  v.rows = v.d.rows;
  v.cols = v.d.cols;
  if (v.d.row_reg) {
    v.row_off = regs_[v.d.row_reg];
    if (v.row_off < 0 || (!v.d.ring && v.row_off > (int64_t(1) << 40)))
      trap_at(TrapKind::OutOfRange, pc, dn + ": row offset r" + std::to_string(v.d.row_reg) + " = " +
                                            std::to_string(v.row_off) + (v.row_off < 0 ? " is negative" : " is beyond any space"));
    if (v.d.ring) v.row_off %= static_cast<int64_t>(v.d.rows);  // positions grow without bound; the ring wraps them
  }
  if (v.d.dyn_reg) {
    const int64_t x = regs_[v.d.dyn_reg];
    const bool rows = v.d.dyn_dim == DynDim::ROWS;
    const int64_t cap = rows ? v.rows : v.cols;
    if (x < 1 || x > cap)
      trap_at(TrapKind::OutOfRange, pc, dn + ": run-time " + (rows ? "rows" : "cols") + " r" +
                                            std::to_string(v.d.dyn_reg) + " = " + std::to_string(x) + " not in [1, " +
                                            std::to_string(cap) + "]");
    (rows ? v.rows : v.cols) = x;
  }
  const SpaceMemory& m = mem_.space(v.d.space);
  // Highest physical row touched: the whole ring, or the window.
  const uint64_t last = v.d.ring ? v.d.rows - 1 : static_cast<uint64_t>(v.row_off + v.rows - 1);
  if (!fits(last, v.d.row_stride, v.d.base + static_cast<uint64_t>(v.row_bytes()), m.capacity()))
    trap_at(TrapKind::OutOfRange, pc, dn + ": rows up to " + std::to_string(last) + " at " + address_text(v.d.base) +
                                          " + row * " + std::to_string(v.d.row_stride) + " leave " + m.name() +
                                          " (" + std::to_string(m.capacity()) + " bytes)");
  if (v.scaled() && !fits(last, v.d.scale_stride, v.d.scale_base + static_cast<uint64_t>(v.scale_bytes()), m.capacity()))
    trap_at(TrapKind::OutOfRange, pc, dn + ": scale records up to row " + std::to_string(last) + " leave " + m.name());
  return v;
}

Issued FuncSim::resolve(const OpcodeDef& d, const SubopDef& s, uint64_t w, uint32_t pc) {
  Issued in;
  in.word = w;
  in.pc = pc;
  in.def = &d;
  in.sub = &s;
  in.vc = queues_[kCtl].vc;
  const std::string mn = mnemonic(d, s);
  for (int i = 0; i < s.n_operands; ++i) {
    const OperandDef& od = s.operands[i];
    const FieldDef& f = d.fields[od.field];
    const uint32_t slot = static_cast<uint32_t>(field_raw(w, f));
    const std::string who = mn + " " + f.name;
    if (f.type == FieldType::Desc) {
      in.views[static_cast<size_t>(od.field)] = resolve_desc(slot, od, who, pc);
    } else if (f.type == FieldType::Const) {
      if (slot == 0) {
        if (!od.optional) trap_at(TrapKind::BadOperand, pc, who + ": a constant is required");
        continue;
      }
      if (slot >= prog_.consts.size())
        trap_at(TrapKind::BadOperand, pc, who + ": constant slot " + std::to_string(slot) + " is beyond the table (" +
                                              std::to_string(prog_.consts.size()) + " entries)");
      const Check c = check_const(prog_.consts[slot]);
      if (!c.ok()) trap_at(trap_of(c.problem), pc, who + " (constant " + std::to_string(slot) + "): " + c.message);
      const ConstRecord r = decode_const(&prog_.consts[slot]);
      if (!((od.dtypes >> static_cast<int>(r.dtype)) & 1))
        trap_at(TrapKind::DtypeMismatch, pc, who + ": constant " + std::to_string(slot) + " is " + dtype_text(r.dtype) +
                                                 ", needs " + od.dtype_class);
      in.konst = r.value;
      in.konst_type = r.dtype;
    }
  }
  return in;
}

bool FuncSim::tokens_ready(int engine, uint8_t wait) const {
  for (int f = 0; f < kNumEngines; ++f)
    if (((wait >> f) & 1) && tokens_[f][engine].empty()) return false;
  return true;
}

void FuncSim::pop_tokens(int engine, uint8_t wait, VClock& vc) {
  for (int f = 0; f < kNumEngines; ++f)
    if ((wait >> f) & 1) {
      join(vc, tokens_[f][engine].front());
      tokens_[f][engine].pop_front();
    }
}

void FuncSim::push_tokens(int engine, uint8_t signal, const VClock& vc, int64_t pc) {
  for (int t = 0; t < kNumEngines; ++t)
    if ((signal >> t) & 1) {
      auto& q = tokens_[engine][t];
      if (q.size() >= static_cast<size_t>(kTokenMax))
        trap_at(TrapKind::TokenOverflow, pc, std::string("queue ") + name_of(static_cast<Engine>(engine)) + " -> " +
                                                 name_of(static_cast<Engine>(t)) + " already holds " +
                                                 std::to_string(kTokenMax) + " tokens");
      q.push_back(vc);
    }
}

bool FuncSim::run_ready() {
  bool any = false;
  while (true) {
    int best = -1;
    uint64_t best_dyn = 0;
    for (int e = 1; e < kNumEngines; ++e) {
      const Queue& q = queues_[e];
      if (q.q.empty() || !tokens_ready(e, wait_bits(q.q.front().word))) continue;
      if (best < 0 || q.q.front().dyn < best_dyn) {
        best = e;
        best_dyn = q.q.front().dyn;
      }
    }
    if (best < 0) return any;
    exec_engine(best);
    any = true;
  }
}

void FuncSim::check_hazards(int engine, uint64_t seq, uint32_t pc, const VClock& vc, const std::vector<MemAccess>& acc) {
  for (const MemAccess& a : acc) {
    const int s = static_cast<int>(a.space);
    (a.write ? stats_.bytes_written : stats_.bytes_read)[static_cast<size_t>(s)] += a.hi - a.lo;
  }
  if (!opt_.hazards) return;
  const std::string m = hazards_.access(engine, seq, pc, vc, acc);
  if (!m.empty()) trap_at(TrapKind::Hazard, pc, m);
}

void FuncSim::exec_engine(int e) {
  Queue& q = queues_[static_cast<size_t>(e)];
  const Issued in = std::move(q.q.front());
  q.q.pop_front();
  VClock vc = q.vc;
  join(vc, in.vc);
  pop_tokens(e, wait_bits(in.word), vc);
  const uint64_t seq = q.done + 1;
  std::vector<MemAccess> acc;
  for (int i = 0; i < in.sub->n_operands; ++i) {
    const OperandDef& od = in.sub->operands[i];
    const View& v = in.views[static_cast<size_t>(od.field)];
    if (!v.present()) continue;
    if (od.access == Access::R || od.access == Access::RW) v.accesses(false, &acc);
    if (od.access == Access::W || od.access == Access::RW) v.accesses(true, &acc);
  }
  check_hazards(e, seq, in.pc, vc, acc);
  trace(e, in.pc, "");
  if (opt_.effects) switch (static_cast<Engine>(e)) {
    case Engine::DMA:
      exec_dma(*this, in);
      break;
    case Engine::GEMV:
    case Engine::GEMM:
      exec_gemv(*this, in);
      break;
    case Engine::SFU:
      exec_sfu(*this, in);
      break;
    case Engine::CTL:
      break;
  }
  ++stats_.insns[static_cast<size_t>(e)];
  q.done = seq;
  vc[static_cast<size_t>(e)] = seq;
  q.vc = vc;
  push_tokens(e, signal_bits(in.word), vc, in.pc);
  capture(in.pc, &in);
}

void FuncSim::exec_ctl(const OpcodeDef& d, const SubopDef& s, uint64_t w, uint32_t pc) {
  Queue& q = queues_[kCtl];
  VClock vc = q.vc;
  pop_tokens(kCtl, wait_bits(w), vc);
  const uint64_t seq = q.done + 1;
  std::string extra;
  // The step itself (registers, branch target, scalar address and its
  // traps) is sim/ctl_exec.cc's, which the RTL's n3_ctl is compared with.
  const CtlStep st = ctl_step(w, pc, regs_.data(), prog_.code.size(), mem_);
  if (st.trapped) trap_at(trap_kind(st.trap), pc, st.reason);
  const uint32_t next = st.next;
  switch (d.opcode) {
    case Opcode::ALU:
    case Opcode::ALUI:
      set_reg(st.rd, st.value);
      extra = "r" + std::to_string(st.rd) + " = " + std::to_string(regs_[st.rd]);
      break;
    case Opcode::LDST: {
      check_hazards(kCtl, seq, pc, vc, {{st.space, st.addr, st.addr + st.bytes, st.store}});
      SpaceMemory& m = mem_.space(st.space);
      const bool wide = st.bytes == 8;
      if (st.store) {
        const int64_t v = regs_[st.rd];
        m.write(st.addr, &v, st.bytes);  // little-endian host: low bytes first
        extra = "[" + address_text(st.addr) + "] = " + std::to_string(wide ? v : static_cast<int32_t>(v));
      } else {
        uint64_t raw = 0;
        m.read(st.addr, &raw, st.bytes);  // little-endian host: a 4-byte read fills the low half
        set_reg(st.rd, load_value(wide, raw));
        extra = "r" + std::to_string(st.rd) + " = " + std::to_string(regs_[st.rd]);
      }
      break;
    }
    case Opcode::BR:
      extra = st.taken ? "taken" : "not taken";
      break;
    case Opcode::SYS:
      if (st.halt) halted_ = true;
      break;
    default:
      break;
  }
  (void)s;
  trace(kCtl, pc, extra);
  ++stats_.insns[kCtl];
  q.done = seq;
  vc[kCtl] = seq;
  q.vc = vc;
  push_tokens(kCtl, signal_bits(w), vc, pc);
  pc_ = next;
  capture(pc, nullptr);
}

void FuncSim::deadlock(int64_t pc, const std::string& waiting) {
  std::string m = waiting;
  for (int e = 1; e < kNumEngines; ++e) {
    const Queue& q = queues_[static_cast<size_t>(e)];
    if (q.q.empty()) continue;
    std::string from;
    const uint8_t wait = wait_bits(q.q.front().word);
    for (int f = 0; f < kNumEngines; ++f)
      if (((wait >> f) & 1) && tokens_[f][e].empty()) from += std::string(from.empty() ? "" : ", ") + name_of(static_cast<Engine>(f));
    m += std::string(m.empty() ? "" : "; ") + name_of(static_cast<Engine>(e)) + " waits at instruction " +
         std::to_string(q.q.front().pc) + " for a token from " + from;
  }
  trap_at(TrapKind::Deadlock, pc, m);
}

void FuncSim::finish() {
  const int64_t halt_pc = static_cast<int64_t>(pc_) - 1;
  while (true) {
    bool pending = false;
    for (int e = 1; e < kNumEngines; ++e) pending |= !queues_[static_cast<size_t>(e)].q.empty();
    if (!pending) break;
    if (!run_ready()) deadlock(halt_pc, "");
  }
  finish_checks();
}

void FuncSim::finish_checks() {
  const int64_t halt_pc = static_cast<int64_t>(pc_) - 1;
  for (int f = 0; f < kNumEngines; ++f)
    for (int t = 0; t < kNumEngines; ++t)
      if (!tokens_[f][t].empty())
        trap_at(TrapKind::TokenLeftover, halt_pc,
                std::to_string(tokens_[f][t].size()) + " token(s) left in queue " + name_of(static_cast<Engine>(f)) +
                    " -> " + name_of(static_cast<Engine>(t)) + " (a signal without its wait)");
  capture(UINT32_MAX, nullptr);
}

void FuncSim::capture(uint32_t pc, const Issued* in) {
  if (!opt_.captures) return;
  const std::vector<size_t>& which = pc == UINT32_MAX ? capture_end_ : capture_at_[pc];
  for (size_t si : which) {
    const Symbol& s = prog_.symbols[si];
    View v;
    if (in)
      for (const View& x : in->views)
        if (x.present() && x.slot == s.index) v = x;
    if (!v.present()) {
      OperandDef any{0, Access::R, 0xffffffffu, "any", false};
      v = resolve_desc(s.index, any, "tensor " + s.name, pc == UINT32_MAX ? static_cast<uint32_t>(pc_ - 1) : pc);
    }
    Capture* c = nullptr;
    for (Capture& x : captures_)
      if (x.name == s.name) c = &x;
    if (!c) {
      captures_.push_back({s.name, dtype_text(v.d.dtype), 0, v.cols, {}});
      c = &captures_.back();
    }
    require(c->cols == v.cols, "tensor " + s.name + ": captured with " + std::to_string(v.cols) + " columns after " +
                                   std::to_string(c->cols));
    std::vector<float> row(static_cast<size_t>(v.cols));
    for (int64_t r = 0; r < v.rows; ++r) {
      read_row(mem_, v, r, row.data());
      c->data.insert(c->data.end(), row.begin(), row.end());
    }
    c->rows += v.rows;
  }
}

void FuncSim::trace(int engine, uint32_t pc, const std::string& extra) {
  if (!opt_.trace) return;
  std::fprintf(opt_.trace, "%llu %s %u: %s%s%s\n", static_cast<unsigned long long>(trace_n_++),
               name_of(static_cast<Engine>(engine)), pc, dis(pc).c_str(), extra.empty() ? "" : "  ; ", extra.c_str());
}

}  // namespace n3::sim
