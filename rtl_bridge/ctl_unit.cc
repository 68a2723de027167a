#include "rtl_bridge/ctl_unit.h"

#include <systemc>
#include <verilated.h>
#include <verilated_fst_c.h>
// Verilator's model of rtl/ctl/ (n3_rtl_models, in the build tree).
#include <Vn3_ctl.h>

#include <cstdlib>
#include <deque>
#include <vector>
#include <exception>
#include <type_traits>

#include "base/error.h"
#include "rtl_bridge/stage_clock.h"
#include "rtl_bridge/waveform.h"
#include "sim/ctl_exec.h"
#include "sim/systemc/common.h"

namespace n3::rtl {

CtlRunStats& ctl_rtl_stats() {
  static CtlRunStats* s = new CtlRunStats;  // lives to exit, like the model
  return *s;
}

namespace {

template <class Port>
using SignalOf = sc_core::sc_signal<typename std::remove_reference_t<Port>::data_type>;

constexpr int kResetClocks = 2;  // rst_n low at time 0 (synchronous reset, as the cosim bench's)

struct Job {
  sc::CtlStage::Executed ex;
  uint64_t code_words = 0;
  std::vector<std::pair<int, int64_t>> seeds;  // registers to write first (set port), one a clock
  sim::CtlStep step;  // the memory request the core made (ctl_step on the same registers)
  std::string kind;
  int64_t accepted = 0;
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
  return b;
}

// The driver: instructions the control unit executed wait in `pending_` and
// are offered one at a time; results are taken on the clock they are valid
// (out_ready high), the memory request at once (mem_req_ready high) and a
// load answered the next clock with the word the core read. The RTL keeps
// its own registers; a register the core's differs in before an
// instruction from what the core left after the previous one (all of them
// before the first: the host's inputs, a new program) is written through
// the set port first, one a clock. The clock is gated as the decoder's: it
// runs while there is work and during the power-on reset.
class RtlCtlStage : public sc_core::sc_module, public sc::CtlStage {
 public:
  SC_HAS_PROCESS(RtlCtlStage);
  RtlCtlStage(sc_core::sc_module_name n, sc::Context& c, const std::string& vcd, int64_t vcd_instructions)
      : sc_core::sc_module(n), c_(c), wave_(vcd), dut_("rtl") {
    wave_.stop_after(vcd_instructions);
#define N3_BIND(p) dut_.p(p##_)
    dut_.clk(stage_clock_.clk()); N3_BIND(rst_n); N3_BIND(code_words); N3_BIND(cap_ddr); N3_BIND(cap_l2); N3_BIND(cap_wbuf);
    N3_BIND(set_valid); N3_BIND(set_idx); N3_BIND(set_value); N3_BIND(in_valid); N3_BIND(in_ready);
    N3_BIND(in_insn); N3_BIND(in_pc); N3_BIND(mem_req_valid); N3_BIND(mem_req_ready); N3_BIND(mem_req_store);
    N3_BIND(mem_req_wide); N3_BIND(mem_req_space); N3_BIND(mem_req_addr); N3_BIND(mem_req_wdata);
    N3_BIND(mem_rsp_valid); N3_BIND(mem_rsp_rdata); N3_BIND(out_valid); N3_BIND(out_ready); N3_BIND(out_pc);
    N3_BIND(out_next_pc); N3_BIND(out_trap); N3_BIND(out_we); N3_BIND(out_rd); N3_BIND(out_value);
    N3_BIND(out_addr); N3_BIND(out_halt);
#undef N3_BIND
    // N3_RTL_CTL_INJECT=k: the k-th instruction (from 0) comes out with bit 0
    // of its next pc flipped, so a test can show a difference is caught.
    if (const char* k = std::getenv("N3_RTL_CTL_INJECT"); k && *k) inject_ = std::atoll(k);
    ctl_rtl_stats().ctl_cycles = c_.p.timing.ctl_cycles.value;
    stage_clock_.start(c_.ps(c_.p.core_ps()), c_.ps(c_.p.core_ps() / 2));  // runs from time 0: the power-on reset
    SC_METHOD(tick);
    sensitive << stage_clock_.clk().posedge_event();
    dont_initialize();
  }

