#include "rtl_bridge/decoder_unit.h"

#include <systemc>
#include <verilated.h>
#include <verilated_fst_c.h>
// Verilator's model of rtl/decoder/ (n3_rtl_models, in the build tree).
#include <Vn3_decoder.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <exception>
#include <vector>
#include <type_traits>

#include "base/error.h"
#include "rtl_bridge/decoder_outputs.h"
#include "rtl_bridge/stage_clock.h"
#include "rtl_bridge/waveform.h"
#include "sim/systemc/common.h"

namespace n3::rtl {

DecoderRunStats& decoder_rtl_stats() {
  static DecoderRunStats* s = new DecoderRunStats;  // lives to exit, like the model
  return *s;
}

namespace {

template <class Port>
using SignalOf = sc_core::sc_signal<typename std::remove_reference_t<Port>::data_type>;
using FieldsBv = std::remove_reference_t<decltype(std::declval<Vn3_decoder&>().out_fields)>::data_type;
template <int W>
constexpr int bv_width(const sc_dt::sc_bv<W>*) {
  return W;
}

// The clocks rst_n is held low at time 0 (the decoder's reset is
// synchronous; as the cosim bench resets it).
constexpr int kResetClocks = 2;

struct Word {
  uint64_t word = 0;
  uint32_t pc = 0;
  uint64_t dyn = 0;
  int64_t offered = 0, accepted = 0;  // the clocks (RtlDecodeStage::clock_) of both
};

// The driver: words the control unit fetched wait in `pending_` and are
// offered one per clock; the decoder's outputs are taken on the clock they
// are valid (out_ready held high: the dispatch queues' back-pressure stalls
// the control unit before it fetches, so the decoder never holds an output
// here). The clock runs while a word is pending or inside the decoder and
// during the power-on reset, and stops otherwise (a gated clock, as the
// engines'): the RTL's cycles are the clocks it had work.
class RtlDecodeStage : public sc_core::sc_module, public sc::DecodeStage {
 public:
  SC_HAS_PROCESS(RtlDecodeStage);
  RtlDecodeStage(sc_core::sc_module_name n, sc::Context& c, const std::string& vcd, int64_t vcd_instructions)
      : sc_core::sc_module(n), c_(c), wave_(vcd), dut_("rtl") {
    wave_.stop_after(vcd_instructions);
    slots_ = decoder_slots();
    require(slots_.count * slots_.bits == bv_width(static_cast<const FieldsBv*>(nullptr)),
            "--rtl decoder: the Verilated decoder's out_fields does not match the C++ table: rebuild (isa.yaml changed?)");
    dut_.clk(stage_clock_.clk());
    dut_.rst_n(rst_n_);
    dut_.in_valid(in_valid_);
    dut_.in_ready(in_ready_);
    dut_.in_insn(in_insn_);
    dut_.out_valid(out_valid_);
    dut_.out_ready(out_ready_);
    dut_.out_insn(out_insn_);
    dut_.out_legal(out_legal_);
    dut_.out_problem(out_problem_);
    dut_.out_engine(out_engine_);
    dut_.out_opcode(out_opcode_);
    dut_.out_subop(out_subop_);
    dut_.out_subop_valid(out_subop_valid_);
    dut_.out_wait(out_wait_);
    dut_.out_signal(out_signal_);
    dut_.out_fields(out_fields_);
    if (const char* k = std::getenv("N3_RTL_DECODER_INJECT"); k && *k) inject_ = std::atoll(k);
    decoder_rtl_stats().dispatch_cycles = c_.p.timing.dispatch_cycles.value;
    stage_clock_.start(c_.ps(c_.p.core_ps()), c_.ps(c_.p.core_ps() / 2));  // runs from time 0: the power-on reset
    SC_METHOD(tick);
    sensitive << stage_clock_.clk().posedge_event();
    dont_initialize();
  }

