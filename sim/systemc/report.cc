#include "sim/systemc/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "isa/dis.h"

namespace n3::sc {

namespace {

// The destination tensor's descriptor name, or "" (control, unnamed).
std::string dst_name(const isa::Program& prog, uint32_t pc) {
  const uint64_t w = prog.code[pc];
  const isa::OpcodeDef* d = isa::def_of(w);
  if (!d) return "";
  const int f = isa::field_index(*d, "dst");
  if (f < 0) return "";
  return prog.name_of(isa::SymKind::Desc, static_cast<uint32_t>(isa::field_raw(w, d->fields[f])));
}

std::string mnemonic_of(const isa::Program& prog, uint32_t pc) {
  const uint64_t w = prog.code[pc];
  const isa::OpcodeDef* d = isa::def_of(w);
  const isa::SubopDef* s = d ? isa::subop_of(*d, w) : nullptr;
  return d && s ? isa::mnemonic(*d, *s) : "?";
}

// "layers.12.attn.q" -> ("12", "attn.q"); anything else -> ("-", name).
std::pair<std::string, std::string> split_layer(const std::string& n) {
  if (n.compare(0, 7, "layers.") == 0) {
    const size_t dot = n.find('.', 7);
    if (dot != std::string::npos) return {n.substr(7, dot - 7), n.substr(dot + 1)};
  }
  return {"-", n};
}

}  // namespace

namespace {
// Everything but the slices (which need the program to be named).
void add_counts(Totals& t, const Report& r, const std::string& label) {
  t.params = r.params;
  if (t.units.empty()) {
    for (const UnitReport& u : r.units) t.units.push_back({u.name, 0, 0, {}});
    for (const ResourceReport& m : r.resources) t.resources.push_back({m.name, 0, 0, m.timed, m.moves_bytes});
    t.tracks = r.tracks;
    t.open.assign(r.tracks.size(), -1);
  }
  for (size_t i = 0; i < r.resources.size() && i < t.resources.size(); ++i) {
    t.resources[i].busy_ps += r.resources[i].busy_ps;
    t.resources[i].bytes += r.resources[i].bytes;
  }
  for (size_t i = 0; i < r.units.size(); ++i) {
    UnitReport& u = t.units[i];
    u.instructions += r.units[i].instructions;
    u.busy_ps += r.units[i].busy_ps;
    for (const auto& [k, v] : r.units[i].stall_ps) {
      auto it = std::find_if(u.stall_ps.begin(), u.stall_ps.end(), [&](const auto& e) { return e.first == k; });
      if (it == u.stall_ps.end()) u.stall_ps.push_back({k, v});
      else it->second += v;
    }
  }
  for (UnitReport& u : t.units) std::sort(u.stall_ps.begin(), u.stall_ps.end());
  if (t.hp_port_bytes.size() < r.hp_port_bytes.size()) t.hp_port_bytes.resize(r.hp_port_bytes.size(), 0);
  for (size_t i = 0; i < r.hp_port_bytes.size(); ++i) t.hp_port_bytes[i] += r.hp_port_bytes[i];
  t.ddr_read += r.ddr_read;
  t.ddr_written += r.ddr_written;
  t.l2_bytes += r.l2_bytes;
  t.macs += r.macs;
  t.gemm_macs += r.gemm_macs;
  t.sfu_work += r.sfu_work;
  t.ddr_busy_ps += r.ddr_busy_ps;
  t.total_ps += r.total_ps;
  t.runs.push_back({label, r.total_ps});
}
}  // namespace

std::vector<std::string> sections_from_asm(const std::string& text, size_t instructions) {
  std::vector<std::string> out;
  std::string section;
  int layer = -1;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    const size_t semi = line.find(';');
    if (semi != std::string::npos) {
      std::string c = line.substr(semi + 1);
      c.erase(0, c.find_first_not_of(' '));
      int n = -1;
      char rest = 0;
      if (std::sscanf(c.c_str(), "layer %d%c", &n, &rest) >= 1 && n >= 0 && (rest == 0 || rest == ' ')) {
        layer = n;
        section.clear();
      } else if (!c.empty() && line.find_first_not_of(' ') == semi) {
        section = c.substr(0, c.find_first_of(":,"));
        if (section.rfind("unembed", 0) == 0) layer = -1;  // the model's tail follows the last layer
      }
      line.resize(semi);
    }
    // Strip leading "name:" labels; what is left (not a directive) is one instruction.
    size_t p = line.find_first_not_of(" \t");
    while (p != std::string::npos) {
      const size_t sp = line.find_first_of(" \t", p);
      const std::string tok = line.substr(p, sp == std::string::npos ? std::string::npos : sp - p);
      if (tok.size() < 2 || tok.back() != ':') break;
      p = sp == std::string::npos ? sp : line.find_first_not_of(" \t", sp);
    }
    if (p == std::string::npos || line[p] == '.') continue;
    std::string name = section.empty() ? "-" : section;
    out.push_back(layer >= 0 ? "layers." + std::to_string(layer) + "." + name : name);
  }
  if (out.size() != instructions) out.clear();
  return out;
}