  void executed(const Executed& e) override {
    stage_clock_.on_time();  // a program runs: the clock runs on the core clock's time again
    if (busy()) ++ctl_rtl_stats().behind;
    Job j;
    j.ex = e;
    j.ex.sim = nullptr;  // not kept: what the RTL needs is taken now
    const sim::FuncSim& s = *e.sim;
    const uint64_t words = s.program().code.size();
    j.code_words = words;
    j.step = sim::ctl_step(e.word, e.pc, e.before.data(), words, s.memory());
    const isa::Opcode op = isa::def_of(e.word)->opcode;
    if (op == isa::Opcode::LDST) j.kind = j.step.store ? "ldst.store" : "ldst.load";
    else if ((op == isa::Opcode::ALU && isa::decode_alu(e.word).op == isa::AluOp::REMU) ||
             (op == isa::Opcode::ALUI && isa::decode_alui(e.word).op == isa::AluOp::REMU))
      j.kind = "alu.remu";
    else j.kind = op == isa::Opcode::ALU ? "alu" : op == isa::Opcode::ALUI ? "alui" : op == isa::Opcode::BR ? "br" : "sys";
    if (!configured_) {  // the hardware's capacities: one per elaboration
      cap_ddr_.write(s.memory().space(isa::Space::DDR).capacity());
      cap_l2_.write(s.memory().space(isa::Space::L2).capacity());
      cap_wbuf_.write(s.memory().space(isa::Space::WBUF).capacity());
    }
    for (int r = 1; r < isa::kNumRegs; ++r)
      if (!configured_ || e.before[size_t(r)] != regs_[size_t(r)]) j.seeds.push_back({r, e.before[size_t(r)]});
    configured_ = true;
    regs_ = e.after;
    pending_.push_back(j);
    stage_clock_.wake();
  }

  // After sys.halt the instructions still in the RTL are clocked out in zero
  // model time (as the decoder's words: the model charges ctl_cycles already).
  void drain() override { stage_clock_.drain([this] { return busy(); }); }

 private:
  void start_of_simulation() override {
    wave_.open([this](VerilatedFstC* v) { dut_.trace(v, 99); });
  }
  void end_of_simulation() override { wave_.flush(); }

  bool busy() const { return !pending_.empty() || offered_ || !inside_.empty(); }

  // One rising edge: reads are the values before it; writes apply to the next.
  void tick() {
    CtlRunStats& st = ctl_rtl_stats();
    ++clock_;
    ++st.cycles;
    if (reset_left_ > 0) {
      ++st.reset_cycles;
      rst_n_.write(--reset_left_ == 0);
      if (reset_left_ == 0) out_ready_.write(true), mem_req_ready_.write(true);
      if (reset_left_ == 0 && !busy()) stage_clock_.stop();
      return;
    }
    if (set_valid_.read()) ++st.seed_cycles;
    if (out_valid_.read() && out_ready_.read()) take_output();
    mem_rsp_valid_.write(false);
    if (mem_req_valid_.read() && mem_req_ready_.read()) take_request();
    if (in_valid_.read() && in_ready_.read()) {
      offered_job_.accepted = clock_;
      inside_.push_back(offered_job_);
      offered_ = false;
    }
    set_valid_.write(false);
    if (!offered_ && !pending_.empty()) {
      Job& j = pending_.front();
      if (!j.seeds.empty()) {
        // Seeds go in while the unit is idle (nothing offered or inside).
        if (inside_.empty()) {
          set_valid_.write(true);
          set_idx_.write(uint32_t(j.seeds.back().first));
          set_value_.write(uint64_t(j.seeds.back().second));
          j.seeds.pop_back();
        }
      } else {
        offered_job_ = j;
        pending_.pop_front();
        offered_ = true;
        in_insn_.write(offered_job_.ex.word);
        in_pc_.write(offered_job_.ex.pc);
        code_words_.write(uint32_t(offered_job_.code_words));
      }
    }
    in_valid_.write(offered_);
    if (!busy()) stage_clock_.stop();
  }