  void fetched(uint64_t word, uint32_t pc, uint64_t dyn) override {
    stage_clock_.on_time();  // a program runs: the clock runs on the core clock's time again
    if (!pending_.empty()) ++decoder_rtl_stats().behind;
    pending_.push_back({word, pc, dyn, 0, 0});
    stage_clock_.wake();
  }

  // After sys.halt the words still in the decoder (the halt's own and the
  // few before it: 3 clocks at most) are clocked out in zero model time
  // (stage_clock.h says why). The halts of the compiled programs and the
  // examples wait for the engines' tokens: the decoder is empty long before
  // they execute.
  void drain() override { stage_clock_.drain([this] { return busy(); }); }

 private:
  void start_of_simulation() override {
    wave_.open([this](VerilatedFstC* v) { dut_.trace(v, 99); });
  }
  void end_of_simulation() override { wave_.flush(); }

  bool busy() const { return !pending_.empty() || offered_ || !inside_.empty(); }

  // One rising edge: what is read is the value before the edge (the model's
  // new outputs are visible a delta later), so a transfer is valid && ready
  // as read; what is written applies from the next edge.
  void tick() {
    DecoderRunStats& st = decoder_rtl_stats();
    ++clock_;
    ++st.cycles;
    if (reset_left_ > 0) {
      ++st.reset_cycles;
      rst_n_.write(--reset_left_ == 0);
      if (reset_left_ == 0) out_ready_.write(true);
      if (reset_left_ == 0 && !busy()) stage_clock_.stop();
      return;
    }
    if (out_valid_.read() && out_ready_.read()) take_output();
    if (in_valid_.read()) {
      if (in_ready_.read()) {
        offered_word_.accepted = clock_;
        inside_.push_back(offered_word_);
        offered_ = false;
      } else {
        ++st.stall_cycles;
      }
    }
    if (!offered_ && !pending_.empty()) {
      offered_word_ = pending_.front();
      pending_.pop_front();
      offered_word_.offered = clock_;
      offered_ = true;
      in_insn_.write(offered_word_.word);
    }
    in_valid_.write(offered_);
    if (!busy()) stage_clock_.stop();
  }

  void take_output() {
    if (inside_.empty()) {
      fail("rtl decoder: an output with no word inside the decoder (word 0x" + hex(out_insn_.read()) + ")");
      return;
    }
    const Word w = inside_.front();
    inside_.pop_front();
    DecoderRunStats& st = decoder_rtl_stats();
    st.latency_min = std::min(st.latency_min, clock_ - w.accepted);
    st.latency_max = std::max(st.latency_max, clock_ - w.accepted);
    std::vector<uint64_t> o(size_t(kDecField0 + slots_.count), 0);
    o[kDecInsn] = out_insn_.read();
    o[kDecLegal] = out_legal_.read();
    o[kDecProblem] = out_problem_.read();
    o[kDecEngine] = out_engine_.read();
    o[kDecOpcode] = out_opcode_.read();
    o[kDecSubop] = out_subop_.read();
    o[kDecSubopValid] = out_subop_valid_.read();
    o[kDecWait] = out_wait_.read();
    o[kDecSignal] = out_signal_.read();
    const FieldsBv& f = out_fields_.read();
    for (int k = 0; k < slots_.count; ++k)
      o[size_t(kDecField0 + k)] = f.range(slots_.bits * k + slots_.bits - 1, slots_.bits * k).to_uint64();
    // N3_RTL_DECODER_INJECT=k: the k-th word (from 0) this process decodes
    // on the RTL comes out with bit 0 of its engine flipped, so a test can
    // show that a difference is caught and reported.
    if (st.words == inject_) o[kDecEngine] ^= 1;
    ++st.words;
    wave_.instruction_done();
    const std::string diff = decoder_difference(w.word, o, slots_);
    if (!diff.empty())
      fail("rtl decoder: pc " + std::to_string(w.pc) + " (dynamic #" + std::to_string(w.dyn) + "), word 0x" +
           hex(w.word) + ": " + diff);
  }

  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
    return b;
  }

