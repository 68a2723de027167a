// sc_spawn (the thread is made from the owning module's constructor, as its
// SC_THREAD would be, so the process keeps its name and order).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "rtl_bridge/stage_clock.h"

namespace n3::rtl {

void StageClock::start(const sc_core::sc_time& period, const sc_core::sc_time& high) {
  on_ = true;  // the power-on reset at time 0
  const sc_core::sc_time low = period - high;
  sc_core::sc_spawn([this, high, low] { clock(high, low); }, "clock");
}

void StageClock::wake() {
  if (on_) return;
  on_ = true;
  go_.notify(sc_core::SC_ZERO_TIME);
}

void StageClock::stop() {
  on_ = false;
  idle_.notify(sc_core::SC_ZERO_TIME);
}

void StageClock::clock(sc_core::sc_time high, sc_core::sc_time low) {
  auto phase = [&](const sc_core::sc_time& t) {
    if (flush_)
      sc_core::wait(sc_core::SC_ZERO_TIME);
    else
      sc_core::wait(t, flush_ev_);
  };
  for (;;) {
    while (!on_) sc_core::wait(go_);
    clk_.write(true);
    phase(high);
    clk_.write(false);
    phase(low);
  }
}

}  // namespace n3::rtl
