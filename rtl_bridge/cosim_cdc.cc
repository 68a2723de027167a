// `n3 cosim --unit cdc`: the async FIFO of the HP-port-to-core clock-domain
// crossing (rtl/cdc/n3_cdc_fifo.sv) against a C++ queue, and the measurement
// of what the crossing costs (docs/rtl_cdc.md, "Clock-domain crossing").
//
// The FIFO has two clocks. The Verilated model has no timing of its own
// (Verilator 5.006 without --timing): this bench drives both clocks from a
// time wheel in ps, each at its period, with a chosen phase between them,
// and advances SystemC from one edge to the next. At each edge it first
// reads the handshakes as the flops will sample them (the values settled
// since the last edge), then moves the clock, runs the model 1 ps past the
// edge, and only then drives the next inputs: edges fall on even ps and
// inputs change on odd ps, so no input ever changes with an edge.
//
// Vector i is one stream (its clocks, phase and traffic depend only on
// (seed, i)): random words, written in random bursts and gaps, read with
// random back-pressure. Every word must come out once, in order, unchanged
// (the reference is a std::deque of the words accepted and not yet read);
// a word accepted beyond DEPTH in flight is an overflow, a word read with
// none in flight an underflow; either is a mismatch.
//
// Clock classes: the hardware file's AXI -> core (the DDR read path: the
// crossing that timing.cdc_sync_cycles charges a DDR stream's first beat)
// and core -> AXI (the write path), 1:1, slow -> fast and fast -> slow
// (random periods). In a quarter of the vectors the writer is always valid
// and the reader always ready: the sustained throughput.
//
// Measured: the latency from the write edge that puts a word into an empty
// FIFO (every earlier word already read) to the read edge after which the
// word is visible (rvalid), in ps, AXI clocks and core clocks; per class a
// histogram (report classes "latency.<class>.<bin>", tenths of a
// destination clock), and for the AXI -> core direction a cycle-table row:
// the RTL's latency in core clocks against what the model charges a DDR
// stream's first beat (timing::cdc_latency_ps, sim/systemc/timing.h).
//
// N3_COSIM_CDC_INJECT=1 flips one bit of the 5th word read, to show a wrong
// word is caught.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_cdc_fifo.h>
#include <systemc.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "golden/hw_config.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/waveform.h"
#include "sim/systemc/npu.h"
#include "sim/systemc/timing.h"

namespace n3::rtl {
namespace {

constexpr int kDepth = 16;  // n3_cdc_fifo's DEPTH as rtl/cdc/unit.cmake builds it

struct Bench {
  sc_core::sc_signal<bool> wclk{"wclk"}, wrst_n{"wrst_n"}, wvalid{"wvalid"}, wready{"wready"};
  sc_core::sc_signal<bool> rclk{"rclk"}, rrst_n{"rrst_n"}, rvalid{"rvalid"}, rready{"rready"};
  sc_core::sc_signal<uint32_t> wdata{"wdata"}, rdata{"rdata"};
  Vn3_cdc_fifo top{"n3_cdc_fifo"};
  Bench() {
    top.wclk(wclk);
    top.wrst_n(wrst_n);
    top.wvalid(wvalid);
    top.wready(wready);
    top.wdata(wdata);
    top.rclk(rclk);
    top.rrst_n(rrst_n);
    top.rvalid(rvalid);
    top.rready(rready);
    top.rdata(rdata);
  }
};

// Latency statistics of one class: in ps and in clocks of the destination
// (read) side, whose period varies from stream to stream in the random classes.
struct Latency {
  int64_t n = 0;
  double sum = 0, min = std::numeric_limits<double>::infinity(), max = 0;
  double dsum = 0, dmin = std::numeric_limits<double>::infinity(), dmax = 0;
  void add(double ps, double dest_ps) {
    ++n;
    sum += ps;
    min = std::min(min, ps);
    max = std::max(max, ps);
    const double d = ps / dest_ps;
    dsum += d;
    dmin = std::min(dmin, d);
    dmax = std::max(dmax, d);
  }
};

struct Throughput {
  double words = 0, write_edges = 0, read_edges = 0, axi_edges = 0;
};

// The time wheel's clock: SystemC's time in ps, advanced edge to edge, and
// the reset between streams.
class Wheel {
 public:
  Wheel(Bench& b, int64_t& now_ps) : b_(b), now_(now_ps) {}

