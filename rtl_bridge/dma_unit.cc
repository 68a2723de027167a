#include "rtl_bridge/dma_unit.h"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "isa/verify.h"
#include "rtl_bridge/compare_histogram.h"
#include "rtl_bridge/dma_rtl.h"
#include "sim/systemc/engines.h"

namespace n3::rtl {

std::vector<DmaInsnRecord>& dma_rtl_records() {
  static std::vector<DmaInsnRecord>* r = new std::vector<DmaInsnRecord>;  // lives to exit, like the model
  return *r;
}

namespace {

using isa::Space;

const char* space_text(Space s) { return s == Space::DDR ? "ddr" : s == Space::L2 ? "l2" : "wbuf"; }

std::string view_text(const sim::View& v) {
  return "[" + std::to_string(v.rows) + "," + std::to_string(v.cols) + "] " + space_text(v.d.space) + " " +
         isa::dtype_text(v.d.dtype);
}

class RtlDmaUnit : public sc::DmaUnit, private DmaMemTiming {
 public:
  RtlDmaUnit(sc_core::sc_module_name n, sc::Context& c, const HwConfig& hw, const std::string& vcd,
             int64_t vcd_instructions)
      : sc::DmaUnit(n, c), rtl_("rtl", hw, vcd), shadow_(*this, 1, "rtl dma") {
    rtl_.waveform().stop_after(vcd_instructions);
  }

 protected:
  void before_exec(const sim::Issued& in) override {
    // What the engine reads, and dst as it was: bytes the engine does not
    // write (outside its strobes) must still compare equal.
    if (in.def->opcode == isa::Opcode::MEMCPY) shadow_.load(c_.sim->memory(), in.op("src"), in.pc);
    shadow_.load(c_.sim->memory(), in.op("dst"), in.pc);
  }

  Timed model(const sim::Issued& in) override {
    const double now = c_.now_ps(), clk = c_.p.core_ps();
    const sim::View& dst = in.op("dst");
    const bool copy = in.def->opcode == isa::Opcode::MEMCPY;
    streams_[0] = Stream();
    streams_[0].view = copy ? &in.op("src") : nullptr;
    streams_[1] = Stream();
    streams_[1].view = &dst;
    const DmaRun run = rtl_.run(in, shadow_.memory(), this);
    rtl_.waveform().instruction_done();
    const double end = c_.now_ps();
    inject(dst);
    compare(in);
    shadow_.store(dst, in.pc);  // equal to the functional core's: every byte from the RTL

    DmaInsnRecord rec;
    rec.pc = in.pc;
    rec.dyn = in.dyn;
    rec.what = isa::mnemonic(*in.def, *in.sub) + " " + (copy ? view_text(in.op("src")) + " -> " : std::string()) +
               view_text(dst);
    rec.rtl_cycles = double(run.cycles);
    // The model with the same memory answers: each stream's wait behind
    // other traffic (its start less the RTL's ask), occupancy and latency.
    rec.model_cycles = dma_model_cycles(c_.p, in, streams_[0].answer, streams_[1].answer);
    rec.mem_wait_cycles = double(run.mem_wait_cycles);
    rec.bytes = timing::view_bytes(dst);
    dma_rtl_records().push_back(rec);
    // N3_RTL_DMA_TRACE=1: one line per instruction (calibration work).
    static const bool trace = std::getenv("N3_RTL_DMA_TRACE") != nullptr;
    if (trace) {
      const timing::DmaReadDelay rd = timing::dma_read_delay_cycles(c_.p, in, streams_[0].answer);
      std::fprintf(stderr,
                   "rtl dma: #%llu pc %u %s: rtl %.0f (memory wait %.0f, %lld jobs; clocks: first/last read beat "
                   "%lld/%lld, first W %lld, last B %lld), model %.2f (engine %.0f, reads +%.0f, writes +%.0f), unit %.2f\n",
                   static_cast<unsigned long long>(rec.dyn), rec.pc, rec.what.c_str(), rec.rtl_cycles,
                   rec.mem_wait_cycles, static_cast<long long>(run.jobs), static_cast<long long>(run.first_r),
                   static_cast<long long>(run.last_r), static_cast<long long>(run.first_w),
                   static_cast<long long>(run.last_b), rec.model_cycles, timing::dma_cycles(c_.p, in), rd.total,
                   timing::dma_write_delay_cycles(c_.p, in, rd, streams_[1].answer), (end - now) / clk);
    }
    // The unit's own need: its clocks less those it waited on the memory.
    return {end, double(run.cycles - run.mem_wait_cycles) * clk, -1};
  }

