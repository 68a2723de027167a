#include "rtl_bridge/gemm_unit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "base/error.h"
#include "rtl_bridge/gemm_rtl.h"

namespace n3::rtl {

std::vector<MacInsnRecord>& gemm_rtl_records() {
  static std::vector<MacInsnRecord>* r = new std::vector<MacInsnRecord>;  // lives to exit, like the model
  return *r;
}

std::map<std::string, int64_t>& gemm_model_only() {
  static std::map<std::string, int64_t>* m = new std::map<std::string, int64_t>;  // lives to exit, like the model
  return *m;
}

namespace {

// "f32 weights", "int4 group scales": a weight kind the array lacks.
std::string weight_kind(const sim::View& w) {
  static const char* dtypes[] = {"f32", "bf16", "f16", "int4", "int8", "int32"};
  static const char* modes[] = {"no", "row", "group", "two-level"};
  const size_t d = static_cast<size_t>(w.d.dtype), m = static_cast<size_t>(w.d.scale_mode);
  const std::string dt = d < 6 ? dtypes[d] : "dtype " + std::to_string(d);
  if (!w.is_float() && m < 4) return dt + " " + modes[m] + " scales";
  return dt + " weights";
}

class RtlGemmUnit : public RtlMacUnit {
 public:
  RtlGemmUnit(sc_core::sc_module_name n, sc::Context& c, const HwConfig& hw, const std::string& vcd,
              int64_t vcd_instructions)
      : RtlMacUnit(n, c, 3, "rtl gemm"), rtl_("rtl", hw, vcd) {
    rtl_.waveform().stop_after(vcd_instructions);
  }

 protected:
  void before_exec(const sim::Issued& in) override {
    if (!GemmRtl::takes_weights(in.op("w"))) return;
    // What the engine reads, as it is before the functional core writes dst.
    for (const char* f : {"src", "w"}) shadow_.load(c_.sim->memory(), in.op(f), in.pc);
  }

  // No weight prefetch (timing.wbuf_prefetch_tiles), as the GEMV bridge:
  // the bridge feeds an instruction's tiles to the array only once it has
  // the command, so tiles streamed ahead would be read from DDR twice.
  void before_tokens(const sim::Issued&) override {}

