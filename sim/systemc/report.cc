#include "sim/systemc/report.h"

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

std::string summary_line(const Report& r) {
  const double peak = double(r.params.gemv_macs_per_clk_total()) * r.cycles(r.total_ps);
  char b[256];
  std::snprintf(b, sizeof b, "n3 sim: %.0f cycles at %.0f MHz (%.3f us), DDR %.3f GB/s achieved, GEMV MAC utilisation %.1f%%",
                r.cycles(r.total_ps), r.params.core_mhz, r.total_ps * 1e-6,
                r.total_ps > 0 ? double(r.ddr_read + r.ddr_written) / (r.total_ps * 1e-12) / 1e9 : 0.0,
                peak > 0 ? 100.0 * double(r.macs) / peak : 0.0);
  return b;
}

std::string stats_json(const Report& r, const isa::Program& prog, bool timing_only) {
  const timing::Params& p = r.params;
  nlohmann::ordered_json j;
  j["hw"] = p.name;
  j["timing_only"] = timing_only;
  j["total_cycles"] = r.cycles(r.total_ps);
  j["time_s"] = r.total_ps * 1e-12;
  j["core_mhz"] = p.core_mhz;
  j["axi_mhz"] = p.axi_mhz;
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
  const double secs = r.total_ps * 1e-12;
  auto& bw = j["bandwidth"];
  bw["ddr_bytes_read"] = r.ddr_read;
  bw["ddr_bytes_written"] = r.ddr_written;
  bw["achieved_gbps"] = secs > 0 ? double(r.ddr_read + r.ddr_written) / secs / 1e9 : 0.0;
  bw["ddr_peak_gbps"] = p.ddr_peak_gbps;
  bw["hp_ports_peak_gbps"] = p.hp_bytes_per_s(p.hp_ports) / 1e9;
  bw["roofline_gbps"] = p.ddr_bytes_per_s(p.hp_ports) / 1e9;
  bw["ddr_busy_fraction"] = r.total_ps > 0 ? r.ddr_busy_ps / r.total_ps : 0.0;
  auto& mu = j["mac_utilisation"];
  mu["macs"] = r.macs;
  mu["gemv_peak_macs_per_clk"] = p.gemv_macs_per_clk_total();
  mu["gemv_utilisation"] = r.total_ps > 0 ? double(r.macs) / (double(p.gemv_macs_per_clk_total()) * r.cycles(r.total_ps)) : 0.0;
  j["sfu_element_passes"] = r.sfu_work;
  std::map<std::string, double> layers, ops;
  for (const SliceReport& s : r.slices) {
    if (s.track == 0) continue;
    std::string n = dst_name(prog, s.pc);
    if (n.empty()) n = mnemonic_of(prog, s.pc);
    const auto [layer, op] = split_layer(n);
    layers[layer] += s.dur_ps;
    ops[op] += s.dur_ps;
  }
  j["layers"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : layers) j["layers"][k] = r.cycles(v);
  j["operators"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : ops) j["operators"][k] = r.cycles(v);
  return j.dump(1) + "\n";
}

std::string trace_json(const Report& r, const isa::Program& prog, bool aggregate) {
  nlohmann::ordered_json ev = nlohmann::ordered_json::array();
  for (size_t t = 0; t < r.units.size(); ++t) {
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", t}, {"args", {{"name", r.units[t].name}}}});
  }
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "npu " + r.params.name}}}});
  // Slices in start order per track (a unit's slices never overlap).
  struct Open {
    bool open = false;
    std::string name;
    double start = 0, end = 0;
    uint64_t count = 0;
  };
  std::vector<Open> cur(r.units.size());
  auto flush = [&](size_t t) {
    Open& o = cur[t];
    if (!o.open) return;
    nlohmann::ordered_json e = {{"name", o.name}, {"ph", "X"}, {"pid", 1}, {"tid", t},
                                {"ts", o.start * 1e-6}, {"dur", (o.end - o.start) * 1e-6}};
    if (aggregate) e["args"] = {{"instructions", o.count}};
    ev.push_back(e);
    o.open = false;
  };
  for (const SliceReport& s : r.slices) {
    const size_t t = static_cast<size_t>(s.track);
    const std::string tensor = dst_name(prog, s.pc);
    std::string name;
    if (aggregate) {
      name = tensor.empty() ? mnemonic_of(prog, s.pc) : tensor;
      if (cur[t].open && cur[t].name == name) {
        cur[t].end = s.start_ps + s.dur_ps;
        ++cur[t].count;
        continue;
      }
    } else {
      name = isa::disassemble_word(prog.code[s.pc], &prog, s.pc) + (tensor.empty() ? "" : " -> " + tensor);
    }
    flush(t);
    cur[t] = {true, name, s.start_ps, s.start_ps + s.dur_ps, 1};
    if (!aggregate) flush(t);
  }
  for (size_t t = 0; t < cur.size(); ++t) flush(t);
  nlohmann::ordered_json j;
  j["displayTimeUnit"] = "ns";
  j["traceEvents"] = ev;
  return j.dump() + "\n";
}

}  // namespace n3::sc
