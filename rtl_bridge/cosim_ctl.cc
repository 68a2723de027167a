// `n3 cosim --unit ctl` (docs/rtl_ctl.md, "Control engine"): the Verilated
// n3_ctl (rtl/ctl/) against sim/ctl_exec.cc's ctl_step, the step FuncSim
// runs for every control instruction, one vector at a time.
//
// Vectors. Vector i (vector_rng(seed, i) only) is: register values for the
// registers its instructions read (extremes half the time: 0, 1, -1,
// INT64_MIN, INT64_MAX, shift counts 63 / 64 / 65, addresses at a space's
// ends and misaligned ones), written through n3_ctl's set port (r0 too,
// which must stay 0); for a load, the memory word it reads (written into the
// reference's memory and the bench's); then one legal control word (every
// ALU / ALUI op, LDST op and space, branch condition, SYS function; token
// bits of other engines set at random, which the unit ignores), at a random
// pc of a program of random length; a quarter of the vectors add a second
// word that reads the first one's rd (the register file's write-back).
// Every vector's inputs are its own, so a sharded run checks exactly the
// vectors of the unsplit one.
//
// Compared per word: next pc, trap (none, divide_by_zero, out_of_range,
// misaligned, pc_out_of_range), the register written and its value, the
// scalar address, HALT; per LDST the memory request (space, address, width,
// store, store data). Segments of kSegment vectors alternate between
// streaming (output and memory always ready, 1-clock memory) and random
// stalls on the output, the memory request and the load response; in the
// streaming ones the cycles each word keeps the unit busy (accept to the
// next edge it can accept) are recorded per kind against timing.ctl_cycles.
// N3_COSIM_CTL_INJECT=<field> flips bit 0 of the RTL's field before the
// comparison, to show a difference is caught.
#include <systemc>
#include <verilated.h>
#include <verilated_fst_c.h>
// Verilator's model of rtl/ctl/ (n3_rtl_models, in the build tree).
#include <Vn3_ctl.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <type_traits>

#include "base/error.h"
#include "golden/hw_config.h"
#include "isa/isa.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/waveform.h"
#include "sim/ctl_exec.h"
#include "sim/func_sim.h"
#include "sim/memory.h"

