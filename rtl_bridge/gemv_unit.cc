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
#include "rtl_bridge/mac_bridge.h"

namespace n3::rtl {

std::vector<GemvInsnRecord>& gemv_rtl_records() {
  static std::vector<GemvInsnRecord>* r = new std::vector<GemvInsnRecord>;  // lives to exit, like the model
  return *r;
}

namespace {

// The weight stream, the shadow and the comparison are RtlMacUnit's
// (mac_bridge.h), shared with the GEMM bridge.
class RtlGemvUnit : public RtlMacUnit {
 public:
  RtlGemvUnit(sc_core::sc_module_name n, sc::Context& c, const HwConfig& hw, const std::string& vcd,
              int64_t vcd_instructions)
      : RtlMacUnit(n, c, 2, "rtl gemv"), rtl_("rtl", hw, vcd) {
    rtl_.waveform().stop_after(vcd_instructions);
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
    // The GEMV engine takes a weight row whole into a core: whole rows per
    // tile, as the timing model cuts them (MacUnit::model).
    start_stream(in, now, now + g.setup * clk,
                 timing::gemv_tile_bytes(wbuf->tile_bytes(), timing::weight_row_bytes(in.op("w"))));
    const double t0 = c_.now_ps();
    GemvRun run = rtl_.run(in, shadow_.memory(), feed());
    rtl_.waveform().instruction_done();
    inject("N3_RTL_GEMV_INJECT", gemv_rtl_records().size(), run.out);
    const double rtl_end = c_.now_ps();
    feed().consumed_rows(in.op("w").rows);
    finish_stream();  // the stream's last bookings

    const std::string diff = compare(in, run.out);
    if (!diff.empty()) throw GemvMismatch(diff);
    store_results(in, run.out);
    const double end = move(in.op("dst"), true, rtl_end, 1);

    // The timing model's prediction for the same tile arrivals.
    // As MacUnit: the MACs start once the activations are in after setup,
    // then follow the tiles (or wait for on-chip weights), then drain.
    const double start = std::max(x_ready, now + (g.setup + g.act) * clk);
    const std::vector<std::pair<double, int64_t>> a = arrivals(now, clk);  // none: weights in WBUF
    const double model_end =
        (a.empty() ? start + g.compute * clk
                   : timing::mac_stream_end_ps(start, a, g.compute * clk, g.land_to_mac * clk, g.row_work * clk)) +
        g.drain * clk;
    const MacInsnRecord rec = record(in, now, t0, rtl_end, model_end, clk, run.weight_stall_cycles);
    gemv_rtl_records().push_back(rec);
    // N3_RTL_GEMV_TRACE=1: one line per instruction (calibration work).
    static const bool trace = std::getenv("N3_RTL_GEMV_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "rtl gemv: #%llu pc %u %s: rtl %.2f (stall %.0f), model %.2f; setup %.0f act %.0f compute %.0f drain %.0f; %s weights, %zu tiles, first landed +%.0f, last +%.0f\n",
                   static_cast<unsigned long long>(rec.dyn), rec.pc, rec.what.c_str(), rec.rtl_cycles, rec.stall_cycles,
                   rec.model_cycles, g.setup, g.act, g.compute, g.drain, ddr_stream() ? "ddr" : "on-chip", tiles(),
                   (first_landed_ps() - now) / clk, tiles() ? (last_landed_ps() - now) / clk : 0.0);
    const double busy = double(run.cycles - run.weight_stall_cycles) * clk;
    for (auto& core : cores_) core->busy_ps += busy;
    return {end, busy, double(run.weight_stall_cycles) * clk};
  }

 private:
  GemvRtl rtl_;
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
  print_mac_comparison("rtl gemv", "GEMV", recs, out);
}

}  // namespace n3::rtl