  // Advances to absolute time t (ps): everything before t has run.
  void advance_to(int64_t t) {
    if (t > now_) sc_core::sc_start(sc_core::sc_time(double(t - now_), sc_core::SC_PS));
    now_ = t;
  }

  void reset() {
    b_.wclk.write(false);
    b_.rclk.write(false);
    b_.wvalid.write(false);
    b_.rready.write(false);
    b_.wrst_n.write(false);
    b_.rrst_n.write(false);
    advance_to(now_ + 1000);
    b_.wrst_n.write(true);
    b_.rrst_n.write(true);
    advance_to(now_ + 1000 + (now_ & 1));  // the stream's edges fall on even ps
  }

  Bench& b_;
  int64_t& now_;
};

}  // namespace

CosimReport cosim_cdc(const CosimOptions& o, std::ostream& log) {
  static bool elaborated = false;
  require(!elaborated, "n3 cosim --unit cdc: SystemC elaborates once per process (run one unit per n3 cosim)");
  elaborated = true;
  const HwConfig hw = load_hw_config(o.hw);
  const timing::Params params = timing::load_params(hw);
  // Every clock edge falls on an even ps and every input changes 1 ps after
  // an edge (an odd ps), so no input ever changes with an edge: periods,
  // phases and high times are even (a period rounds to the nearest even ps:
  // lpddr5x-edge's 533 MHz port clock is 1876 ps for 1876.17).
  auto even = [](double ps) { return 2 * std::llround(ps / 2); };
  const int64_t axi_ps = even(hw.axi_ps()), core_ps = even(hw.core_ps());
  const double model_ps = timing::cdc_latency_ps(params);  // what the model charges a DDR stream's first beat
  const char* inj = std::getenv("N3_COSIM_CDC_INJECT");
  const bool inject = inj && std::string(inj) == "1";

  sc::quiet_reports();
  Waveform wave(o.vcd);  // before the model: it turns Verilator's tracing on
  auto bench = std::make_unique<Bench>();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  wave.open([&](VerilatedFstC* f) { bench->top.trace(f, 99); });
  int64_t now = 0;
  Wheel s(*bench, now);
  Bench& b = *bench;

  CosimReport r;
  std::map<std::string, Latency> lat;
  std::map<std::string, Throughput> thr;
  int64_t reads_total = 0, edges_total = 0;
  for (const int64_t index : shard_indices(o)) {
    std::mt19937_64 g = vector_rng(o.seed, index);
    auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); };
    // The clocks of this stream (ps).
    static const char* kClasses[] = {"axi>core", "axi>core", "axi>core", "core>axi", "core>axi", "1:1", "slow>fast",
                                     "fast>slow"};
    const std::string cls = kClasses[uni(0, 7)];
    int64_t pw = 0, pr = 0;
    if (cls == "axi>core") pw = axi_ps, pr = core_ps;
    else if (cls == "core>axi") pw = core_ps, pr = axi_ps;
    else if (cls == "1:1") pw = pr = 2 * uni(500, 3000);
    else {
      const int64_t a = 2 * uni(500, 3000), c = 2 * uni(500, 3000);
      const int64_t fast = std::min(a, c), slow = std::max(a, c) + 2 * (a == c);
      pw = cls == "slow>fast" ? slow : fast;
      pr = cls == "slow>fast" ? fast : slow;
    }
    const bool hw_dir = cls == "axi>core" || cls == "core>axi";
    // Phase: the read clock's first rise after the write clock's; 1 in 8
    // streams put it on a write edge (the edges coincide).
    const int64_t phase = uni(0, 7) == 0 ? 0 : 2 * uni(0, pr / 2 - 1);
    const bool stream_mode = uni(0, 3) == 0;  // writer always valid, reader always ready
    const int64_t words = stream_mode ? 128 : uni(1, 96);
    const int ready_pct = stream_mode ? 100 : int(std::vector<int>{100, 75, 50, 25}[size_t(uni(0, 3))]);
    ++r.classes["stream." + cls + (stream_mode ? ".throughput" : "")];

