#include "rtl_bridge/sfu_rtl.h"

#include <algorithm>
#include <cstdio>
#include <type_traits>
#include <utility>

// Verilator's SystemC headers are not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_sfu.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include "base/error.h"
#include "rtl_bridge/sfu_vectors.h"

namespace n3::rtl {

namespace {

// The C++ type Verilator gives a port (bool, uint32_t, uint64_t or sc_bv<N>
// by its width, which depends on LANES), and lane access to it.
template <class P>
struct PortData;
template <class T>
struct PortData<sc_core::sc_in<T>> {
  using type = T;
};
template <class T>
struct PortData<sc_core::sc_out<T>> {
  using type = T;
};
template <class P>
using port_t = typename PortData<std::remove_reference_t<P>>::type;

template <class T>
void set_field(T& v, int lsb, int width, uint32_t x) {
  if constexpr (std::is_same_v<T, bool>) {
    v = x & 1;
  } else if constexpr (std::is_integral_v<T>) {
    const T mask = width >= int(sizeof(T) * 8) ? ~T(0) : ((T(1) << width) - 1);
    v = (v & ~(mask << lsb)) | ((T(x) & mask) << lsb);
  } else {
    v.range(lsb + width - 1, lsb) = x;
  }
}
template <class T>
uint32_t get_field(const T& v, int lsb, int width) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1u : 0u;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<uint32_t>((v >> lsb) & ((uint64_t(1) << width) - 1));
  } else {
    return static_cast<uint32_t>(v.range(lsb + width - 1, lsb).to_uint());
  }
}

void check(bool ok, const std::string& why) {
  if (!ok) throw Error("sfu (RTL): " + why);
}

}  // namespace

struct SfuRtl::Ports {
  using Mask = port_t<decltype(std::declval<Vn3_sfu&>().in_mask)>;
  using Data = port_t<decltype(std::declval<Vn3_sfu&>().in_a)>;
  sc_core::sc_signal<bool> rst_n{"rst_n"}, cmd_valid{"cmd_valid"}, cmd_ready{"cmd_ready"}, cmd_hasb{"cmd_hasb"},
      in_valid{"in_valid"},
      in_ready{"in_ready"}, in_last{"in_last"}, out_valid{"out_valid"}, out_ready{"out_ready"}, busy{"busy"};
  sc_core::sc_signal<uint32_t> cmd_func{"cmd_func"}, cmd_k{"cmd_k"}, cmd_fmt{"cmd_fmt"};
  sc_core::sc_signal<Mask> in_mask{"in_mask"}, out_mask{"out_mask"};
  sc_core::sc_signal<Data> in_a{"in_a"}, in_b{"in_b"}, in_c{"in_c"}, out_y{"out_y"};
};

SfuRtl::SfuRtl(sc_core::sc_module_name n, const HwConfig& hw, const std::string& vcd_path)
    : sc_module(n), clock_(sc_core::sc_time(1e6 / hw.clocks.core_mhz.value, sc_core::SC_PS)), wave_(vcd_path) {
  char has[32];
  std::snprintf(has, sizeof has, "%g", hw.compute.sfu_elems_per_clk.value);
  require(hw.compute.sfu_elems_per_clk.value == kLanes,
          "the RTL SFU was built for " + std::to_string(kLanes) + " elements per clock; hardware '" + hw.name +
              "' has compute.sfu_elems_per_clk " + has + " (rebuild with cmake -DN3_RTL_HW=<its file>)");
  p_ = std::make_unique<Ports>();
  dut_ = std::make_unique<Vn3_sfu>("sfu");
  Vn3_sfu& d = *dut_;
  Ports& p = *p_;
  d.clk(clock_.clk());
  d.rst_n(p.rst_n);
  d.cmd_valid(p.cmd_valid);
  d.cmd_ready(p.cmd_ready);
  d.cmd_func(p.cmd_func);
  d.cmd_k(p.cmd_k);
  d.cmd_fmt(p.cmd_fmt);
  d.cmd_hasb(p.cmd_hasb);
  d.in_valid(p.in_valid);
  d.in_ready(p.in_ready);
  d.in_mask(p.in_mask);
  d.in_last(p.in_last);
  d.in_a(p.in_a);
  d.in_b(p.in_b);
  d.in_c(p.in_c);
  d.out_valid(p.out_valid);
  d.out_ready(p.out_ready);
  d.out_mask(p.out_mask);
  d.out_y(p.out_y);
  d.busy(p.busy);
  // Low for one clock: the unit's reset is synchronous and one edge clears
  // every valid bit; released at that clock's falling edge, so a program
  // whose first instruction is a CVO (sfu_setup_cycles 1) does not wait.
  clock_.start(p.rst_n, {1, false, GatedClock::Edge::kNegedge}, total_cycles_);
}

SfuRtl::~SfuRtl() = default;

void SfuRtl::start_of_simulation() {
  wave_.open([this](VerilatedFstC* v) { dut_->trace(v, 99); });
}

void SfuRtl::end_of_simulation() { wave_.flush(); }

void SfuRtl::set_stalls(double p, uint64_t seed) {
  stall_ = p;
  if (p > 0) stall_rng_.seed(seed);  // (seeding costs more than a short stream)
}