  void fail(const std::string& what) {
    stage_clock_.stop();
    c_.fail(std::make_exception_ptr(DecoderMismatch(what)));
  }

  sc::Context& c_;
  Waveform wave_;  // before the model: it turns Verilator's tracing on
  StageClock stage_clock_;  // clk: the gated core clock
  SignalOf<decltype(Vn3_decoder::rst_n)> rst_n_{"rst_n", false};
  SignalOf<decltype(Vn3_decoder::in_valid)> in_valid_{"in_valid"};
  SignalOf<decltype(Vn3_decoder::in_ready)> in_ready_{"in_ready"};
  SignalOf<decltype(Vn3_decoder::in_insn)> in_insn_{"in_insn"};
  SignalOf<decltype(Vn3_decoder::out_valid)> out_valid_{"out_valid"};
  SignalOf<decltype(Vn3_decoder::out_ready)> out_ready_{"out_ready"};
  SignalOf<decltype(Vn3_decoder::out_insn)> out_insn_{"out_insn"};
  SignalOf<decltype(Vn3_decoder::out_legal)> out_legal_{"out_legal"};
  SignalOf<decltype(Vn3_decoder::out_problem)> out_problem_{"out_problem"};
  SignalOf<decltype(Vn3_decoder::out_engine)> out_engine_{"out_engine"};
  SignalOf<decltype(Vn3_decoder::out_opcode)> out_opcode_{"out_opcode"};
  SignalOf<decltype(Vn3_decoder::out_subop)> out_subop_{"out_subop"};
  SignalOf<decltype(Vn3_decoder::out_subop_valid)> out_subop_valid_{"out_subop_valid"};
  SignalOf<decltype(Vn3_decoder::out_wait)> out_wait_{"out_wait"};
  SignalOf<decltype(Vn3_decoder::out_signal)> out_signal_{"out_signal"};
  SignalOf<decltype(Vn3_decoder::out_fields)> out_fields_{"out_fields"};
  Vn3_decoder dut_;
  DecoderSlots slots_;
  int64_t clock_ = 0;
  int reset_left_ = kResetClocks;
  std::deque<Word> pending_, inside_;  // fetched and not yet offered; accepted and not yet out
  Word offered_word_;
  bool offered_ = false;
  int64_t inject_ = -1;
};

}  // namespace

void use_rtl_decoder(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  require(hw.timing.dispatch_cycles.given,
          hw.name + ": --rtl decoder puts the RTL in the dispatch stage timed by timing.dispatch_cycles, which the file "
                    "leaves out");
  o->decoder.make = [vcd, vcd_instructions](sc_core::sc_module_name n,
                                            sc::Context& c) -> std::unique_ptr<sc::DecodeStage> {
    return std::make_unique<RtlDecodeStage>(n, c, vcd, vcd_instructions);
  };
  o->decoder.name = "rtl";
}

void print_decoder_summary(const DecoderRunStats& s, std::FILE* out) {
  if (s.words == 0) {
    std::fprintf(out, "rtl decoder: no words decoded\n");
    return;
  }
  std::fprintf(out,
               "rtl decoder: %lld words decoded and compared with the C++ decoder, %lld RTL cycles (%lld of them the "
               "power-on reset); latency %lld..%lld cycles, %lld clocks a word waited for in_ready (the model's "
               "dispatch interval: %lld per word); %lld words fetched behind an earlier one\n",
               static_cast<long long>(s.words), static_cast<long long>(s.cycles),
               static_cast<long long>(s.reset_cycles), static_cast<long long>(s.latency_min),
               static_cast<long long>(s.latency_max), static_cast<long long>(s.stall_cycles),
               static_cast<long long>(s.dispatch_cycles), static_cast<long long>(s.behind));
}

}  // namespace n3::rtl