  void take_request() {
    if (inside_.empty() || !inside_.back().step.mem) {
      fail("rtl ctl: a memory request with no LDST inside the unit (address 0x" + hex(mem_req_addr_.read()) + ")");
      return;
    }
    const Job& j = inside_.back();
    const sim::CtlStep& s = j.step;
    const uint64_t keep = s.bytes == 8 ? ~uint64_t(0) : 0xffffffffull;
    const uint64_t got[] = {mem_req_store_.read(), mem_req_wide_.read(), mem_req_space_.read(), mem_req_addr_.read(),
                            s.store ? (mem_req_wdata_.read() & keep) : 0};
    const uint64_t want[] = {s.store, s.bytes == 8, uint64_t(s.space), s.addr,
                             s.store ? (uint64_t(j.ex.before[size_t(s.rd)]) & keep) : 0};
    static const char* names[] = {"mem_req_store", "mem_req_wide", "mem_req_space", "mem_req_addr", "mem_req_wdata"};
    for (int k = 0; k < 5; ++k)
      if (got[k] != want[k]) return mismatch(j, names[k], got[k], want[k]);
    if (!s.store) {
      // The word the core read: its register now (r0: the value is dropped, any word will do).
      mem_rsp_valid_.write(true);
      mem_rsp_rdata_.write(uint64_t(j.ex.after[size_t(s.rd)]));
    }
  }

  void take_output() {
    if (inside_.empty()) {
      fail("rtl ctl: a result with no instruction inside the unit");
      return;
    }
    const Job j = inside_.front();
    inside_.pop_front();
    CtlRunStats& st = ctl_rtl_stats();
    auto& k = st.kinds[j.kind];
    ++k.first;
    k.second += clock_ - j.accepted;
    const sim::CtlStep& s = j.step;
    const bool we = s.writes && s.rd != 0;
    uint64_t next = out_next_pc_.read();
    if (st.instructions == inject_) next ^= 1;
    ++st.instructions;
    wave_.instruction_done();
    const uint64_t got[] = {out_pc_.read(), next, out_trap_.read(), out_we_.read(), out_rd_.read(),
                            out_value_.read(), out_halt_.read()};
    const uint64_t want[] = {j.ex.pc, j.ex.next_pc, 0, we, we ? uint64_t(s.rd) : 0,
                             we ? uint64_t(j.ex.after[size_t(s.rd)]) : 0, j.ex.halted};
    static const char* names[] = {"pc", "next_pc", "trap", "we", "rd", "value", "halt"};
    for (int i = 0; i < 7; ++i)
      if (got[i] != want[i]) return mismatch(j, names[i], got[i], want[i]);
  }

  void mismatch(const Job& j, const char* field, uint64_t rtl, uint64_t model) {
    fail("rtl ctl: pc " + std::to_string(j.ex.pc) + " (dynamic #" + std::to_string(j.ex.dyn) + "), word 0x" +
         hex(j.ex.word) + ": " + field + " rtl 0x" + hex(rtl) + " vs model 0x" + hex(model));
  }

  void fail(const std::string& what) {
    stage_clock_.stop();
    c_.fail(std::make_exception_ptr(CtlMismatch(what)));
  }