 private:
  // DmaMemTiming: the instruction's reads are one transfer of its src view
  // and its writes one of its dst view, booked on the model's memory units
  // exactly as DmaUnit::model books them (EngineUnit::move: a DDR view over
  // timing.dma_hp_ports HP ports and the DDR channel, rounded up to whole
  // DDR bursts, then the DDR latency and the clock-domain crossing; an L2 or
  // WBUF view over one L2 port), from the moment the engine begins the
  // stream: so the stream pays the latency once, then the bandwidth, and
  // other engines' traffic shares the same resources. A burst's beats are
  // there once its share of the stream's occupancy has passed, plus the
  // latency.
  struct Stream {
    const sim::View* view = nullptr;
    bool booked = false;
    double start = 0;
    timing::DmaStream answer;  // the memory's answer (on once booked)
  };
  Stream streams_[2];  // reads, writes
  double read_share(Space s, double share) override { return at(streams_[0], s, share, false); }
  double write_share(Space s, double share) override { return at(streams_[1], s, share, true); }
  double at(Stream& st, Space s, double share, bool write) {
    require(st.view && st.view->d.space == s, "rtl dma: a burst outside the instruction's operand");
    if (!st.booked) {
      const double ask = c_.now_ps();
      const double end = move(*st.view, write, ask, c_.p.timing.dma_hp_ports.value);
      st.booked = true;
      st.start = last_start_ps_;
      st.answer.on = true;
      st.answer.queue_ps = std::max(0.0, st.start - ask);
      st.answer.latency_ps = s == Space::DDR ? timing::ddr_latency_ps(c_.p) : 0.0;
      st.answer.occupancy_ps = std::max(0.0, end - st.answer.latency_ps - st.start);
    }
    return st.start + st.answer.occupancy_ps * share + st.answer.latency_ps;
  }

  // N3_RTL_DMA_INJECT=k flips the lowest bit of dst's first byte after the
  // k-th DMA instruction (from 0) the RTL runs in this process, so a test
  // can show that a difference is caught and reported.
  void inject(const sim::View& dst) {
    static const char* k = std::getenv("N3_RTL_DMA_INJECT");
    if (!k || !dst.present() || int64_t(dma_rtl_records().size()) != std::atoll(k)) return;
    sim::SpaceMemory& m = shadow_.memory().space(dst.d.space);
    uint8_t b;
    m.read(dst.row_addr(0), &b, 1);
    b ^= 1u;
    m.write(dst.row_addr(0), &b, 1);
  }

