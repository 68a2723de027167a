// The core clock of a Verilated engine in the SystemC model, gated, and the
// engine's power-on reset: one class for what GemvRtl, DmaRtl and SfuRtl
// each once wrote out (docs/rtl.md "The bridge in the SystemC model").
//
// Why gated: the clock runs only while a run() drives the engine (and for
// the reset). A free running sc_clock would keep the simulation from ever
// running out of events, so the SystemC model's sc_start() could not
// return between programs, and it would cost a Verilated evaluation every
// idle cycle: the model is evaluated only while a run needs it.
//
// Why the reset is at time 0: the engine is reset with the chip, not by its
// first instruction, so no instruction's cycles include the reset's (they
// once did: E2B's first GEMV instruction, a qk, measured 4 clocks long). A
// run that arrives during the reset waits for it, as it would in hardware.
#pragma once
#include <cstdint>

#include <systemc>

namespace n3::rtl {

class GatedClock {
 public:
  // The edge the reset counts its clocks on (a run's driver counts the same).
  enum class Edge {
    kNegedge,  // clk().negedge_event()
    kFall,     // fall(): notified immediately as clk() falls (GemvRtl: see clock())
  };
  struct Reset {
    int low_clocks;        // clocks rst_n is held low
    bool released_clock;   // true: rst_n rises before one more clock, which the reset still waits for;
                           // false: rst_n rises at the last low clock's counted edge
    Edge edge;
  };

  // Built inside the owning module's constructor (so clk is named
  // "<module>.clk"); period: the core clock's (1e6 / core_mhz ps).
  explicit GatedClock(const sc_core::sc_time& period) : period_(period) {}
  GatedClock(const GatedClock&) = delete;
  GatedClock& operator=(const GatedClock&) = delete;

  // From the owning module's constructor, where its SC_THREADs are made:
  // spawns the clock and the power-on reset (threads "clock" and
  // "power_on_reset" of that module). The reset drives rst_n and adds each
  // of its clocks to `cycles` (the engine's clock count).
  void start(sc_core::sc_signal<bool>& rst_n, const Reset& reset, int64_t& cycles);

  // The clock runs while a Run lives: from an SC_THREAD, run() waits for
  // the power-on reset, starts the clock and returns the Run; the clock
  // stops when it is destroyed (the run's end, also on an exception).
  class Run {
   public:
    ~Run() { c_.on_ = false; }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

   private:
    friend class GatedClock;
    explicit Run(GatedClock& c) : c_(c) {}
    GatedClock& c_;
  };
  [[nodiscard]] Run run();

  sc_core::sc_signal<bool>& clk() { return clk_; }
  const sc_core::sc_event& fall() const { return fall_; }
  const sc_core::sc_time& period() const { return period_; }

 private:
  void clock();
  void power_on_reset(sc_core::sc_signal<bool>& rst_n, Reset reset, int64_t& cycles);
  void go();

  sc_core::sc_signal<bool> clk_{"clk"};
  sc_core::sc_time period_;
  bool on_ = false;
  sc_core::sc_event go_;
  sc_core::sc_event fall_;
  bool reset_done_ = false;
  sc_core::sc_event reset_done_event_;
};

}  // namespace n3::rtl