  sc::Context& c_;
  Waveform wave_;  // before the model: it turns Verilator's tracing on
  StageClock stage_clock_;  // clk: the gated core clock
  SignalOf<decltype(Vn3_ctl::rst_n)> rst_n_{"rst_n", false};
  SignalOf<decltype(Vn3_ctl::code_words)> code_words_{"code_words"};
  SignalOf<decltype(Vn3_ctl::cap_ddr)> cap_ddr_{"cap_ddr"}, cap_l2_{"cap_l2"}, cap_wbuf_{"cap_wbuf"};
  SignalOf<decltype(Vn3_ctl::set_valid)> set_valid_{"set_valid"};
  SignalOf<decltype(Vn3_ctl::set_idx)> set_idx_{"set_idx"};
  SignalOf<decltype(Vn3_ctl::set_value)> set_value_{"set_value"};
  SignalOf<decltype(Vn3_ctl::in_valid)> in_valid_{"in_valid"};
  SignalOf<decltype(Vn3_ctl::in_ready)> in_ready_{"in_ready"};
  SignalOf<decltype(Vn3_ctl::in_insn)> in_insn_{"in_insn"};
  SignalOf<decltype(Vn3_ctl::in_pc)> in_pc_{"in_pc"};
  SignalOf<decltype(Vn3_ctl::mem_req_valid)> mem_req_valid_{"mem_req_valid"};
  SignalOf<decltype(Vn3_ctl::mem_req_ready)> mem_req_ready_{"mem_req_ready"};
  SignalOf<decltype(Vn3_ctl::mem_req_store)> mem_req_store_{"mem_req_store"};
  SignalOf<decltype(Vn3_ctl::mem_req_wide)> mem_req_wide_{"mem_req_wide"};
  SignalOf<decltype(Vn3_ctl::mem_req_space)> mem_req_space_{"mem_req_space"};
  SignalOf<decltype(Vn3_ctl::mem_req_addr)> mem_req_addr_{"mem_req_addr"};
  SignalOf<decltype(Vn3_ctl::mem_req_wdata)> mem_req_wdata_{"mem_req_wdata"};
  SignalOf<decltype(Vn3_ctl::mem_rsp_valid)> mem_rsp_valid_{"mem_rsp_valid"};
  SignalOf<decltype(Vn3_ctl::mem_rsp_rdata)> mem_rsp_rdata_{"mem_rsp_rdata"};
  SignalOf<decltype(Vn3_ctl::out_valid)> out_valid_{"out_valid"};
  SignalOf<decltype(Vn3_ctl::out_ready)> out_ready_{"out_ready"};
  SignalOf<decltype(Vn3_ctl::out_pc)> out_pc_{"out_pc"};
  SignalOf<decltype(Vn3_ctl::out_next_pc)> out_next_pc_{"out_next_pc"};
  SignalOf<decltype(Vn3_ctl::out_trap)> out_trap_{"out_trap"};
  SignalOf<decltype(Vn3_ctl::out_we)> out_we_{"out_we"};
  SignalOf<decltype(Vn3_ctl::out_rd)> out_rd_{"out_rd"};
  SignalOf<decltype(Vn3_ctl::out_value)> out_value_{"out_value"};
  SignalOf<decltype(Vn3_ctl::out_addr)> out_addr_{"out_addr"};
  SignalOf<decltype(Vn3_ctl::out_halt)> out_halt_{"out_halt"};
  Vn3_ctl dut_;
  bool configured_ = false;
  int64_t clock_ = 0;
  int reset_left_ = kResetClocks;
  std::array<int64_t, isa::kNumRegs> regs_{};  // the core's registers after the last instruction sent
  std::deque<Job> pending_, inside_;
  Job offered_job_;
  bool offered_ = false;
  int64_t inject_ = -1;
};

}  // namespace

void use_rtl_ctl(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  require(hw.timing.ctl_cycles.given,
          hw.name + ": --rtl ctl compares the RTL's clocks with timing.ctl_cycles, which the file leaves out");
  o->ctl_stage.make = [vcd, vcd_instructions](sc_core::sc_module_name n,
                                              sc::Context& c) -> std::unique_ptr<sc::CtlStage> {
    return std::make_unique<RtlCtlStage>(n, c, vcd, vcd_instructions);
  };
  o->ctl_stage.name = "rtl";
}

void print_ctl_summary(const CtlRunStats& s, std::FILE* out) {
  if (s.instructions == 0) {
    std::fprintf(out, "rtl ctl: no control instructions executed\n");
    return;
  }
  std::string kinds;
  for (const auto& [k, v] : s.kinds) {
    char b[96];
    std::snprintf(b, sizeof b, "%s%s %lld x %.2f", kinds.empty() ? "" : ", ", k.c_str(),
                  static_cast<long long>(v.first), double(v.second) / double(v.first));
    kinds += b;
  }
  std::fprintf(out,
               "rtl ctl: %lld control instructions executed and compared with the functional core, %lld RTL cycles "
               "(%lld the power-on reset, %lld seeding the registers); clocks per instruction by kind: %s (the "
               "model's ctl_cycles: %lld); %lld executed while an earlier one was in the RTL\n",
               static_cast<long long>(s.instructions), static_cast<long long>(s.cycles),
               static_cast<long long>(s.reset_cycles), static_cast<long long>(s.seed_cycles), kinds.c_str(),
               static_cast<long long>(s.ctl_cycles), static_cast<long long>(s.behind));
}

}  // namespace n3::rtl