  // dst's bytes, row by row (data, then the scale record), against the
  // functional core's; the first difference stops the run.
  void compare(const sim::Issued& in) {
    const sim::View& y = in.op("dst");
    if (!y.present()) return;
    const sim::Memory& ref = c_.sim->memory();
    sim::Memory& got = shadow_.memory();
    std::vector<uint8_t> a, b;
    for (int64_t r = 0; r < y.rows; ++r) {
      for (int part = 0; part < 2; ++part) {
        const int64_t n = part == 0 ? y.row_bytes() : (y.scaled() ? y.scale_bytes() : 0);
        if (n <= 0) continue;
        a.resize(size_t(n));
        b.resize(size_t(n));
        if (part == 0) {
          sim::read_row_bytes(got, y, r, a.data());
          sim::read_row_bytes(ref, y, r, b.data());
        } else {
          sim::read_scale_record(got, y, r, a.data());
          sim::read_scale_record(ref, y, r, b.data());
        }
        const auto d = std::mismatch(a.begin(), a.end(), b.begin());
        if (d.first == a.end()) continue;
        const int64_t at = d.first - a.begin();
        std::string name = c_.sim->program().name_of(isa::SymKind::Desc, y.slot);
        if (name.empty()) name = "desc " + std::to_string(y.slot);
        char buf[200];
        if (part == 0) {
          // The element holding the byte (INT4: two per byte).
          const int64_t bits = isa::dtype_bits(y.d.dtype), c = at * 8 / bits;
          std::snprintf(buf, sizeof buf, "element [%lld, %lld] (byte %lld of the row): rtl 0x%02x, functional 0x%02x",
                        static_cast<long long>(r), static_cast<long long>(c), static_cast<long long>(at), *d.first,
                        *d.second);
        } else {
          std::snprintf(buf, sizeof buf, "scale record of row %lld, byte %lld: rtl 0x%02x, functional 0x%02x",
                        static_cast<long long>(r), static_cast<long long>(at), *d.first, *d.second);
        }
        throw DmaMismatch("rtl dma: instruction " + std::to_string(in.pc) + " (" + isa::mnemonic(*in.def, *in.sub) +
                          ", dynamic #" + std::to_string(in.dyn) + "), dst '" + name + "' " + view_text(y) + ", " +
                          buf);
      }
    }
  }

  DmaRtl rtl_;
  Shadow shadow_;
};

}  // namespace

void use_rtl_dma(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  const HwConfig h = hw;
  o->dma_unit.make = [h, vcd, vcd_instructions](sc_core::sc_module_name n,
                                                sc::Context& c) -> std::unique_ptr<sc::DmaUnit> {
    return std::make_unique<RtlDmaUnit>(n, c, h, vcd, vcd_instructions);
  };
  o->dma_unit.name = "rtl";
}

void print_dma_comparison(const std::vector<DmaInsnRecord>& recs, std::FILE* out) {
  if (recs.empty()) {
    std::fprintf(out, "rtl dma: no DMA instructions ran\n");
    return;
  }
  CompareHistogram hist({0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5}, CompareHistogram::Labels::Short);
  double rtl = 0, model = 0, wait = 0, worst = -1;
  int64_t within = 0, bytes = 0, slower = 0;
  const DmaInsnRecord* w = nullptr;
  for (const DmaInsnRecord& r : recs) {
    const double e = hist.add(r.rtl_cycles, r.model_cycles);
    within += e <= 0.02;
    slower += r.rtl_cycles > r.model_cycles;
    rtl += r.rtl_cycles;
    model += r.model_cycles;
    wait += r.mem_wait_cycles;
    bytes += r.bytes;
    if (e > worst) worst = e, w = &r;
  }
  std::fprintf(out, "rtl dma: %zu instructions compared byte for byte (%lld dst bytes), RTL %.0f cycles (%.0f waiting on "
                    "memory), model %.0f cycles (%+.3f%%)\n",
               recs.size(), static_cast<long long>(bytes), rtl, wait, model, rtl > 0 ? 100.0 * (model - rtl) / rtl : 0.0);
  std::fprintf(out, "rtl dma: per-instruction |model - rtl| / rtl (the model given the memory answers the RTL got):\n");
  hist.print(out);
  std::fprintf(out, "rtl dma: %lld within 2%%, %lld beyond; RTL slower than the model on %lld\n",
               static_cast<long long>(within), static_cast<long long>(int64_t(recs.size()) - within),
               static_cast<long long>(slower));
  std::fprintf(out, "rtl dma: worst %.3f%%: instruction %u (%s, dynamic #%llu): rtl %.0f (memory wait %.0f), model %.0f cycles\n",
               100.0 * worst, w->pc, w->what.c_str(), static_cast<unsigned long long>(w->dyn), w->rtl_cycles,
               w->mem_wait_cycles, w->model_cycles);
}

}  // namespace n3::rtl