namespace n3::rtl {
namespace {

using Rng = std::mt19937_64;

constexpr int64_t kSegment = 256;     // vectors per streaming / stalled segment
constexpr int64_t kWatchdog = 1000;   // cycles without progress: a hang
constexpr int kResetCycles = 2;
constexpr uint64_t kMaxWords = uint64_t(isa::kMaxProgramWords);

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// n3_ctl's out_trap: the CtlTrap value (its TRAP_* localparams).
int trap_code(const sim::CtlStep& s) { return int(s.trap); }

// ---- the vectors ---------------------------------------------------------------

struct Word {
  uint64_t insn = 0;
  uint32_t pc = 0;
  uint64_t code_words = 1;
};

struct Vector {
  std::vector<std::pair<int, int64_t>> sets;  // register seeds, in order
  bool poke = false;                          // a load's word, written into both memories first
  isa::Space poke_space = isa::Space::DDR;
  uint64_t poke_addr = 0, poke_value = 0;
  std::vector<Word> words;  // 1 or 2
};

int64_t extreme(Rng& rng) {
  static const int64_t v[] = {0, 1, -1, INT64_MIN, INT64_MAX, 63, 64, 65, 2, -2, INT64_MIN + 1, INT64_MAX - 1, 32, 31};
  return v[rng() % (sizeof v / sizeof v[0])];
}
int64_t value(Rng& rng) { return rng() % 2 ? extreme(rng) : (rng() % 2 ? int64_t(rng()) : int64_t(rng() % 200) - 100); }

// An address near something interesting of space s: its start, its end,
// past its end, a negative one, or a random one; misaligned a quarter of the time.
int64_t address(Rng& rng, uint64_t cap) {
  uint64_t a;
  switch (rng() % 6) {
    case 0: a = rng() % 256; break;
    case 1: a = cap - 16 + rng() % 32; break;  // straddles the end
    case 2: a = cap + (rng() % 64); break;
    case 3: a = uint64_t(0) - 8 * (1 + rng() % 4); break;  // bit 63 set
    case 4: a = uint64_t(INT64_MAX) - rng() % 16; break;  // wraps with a positive offset
    default: a = rng() % (cap + 1); break;
  }
  if (rng() % 4) a &= ~uint64_t(7);
  return int64_t(a);
}

uint8_t tokens(Rng& rng) { return uint8_t(rng() % 32) & ~uint8_t(1);  /* other engines only: CTL is bit 0 */ }

struct Caps {
  uint64_t of[3];
};

// One legal control word reading registers the vector seeds (seed: register, value).
Word make_word(Rng& rng, const Caps& caps, std::vector<std::pair<int, int64_t>>* seeds, int chain_reg, Vector* v) {
  auto reg = [&](bool read) {
    int r = int(rng() % isa::kNumRegs);
    if (read && chain_reg > 0 && rng() % 2) return chain_reg;  // the first word's result
    if (read && r != chain_reg) seeds->push_back({r, value(rng)});
    return r;
  };
  Word w;
  // Program length: tiny, random, or the largest the ISA allows.
  switch (rng() % 3) {
    case 0: w.code_words = 1 + rng() % 16; break;
    case 1: w.code_words = 1 + rng() % kMaxWords; break;
    default: w.code_words = kMaxWords; break;
  }
  w.pc = uint32_t(rng() % 4 == 0 ? (rng() % 2 ? 0 : w.code_words - 1) : rng() % w.code_words);
  const int kind = int(rng() % 10);
  if (kind < 3) {
    isa::AluInsn i;
    i.wait = tokens(rng), i.signal = tokens(rng);
    i.op = isa::AluOp(rng() % 14);
    i.rs1 = uint8_t(reg(true)), i.rs2 = uint8_t(reg(true)), i.rd = uint8_t(reg(false));
    w.insn = isa::encode(i);
  } else if (kind < 6) {
    isa::AluiInsn i;
    i.wait = tokens(rng), i.signal = tokens(rng);
    i.op = isa::AluOp(rng() % 14);
    i.rs1 = uint8_t(reg(true)), i.rd = uint8_t(reg(false));
    i.imm = int32_t(rng() % 2 ? uint32_t(extreme(rng)) : uint32_t(rng()));
    w.insn = isa::encode(i);
  } else if (kind < 8) {
    isa::LdstInsn i;
    i.wait = tokens(rng), i.signal = tokens(rng);
    i.op = isa::LdstOp(rng() % 4);
    i.space = isa::Space(rng() % 3);
    const uint64_t cap = caps.of[int(i.space)];
    i.rd = uint8_t(reg(i.op == isa::LdstOp::SW || i.op == isa::LdstOp::SD));
    i.rs1 = uint8_t(rng() % isa::kNumRegs);
    const int64_t target = address(rng, cap);
    i.imm = int32_t(rng() % 2 ? 0 : int64_t(rng() % 8192) - 4096);
    if (rng() % 8 == 0) i.imm = rng() % 2 ? INT32_MIN : INT32_MAX;
    if (i.rs1 != 0) seeds->push_back({i.rs1, int64_t(uint64_t(target) - uint64_t(int64_t(i.imm)))});
    const uint64_t addr = uint64_t(i.rs1 ? target : int64_t(i.imm));
    if ((i.op == isa::LdstOp::LW || i.op == isa::LdstOp::LD) && addr < cap && cap - addr >= 8) {
      v->poke = true, v->poke_space = i.space, v->poke_addr = addr & ~uint64_t(7), v->poke_value = rng();
    }
    w.insn = isa::encode(i);
  } else if (kind < 9) {
    isa::BrInsn i;
    i.wait = tokens(rng), i.signal = tokens(rng);
    i.cond = isa::BrCond(rng() % 7);
    i.rs1 = uint8_t(reg(true));
    // Equal operands half the time: EQ / GE / GEU taken, NE / LT / LTU not.
    if (rng() % 2) {
      i.rs2 = i.rs1;
    } else {
      i.rs2 = uint8_t(reg(true));
    }
    const int64_t lo = -(int64_t(1) << 23), hi = (int64_t(1) << 23) - 1;
    int64_t t;
    switch (rng() % 6) {
      case 0: t = lo; break;
      case 1: t = hi; break;
      case 2: t = int64_t(w.code_words) - w.pc; break;      // just past the end: allowed
      case 3: t = int64_t(w.code_words) - w.pc + 1; break;  // one more: traps
      case 4: t = -int64_t(w.pc) - int64_t(rng() % 2); break;  // word 0, or -1
      default: t = int64_t(rng() % 64) - 32; break;
    }
    i.target = int32_t(std::max(lo, std::min(hi, t)));
    w.insn = isa::encode(i);
  } else {
    isa::SysInsn i;
    i.wait = tokens(rng), i.signal = tokens(rng);
    i.func = isa::SysFunc(rng() % 2);
    w.insn = isa::encode(i);
  }
  return w;
}

Vector make_vector(uint64_t seed, int64_t index, const Caps& caps) {
  Rng rng = vector_rng(seed, index);
  Vector v;
  // Some noise first: r0 and other registers set to values nobody reads
  // (r0 must stay 0).
  if (rng() % 4 == 0) v.sets.push_back({0, rng() % 2 ? -1 : int64_t(rng())});
  v.words.push_back(make_word(rng, caps, &v.sets, -1, &v));
  if (rng() % 4 == 0) {
    const isa::OpcodeDef* d = isa::def_of(v.words[0].insn);
    int rd = -1;
    if (d->opcode == isa::Opcode::ALU) rd = isa::decode_alu(v.words[0].insn).rd;
    if (d->opcode == isa::Opcode::ALUI) rd = isa::decode_alui(v.words[0].insn).rd;
    if (rd > 0) {
      std::vector<std::pair<int, int64_t>> later;  // seeds of the second word go before the first
      Word w2 = make_word(rng, caps, &later, rd, &v);
      // A seed of the chained register would overwrite the first word's result.
      for (auto& s : later)
        if (s.first != rd) v.sets.push_back(s);
      v.words.push_back(w2);
    }
  }
  return v;
}

// ---- the bench -----------------------------------------------------------------

template <class Port>
using SignalOf = sc_core::sc_signal<typename std::remove_reference_t<Port>::data_type>;

struct Expect {
  int64_t index;
  int64_t pos;  // in the shard's list
  uint64_t insn;
  uint32_t pc;
  sim::CtlStep step;
  int64_t load = 0;         // a load's value
  int64_t store_value = 0;  // a store's register, before the word
  uint64_t code_words = 1;
  std::string cls, kind;
  int64_t accept_cycle = 0;
};

class Bench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name n, const CosimOptions& o, double period_ps, int64_t ctl_cycles, const Caps& caps,
        const std::vector<int64_t>& idx, const std::string& inject, CosimReport& r)
      : sc_core::sc_module(n),
        clk("clk", sc_core::sc_time(period_ps, sc_core::SC_PS), 0.5, sc_core::sc_time(period_ps / 2, sc_core::SC_PS)),
        rst_n("rst_n", false),
        dut("dut"),
        o_(o),
        ctl_cycles_(ctl_cycles),
        caps_(caps),
        idx_(idx),
        inject_(inject),
        r_(r),
        ref_mem_({caps.of[0], caps.of[1], caps.of[2]}),
        rtl_mem_({caps.of[0], caps.of[1], caps.of[2]}),
        stall_rng_(vector_rng(o.seed, -1 - int64_t(o.shard))) {
#define N3_BIND(p) dut.p(p)
    N3_BIND(clk); N3_BIND(rst_n); N3_BIND(code_words); N3_BIND(cap_ddr); N3_BIND(cap_l2); N3_BIND(cap_wbuf);
    N3_BIND(set_valid); N3_BIND(set_idx); N3_BIND(set_value); N3_BIND(in_valid); N3_BIND(in_ready);
    N3_BIND(in_insn); N3_BIND(in_pc); N3_BIND(mem_req_valid); N3_BIND(mem_req_ready); N3_BIND(mem_req_store);
    N3_BIND(mem_req_wide); N3_BIND(mem_req_space); N3_BIND(mem_req_addr); N3_BIND(mem_req_wdata);
    N3_BIND(mem_rsp_valid); N3_BIND(mem_rsp_rdata); N3_BIND(out_valid); N3_BIND(out_ready); N3_BIND(out_pc);
    N3_BIND(out_next_pc); N3_BIND(out_trap); N3_BIND(out_we); N3_BIND(out_rd); N3_BIND(out_value);
    N3_BIND(out_addr); N3_BIND(out_halt);
#undef N3_BIND
    cap_ddr.write(caps.of[0]);
    cap_l2.write(caps.of[1]);
    cap_wbuf.write(caps.of[2]);
    SC_METHOD(tick);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  sc_core::sc_clock clk;
  sc_core::sc_signal<bool> rst_n;
  SignalOf<decltype(Vn3_ctl::code_words)> code_words;
  SignalOf<decltype(Vn3_ctl::cap_ddr)> cap_ddr, cap_l2, cap_wbuf;
  SignalOf<decltype(Vn3_ctl::set_valid)> set_valid;
  SignalOf<decltype(Vn3_ctl::set_idx)> set_idx;
  SignalOf<decltype(Vn3_ctl::set_value)> set_value;
  SignalOf<decltype(Vn3_ctl::in_valid)> in_valid;
  SignalOf<decltype(Vn3_ctl::in_ready)> in_ready;
  SignalOf<decltype(Vn3_ctl::in_insn)> in_insn;
  SignalOf<decltype(Vn3_ctl::in_pc)> in_pc;
  SignalOf<decltype(Vn3_ctl::mem_req_valid)> mem_req_valid;
  SignalOf<decltype(Vn3_ctl::mem_req_ready)> mem_req_ready;
  SignalOf<decltype(Vn3_ctl::mem_req_store)> mem_req_store;
  SignalOf<decltype(Vn3_ctl::mem_req_wide)> mem_req_wide;
  SignalOf<decltype(Vn3_ctl::mem_req_space)> mem_req_space;
  SignalOf<decltype(Vn3_ctl::mem_req_addr)> mem_req_addr;
  SignalOf<decltype(Vn3_ctl::mem_req_wdata)> mem_req_wdata;
  SignalOf<decltype(Vn3_ctl::mem_rsp_valid)> mem_rsp_valid;
  SignalOf<decltype(Vn3_ctl::mem_rsp_rdata)> mem_rsp_rdata;
  SignalOf<decltype(Vn3_ctl::out_valid)> out_valid;
  SignalOf<decltype(Vn3_ctl::out_ready)> out_ready;
  SignalOf<decltype(Vn3_ctl::out_pc)> out_pc;
  SignalOf<decltype(Vn3_ctl::out_next_pc)> out_next_pc;
  SignalOf<decltype(Vn3_ctl::out_trap)> out_trap;
  SignalOf<decltype(Vn3_ctl::out_we)> out_we;
  SignalOf<decltype(Vn3_ctl::out_rd)> out_rd;
  SignalOf<decltype(Vn3_ctl::out_value)> out_value;
  SignalOf<decltype(Vn3_ctl::out_addr)> out_addr;
  SignalOf<decltype(Vn3_ctl::out_halt)> out_halt;
  Vn3_ctl dut;

  bool done() const { return done_; }
  int64_t cycles() const { return cycle_; }
  int64_t remaining() const { return int64_t(idx_.size()) - next_; }

 private:
  bool streaming(int64_t pos) const { return (pos / kSegment) % 2 == 0; }

  // One rising edge: reads are the values before it; writes apply to the next.
  void tick() {
    if (done_) return;
    ++cycle_;
    if (cycle_ <= kResetCycles) {
      rst_n.write(cycle_ == kResetCycles);
      return;
    }
    // Busy measurement: the first edge the unit can accept again after a
    // streaming word (output ready all along).
    if (measuring_ && in_ready.read()) {
      const Expect& e = measured_;
      r_.cycles[e.kind].add(double(cycle_ - e.accept_cycle), double(ctl_cycles_));
      measuring_ = false;
    }
    if (out_valid.read() && out_ready.read()) take_output();
    if (mem_req_valid.read() && mem_req_ready.read()) take_request();
    if (mem_rsp_valid.read()) rsp_pending_ = false;  // taken: the unit waits in S_MEM_RSP
    const bool accepted = in_valid.read() && in_ready.read();
    if (accepted) {
      Expect& e = offered_.front();
      e.accept_cycle = cycle_;
      if (streaming(e.pos)) measuring_ = true, measured_ = e;
      expect_.push_back(e);
      offered_.pop_front();
      ++accepted_;
      last_progress_ = cycle_;
    }
    if (set_valid.read()) last_progress_ = cycle_;  // written on this edge (the unit was idle, nothing accepted)
    if (received_ == total_words_ && next_ == int64_t(idx_.size()) && offered_.empty()) {
      done_ = true;
      return;
    }
    if (cycle_ - last_progress_ > kWatchdog) {
      mismatch(expect_.empty() ? (offered_.empty() ? -1 : offered_.front().index) : expect_.front().index, 0,
               "no progress for " + std::to_string(kWatchdog) + " cycles (hang)");
      done_ = true;
      return;
    }
    drive(accepted);
  }

  void drive(bool accepted) {
    const int64_t pos = offered_.empty() ? next_ : offered_.front().pos;
    const bool stream = streaming(std::min<int64_t>(pos, int64_t(idx_.size()) - 1));
    // A word being measured keeps its segment's full rate to the end.
    out_ready.write(stream || measuring_ || stall_rng_() % 10 < 7);
    mem_req_ready.write(stream || measuring_ || stall_rng_() % 10 < 6);
    // The load response: rsp_wait_ clocks after the request's transfer.
    if (rsp_pending_ && rsp_wait_-- <= 0) {
      mem_rsp_valid.write(true);
      mem_rsp_rdata.write(rsp_data_);
    } else {
      mem_rsp_valid.write(false);
    }
    set_valid.write(false);
    // Idle: every accepted word has completed (taken, or waiting in the output register).
    const bool idle = accepted_ == received_ + (out_valid.read() && !out_ready.read() ? 1 : 0) && !accepted &&
                      !in_valid.read();
    if (offered_.empty() && next_ < int64_t(idx_.size()) && idle) start_vector();
    if (!offered_.empty() && pending_sets_ < sets_.size()) {
      if (!idle) return;
      // Register seeds, one per clock, before the vector's words.
      set_valid.write(true);
      set_idx.write(uint32_t(sets_[pending_sets_].first));
      set_value.write(uint64_t(sets_[pending_sets_].second));
      ++pending_sets_;
      in_valid.write(false);
      return;
    }
    if (offered_.empty()) {
      in_valid.write(false);
      return;
    }
    const Expect& e = offered_.front();
    // The next word of a vector follows at once in streaming segments.
    const bool offer = stream || (in_valid.read() && !in_ready.read()) || stall_rng_() % 10 < 7;
    in_valid.write(offer);
    in_insn.write(e.insn);
    in_pc.write(e.pc);
    code_words.write(uint32_t(e.code_words));
  }

  // Vector next_: the reference runs its words now (the RTL takes them in order).
  void start_vector() {
    const int64_t pos = next_++;
    const int64_t index = idx_[size_t(pos)];
    Vector v = make_vector(o_.seed, index, caps_);
    sets_ = v.sets;
    pending_sets_ = 0;
    for (const auto& s : v.sets)
      if (s.first) ref_regs_[s.first] = s.second;
    if (v.poke) {
      ref_mem_.space(v.poke_space).write(v.poke_addr, &v.poke_value, 8);
      rtl_mem_.space(v.poke_space).write(v.poke_addr, &v.poke_value, 8);
    }
    for (const Word& w : v.words) {
      Expect e;
      e.index = index, e.pos = pos, e.insn = w.insn, e.pc = w.pc, e.code_words = w.code_words;
      e.step = sim::ctl_step(w.insn, w.pc, ref_regs_, w.code_words, ref_mem_);
      const sim::CtlStep& s = e.step;
      if (s.mem && s.store) {
        e.store_value = ref_regs_[s.rd];
        ref_mem_.space(s.space).write(s.addr, &ref_regs_[s.rd], s.bytes);
      } else if (s.mem) {
        uint64_t raw = 0;
        ref_mem_.space(s.space).read(s.addr, &raw, s.bytes);
        e.load = sim::load_value(s.bytes == 8, raw);
        if (s.rd) ref_regs_[s.rd] = e.load;
      } else if (s.writes && s.rd) {
        ref_regs_[s.rd] = s.value;
      }
      const isa::OpcodeDef& d = *isa::def_of(w.insn);
      e.cls = isa::mnemonic(d, *isa::subop_of(d, w.insn));
      if (s.trapped) e.cls += std::string("/") + sim::trap_name(sim::trap_kind(s.trap));
      else if (d.opcode == isa::Opcode::BR) e.cls += s.taken ? "/taken" : "/not_taken";
      if (s.trapped) e.kind = "trap";
      else if (d.opcode == isa::Opcode::LDST) e.kind = s.store ? "ldst.store" : "ldst.load";
      else if ((d.opcode == isa::Opcode::ALU && isa::decode_alu(w.insn).op == isa::AluOp::REMU) ||
               (d.opcode == isa::Opcode::ALUI && isa::decode_alui(w.insn).op == isa::AluOp::REMU))
        e.kind = "alu.remu";
      else e.kind = lower(d.name);
      ++r_.classes[e.cls];
      offered_.push_back(e);
      ++total_words_;
    }
  }

  void take_request() {
    last_progress_ = cycle_;
    if (expect_.empty() || !expect_.back().step.mem) {
      mismatch(expect_.empty() ? -1 : expect_.back().index, 0, "a memory request with no LDST in flight");
      return;
    }
    const Expect& e = expect_.back();
    const sim::CtlStep& s = e.step;
    uint64_t addr = mem_req_addr.read(), wdata = mem_req_wdata.read();
    if (inject_ == "mem_addr") addr ^= 1;
    std::string diff;
    auto cmp = [&](const char* what, uint64_t rtl, uint64_t ref) {
      if (diff.empty() && rtl != ref) {
        char b[160];
        std::snprintf(b, sizeof b, "memory request %s: rtl 0x%llx, reference 0x%llx", what,
                      static_cast<unsigned long long>(rtl), static_cast<unsigned long long>(ref));
        diff = b;
      }
    };
    cmp("store", mem_req_store.read(), s.store);
    cmp("wide", mem_req_wide.read(), s.bytes == 8);
    cmp("space", mem_req_space.read(), uint64_t(s.space));
    cmp("addr", addr, s.addr);
    // SW stores the low half: the upper half of wdata is not the store's.
    const uint64_t keep = s.bytes == 8 ? ~uint64_t(0) : 0xffffffffull;
    if (s.store) cmp("wdata", wdata & keep, uint64_t(e.store_value) & keep);
    // A wrong request is reported and still served, so the run goes on.
    if (!diff.empty()) mismatch(e.index, e.insn, e.cls + ": " + diff);
    sim::SpaceMemory& m = rtl_mem_.space(s.space);
    if (s.store) {
      m.write(s.addr, &wdata, s.bytes);
    } else {
      uint64_t raw = 0;
      m.read(s.addr, &raw, s.bytes);
      // LW: the upper half of the bus is noise the unit must ignore.
      if (s.bytes == 4) raw |= stall_rng_() << 32;
      rsp_data_ = raw;
      rsp_pending_ = true;
      rsp_wait_ = streaming(e.pos) ? 0 : int(stall_rng_() % 4);
    }
  }

  void take_output() {
    last_progress_ = cycle_;
    if (expect_.empty()) {
      mismatch(-1, 0, "an output with no word in flight");
      return;
    }
    const Expect e = expect_.front();
    expect_.pop_front();
    ++received_;
    if (e.pos != last_pos_) last_pos_ = e.pos, ++r_.run;
    const sim::CtlStep& s = e.step;
    const bool we = s.writes && s.rd != 0;
    const uint64_t want[] = {e.pc, s.trapped ? e.pc : s.next, uint64_t(trap_code(s)), we, we ? uint64_t(s.rd) : 0,
                             we ? uint64_t(s.mem ? e.load : s.value) : 0,
                             isa::def_of(e.insn)->opcode == isa::Opcode::LDST ? s.addr : 0, s.halt};
    uint64_t got[] = {out_pc.read(), out_next_pc.read(), out_trap.read(), out_we.read(), out_rd.read(),
                      out_value.read(), out_addr.read(), out_halt.read()};
    static const char* names[] = {"pc", "next_pc", "trap", "we", "rd", "value", "addr", "halt"};
    for (int k = 0; k < 8; ++k)
      if (inject_ == names[k]) got[k] ^= 1;
    for (int k = 0; k < 8; ++k) {
      if (got[k] == want[k]) continue;
      char b[200];
      std::snprintf(b, sizeof b, "pc %u: %s: rtl 0x%llx, reference 0x%llx", e.pc, names[k],
                    static_cast<unsigned long long>(got[k]), static_cast<unsigned long long>(want[k]));
      mismatch(e.index, e.insn, e.cls + " " + b);
      return;
    }
  }

  void mismatch(int64_t index, uint64_t word, const std::string& what) {
    ++r_.mismatches;
    if (r_.first_mismatch_index >= 0 && index > r_.first_mismatch_index) return;
    char b[64];
    std::snprintf(b, sizeof b, "vector %lld word 0x%016llx", static_cast<long long>(index),
                  static_cast<unsigned long long>(word));
    r_.first_mismatch_index = index;
    r_.first_mismatch = std::string(b) + ": " + what;
  }

  const CosimOptions& o_;
  int64_t ctl_cycles_;
  Caps caps_;
  const std::vector<int64_t>& idx_;
  std::string inject_;
  CosimReport& r_;
  sim::Memory ref_mem_, rtl_mem_;
  int64_t ref_regs_[isa::kNumRegs] = {};
  Rng stall_rng_;
  std::vector<std::pair<int, int64_t>> sets_;
  size_t pending_sets_ = 0;
  std::deque<Expect> offered_, expect_;
  Expect measured_;
  bool measuring_ = false;
  bool rsp_pending_ = false;
  int rsp_wait_ = 0;
  uint64_t rsp_data_ = 0;
  int64_t cycle_ = 0, next_ = 0, accepted_ = 0, received_ = 0, total_words_ = 0;
  int64_t last_progress_ = 0, last_pos_ = -1;
  bool done_ = false;
};

}  // namespace

