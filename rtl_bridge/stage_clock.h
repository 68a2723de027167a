// The gated core clock of a Verilated stage that the control unit feeds one
// word at a time (the decoder, the control engine), with the drain after
// sys.halt: one class for what RtlDecodeStage and RtlCtlStage each once
// wrote out. (The engines' clock, which a run() holds on, is GatedClock.)
//
// Gated for the same reason as GatedClock: a free running clock would keep
// sc_start() from returning between programs and cost an evaluation every
// idle cycle. The driver wakes it when a word arrives and stops it on the
// edge it finds nothing to do; it runs from time 0 for the power-on reset.
//
// Why a flush mode: the model's control unit has no fetch latency (a word
// executes at the time it is decoded), so the words still inside the stage
// after sys.halt (a few clocks) lie before the halt in the model; on the
// core clock's time they would lengthen a program whose halt waits for no
// token by the stage's latency, which no hardware does. drain() clocks them
// out in delta cycles (zero model time), and a phase still running is cut
// short for the same reason.
#pragma once
#include <systemc>

namespace n3::rtl {

class StageClock {
 public:
  // Built inside the owning module's constructor, so clk is "<module>.clk".
  StageClock() = default;
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;

  // From the owning module's constructor, where its SC_THREADs are made:
  // spawns the clock (thread "clock" of that module), running from time 0.
  // high + low = period: the two halves add up to the core clock as the
  // control unit waits for it (two rounded halves could drift from it).
  void start(const sc_core::sc_time& period, const sc_core::sc_time& high);

  sc_core::sc_signal<bool>& clk() { return clk_; }
  bool on() const { return on_; }

  // A program runs: phases take the core clock's time again (after a drain).
  void on_time() { flush_ = false; }
  // Starts the clock (no-op while it runs).
  void wake();
  // The driver has no work: no edge after this one until wake().
  void stop();
  // After sys.halt, from an SC_THREAD: clocks out what busy() reports in
  // delta cycles, returning when it reports nothing.
  template <class Busy>
  void drain(Busy busy) {
    flush_ = true;
    flush_ev_.notify(sc_core::SC_ZERO_TIME);
    if (busy()) wake();
    while (busy()) sc_core::wait(idle_);
  }

 private:
  void clock(sc_core::sc_time high, sc_core::sc_time low);

  sc_core::sc_signal<bool> clk_{"clk"};
  bool on_ = false;
  bool flush_ = false;  // after sys.halt: each phase a delta cycle (drain)
  sc_core::sc_event go_, idle_, flush_ev_;
};

}  // namespace n3::rtl