void add_run(Totals& t, const Report& r, const isa::Program& prog, TraceMode mode, const std::string& label,
             const std::vector<std::string>* sections) {
  const double base = t.total_ps;
  add_counts(t, r, label);
  const bool by_section = sections && sections->size() == prog.code.size();
  // The operator an instruction belongs to (layer prefix included).
  auto key_of = [&](uint32_t pc) {
    if (by_section) return (*sections)[pc] + " " + mnemonic_of(prog, pc);
    const std::string tensor = dst_name(prog, pc);
    return tensor.empty() ? mnemonic_of(prog, pc) : tensor;
  };
  for (const SliceReport& s : r.slices) {
    if (s.track == 0 || s.kind != 0) continue;
    const auto [layer, op] = split_layer(key_of(s.pc));
    t.layer_ps[layer] += s.dur_ps;
    t.op_ps[op] += s.dur_ps;
  }
  if (mode == TraceMode::None) return;
  for (const SliceReport& s : r.slices) {
    const size_t tr = static_cast<size_t>(s.track);
    const std::string tensor = by_section ? (*sections)[s.pc] : dst_name(prog, s.pc);
    const double b = base + s.start_ps, e = b + s.dur_ps;
    // A transfer is named by its initiator, its direction and the operator it serves.
    const std::string xfer =
        s.kind == 0 ? "" : std::string(isa::name_of(static_cast<isa::Engine>(s.engine))) + (s.kind == 1 ? " rd " : " wr ");
    if (mode == TraceMode::Aggregate) {
      // A section's instructions merge whatever their mnemonic: one slice per part of a layer.
      // Transfers merge per section whatever engine or direction (the L2
      // ports interleave engines' transfers; by initiator they barely merge).
      const std::string name = (s.kind != 0 && by_section) ? tensor : xfer + (by_section ? tensor : key_of(s.pc));
      if (t.open[tr] >= 0 && t.slices[static_cast<size_t>(t.open[tr])].name == name) {
        NamedSlice& o = t.slices[static_cast<size_t>(t.open[tr])];
        o.end_ps = e;
        ++o.instructions;
        continue;
      }
      t.open[tr] = long(t.slices.size());
      t.slices.push_back({s.track, name, b, e, 1, s.kind != 0});
    } else {
      const std::string what = s.kind == 0 ? isa::disassemble_word(prog.code[s.pc], &prog, s.pc) : xfer + mnemonic_of(prog, s.pc);
      // The tensor it produces: the destination's name, in its layer where the
      // section gives one ("-> layers.3.q (attention)"), else the section.
      std::string produced = tensor;
      if (by_section) {
        const std::string dst = dst_name(prog, s.pc);
        const auto [layer, part] = split_layer(tensor);
        if (!dst.empty()) produced = (layer == "-" || dst.rfind("layers.", 0) == 0 ? dst : "layers." + layer + "." + dst) + " (" + part + ")";
      }
      t.slices.push_back({s.track, what + (produced.empty() ? "" : " -> " + produced), b, e, 1, s.kind != 0});
    }
  }
}

namespace {
Totals totals_of(const Report& r, const isa::Program& prog, TraceMode mode) {
  Totals t;
  add_run(t, r, prog, mode);
  return t;
}
}  // namespace

std::string summary_line(const Report& r) {
  Totals t;
  add_counts(t, r, "");
  return summary_line(t);
}

std::string stats_json(const Report& r, const isa::Program& prog, bool timing_only) {
  return stats_json(totals_of(r, prog, TraceMode::None), timing_only);
}

std::string trace_json(const Report& r, const isa::Program& prog, bool aggregate) {
  return trace_json(totals_of(r, prog, aggregate ? TraceMode::Aggregate : TraceMode::Plain), aggregate);
}

std::string summary_line(const Totals& r) {
  // Each engine against its own peak: prefill runs on the GEMM array, whose
  // peak is many times the GEMV cores'.
  const double cyc = r.cycles(r.total_ps);
  const double gemv_peak = double(r.params.gemv_macs_per_clk_total()) * cyc;
  const double gemm_peak = double(r.params.gemm_macs_per_clk_total()) * cyc;
  char b[320];
  std::snprintf(b, sizeof b,
                "n3 sim: %.0f cycles at %.0f MHz (%.3f us), DDR %.3f GB/s achieved, MAC utilisation GEMV %.1f%% GEMM %.1f%%",
                cyc, r.params.clocks.core_mhz.value, r.total_ps * 1e-6,
                r.total_ps > 0 ? double(r.ddr_read + r.ddr_written) / (r.total_ps * 1e-12) / 1e9 : 0.0,
                gemv_peak > 0 ? 100.0 * double(r.macs - r.gemm_macs) / gemv_peak : 0.0,
                gemm_peak > 0 ? 100.0 * double(r.gemm_macs) / gemm_peak : 0.0);
  return b;
}