CosimReport cosim_ctl(const CosimOptions& o, std::ostream& log) {
  const HwConfig hw = load_hw_config(o.hw);
  require(hw.timing.ctl_cycles.given, o.hw + ": the ctl cosim compares with timing.ctl_cycles, which the file leaves out");
  // The spaces' capacities as the functional simulator's (runtime's sim_capacities).
  const Caps caps{{uint64_t(hw.memory.ddr_bytes.value), uint64_t(hw.memory.l2_bytes.value),
                   uint64_t(hw.weight_buffer_bytes())}};
  std::string inject;
  if (const char* e = std::getenv("N3_COSIM_CTL_INJECT"); e && *e) {
    static const char* names[] = {"pc", "next_pc", "trap", "we", "rd", "value", "addr", "halt", "mem_addr"};
    for (const char* n : names)
      if (inject.empty() && std::string(n) == e) inject = n;
    require(!inject.empty(), std::string("N3_COSIM_CTL_INJECT=") + e +
                                 " names no ctl output (pc, next_pc, trap, we, rd, value, addr, halt, mem_addr)");
    log << "ctl: N3_COSIM_CTL_INJECT: flipping bit 0 of the RTL's " << e << " before comparing\n";
  }
  const std::vector<int64_t> idx = shard_indices(o);
  CosimReport r;
  Waveform wave(o.vcd);  // before the model: it turns Verilator's tracing on
  Bench bench("ctl_bench", o, hw.core_ps(), hw.timing.ctl_cycles.value, caps, idx, inject, r);
  if (!o.vcd.empty()) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    wave.open([&](VerilatedFstC* f) { bench.dut.trace(f, 99); });
  }
  log << "ctl: " << idx.size() << " vectors, streaming and stalled segments of " << kSegment << "\n";
  // Slices of as many clocks as vectors remain (each takes at least one).
  while (!bench.done())
    sc_core::sc_start(sc_core::sc_time(hw.core_ps() * double(std::max<int64_t>(bench.remaining(), 16)), sc_core::SC_PS));
  wave.close();
  r.rtl_cycles = double(bench.cycles());
  return r;
}

}  // namespace n3::rtl
