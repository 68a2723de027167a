// Issue 6's timing benchmark: Gemma 3n E4B compiled for kv260 from its YAML
// (no weights), one decode token run timing-only through the SystemC model.
// Prints the wall time (compile and simulation apart), the simulated cycles,
// simulated cycles per wall second, the modelled tok/s, the roofline tok/s of
// `n3 estimate` (the same decode_traffic, golden/decode_traffic.h) and where
// the time goes (per-unit busy/stall, DDR busy fraction, the program's own
// DDR bytes).
//   systemc_e4b_timing [--model M.yaml] [--hw H.yaml] [--context N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.h"
#include "golden/decode_traffic.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "runtime/compiled_model.h"
#include "runtime/device_systemc.h"
#include "runtime/numerics_select.h"
#include "sim/systemc/timing.h"

using namespace n3;

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
#ifndef N3_HAVE_SYSTEMC
  (void)argc;
  (void)argv;
  std::fprintf(stderr, "systemc_e4b_timing: n3 was built without SystemC\n");
  return 2;
#else
  std::string model = std::string(N3_SOURCE_DIR) + "/configs/models/gemma3n-e4b.yaml";
  std::string hw = std::string(N3_SOURCE_DIR) + "/configs/hw/kv260.yaml";
  int64_t context = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 < argc && a == "--model") model = argv[++i];
    else if (i + 1 < argc && a == "--hw") hw = argv[++i];
    else if (i + 1 < argc && a == "--context") context = std::stoll(argv[++i]);
    else {
      std::fprintf(stderr, "usage: systemc_e4b_timing [--model M.yaml] [--hw H.yaml] [--context N] (bad argument '%s')\n",
                   a.c_str());
      return 2;
    }
  }
  try {
    const HwConfig hwc = load_hw_config(hw);
    const ModelConfig cfg = load_model_config(model);
    const timing::Params p = timing::load_params(hwc);

    auto t0 = std::chrono::steady_clock::now();
    CompiledModel fm(cfg, hwc, CompiledOptions{});
    fm.program(1);  // compile the decode program now, so the simulation is timed alone
    const double compile_s = since(t0);

    // A first token runs the one-time programs (the preload of L2-resident
    // weights, where the plan has any) so that the measured token is a
    // steady-state decode step alone; both see `context` positions, as
    // n3 estimate --context.
    SystemcRunner warm(hwc, sc::TraceMode::None, false, false);
    fm.set_runner(warm.runner());
    fm.seek(context - 1);
    t0 = std::chrono::steady_clock::now();
    fm.forward({2}, Phase::Decode, nullptr);
    const double first_s = since(t0);
    SystemcRunner run(hwc, sc::TraceMode::None, true, false);
    fm.set_runner(run.runner());
    fm.seek(context - 1);
    t0 = std::chrono::steady_clock::now();
    fm.forward({2}, Phase::Decode, nullptr);
    const double sim_s = since(t0);

    const sc::Totals& t = run.totals();
    const double cycles = t.cycles(t.total_ps), tok_s = 1.0 / (t.total_ps * 1e-12);
    const DecodeTraffic tr = decode_traffic(cfg, p.numerics.formats, context);
    const double bw = p.ddr_roofline_bytes_per_s();
    const double roof = bw / tr.bytes();
    const double moved = double(t.ddr_read + t.ddr_written);

    std::printf("model %s on %s, one decode token at context %lld, timing-only\n", cfg.name.c_str(), p.name.c_str(),
                static_cast<long long>(context));
    std::printf("wall: compile %.3f s, simulate %.3f s (first token, one-time programs included: %.3f s, %.0f cycles)\n",
                compile_s, sim_s, first_s, warm.totals().cycles(warm.totals().total_ps));
    std::printf("instructions: %llu (fetched)\n", static_cast<unsigned long long>(run.counts().fetched));
    std::printf("simulated cycles: %.0f (%.3f ms at %.0f MHz)\n", cycles, t.total_ps * 1e-9, p.clocks.core_mhz.value);
    std::printf("simulated cycles per wall second: %.3g\n", cycles / sim_s);
    std::printf("modelled tok/s: %.3f\n", tok_s);
    std::printf("roofline tok/s: %.3f (%.0f bytes/token at %.3f GB/s, as n3 estimate)\n", roof,
                tr.bytes(), bw / 1e9);
    std::printf("modelled / roofline: %.1f%%\n", 100.0 * tok_s / roof);
    std::printf("program DDR bytes: %.0f (read %llu, written %llu) = %.1f%% of the estimate's; roofline of these bytes %.3f tok/s\n",
                moved, static_cast<unsigned long long>(t.ddr_read), static_cast<unsigned long long>(t.ddr_written),
                100.0 * moved / tr.bytes(), bw / moved);
    std::printf("DDR channel busy: %.1f%% of the token\n", 100.0 * t.ddr_busy_ps / t.total_ps);
    for (const sc::UnitReport& u : t.units) {
      std::printf("unit %-4s %7llu instructions, busy %5.1f%%", u.name.c_str(),
                  static_cast<unsigned long long>(u.instructions), 100.0 * u.busy_ps / t.total_ps);
      for (const auto& [k, v] : u.stall_ps)
        if (v > 0) std::printf(", %s %.1f%%", k.c_str(), 100.0 * v / t.total_ps);
      std::printf("\n");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "systemc_e4b_timing: %s\n", e.what());
    return 2;
  }
#endif
}