std::string stats_json(const Totals& r, bool timing_only) {
  const timing::Params& p = r.params;
  nlohmann::ordered_json j;
  j["hw"] = p.name;
  j["timing_only"] = timing_only;
  j["total_cycles"] = r.cycles(r.total_ps);
  j["time_s"] = r.total_ps * 1e-12;
  j["core_mhz"] = p.clocks.core_mhz.value;
  j["axi_mhz"] = p.clocks.axi_mhz.value;
  for (const UnitReport& u : r.units) {
    auto& ju = j["units"][u.name];
    ju["instructions"] = u.instructions;
    ju["busy_cycles"] = r.cycles(u.busy_ps);
    double stall = 0;
    for (const auto& [k, v] : u.stall_ps)
      if (k != "idle") stall += v;
    ju["stall_cycles"] = r.cycles(stall);
    ju["stall_reasons"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : u.stall_ps) ju["stall_reasons"][k] = r.cycles(v);
  }
  for (size_t i = 0; i < r.hp_port_bytes.size(); ++i) j["bytes_per_port"]["hp" + std::to_string(i)] = r.hp_port_bytes[i];
  j["bytes_per_port"]["l2"] = r.l2_bytes;
  // The memory side, unit by unit: busy time (a transfer's occupancy, latency
  // excluded) and bytes; the weight buffers' bytes only; the GEMV cores' MAC time only.
  j["memory_units"] = nlohmann::ordered_json::object();
  for (const ResourceReport& m : r.resources) {
    auto& jm = j["memory_units"][m.name];
    if (m.timed) {
      jm["busy_cycles"] = r.cycles(m.busy_ps);
      jm["busy_fraction"] = r.total_ps > 0 ? m.busy_ps / r.total_ps : 0.0;
    }
    if (m.moves_bytes) jm["bytes"] = m.bytes;
  }
  const double secs = r.total_ps * 1e-12;
  auto& bw = j["bandwidth"];
  bw["ddr_bytes_read"] = r.ddr_read;
  bw["ddr_bytes_written"] = r.ddr_written;
  bw["achieved_gbps"] = secs > 0 ? double(r.ddr_read + r.ddr_written) / secs / 1e9 : 0.0;
  bw["ddr_peak_gbps"] = p.memory.ddr_peak_gbps.value;
  bw["hp_ports_peak_gbps"] = p.hp_bytes_per_s(p.memory.hp_ports.value) / 1e9;
  bw["roofline_gbps"] = p.ddr_roofline_bytes_per_s() / 1e9;
  bw["ddr_busy_fraction"] = r.total_ps > 0 ? r.ddr_busy_ps / r.total_ps : 0.0;
  auto& mu = j["mac_utilisation"];
  mu["macs"] = r.macs;
  mu["gemv_macs"] = r.macs - r.gemm_macs;
  mu["gemm_macs"] = r.gemm_macs;
  mu["gemv_peak_macs_per_clk"] = p.gemv_macs_per_clk_total();
  mu["gemm_peak_macs_per_clk"] = p.gemm_macs_per_clk_total();
  mu["gemv_utilisation"] =
      r.total_ps > 0 ? double(r.macs - r.gemm_macs) / (double(p.gemv_macs_per_clk_total()) * r.cycles(r.total_ps)) : 0.0;
  mu["gemm_utilisation"] =
      r.total_ps > 0 ? double(r.gemm_macs) / (double(p.gemm_macs_per_clk_total()) * r.cycles(r.total_ps))
                     : 0.0;
  j["sfu_element_passes"] = r.sfu_work;
  j["layers"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.layer_ps) j["layers"][k] = r.cycles(v);
  j["operators"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.op_ps) j["operators"][k] = r.cycles(v);
  if (r.runs.size() > 1 || (r.runs.size() == 1 && !r.runs[0].first.empty())) {
    j["runs"] = nlohmann::ordered_json::array();
    for (const auto& [label, ps] : r.runs) j["runs"].push_back({{"program", label}, {"cycles", r.cycles(ps)}});
  }
  return j.dump(1) + "\n";
}

std::string trace_json(const Totals& r, bool aggregate) {
  nlohmann::ordered_json ev = nlohmann::ordered_json::array();
  for (size_t t = 0; t < r.tracks.size(); ++t) {
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", t}, {"args", {{"name", r.tracks[t]}}}});
    ev.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", t}, {"args", {{"sort_index", t}}}});
  }
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "npu " + r.params.name}}}});
  for (const NamedSlice& s : r.slices) {
    nlohmann::ordered_json e = {{"name", s.name}, {"cat", s.transfer ? "transfer" : "instruction"}, {"ph", "X"}, {"pid", 1}, {"tid", s.track},
                                {"ts", s.start_ps * 1e-6}, {"dur", (s.end_ps - s.start_ps) * 1e-6}};
    if (aggregate) e["args"] = {{s.transfer ? "transfers" : "instructions", s.instructions}};
    ev.push_back(e);
  }
  nlohmann::ordered_json j;
  j["displayTimeUnit"] = "ns";
  j["traceEvents"] = ev;
  return j.dump() + "\n";
}

}  // namespace n3::sc
