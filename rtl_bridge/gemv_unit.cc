#include "rtl_bridge/gemv_unit.h"

#include <algorithm>
#include <cstdlib>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "rtl_bridge/compare_histogram.h"
#include "rtl_bridge/gemv_rtl.h"
#include "rtl_bridge/shadow.h"
#include "sim/systemc/engines.h"

namespace n3::rtl {

std::vector<GemvInsnRecord>& gemv_rtl_records() {
  static std::vector<GemvInsnRecord>* r = new std::vector<GemvInsnRecord>;  // lives to exit, like the model
  return *r;
}

namespace {

using isa::Space;

std::string shape_text(const sim::View& v) { return "[" + std::to_string(v.rows) + "," + std::to_string(v.cols) + "]"; }

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class RtlGemvUnit : public sc::MacUnit {
 public:
  SC_HAS_PROCESS(RtlGemvUnit);
  RtlGemvUnit(sc_core::sc_module_name n, sc::Context& c, const HwConfig& hw, const std::string& vcd,
              int64_t vcd_instructions)
      : sc::MacUnit(n, c, 2), rtl_("rtl", hw, vcd), feed_(*this), shadow_(*this, 2, "rtl gemv") {
    rtl_.waveform().stop_after(vcd_instructions);
    SC_THREAD(feed_thread);
  }

 protected:
  void before_exec(const sim::Issued& in) override {
    // The shadow memory holds what the engine reads: the operands as they
    // are before the functional core executes the instruction.
    for (const char* f : {"src", "w"}) shadow_.load(c_.sim->memory(), in.op(f), in.pc);
  }

  // No weight prefetch (timing.wbuf_prefetch_tiles): the bridge streams an
  // instruction's tiles only once the RTL engine has it; prefetched tiles
  // would need the engine's weight port fed ahead of its command.
  void before_tokens(const sim::Issued&) override {}

  Timed model(const sim::Issued& in) override {
    const timing::Params& p = c_.p;
    const double now = c_.now_ps(), clk = p.core_ps();
    c_.macs += static_cast<uint64_t>(timing::insn_macs(in));
    const timing::GemvCycles g = timing::gemv_cycles(p, timing::gemv_shape(in, p.numerics.formats.bfp_block));
    // Activations in through an L2 port; the engine's own activation load
    // stands for the read, the booking for the port's occupancy.
    const double x_ready = move(in.op("src"), false, now + g.setup * clk, 1);
    start_stream(in, now, now + g.setup * clk);
    const double t0 = c_.now_ps();
    GemvRun run = rtl_.run(in, shadow_.memory(), feed_);
    rtl_.waveform().instruction_done();
    inject(run);
    const double rtl_end = c_.now_ps();
    feed_.consumed_rows(in.op("w").rows);
    while (booked_ < tiles_.size()) sc_core::wait(booked_event_);  // the stream's last bookings

    compare(in, run);
    // The engine's results into the shadow, then through the debug transport.
    const sim::View& y = in.op("dst");
    for (int64_t r = 0; r < y.rows; ++r) sim::write_row(shadow_.memory(), y, r, run.out.data() + r * y.cols);
    shadow_.store(y, in.pc);
    const double end = move(in.op("dst"), true, rtl_end, 1);

    // The timing model's prediction for the same tile arrivals.
    // As MacUnit: the MACs start once the activations are in after setup,
    // then follow the tiles (or wait for on-chip weights), then drain.
    const double start = std::max(x_ready, now + (g.setup + g.act) * clk);
    double model_end;
    if (!ddr_stream_ && !w_on_l2_) {
      model_end = start + (g.compute + g.drain) * clk;
    } else {
      std::vector<std::pair<double, int64_t>> arrivals;
      if (ddr_stream_)
        for (const Tile& t : tiles_) arrivals.push_back({t.landed_ps, t.bytes});
      else
        arrivals = timing::rows_landing(rows_, w_start_ps_, w_ready_ps_, rows_);
      for (auto& a : arrivals) a.first = timing::on_clock(a.first, now, clk);
      model_end =
          timing::mac_stream_end_ps(start, arrivals, g.compute * clk, g.land_to_mac * clk, g.row_work * clk) + g.drain * clk;
    }
    GemvInsnRecord rec;
    rec.pc = in.pc;
    rec.dyn = in.dyn;
    rec.what = isa::mnemonic(*in.def, *in.sub) + " " + shape_text(in.op("src")) + "x" + shape_text(in.op("w"));
    // The driver samples the engine's outputs at falling edges: the last
    // result was there at the rising edge half a clock before.
    rec.rtl_cycles = (rtl_end - t0) / clk - 0.5;
    rec.model_cycles = (model_end - now) / clk;
    rec.stall_cycles = double(run.weight_stall_cycles);
    gemv_rtl_records().push_back(rec);
    // N3_RTL_GEMV_TRACE=1: one line per instruction (calibration work).
    static const bool trace = std::getenv("N3_RTL_GEMV_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "rtl gemv: #%llu pc %u %s: rtl %.2f (stall %.0f), model %.2f; setup %.0f act %.0f compute %.0f drain %.0f; %s weights, %zu tiles, first landed +%.0f, last +%.0f\n",
                   static_cast<unsigned long long>(rec.dyn), rec.pc, rec.what.c_str(), rec.rtl_cycles, rec.stall_cycles,
                   rec.model_cycles, g.setup, g.act, g.compute, g.drain, ddr_stream_ ? "ddr" : "on-chip", tiles_.size(),
                   tiles_.empty() ? (w_ready_ps_ - now) / clk : (tiles_.front().landed_ps - now) / clk,
                   tiles_.empty() ? 0.0 : (tiles_.back().landed_ps - now) / clk);
    const double busy = double(run.cycles - run.weight_stall_cycles) * clk;
    for (auto& core : cores_) core->busy_ps += busy;
    return {end, busy, double(run.weight_stall_cycles) * clk};
  }

 private:
  struct Tile {
    int slot = -1;
    int64_t begin = 0, bytes = 0;
    double landed_ps = 0;
    bool released = false;
  };

  // The bridge's side of the weight stream (rtl::WeightFeed).
  struct Feed : WeightFeed {
    explicit Feed(RtlGemvUnit& u) : u(u) {}
    void wait_rows(int64_t end) override { u.wait_rows(end); }
    void consumed_rows(int64_t end) override { u.consumed(end); }
    RtlGemvUnit& u;
  };

  // The weight operand's stream: DDR tiles booked by feed_thread through the
  // weight buffers, or (on chip) every row ready after one L2 read.
  void start_stream(const sim::Issued& in, double now, double tiles_from) {
    const sim::View& w = in.op("w");
    per_row_ = timing::weight_row_bytes(w);
    rows_ = w.rows;
    tiles_.clear();
    booked_ = 0;
    ddr_stream_ = w.d.space == Space::DDR;
    w_ready_ps_ = w_start_ps_ = now;
    w_on_l2_ = w.d.space == Space::L2;
    if (!ddr_stream_) {
      // On chip: L2 weights arrive row by row over one L2 port read.
      if (w_on_l2_) {
        w_ready_ps_ = move(w, false, tiles_from, 1);
        w_start_ps_ = last_start_ps_;
      }
      return;
    }
    // Whole rows per tile, as the timing model cuts them (MacUnit::model).
    const int64_t all = timing::view_bytes(w), tile = timing::gemv_tile_bytes(wbuf->tile_bytes(), per_row_);
    for (int64_t off = 0; off < all; off += tile) tiles_.push_back({-1, off, std::min(tile, all - off), 0, false});
    stream_base_ = w.d.base;
    stream_start_ps_ = tiles_from;
    feed_start_.notify(sc_core::SC_ZERO_TIME);
  }

  void feed_thread() {
    while (true) {
      sc_core::wait(feed_start_);
      for (size_t k = 0; k < tiles_.size(); ++k) {
        Tile& t = tiles_[k];
        const sc::WbufIf::Slot slot = wbuf->take();
        const double not_before = std::max(stream_start_ps_, slot.free_ps);
        c_.wait_until(not_before);  // lets other engines' transfers interleave with this stream
        t.slot = slot.index;
        t.landed_ps = ddr_move(t.bytes, false, not_before, c_.p.memory.hp_ports.value, stream_base_ + uint64_t(t.begin));
        ++booked_;
        booked_event_.notify(sc_core::SC_ZERO_TIME);
      }
    }
  }

  void wait_rows(int64_t end) {
    if (end <= 0) return;
    if (!ddr_stream_) {
      if (w_on_l2_)
        c_.wait_until(w_start_ps_ + (w_ready_ps_ - w_start_ps_) * double(std::min(end, rows_)) / double(std::max<int64_t>(rows_, 1)));
      return;
    }
    const int64_t last_byte = std::min(end, rows_) * per_row_ - 1;
    size_t k = 0;
    while (k + 1 < tiles_.size() && tiles_[k + 1].begin <= last_byte) ++k;
    while (booked_ <= k) sc_core::wait(booked_event_);
    c_.wait_until(tiles_[k].landed_ps);
  }

  void consumed(int64_t end) {
    const int64_t done = std::min(end, rows_) * per_row_;
    for (Tile& t : tiles_) {
      if (t.released || t.slot < 0 || t.begin + t.bytes > done) continue;
      wbuf->hold(t.slot, t.bytes, c_.now_ps());
      t.released = true;
    }
  }

  // N3_RTL_GEMV_INJECT=k flips the lowest bit of the first result of the
  // k-th GEMV instruction (from 0) the RTL runs in this process, so a test
  // can show that a difference is caught and reported.
  void inject(GemvRun& run) {
    static const char* k = std::getenv("N3_RTL_GEMV_INJECT");
    if (!k || run.out.empty() || int64_t(gemv_rtl_records().size()) != std::atoll(k)) return;
    uint32_t u = bits_of(run.out[0]) ^ 1u;
    std::memcpy(&run.out[0], &u, 4);
  }

  // The first element where the engine and the functional core differ
  // stops the run. Bit for bit: both sides make every NaN the canonical
  // 0x7FC00000 (docs/numerics.md), so a NaN of another sign or payload is a
  // difference too.
  void compare(const sim::Issued& in, const GemvRun& run) {
    const sim::View& y = in.op("dst");
    require(int64_t(run.out.size()) == y.numel(), "rtl gemv: the engine returned " + std::to_string(run.out.size()) +
                                                      " results for dst " + shape_text(y));
    std::vector<float> ref(static_cast<size_t>(y.cols));
    for (int64_t r = 0; r < y.rows; ++r) {
      sim::read_row(c_.sim->memory(), y, r, ref.data());
      for (int64_t c = 0; c < y.cols; ++c) {
        const float a = run.out[static_cast<size_t>(r * y.cols + c)], b = ref[static_cast<size_t>(c)];
        if (bits_of(a) == bits_of(b)) continue;
        std::string name = c_.sim->program().name_of(isa::SymKind::Desc, y.slot);
        if (name.empty()) name = "desc " + std::to_string(y.slot);
        char buf[160];
        std::snprintf(buf, sizeof buf, "element [%" PRId64 ", %" PRId64 "]: rtl %.9g (0x%08x), functional %.9g (0x%08x)",
                      r, c, double(a), bits_of(a), double(b), bits_of(b));
        throw GemvMismatch("rtl gemv: instruction " + std::to_string(in.pc) + " (" +
                           isa::mnemonic(*in.def, *in.sub) + ", dynamic #" + std::to_string(in.dyn) + "), dst '" +
                           name + "' " + shape_text(y) + ", " + buf);
      }
    }
  }

  GemvRtl rtl_;
  Feed feed_;
  Shadow shadow_;
  std::vector<Tile> tiles_;
  size_t booked_ = 0;
  bool ddr_stream_ = false, w_on_l2_ = false;
  int64_t per_row_ = 1, rows_ = 0;
  uint64_t stream_base_ = 0;
  double stream_start_ps_ = 0, w_ready_ps_ = 0, w_start_ps_ = 0;
  sc_core::sc_event feed_start_, booked_event_;
};

}  // namespace

void use_rtl_gemv(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  const HwConfig h = hw;
  o->gemv_unit.make = [h, vcd, vcd_instructions](sc_core::sc_module_name n,
                                                 sc::Context& c) -> std::unique_ptr<sc::MacUnit> {
    return std::make_unique<RtlGemvUnit>(n, c, h, vcd, vcd_instructions);
  };
  o->gemv_unit.name = "rtl";
}

void print_gemv_comparison(const std::vector<GemvInsnRecord>& recs, std::FILE* out) {
  if (recs.empty()) {
    std::fprintf(out, "rtl gemv: no GEMV instructions ran\n");
    return;
  }
  // Relative error of the model against the RTL, per instruction.
  CompareHistogram hist({0.0025, 0.005, 0.01, 0.02, 0.05, 0.1}, CompareHistogram::Labels::Fixed);
  double rtl = 0, model = 0, stall = 0, worst = 0;
  int64_t within = 0, one_cycle = 0, beyond = 0;
  const GemvInsnRecord* w = nullptr;
  for (const GemvInsnRecord& r : recs) {
    const double e = hist.add(r.rtl_cycles, r.model_cycles);
    if (e <= 0.02)
      ++within;
    else if (std::fabs(r.model_cycles - r.rtl_cycles) <= 1.0 + 1e-9)
      ++one_cycle;
    else
      ++beyond;
    rtl += r.rtl_cycles;
    model += r.model_cycles;
    stall += r.stall_cycles;
    if (!w || e > worst) worst = e, w = &r;
  }
  std::fprintf(out, "rtl gemv: %zu instructions, RTL %.0f cycles (%.0f waiting on weights), model %.0f cycles (%+.3f%%)\n",
               recs.size(), rtl, stall, model, rtl > 0 ? 100.0 * (model - rtl) / rtl : 0.0);
  std::fprintf(out, "rtl gemv: per-instruction |model - rtl| / rtl:\n");
  hist.print(out);
  std::fprintf(out, "rtl gemv: %lld within 2%%, %lld more within one cycle, %lld beyond both\n",
               static_cast<long long>(within), static_cast<long long>(one_cycle), static_cast<long long>(beyond));
  std::fprintf(out, "rtl gemv: worst %.3f%%: instruction %u (%s, dynamic #%llu): rtl %.0f, model %.0f cycles\n",
               100.0 * worst, w->pc, w->what.c_str(), static_cast<unsigned long long>(w->dyn), w->rtl_cycles,
               w->model_cycles);
}

}  // namespace n3::rtl
