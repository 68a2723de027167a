#include "host_driver/estimate_sim.h"

#include <algorithm>
#include <memory>

#include "base/error.h"
#include "compiler/lower.h"
#include "golden/decode_traffic.h"
#include "runtime/compiled_model.h"
#include "runtime/device_systemc.h"
#include "sim/systemc/timing.h"

namespace n3::cli {

HandCalc hand_calc(const ModelConfig& c, const HwConfig& hw, int64_t context) {
  const DecodeTraffic t = decode_traffic(c, hw.numerics.formats, context);
  HandCalc h;
  h.context = context;
  h.weight_bytes = t.weight_bytes;
  h.kv_bytes = t.kv_bytes;
  h.macs = t.macs;
  h.roofline_bytes_per_s = hw.ddr_roofline_bytes_per_s();
  h.mac_per_s = double(hw.gemv_macs_per_clk_total()) * hw.clocks.core_mhz.value * 1e6;
  return h;
}

double Estimate::prefill_floor_s() const {
  double b = 0;
  for (const auto& [n, sec] : prefill_floor) b = std::max(b, sec);
  return b;
}

const ResourceUse& PhaseEstimate::bound() const {
  return *std::max_element(resources.begin(), resources.end(),
                           [](const ResourceUse& a, const ResourceUse& b) { return a.roof_s < b.roof_s; });
}

#ifdef N3_HAVE_SYSTEMC
namespace {

constexpr double kPs = 1e-12;

// The phase's roofline per resource (its work over the hardware file's peak
// rate, the same rates the timing model charges) beside the busy fractions
// and stall reasons the simulation recorded.
PhaseEstimate phase_of(const std::string& name, int64_t context, int64_t tokens, const sc::Totals& t,
                       const HwConfig& hw) {
  PhaseEstimate p;
  p.name = name;
  p.context = context;
  p.tokens = tokens;
  p.sim_s = t.total_ps * kPs;
  p.ddr_bytes = t.ddr_read + t.ddr_written;
  p.l2_bytes = t.l2_bytes;
  p.macs = t.macs;
  p.sfu_work = t.sfu_work;
  if (hw.has_energy())
    p.energy = energy_per_token(hw, double(p.ddr_bytes), double(p.l2_bytes), double(p.macs), double(p.sfu_work),
                                p.sim_s, double(tokens));
  const double hz = hw.clocks.core_mhz.value * 1e6;
  const auto unit = [&](const std::string& n) -> const sc::UnitReport* {
    for (const sc::UnitReport& u : t.units)
      if (u.name == n) return &u;
    return nullptr;
  };
  // The busiest of the resources whose names start with `prefix` (one HP or L2 port binds first).
  const auto busiest = [&](const std::string& prefix) {
    double b = 0;
    for (const sc::ResourceReport& r : t.resources)
      if (r.timed && r.name.rfind(prefix, 0) == 0) b = std::max(b, r.busy_ps);
    return b / t.total_ps;
  };
  const auto unit_busy = [&](const std::string& n) {
    const sc::UnitReport* u = unit(n);
    return u ? u->busy_ps / t.total_ps : 0.0;
  };
  uint64_t hp = 0, engine_insns = 0, ctl_insns = 0;
  for (uint64_t b : t.hp_port_bytes) hp += b;
  for (const sc::UnitReport& u : t.units) (u.name == "CTL" ? ctl_insns : engine_insns) += u.instructions;
  const double l2_rate = double(hw.timing.l2_ports.value * hw.timing.l2_port_words.value * hw.l2_word_bytes()) * hz;
  p.resources = {
      {"DDR bandwidth", double(p.ddr_bytes) / hw.ddr_sustained_bytes_per_s(), busiest("DDR")},
      {"HP ports", double(hp) / hw.hp_bytes_per_s(hw.memory.hp_ports.value), busiest("HP")},
      {"GEMV compute", double(t.macs - t.gemm_macs) / (double(hw.gemv_macs_per_clk_total()) * hz), unit_busy("GEMV")},
      {"GEMM compute", double(t.gemm_macs) / (double(hw.gemm_macs_per_clk_total()) * hz), unit_busy("GEMM")},
      {"SFU", double(t.sfu_work) / (hw.compute.sfu_elems_per_clk.value * hz), unit_busy("SFU")},
      {"L2 ports", double(t.l2_bytes) / l2_rate, busiest("L2")},
      {"dispatch",
       (double(engine_insns) * double(hw.timing.dispatch_cycles.value) +
        double(ctl_insns) * double(hw.timing.ctl_cycles.value)) / hz,
       unit_busy("CTL")},
  };
  for (const sc::UnitReport& u : t.units)
    if (u.name != "CTL" && u.busy_ps / t.total_ps > p.lead_busy) {
      p.lead_unit = u.name;
      p.lead_busy = u.busy_ps / t.total_ps;
    }
  for (const sc::UnitReport& u : t.units)
    for (const auto& [why, ps] : u.stall_ps)
      if (ps > 0) p.stalls.push_back({u.name + " " + why, ps / t.total_ps});
  std::stable_sort(p.stalls.begin(), p.stalls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return p;
}

std::vector<std::pair<std::string, double>> by_share(const std::map<std::string, double>& m) {
  std::vector<std::pair<std::string, double>> v;
  for (const auto& [k, ps] : m) v.push_back({k, ps * kPs});
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

// One decode token at `context` on a fresh runner (its totals are the token's alone).
sc::Totals decode_at(CompiledModel& fm, const HwConfig& hw, int64_t context, bool slices) {
  SystemcRunner run(hw, sc::TraceMode::None, slices, false);
  fm.set_runner(run.runner());
  fm.seek(context - 1);
  fm.forward({2}, Phase::Decode, nullptr);
  return run.totals();
}

}  // namespace
#endif

void check_request(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req) {
  const int64_t cap = hw.kv.cap_tokens.value, max_pos = c.max_positions;
  const std::string where = "kv.cap_tokens = " + std::to_string(cap) + " of " + hw.path;
  // A decode token at context n sits at position n - 1: n tokens in the ring.
  auto check = [&](const std::string& what, int64_t tokens) {
    require(tokens <= cap, what + ": " + std::to_string(tokens) + " tokens pass the KV cap (" + where + ")");
    require(tokens <= max_pos, what + ": " + std::to_string(tokens) + " tokens pass the model's max_position_embeddings = " +
                                   std::to_string(max_pos));
  };
  for (int64_t ctx : req.contexts) check("--context " + std::to_string(ctx), ctx);
  if (req.prompt > 0)
    check("--prompt " + std::to_string(req.prompt) + " --new " + std::to_string(req.new_tokens) +
              " (the last decode step's context)",
          req.prompt + req.new_tokens - 1);
}

Estimate hand_estimate(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req) {
  Estimate e;
  e.model = c.name;
  e.hw = hw.name;
  e.req = req;
  for (int64_t ctx : req.contexts) e.hand.push_back(hand_calc(c, hw, ctx));
  e.has_cost = hw.has_cost();
  e.cost = hw.cost_parts();
  e.formats = num::formats_to_string(hw.numerics.formats);
  e.accuracy = measured_accuracy(hw.numerics.formats);
  return e;
}

Estimate run_estimate(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req) {
  Estimate e = hand_estimate(c, hw, req);
#ifndef N3_HAVE_SYSTEMC
  e.not_simulated = "n3 was built without SystemC";
  return e;
#else
  // The compiler lays out INT4 weights with one scale per row only
  // (compiler/layout.cc): other weight formats get the hand calculation, which
  // counts their scales, and say why there is no simulation.
  if (hw.numerics.formats.weight_scale != num::WScale::PerRow) {
    e.not_simulated = std::string("the compiler lowers numerics.weight_scale = per_row only (is ") +
                      num::wscale_name(hw.numerics.formats.weight_scale) + ")";
    return e;
  }
  // The compiler's refusal (the layout and residency plan, before any
  // simulation) makes the point hand-calculation only, its reason kept.
  std::unique_ptr<CompiledModel> compiled;
  try {
    compiled = std::make_unique<CompiledModel>(c, hw, CompiledOptions{});
  } catch (const Error& x) {
    e.not_simulated = std::string("the compiler does not lower this design point: ") + x.what();
    return e;
  }
  CompiledModel& fm = *compiled;
  e.simulated = true;
  e.has_energy = hw.has_energy();
  e.max_chunk = fm.max_chunk();
  e.ddr_used = fm.layout().ddr_end;
  e.ddr_capacity = uint64_t(hw.memory.ddr_bytes.value);
  e.l2_capacity = uint64_t(hw.memory.l2_bytes.value);
  for (int T : fm.chunk_sizes())
    e.l2_activations = std::max(e.l2_activations, comp::l2_bytes_for(c, hw.numerics.formats, hw_limits(hw), T, true));
  e.l2_resident = e.l2_capacity - fm.layout().l2_resident_base;
  e.l2_resident_weights = fm.layout().resident.size();
  // A first token runs the one-time programs (the preload of L2-resident
  // weights), so the measured tokens are steady-state steps, as the bench's.
  {
    SystemcRunner warm(hw, sc::TraceMode::None, false, false);
    fm.set_runner(warm.runner());
    fm.seek(0);
    fm.forward({2}, Phase::Decode, nullptr);
    for (const auto& [label, ps] : warm.totals().runs)
      if (label == "preload") e.preload_s += ps * kPs;
  }
  for (size_t i = 0; i < req.contexts.size(); ++i) {
    // Slices (for the per-layer and per-operator split) only where they are reported.
    const sc::Totals t = decode_at(fm, hw, req.contexts[i], i == 0);
    e.decode.push_back(phase_of("decode", req.contexts[i], 1, t, hw));
    if (i == 0) {
      e.layers = by_share(t.layer_ps);
      e.ops = by_share(t.op_ps);
      // The engines' busy time (the control unit dispatches, owns no layer's work), as the stats' layers sum to.
      for (const sc::UnitReport& u : t.units)
        if (u.name != "CTL") e.busy_total_s += u.busy_ps * kPs;
    }
  }
  if (req.prompt > 0) {
    e.prefill_chunks = comp::cover(int(req.prompt), fm.chunk_sizes());
    SystemcRunner run(hw, sc::TraceMode::None, false, false);
    fm.set_runner(run.runner());
    fm.reset();
    fm.forward(std::vector<int32_t>(size_t(req.prompt), 2), Phase::Prefill, nullptr);
    e.prefill = phase_of("prefill", req.prompt, req.prompt, run.totals(), hw);
    // The prefill's logits give the first new token; each later one is a
    // decode step at contexts prompt + 1 .. prompt + new - 1, whose time
    // grows about linearly with the context (the KV window read): the
    // request takes the mean of the two ends, simulated.
    e.ttft_s = e.prefill.sim_s;
    e.request_s = e.ttft_s;
    if (req.new_tokens > 1) {
      e.request_decode_s[0] = decode_at(fm, hw, req.prompt + 1, false).total_ps * kPs;
      e.request_decode_s[1] = req.new_tokens == 2 ? e.request_decode_s[0]
                                                  : decode_at(fm, hw, req.prompt + req.new_tokens - 1, false).total_ps * kPs;
      e.request_s += double(req.new_tokens - 1) * 0.5 * (e.request_decode_s[0] + e.request_decode_s[1]);
    }
    const double hz = hw.clocks.core_mhz.value * 1e6;
    e.prefill_floor = {
        {"SFU element passes", double(e.prefill.sfu_work) / (double(hw.compute.sfu_elems_per_clk.value) * hz)},
        {"GEMV MACs", e.prefill.resources[2].roof_s},
        {"GEMM MACs", e.prefill.resources[3].roof_s},
        {"weights once", e.hand[0].weight_bytes / e.hand[0].roofline_bytes_per_s},
    };
  }
  e.chunk_choice = fm.chunk_choice();
  // The schedule report: each program alone at position 0, simulated again
  // with its slices (the largest program of the prompt's cover, and decode).
  if (req.prompt > 0) {
    const int T = e.prefill_chunks.front();
    e.schedule.push_back(schedule_report(fm.program(T), fm.layout(), hw, T, true));
  }
  e.schedule.push_back(schedule_report(fm.program(1), fm.layout(), hw, 1, true));
  return e;
#endif
}

}  // namespace n3::cli
