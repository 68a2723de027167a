// sc_spawn (the threads are made from the owning module's constructor, as
// its SC_THREADs would be, so the processes keep their names and order).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "rtl_bridge/gated_clock.h"

namespace n3::rtl {

void GatedClock::start(sc_core::sc_signal<bool>& rst_n, const Reset& reset, int64_t& cycles) {
  sc_core::sc_spawn([this] { clock(); }, "clock");
  sc_core::sc_spawn([this, &rst_n, reset, &cycles] { power_on_reset(rst_n, reset, cycles); }, "power_on_reset");
}

void GatedClock::go() {
  on_ = true;
  go_.notify(sc_core::SC_ZERO_TIME);
}

GatedClock::Run GatedClock::run() {
  while (!reset_done_) sc_core::wait(reset_done_event_);
  go();
  return Run(*this);
}

void GatedClock::clock() {
  const sc_core::sc_time half = period_ / 2;
  for (;;) {
    while (!on_) sc_core::wait(go_);
    clk_.write(true);
    sc_core::wait(half);
    clk_.write(false);
    // A driver waiting on fall() wakes in this evaluation phase, so its new
    // inputs and the falling clock reach the Verilated engine in one
    // update: one evaluation of it per falling edge, not two.
    fall_.notify();
    sc_core::wait(half);
  }
}

void GatedClock::power_on_reset(sc_core::sc_signal<bool>& rst_n, Reset reset, int64_t& cycles) {
  go();
  rst_n = false;
  const int clocks = reset.low_clocks + (reset.released_clock ? 1 : 0);
  for (int i = 0; i < clocks; ++i) {
    if (i == reset.low_clocks) rst_n = true;
    if (reset.edge == Edge::kFall)
      sc_core::wait(fall_);
    else
      sc_core::wait(clk_.negedge_event());
    ++cycles;
  }
  if (!reset.released_clock) rst_n = true;
  on_ = false;
  reset_done_ = true;
  reset_done_event_.notify();
}

}  // namespace n3::rtl
