// Shared pieces of the SystemC NPU model: the timed token board between the
// units, the per-unit statistics and the trace recorder. The functional
// core (sim::FuncSim) computes the bits; these units decide when.
#pragma once
#include <systemc>

#include <array>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "sim/func_sim.h"
#include "sim/systemc/timing.h"

namespace n3::sc {

constexpr int kEngines = isa::kNumEngines;  // CTL DMA GEMV GEMM SFU

// The ISA's synchronisation as the units see it (bound by sc_port, so an
// RTL unit's transactor can pop and push the same tokens).
class TokenIf : public virtual sc_core::sc_interface {
 public:
  // Blocks the calling thread until every token of `wait` is there, then pops them.
  virtual void acquire(int engine, uint8_t wait) = 0;
  // Whether every token of `wait` is there now (acquire would not block).
  virtual bool ready(int engine, uint8_t wait) const = 0;
  // Pushes a token to every engine of `signal`.
  virtual void push(int engine, uint8_t signal) = 0;
};

// Timed dependency tokens: counter per ordered engine pair. A token is
// pushed when its producer *completes* in simulated time; the functional
// core's own token queues (vector clocks for the hazard checker) run ahead.
class TokenBoard : public TokenIf {
 public:
  bool ready(int e, uint8_t wait) const override {
    for (int f = 0; f < kEngines; ++f)
      if (((wait >> f) & 1) && count_[f][e] == 0) return false;
    return true;
  }
  void pop(int e, uint8_t wait) {
    for (int f = 0; f < kEngines; ++f)
      if ((wait >> f) & 1) --count_[f][e];
  }
  void push(int e, uint8_t signal) override {
    for (int t = 0; t < kEngines; ++t)
      if ((signal >> t) & 1) ++count_[e][t];
    changed_.notify(sc_core::SC_ZERO_TIME);
  }
  void acquire(int e, uint8_t wait) override {
    while (!ready(e, wait)) sc_core::wait(changed_);
    pop(e, wait);
  }

 private:
  std::array<std::array<int, kEngines>, kEngines> count_{};
  sc_core::sc_event changed_;
};

struct UnitStats {
  uint64_t instructions = 0;
  double busy_ps = 0;
  std::map<std::string, double> stall_ps;  // reason -> time
};

// One busy interval on a trace track: an instruction on its engine's track
// (kind 0), or a transfer on a memory resource's track (1 read, 2 write) for
// the instruction at `pc` of `engine`.
struct Slice {
  int track;  // engines first (isa::Engine order), then memory resources
  uint32_t pc;
  double start_ps, dur_ps;
  uint8_t kind = 0;
  int engine = 0;
};

// Everything the units share: the functional core, parameters, recorder.
struct Context {
  Context() {
    for (int e = 0; e < kEngines; ++e) tracks.push_back(isa::name_of(static_cast<isa::Engine>(e)));
  }
  sim::FuncSim* sim = nullptr;
  timing::Params p;
  TokenBoard tokens;
  std::array<UnitStats, kEngines> units;
  std::vector<Slice> slices;
  bool record_slices = false;
  uint64_t macs = 0, gemm_macs = 0, sfu_work = 0;  // macs: both engines; gemm_macs: the GEMM's share
  std::exception_ptr error;  // first exception of any unit; the run stops
  std::array<uint64_t, kEngines> completed{}, dispatched{};
  bool halted = false;
  double run_start_ps = 0;  // this run's start: a unit idle since an earlier run counts from here

  // Trace tracks: the engines', then each memory resource's (Port).
  std::vector<std::string> tracks;
  int add_track(const std::string& name) {
    tracks.push_back(name);
    return int(tracks.size()) - 1;
  }

  sc_core::sc_time ps(double v) const { return sc_core::sc_time(v, sc_core::SC_PS); }
  double now_ps() const { return sc_core::sc_time_stamp().to_seconds() * 1e12; }
  void fail(std::exception_ptr e) {
    if (!error) error = e;
    sc_core::sc_stop();
  }
  // Waits until absolute time t (ps) if it lies ahead.
  void wait_until(double t) const {
    const double n = now_ps();
    if (t > n) sc_core::wait(sc_core::sc_time(t - n, sc_core::SC_PS));
  }
};

}  // namespace n3::sc
