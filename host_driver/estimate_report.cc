#include "host_driver/estimate_report.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdarg>
#include <cstdio>

namespace n3::cli {

namespace {

std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string num(double v) { return fmt("%.9g", v); }

// "5 x 25 + 2 + 1": the programs covering the prompt, runs of one size merged.
std::string chunks_text(const std::vector<int>& c) {
  std::string s;
  for (size_t i = 0; i < c.size();) {
    size_t j = i;
    while (j < c.size() && c[j] == c[i]) ++j;
    s += (s.empty() ? "" : " + ") + std::to_string(c[i]) + (j - i > 1 ? " x " + std::to_string(j - i) : "");
    i = j;
  }
  return s;
}

constexpr size_t kTop = 8;     // layers and operators listed
constexpr size_t kStalls = 5;  // stall reasons listed per phase

std::string phase_label(const PhaseEstimate& p) {
  return p.name == "decode" ? "decode @" + std::to_string(p.context) : "prefill " + std::to_string(p.tokens);
}

std::string resources_text(const PhaseEstimate& p) {
  std::string s = fmt("  %s: simulated %.3f ms; roofline per resource (work at peak rate, busy in the simulation):\n",
                      phase_label(p).c_str(), p.sim_s * 1e3);
  for (const ResourceUse& r : p.resources) {
    s += fmt("    %-14s %10.3f ms", r.name.c_str(), r.roof_s * 1e3);
    if (r.busy >= 0) s += fmt("  busy %5.1f%%", 100 * r.busy);
    if (&r == &p.bound()) s += "  <- binds";
    s += "\n";
  }
  const double gap = p.sim_s - p.bound().roof_s;
  s += fmt("    gap to the %s roofline: %.3f ms (%.1f%% of the phase); busiest engine %s (busy %.1f%%) stalls on:",
           p.bound().name.c_str(), gap * 1e3, 100 * gap / p.sim_s, p.lead_unit.empty() ? "(none busy)" : p.lead_unit.c_str(), 100 * p.lead_busy);
  size_t n = 0;
  for (const auto& [what, share] : p.stalls)
    if (what.rfind(p.lead_unit + " ", 0) == 0 && n++ < kStalls)
      s += fmt("%s %s %.1f%%", n > 1 ? "," : "", what.substr(p.lead_unit.size() + 1).c_str(), 100 * share);
  s += "\n    every unit's stalls (share of the phase; units overlap):";
  for (size_t i = 0; i < p.stalls.size() && i < kStalls; ++i)
    s += fmt("%s %s %.1f%%", i ? "," : "", p.stalls[i].first.c_str(), 100 * p.stalls[i].second);
  return s + "\n";
}

// The energy parts, in the order of the text's columns, the JSON's keys and the CSV's columns.
std::vector<std::pair<const char*, double>> energy_parts(const Energy& en) {
  return {{"ddr", en.ddr}, {"l2", en.l2}, {"mac", en.mac}, {"sfu", en.sfu}, {"static", en.statik}};
}

std::string energy_text(const Estimate& e, const HwConfig& hw) {
  if (!hw.has_energy()) return "energy per token: absent (the hardware file gives no per-operation or per-byte energies)\n";
  if (!e.has_energy) return "energy per token: absent (it needs the simulation's counts: " + e.not_simulated + ")\n";
  std::string s = fmt("energy per token, mJ (counts of the run x the hardware file's energy section: DDR %g pJ/B, "
                      "L2 %g pJ/B, MAC %g pJ, SFU %g pJ/element, static %g mW):\n",
                      hw.energy.ddr_pj_per_byte.value, hw.energy.l2_pj_per_byte.value, hw.energy.mac_pj.value,
                      hw.energy.sfu_pj_per_elem.value, hw.energy.static_mw.value);
  s += fmt("  %-16s %10s %10s %10s %10s %10s %10s\n", "phase", "total", "DDR", "L2", "MACs", "SFU", "static");
  auto row = [&](const PhaseEstimate& p) {
    s += fmt("  %-16s %10.4g", phase_label(p).c_str(), p.energy.total() * 1e3);
    for (const auto& [k, v] : energy_parts(p.energy)) s += fmt(" %10.4g", v * 1e3);
    s += "\n";
  };
  for (const PhaseEstimate& p : e.decode) row(p);
  if (e.req.prompt > 0) row(e.prefill);
  return s;
}

std::string cost_text(const Estimate& e) {
  if (!e.has_cost) return "cost: absent (the hardware file states no cost section)\n";
  double total = 0;
  std::string parts;
  for (const auto& [k, v] : e.cost) {
    total += v;
    parts += fmt("%s%s %.6g", parts.empty() ? "" : ", ", k.c_str(), v);
  }
  return fmt("cost: %.6g in the hardware file's cost units (%s)\n", total, parts.c_str());
}

std::string accuracy_line(const Estimate& e) {
  return "accuracy of these numerics formats (configs/numerics/accuracy.yaml, from docs/numerics.md's accuracy "
         "report): " + accuracy_text(e.accuracy) + (e.accuracy.empty() ? " (" + e.formats + ")" : "") + "\n";
}

// The CSV column of a cost part: "cost_" and its name, lower case, spaces as '_'.
std::string cost_column(const std::string& part) {
  std::string c = "cost_";
  for (char ch : part) c += ch == ' ' ? '_' : char(std::tolower(static_cast<unsigned char>(ch)));
  return c;
}

}  // namespace

std::string estimate_text(const Estimate& e, const HwConfig& hw) {
  std::string s = fmt("model %s on %s\n", e.model.c_str(), e.hw.c_str());
  // The hand calculation: n3 estimate's original lines, at the first context.
  const HandCalc& h = e.hand[0];
  s += fmt("hand calculation, one decode token at context %lld:\n", static_cast<long long>(h.context));
  s += fmt("bytes per decode token: %.0f (weights %.0f, KV %.0f)\n", h.bytes(), h.weight_bytes, h.kv_bytes);
  s += fmt("memory roofline: %.3f GB/s = min(DDR %.3f GB/s x %.3f, %lld HP ports x %lld B x %.0f MHz = %.3f GB/s)\n",
           h.roofline_bytes_per_s / 1e9, hw.memory.ddr_peak_gbps.value, hw.memory.ddr_efficiency.value,
           static_cast<long long>(hw.memory.hp_ports.value), static_cast<long long>(hw.hp_port_bytes()),
           hw.clocks.axi_mhz.value, hw.hp_bytes_per_s(hw.memory.hp_ports.value) / 1e9);
  s += fmt("roofline tok/s: %.3f\n", h.roofline_tok_s());
  s += fmt("GEMV MACs per token: %.0f at %.3f GMAC/s\n", h.macs, h.mac_per_s / 1e9);
  s += fmt("compute bound tok/s: %.3f\n", h.compute_tok_s());
  // The smaller of the two hand figures, labelled so it is not read as the simulated estimate below.
  s += fmt("hand roofline tok/s (min of the two above, not simulated): %.3f (%s-bound)\n", std::min(h.roofline_tok_s(), h.compute_tok_s()),
           h.roofline_tok_s() < h.compute_tok_s() ? "memory" : "compute");
  for (size_t i = 1; i < e.hand.size(); ++i)
    s += fmt("hand calculation at context %lld: %.0f bytes/token (KV %.0f), roofline %.3f tok/s, compute bound %.3f tok/s\n",
             static_cast<long long>(e.hand[i].context), e.hand[i].bytes(), e.hand[i].kv_bytes, e.hand[i].roofline_tok_s(),
             e.hand[i].compute_tok_s());
  if (!e.simulated)
    return s + "simulation: not available (" + e.not_simulated + ")\n" + energy_text(e, hw) + cost_text(e) +
           accuracy_line(e);

  s += "\nsimulated (SystemC model, compiled programs, timing-only):\n";
  s += fmt("%-16s %10s %12s %15s %9s  %s\n", "phase", "tok/s", "ms", "roofline tok/s", "sim/roof", "bound");
  auto row = [&](const PhaseEstimate& p) {
    s += fmt("%-16s %10.3f %12.3f %15.3f %8.1f%%  %s\n", phase_label(p).c_str(), p.tok_s(), p.sim_s * 1e3,
             p.roofline_tok_s(), 100 * p.tok_s() / p.roofline_tok_s(), p.bound().name.c_str());
  };
  for (const PhaseEstimate& p : e.decode) row(p);
  if (e.req.prompt > 0) {
    row(e.prefill);
    s += fmt("prefill programs: %s tokens (the compiler's largest chunk: %d, chosen by modelled throughput; "
             "the largest whose activations fit L2: %d)\n",
             chunks_text(e.prefill_chunks).c_str(), e.max_chunk, e.chunk_choice.fit);
    s += fmt("time to first token: %.6g s (prefill of %lld tokens from an empty cache)\n", e.ttft_s,
             static_cast<long long>(e.req.prompt));
    s += fmt("whole request (%lld prompt + %lld new): %.6g s = first token + %lld decode steps, contexts %lld .. %lld "
             "(mean of the simulated ends: %.3f and %.3f ms)\n",
             static_cast<long long>(e.req.prompt), static_cast<long long>(e.req.new_tokens), e.request_s,
             static_cast<long long>(e.req.new_tokens - 1), static_cast<long long>(e.req.prompt + 1),
             static_cast<long long>(e.req.prompt + e.req.new_tokens - 1), e.request_decode_s[0] * 1e3,
             e.request_decode_s[1] * 1e3);
  }
  s += fmt("one-time preload of L2-resident weights: %.3f ms (at load, in no request figure)\n", e.preload_s * 1e3);
  s += "\nschedules (docs/compiler.md, \"Schedule report\"):\n";
  if (e.req.prompt > 0) {
    std::string parts;
    for (const auto& [n, sec] : e.prefill_floor) parts += fmt("%s%s %.3f s", parts.empty() ? "" : ", ", n.c_str(), sec);
    s += fmt("prefill bound from work no schedule avoids: %s -> %.3f tok/s; simulated %.3f tok/s = %.1f%% of it\n",
             parts.c_str(), double(e.req.prompt) / e.prefill_floor_s(), e.prefill.tok_s(),
             100 * e.prefill_floor_s() / e.prefill.sim_s);
  }
  for (size_t i = 0; i < e.decode.size(); ++i)
    s += fmt("decode @%lld: simulated %.3f tok/s = %.1f%% of the DDR roofline (hand calculation: %.3f tok/s)\n",
             static_cast<long long>(e.decode[i].context), e.decode[i].tok_s(),
             100 * e.decode[i].tok_s() / e.hand[i].roofline_tok_s(), e.hand[i].roofline_tok_s());
  s += chunk_choice_text(e.chunk_choice);
  for (const ScheduleReport& r : e.schedule) s += schedule_report_text(r);
  s += "\nwhere the time goes:\n";
  for (const PhaseEstimate& p : e.decode) s += resources_text(p);
  if (e.req.prompt > 0) s += resources_text(e.prefill);
  const PhaseEstimate& d0 = e.decode[0];
  s += fmt("\ntop layers, decode @%lld (share of the engines' busy time, %.3f ms):\n", static_cast<long long>(d0.context),
           e.busy_total_s * 1e3);
  for (size_t i = 0; i < e.layers.size() && i < kTop; ++i)
    s += fmt("  layer %-6s %8.3f ms %5.1f%%\n", e.layers[i].first.c_str(), e.layers[i].second * 1e3,
             100 * e.layers[i].second / e.busy_total_s);
  s += fmt("top operators, decode @%lld:\n", static_cast<long long>(d0.context));
  for (size_t i = 0; i < e.ops.size() && i < kTop; ++i)
    s += fmt("  %-34s %8.3f ms %5.1f%%\n", e.ops[i].first.c_str(), e.ops[i].second * 1e3,
             100 * e.ops[i].second / e.busy_total_s);
  s += "\n";
  for (size_t i = 0; i < e.decode.size(); ++i)
    s += fmt("KV cache at context %lld: %.0f bytes read per decode token (hand calculation); the token moves %llu DDR bytes in all\n",
             static_cast<long long>(e.hand[i].context), e.hand[i].kv_bytes,
             static_cast<unsigned long long>(e.decode[i].ddr_bytes));
  s += fmt("DDR capacity used: %llu of %llu bytes (%.1f%%: weights, KV rings, buffers)\n",
           static_cast<unsigned long long>(e.ddr_used), static_cast<unsigned long long>(e.ddr_capacity),
           100.0 * double(e.ddr_used) / double(e.ddr_capacity));
  s += fmt("L2 (on-chip) used: %llu of %llu bytes (%.1f%%): activations' high-water %llu (the largest program), "
           "%zu resident weights %llu\n",
           static_cast<unsigned long long>(e.l2_activations + e.l2_resident),
           static_cast<unsigned long long>(e.l2_capacity), 100.0 * double(e.l2_activations + e.l2_resident) / double(e.l2_capacity),
           static_cast<unsigned long long>(e.l2_activations), e.l2_resident_weights,
           static_cast<unsigned long long>(e.l2_resident));
  return s + energy_text(e, hw) + cost_text(e) + accuracy_line(e);
}

std::string estimate_json(const Estimate& e, const HwConfig& hw) {
  using nlohmann::json;
  json j;
  j["model"] = e.model;
  j["hw"] = e.hw;
  j["hw_path"] = hw.path;
  j["simulated"] = e.simulated;
  for (const HandCalc& h : e.hand)
    j["hand_calculation"].push_back({{"context", h.context},
                                     {"weight_bytes", h.weight_bytes},
                                     {"kv_bytes", h.kv_bytes},
                                     {"macs", h.macs},
                                     {"roofline_bytes_per_s", h.roofline_bytes_per_s},
                                     {"roofline_tok_s", h.roofline_tok_s()},
                                     {"compute_tok_s", h.compute_tok_s()}});
  auto phase = [](const PhaseEstimate& p) {
    json o = {{"phase", p.name},   {"context", p.context}, {"tokens", p.tokens}, {"sim_s", p.sim_s},
              {"tok_s", p.tok_s()}, {"roofline_tok_s", p.roofline_tok_s()},   {"bound", p.bound().name},
              {"ddr_bytes", p.ddr_bytes}, {"lead_unit", p.lead_unit}, {"lead_busy", p.lead_busy}};
    for (const ResourceUse& r : p.resources) {
      json x = {{"name", r.name}, {"roof_s", r.roof_s}};
      if (r.busy >= 0) x["busy"] = r.busy;
      o["resources"].push_back(x);
    }
    o["stalls"] = json::object();
    for (const auto& [k, v] : p.stalls) o["stalls"][k] = v;
    return o;
  };
  if (e.simulated) {
    for (const PhaseEstimate& p : e.decode) j["decode"].push_back(phase(p));
    if (e.req.prompt > 0) {
      j["prefill"] = phase(e.prefill);
      j["prefill"]["chunks"] = e.prefill_chunks;
      j["prefill"]["max_chunk"] = e.max_chunk;
      j["ttft_s"] = e.ttft_s;
      j["request"] = {{"prompt", e.req.prompt}, {"new", e.req.new_tokens}, {"s", e.request_s}};
    }
    j["preload_s"] = e.preload_s;
    j["chunk_choice"] = nlohmann::json::parse(chunk_choice_json(e.chunk_choice).dump());
    if (e.req.prompt > 0) {
      for (const auto& [n, sec] : e.prefill_floor) j["prefill"]["floor_s"][n] = sec;
      j["prefill"]["floor_tok_s"] = double(e.req.prompt) / e.prefill_floor_s();
      j["prefill"]["of_floor"] = e.prefill_floor_s() / e.prefill.sim_s;
    }
    for (const ScheduleReport& r : e.schedule) j["schedule"].push_back(nlohmann::json::parse(schedule_report_json(r).dump()));
    j["busy_total_s"] = e.busy_total_s;
    for (const auto& [k, v] : e.layers) j["layers"].push_back({{"layer", k}, {"s", v}});
    for (const auto& [k, v] : e.ops) j["operators"].push_back({{"operator", k}, {"s", v}});
    j["ddr_used_bytes"] = e.ddr_used;
    j["ddr_capacity_bytes"] = e.ddr_capacity;
    j["l2"] = {{"activations_bytes", e.l2_activations},
               {"resident_bytes", e.l2_resident},
               {"resident_weights", e.l2_resident_weights},
               {"used_bytes", e.l2_activations + e.l2_resident},
               {"capacity_bytes", e.l2_capacity}};
  }
  if (!e.simulated) j["not_simulated"] = e.not_simulated;
  // Energy per token in joules by phase and part; null without energies (or without a simulation).
  j["energy_per_token"] = nullptr;
  if (e.has_energy) {
    auto energy = [](const PhaseEstimate& p) {
      json o = {{"phase", p.name}, {"context", p.context}, {"total_j", p.energy.total()}};
      for (const auto& [k, v] : energy_parts(p.energy)) o[std::string(k) + "_j"] = v;
      return o;
    };
    for (const PhaseEstimate& p : e.decode) j["energy_per_token"]["decode"].push_back(energy(p));
    if (e.req.prompt > 0) j["energy_per_token"]["prefill"] = energy(e.prefill);
  }
  j["cost"] = nullptr;
  if (e.has_cost) {
    double total = 0;
    for (const auto& [k, v] : e.cost) {
      j["cost"]["parts"][k] = v;
      total += v;
    }
    j["cost"]["total"] = total;
  }
  j["accuracy"] = {{"formats", e.formats}, {"measured", json::array()}};
  for (const AccuracyFigure& a : e.accuracy)
    j["accuracy"]["measured"].push_back({{"on", a.on},
                                         {"logits_cosine", a.logits_cosine},
                                         {"worst_layer_cosine", a.worst_layer_cosine},
                                         {"source", a.source}});
  return j.dump(2) + "\n";
}

std::vector<std::pair<std::string, std::string>> estimate_figures(const Estimate& e) {
  // The same columns whatever is absent (empty cells), so the points of one
  // sweep share a header when some are not simulated (a weight format the
  // compiler does not lower) or the file gives no energies.
  std::vector<std::pair<std::string, std::string>> f;
  const bool sim = e.simulated;
  auto energy = [&](const std::string& prefix, const std::string& at, const PhaseEstimate* p) {
    const bool has = e.has_energy && p;
    f.push_back({prefix + "_energy_j" + at, has ? num(p->energy.total()) : ""});
    for (const auto& [k, v] : energy_parts(has ? p->energy : Energy{}))
      f.push_back({prefix + "_energy_" + k + "_j" + at, has ? num(v) : ""});
  };
  for (size_t i = 0; i < e.hand.size(); ++i) {
    const std::string at = "@" + std::to_string(e.hand[i].context);
    f.push_back({"hand_bytes_per_token" + at, num(e.hand[i].bytes())});
    f.push_back({"kv_read_bytes_per_token" + at, num(e.hand[i].kv_bytes)});
    f.push_back({"hand_roofline_tok_s" + at, num(e.hand[i].roofline_tok_s())});
    f.push_back({"hand_compute_tok_s" + at, num(e.hand[i].compute_tok_s())});
    const PhaseEstimate* d = sim ? &e.decode[i] : nullptr;
    f.push_back({"decode_tok_s" + at, d ? num(d->tok_s()) : ""});
    f.push_back({"decode_roofline_tok_s" + at, d ? num(d->roofline_tok_s()) : ""});
    f.push_back({"decode_bound" + at, d ? d->bound().name : ""});
    f.push_back({"decode_ddr_bytes" + at, d ? std::to_string(d->ddr_bytes) : ""});
    energy("decode", at, d);
  }
  if (e.req.prompt > 0) {
    f.push_back({"prefill_tokens", std::to_string(e.req.prompt)});
    f.push_back({"prefill_max_chunk", sim ? std::to_string(e.max_chunk) : ""});
    f.push_back({"prefill_tok_s", sim ? num(e.prefill.tok_s()) : ""});
    f.push_back({"prefill_roofline_tok_s", sim ? num(e.prefill.roofline_tok_s()) : ""});
    f.push_back({"prefill_bound", sim ? e.prefill.bound().name : ""});
    f.push_back({"ttft_s", sim ? num(e.ttft_s) : ""});
    f.push_back({"request_new_tokens", std::to_string(e.req.new_tokens)});
    f.push_back({"request_s", sim ? num(e.request_s) : ""});
    energy("prefill", "", sim ? &e.prefill : nullptr);
  }
  f.push_back({"preload_s", sim ? num(e.preload_s) : ""});
  f.push_back({"ddr_used_bytes", sim ? std::to_string(e.ddr_used) : ""});
  double total = 0;
  for (const auto& [k, v] : e.cost) total += v;
  f.push_back({"cost", e.has_cost ? num(total) : ""});
  for (const auto& [k, v] : e.cost) f.push_back({cost_column(k), e.has_cost ? num(v) : ""});
  // Cells hold no commas: "what=cosine;..." pairs, and any comma of a text as ';'.
  auto cell = [](std::string t) {
    for (char& ch : t)
      if (ch == ',') ch = ';';
    return t;
  };
  std::string acc;
  for (const AccuracyFigure& a : e.accuracy) acc += (acc.empty() ? "" : ";") + cell(a.on) + "=" + num(a.logits_cosine);
  f.push_back({"accuracy_logits_cosine", acc.empty() ? "not measured" : acc});
  f.push_back({"not_simulated", cell(e.not_simulated)});
  return f;
}

}  // namespace n3::cli