  Timed model(const sim::Issued& in) override {
    if (!GemmRtl::takes_weights(in.op("w"))) {
      // Not in the array: the model's timing, the functional core's bits.
      ++gemm_model_only()[weight_kind(in.op("w"))];
      return sc::MacUnit::model(in);
    }
    const timing::Params& p = c_.p;
    const double now = c_.now_ps(), clk = p.core_ps();
    const int64_t macs = timing::insn_macs(in);
    c_.macs += static_cast<uint64_t>(macs);
    c_.gemm_macs += static_cast<uint64_t>(macs);
    const timing::GemmCycles g = timing::gemm_cycles(p, in);  // MacUnit::model's formula
    // Activations in through an L2 port (the booking is the port's
    // occupancy; the engine's own activation stream stands for the read).
    const double x_ready = move(in.op("src"), false, now + g.setup * clk, 1);
    // Byte-cut tiles, as the timing model cuts a GEMM's stream: the array
    // takes a tile's rows a PE row a clock, not a weight row whole.
    start_stream(in, now, now + g.setup * clk, wbuf->tile_bytes());
    const double t0 = c_.now_ps();
    GemmRun run;
    try {
      run = rtl_.run(in, shadow_.memory(), &feed());
    } catch (const RtlMismatch&) {
      throw;
    } catch (const Error& e) {  // a job the engine cannot take: one line naming the instruction
      throw Error("rtl gemm: instruction " + std::to_string(in.pc) + " (" + isa::mnemonic(*in.def, *in.sub) + " " +
                  shape(in.op("src")) + "x" + shape(in.op("w")) + "): " + e.what());
    }
    rtl_.waveform().instruction_done();
    inject("N3_RTL_GEMM_INJECT", gemm_rtl_records().size(), run.out);
    const double rtl_end = c_.now_ps();
    feed().consumed_rows(in.op("w").rows);
    finish_stream();

    const std::string diff = compare(in, run.out);
    if (!diff.empty()) throw GemmMismatch(diff);
    store_results(in, run.out);
    const double end = move(in.op("dst"), true, rtl_end, 1);

    // The timing model's prediction for the same tile arrivals, composed as
    // MacUnit::model composes it: the MACs start once the activations are
    // in, follow the tiles' landing, then drain.
    // (The array starts no sooner than its own activation stream and setup.)
    const double start = std::max(x_ready, now + (g.setup + g.act) * clk);
    std::vector<std::pair<double, int64_t>> a = arrivals(now, clk);  // none: weights in WBUF
    if (!ddr_stream()) a = timing::gemm_row_blocks(a, p.compute.gemm_cols.value);  // L2 rows, as MacUnit::model
    const double model_end = (a.empty() ? start + g.compute * clk
                                        : timing::mac_stream_end_ps(start, a, g.compute * clk, 0, g.tile_work * clk)) +
                             g.drain * clk;
    const MacInsnRecord rec = record(in, now, t0, rtl_end, model_end, clk, run.weight_stall_cycles);
    gemm_rtl_records().push_back(rec);
    // N3_RTL_GEMM_TRACE=1: one line per instruction (calibration work).
    static const bool trace = std::getenv("N3_RTL_GEMM_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "rtl gemm: #%llu pc %u %s: rtl %.2f (stall %.0f, array formula %lld), model %.2f (setup %.0f compute %.0f drain %.0f); %s weights, %zu tiles, first landed +%.0f, last +%.0f\n",
                   static_cast<unsigned long long>(rec.dyn), rec.pc, rec.what.c_str(), rec.rtl_cycles,
                   rec.stall_cycles, static_cast<long long>(run.formula_cycles), rec.model_cycles, g.setup, g.compute,
                   g.drain, ddr_stream() ? "ddr" : "on-chip", tiles(), (first_landed_ps() - now) / clk,
                   tiles() ? (last_landed_ps() - now) / clk : 0.0);
    const double busy = double(run.cycles - run.weight_stall_cycles) * clk;
    return {end, busy, double(run.weight_stall_cycles) * clk};
  }

 private:
  GemmRtl rtl_;
};

}  // namespace

void use_rtl_gemm(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  // The bridge compares cycles with the model's array: the Verilated one
  // must be the hardware file's (cosim may build a smaller one).
  const GemmArray a = gemm_rtl_array();
  require(a.rows == hw.compute.gemm_rows.value && a.cols == hw.compute.gemm_cols.value &&
              a.macs_per_pe == hw.timing.gemm_macs_per_pe.value,
          "--rtl gemm: the RTL GEMM array was built " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + " x " +
              std::to_string(a.macs_per_pe) + "; hardware '" + hw.name + "' has " +
              std::to_string(hw.compute.gemm_rows.value) + " x " + std::to_string(hw.compute.gemm_cols.value) + " x " +
              std::to_string(hw.timing.gemm_macs_per_pe.value) + " (rebuild with cmake -DN3_RTL_HW=<its file>)");
  const HwConfig h = hw;
  o->gemm_unit.make = [h, vcd, vcd_instructions](sc_core::sc_module_name n,
                                                 sc::Context& c) -> std::unique_ptr<sc::MacUnit> {
    return std::make_unique<RtlGemmUnit>(n, c, h, vcd, vcd_instructions);
  };
  o->gemm_unit.name = "rtl";
}

void print_gemm_comparison(const std::vector<MacInsnRecord>& recs, const std::map<std::string, int64_t>& model_only,
                           std::FILE* out) {
  print_mac_comparison("rtl gemm", "GEMM", recs, out);
  int64_t n = 0;
  std::string kinds;
  for (const auto& [k, c] : model_only) {
    n += c;
    kinds += (kinds.empty() ? "" : ", ") + k + " " + std::to_string(c);
  }
  if (n)
    std::fprintf(out, "rtl gemm: %lld more on the timing model, their weight kinds not in the array (%s)\n",
                 static_cast<long long>(n), kinds.c_str());
}

}  // namespace n3::rtl