    s.reset();
    const int64_t t0 = now;
    int64_t next_wr = t0 + pw, next_rr = t0 + pw + phase;  // rising edges
    int64_t next_wf = -1, next_rf = -1;                      // falling edges (-1: none due)
    std::deque<uint32_t> ref;
    int64_t pushed = 0, popped = 0, gap = 0, burst = 0;
    int64_t last_r_edge = -1, pending_w = -1;  // write edge into an empty FIFO awaiting visibility
    int64_t first_push = -1, last_push = -1, first_pop = -1, last_pop = -1;
    std::string bad;
    bool wv = false;
    uint32_t wd = 0;
    int64_t idle_events = 0, after_end = 0;
    while (bad.empty()) {
      const int64_t t = std::min({next_wr, next_rr, next_wf < 0 ? INT64_MAX : next_wf, next_rf < 0 ? INT64_MAX : next_rf});
      s.advance_to(t);
      // rvalid is a read-domain register: it shows the last read edge's state.
      if (pending_w >= 0 && b.rvalid.read()) {
        const double ps = double(last_r_edge - pending_w);
        lat[cls].add(ps, double(pr));
        const int64_t bin = int64_t(std::floor(ps * 10 / double(pr)));
        char key[64];
        std::snprintf(key, sizeof key, "latency.%s.%03lld", cls.c_str(), static_cast<long long>(bin));
        ++r.classes[key];
        // The model charges the read path's crossing (a DDR stream's first
        // beat into the core): the AXI -> core row, in core clocks.
        if (cls == "axi>core") r.cycles["latency axi>core (core clocks)"].add(ps / double(pr), model_ps / double(pr));
        pending_w = -1;
      }
      const bool rise_w = t == next_wr, rise_r = t == next_rr;
      edges_total += rise_w + rise_r;  // the clocks simulated, both domains
      // Sample the handshakes as the flops will see them at this edge.
      bool do_read = false, do_write = false;
      if (rise_r && b.rready.read() && b.rvalid.read()) do_read = true;
      if (rise_w && wv && b.wready.read()) do_write = true;
      if (do_read) {
        uint32_t got = b.rdata.read();
        if (inject && popped == 4) got ^= 1u;
        if (ref.empty()) bad = "underflow: a word read with none in flight";
        else if (got != ref.front()) {
          char line[128];
          std::snprintf(line, sizeof line, "word %lld: rtl 0x%08x expected 0x%08x", static_cast<long long>(popped), got,
                        ref.front());
          bad = line;
        } else ref.pop_front();
        ++popped;
        ++reads_total;
        if (first_pop < 0) first_pop = t;
        last_pop = t;
      }
      if (do_write) {
        if (ref.size() >= size_t(kDepth)) bad = "overflow: a word accepted with DEPTH words in flight";
        // Into an empty FIFO: every earlier word read (a read at this same
        // edge counts; its pointer and this one cross independently).
        if (ref.empty() && pending_w < 0) pending_w = t;
        ref.push_back(wd);
        ++pushed;
        if (first_push < 0) first_push = t;
        last_push = t;
        wv = false;
      }
      if (rise_r) last_r_edge = t;
      // Move the clocks.
      if (rise_w) b.wclk.write(true), next_wf = t + (pw / 2 & ~int64_t(1)), next_wr += pw;
      if (rise_r) b.rclk.write(true), next_rf = t + (pr / 2 & ~int64_t(1)), next_rr += pr;
      if (t == next_wf) b.wclk.write(false), next_wf = -1;
      if (t == next_rf) b.rclk.write(false), next_rf = -1;
      s.advance_to(t + 1);  // the edge has run: the flops hold their new values
      // The next inputs, 1 ps after the edge.
      if (rise_w && !wv && pushed < words) {
        if (stream_mode) wv = true;
        else if (burst > 0) --burst, wv = true;
        else if (gap > 0) --gap;
        else {
          burst = uni(0, 15);
          const int64_t k = uni(0, 9);
          gap = k < 3 ? 0 : k < 7 ? uni(1, 4) : uni(5, 24);  // long gaps let the FIFO drain: latency samples
          wv = true;
        }
        if (wv) wd = uint32_t(g()) ^ uint32_t(pushed);
      }
      if (rise_w) {  // valid drops after the last word too
        b.wvalid.write(wv);
        b.wdata.write(wd);
      }
      if (rise_r) b.rready.write(int(uni(0, 99)) < ready_pct);
      // End: every word written and read, then 8 more read clocks in which
      // no word may appear.
      if (pushed == words && ref.empty() && pending_w < 0) {
        if (b.rvalid.read()) bad = "a word appeared after the stream's last";
        if (rise_r && ++after_end > 8) break;
      }
      // A stall the traffic cannot explain (a reader 25 % ready at the
      // slowest ratio frees a slot within a few hundred edges).
      if (!do_read && !do_write) {
        if (++idle_events > 4000) bad = "no progress for 4000 clock edges";
      } else idle_events = 0;
    }
    if (bad.empty() && popped != words) bad = "read " + std::to_string(popped) + " of " + std::to_string(words) + " words";
    if (stream_mode && bad.empty()) {
      Throughput& h = thr[cls];
      h.words += double(words);
      h.write_edges += double((last_push - first_push) / pw + 1);
      h.read_edges += double((last_pop - first_pop) / pr + 1);
      // The AXI side: the writer on the read path, the reader on the write path.
      const double axi_edges =
          cls == "core>axi" ? double((last_pop - first_pop) / pr + 1) : double((last_push - first_push) / pw + 1);
      h.axi_edges += axi_edges;
      // The model moves one beat per AXI clock through a port (DdrHp's port
      // occupancy, hp_port_bits / 8 bytes x axi_mhz): the FIFO must keep up.
      if (hw_dir) r.cycles["throughput " + cls + " (words/AXI clock)"].add(double(words) / axi_edges, 1.0);
    }
    ++r.run;
    if (!bad.empty()) {
      ++r.mismatches;
      if (r.first_mismatch_index < 0 || index < r.first_mismatch_index) {
        r.first_mismatch_index = index;
        char line[320];
        std::snprintf(line, sizeof line, "vector %lld (%s, write %lld ps, read %lld ps, phase %lld ps): %s",
                      static_cast<long long>(index), cls.c_str(), static_cast<long long>(pw),
                      static_cast<long long>(pr), static_cast<long long>(phase), bad.c_str());
        r.first_mismatch = line;
      }
    }
  }
  r.classes["words"] = reads_total;
  r.rtl_cycles = double(edges_total);
  wave.close();
  b.top.final();

  // The measurement, for this shard.
  char line[256];
  log << "cosim cdc: " << hw.name << ": AXI " << axi_ps << " ps, core " << core_ps << " ps; the model charges "
      << model_ps << " ps (timing.cdc_sync_cycles " << params.timing.cdc_sync_cycles.value << " core clocks)\n";
  std::snprintf(line, sizeof line, "  %-10s %7s %27s %24s %24s\n", "latency", "samples", "ps min/mean/max",
                "AXI clocks min/mean/max", "core clocks min/mean/max");
  log << line;
  for (const auto& [k, l] : lat) {
    if (!l.n) continue;
    const double mean = l.sum / double(l.n);
    std::snprintf(line, sizeof line, "  %-10s %7lld %8.0f %8.1f %8.0f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f\n", k.c_str(),
                  static_cast<long long>(l.n), l.min, mean, l.max, l.min / hw.axi_ps(), mean / hw.axi_ps(),
                  l.max / hw.axi_ps(), l.min / hw.core_ps(), mean / hw.core_ps(), l.max / hw.core_ps());
    log << line;
    std::snprintf(line, sizeof line, "  %-10s %7s destination clocks min/mean/max %.3f / %.3f / %.3f\n", "", "",
                  l.dmin, l.dsum / double(l.n), l.dmax);
    log << line;
    std::snprintf(line, sizeof line, "cdc latency %s: max %.4f destination clocks, mean %.4f\n", k.c_str(),
                  l.dmax, l.dsum / double(l.n));
    log << line;
  }
  for (const auto& [k, h] : thr) {
    // Words per AXI clock: the hardware's two directions only (the random
    // classes' clocks are not the AXI's).
    const bool axi = k == "axi>core" || k == "core>axi";
    std::snprintf(line, sizeof line, "  throughput %-10s %5.0f words: %.3f words/write clock, %.3f words/read clock%s",
                  k.c_str(), h.words, h.words / h.write_edges, h.words / h.read_edges, axi ? ", " : "\n");
    log << line;
    if (axi) {
      std::snprintf(line, sizeof line, "%.3f words/AXI clock\n", h.words / h.axi_edges);
      log << line;
    }
  }
  return r;
}

}  // namespace n3::rtl