SfuRun SfuRtl::run(isa::CvoFunc f, uint32_t k, num::Fmt fmt, const std::vector<SfuElem>& in,
                   std::vector<uint32_t>& out, const std::vector<int64_t>& rows, bool hasb) {
  // The beats: runs of up to kLanes elements, a row's first from a fresh beat.
  struct Beat {
    size_t at, n;
    bool last;  // ends a row's pass (row functions) / carries results (element-wise: every beat)
  };
  const int passes = sfu_passes(f);
  std::vector<Beat> beats;
  size_t results = in.size();
  if (rows.empty()) {
    for (size_t at = 0; at < in.size(); at += kLanes) beats.push_back({at, std::min<size_t>(kLanes, in.size() - at), true});
  } else {
    size_t at = 0;
    for (int64_t len : rows) {
      check(len >= 1, "a row of " + std::to_string(len) + " elements");
      for (int p = 0; p < passes; ++p)
        for (size_t j = 0; j < size_t(len); j += kLanes)
          beats.push_back({at + j, std::min<size_t>(kLanes, size_t(len) - j), j + kLanes >= size_t(len)});
      at += size_t(len);
    }
    check(at == in.size(), "the rows do not cover the elements");
    if (sfu_is_reduction(f)) results = rows.size();
  }
  out.assign(results, 0);
  const GatedClock::Run clocked = clock_.run();  // the clock stops when the run ends, also on an exception
  Ports& p = *p_;
  auto negedge = [this] {
    sc_core::wait(clock_.clk().negedge_event());
    ++total_cycles_;
  };
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto stall = [&] { return stall_ > 0 && coin(stall_rng_) < stall_; };
  const sc_core::sc_time quarter = clock_.period() / 4;
  bool cmd_sent = false, cmd_fire = false, in_fire = false, out_fire = false, in_valid = false;
  size_t next = 0, got = 0;
  int64_t first_in = -1, first_last_in = -1, first_out = -1, last_out = -1, active = 0;
  typename Ports::Mask out_mask{};
  typename Ports::Data out_y{}, a{}, b{}, c{};
  for (int64_t m = 0;; ++m) {
    negedge();
    // The transfers of the rising edge just past.
    if (cmd_fire) {
      cmd_sent = true;
      p.cmd_valid = false;
    }
    if (in_fire) {
      if (first_in < 0) first_in = m;
      // (The beat whose results come first: a reduction's row's last, else the first.)
      if (first_last_in < 0 && (beats[next].last || !sfu_is_reduction(f))) first_last_in = m;
      ++next;
      in_valid = false;
    }
    if (out_fire) {
      if (first_out < 0) first_out = m;
      last_out = m;
      for (int l = 0; l < kLanes; ++l)
        if (get_field(out_mask, l, 1)) {
          check(got < results, "more results than " + std::string(rows.empty() ? "elements" : "rows"));
          out[got++] = get_field(out_y, 32 * l, 32);
        }
    }
    cmd_fire = in_fire = out_fire = false;
    if (got == results && cmd_sent) break;

    // Inputs for the coming edge. A valid, once raised, stays until taken.
    if (!cmd_sent) {
      p.cmd_func = static_cast<uint32_t>(f);
      p.cmd_k = k;
      p.cmd_fmt = static_cast<uint32_t>(fmt);
      p.cmd_hasb = hasb;
      p.cmd_valid = true;
    }
    if (cmd_sent && !in_valid && next < beats.size() && !stall()) {
      const Beat& bt = beats[next];
      typename Ports::Mask mask{};
      for (int l = 0; l < kLanes; ++l) {
        const bool on = size_t(l) < bt.n;
        const SfuElem e = on ? in[bt.at + size_t(l)] : SfuElem{};
        set_field(mask, l, 1, on ? 1u : 0u);
        set_field(a, 32 * l, 32, e.a);
        set_field(b, 32 * l, 32, e.b);
        set_field(c, 32 * l, 32, e.c);
      }
      p.in_mask = mask;
      p.in_last = !rows.empty() && bt.last;
      p.in_a = a;
      p.in_b = b;
      p.in_c = c;
      in_valid = true;
    }
    p.in_valid = in_valid;
    p.out_ready = !stall();
    sc_core::wait(quarter);  // the unit's combinational outputs settle
    // The transfers of the coming rising edge.
    cmd_fire = p.cmd_valid.read() && p.cmd_ready.read();
    in_fire = in_valid && p.in_ready.read();
    out_fire = p.out_valid.read() && p.out_ready.read();
    if (out_fire) {
      out_mask = p.out_mask.read();
      out_y = p.out_y.read();
    }
    if (cmd_fire || in_fire || out_fire) active = m;
    check(m - active < 100000, "the unit hangs: no transfer for 100000 clocks");
  }
  p.in_valid = false;
  SfuRun r;
  r.beats = static_cast<int64_t>(beats.size());
  if (results) {
    r.cycles = last_out - first_in + 1;
    r.latency = first_out - first_last_in;
  }
  return r;
}

}  // namespace n3::rtl
