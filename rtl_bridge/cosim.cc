#include "rtl_bridge/cosim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_util.h"
#include "base/rng.h"
#include "golden/hw_config.h"
#include "golden/json_read.h"

namespace n3::rtl {

std::mt19937_64 vector_rng(uint64_t seed, int64_t index) {
  // seed_seq mixes both words, so neighbouring (seed, index) pairs give
  // unrelated streams; vector i is the same whichever shard runs it.
  std::seed_seq s{uint32_t(seed), uint32_t(seed >> 32), uint32_t(uint64_t(index)), uint32_t(uint64_t(index) >> 32)};
  return std::mt19937_64(s);
}

std::vector<int64_t> shard_indices(const CosimOptions& o) {
  std::vector<int64_t> out;
  for (int64_t i = o.shard; i < o.vectors; i += o.shards) out.push_back(i);
  return out;
}

CosimReport run_cosim(const CosimOptions& o, std::ostream& log) {
  require(o.vectors >= 1, "--vectors must be at least 1");
  require(o.shards >= 1 && o.shard >= 0 && o.shard < o.shards,
          "--shard must be i/n with 0 <= i < n (is " + std::to_string(o.shard) + "/" + std::to_string(o.shards) + ")");
  const auto t0 = std::chrono::steady_clock::now();
  // The units, each in its cosim_<unit>.cc.
  static const std::map<std::string, CosimReport (*)(const CosimOptions&, std::ostream&)> units = {
      {"decoder", cosim_decoder},
      {"fp", cosim_fp},
#ifdef N3_HAVE_RTL_GEMV
      {"gemv", cosim_gemv},
#endif
#ifdef N3_HAVE_RTL_GEMM
      {"gemm", cosim_gemm},
#endif
#ifdef N3_HAVE_RTL_DMA
      {"dma", cosim_dma},
#endif
#ifdef N3_HAVE_RTL_CTL
      {"ctl", cosim_ctl},
#endif
#ifdef N3_HAVE_RTL_SFU
      {"sfu", cosim_sfu},
      {"sfu-count", cosim_sfu_count},
#endif
#ifdef N3_HAVE_RTL_CDC
      {"cdc", cosim_cdc},
#endif
  };
  const auto it = units.find(o.unit);
  require(it != units.end(),
          "--unit must be 'decoder', 'gemv', 'gemm', 'dma', 'sfu', 'sfu-count', 'fp', 'ctl' or 'cdc' (is '" + o.unit + "')");
  CosimReport r = it->second(o, log);
  r.unit = o.unit;
  // The design point: shards of one regression must have run the same
  // hardware file (its name and the XXH64 of its text), or --merge refuses.
  const std::string text = read_file_text(o.hw);
  Xxh64 h;
  h.update(text.data(), text.size());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.digest()));
  r.design = load_hw_config(o.hw).name + " (" + hex + ")";
#ifdef N3_HAVE_RTL_GEMM
  // The GEMM array may be built smaller than the file's (N3_RTL_GEMM_ROWS /
  // _COLS): a shard of another array is another design.
  if (o.unit == "gemm")
    r.design += " array " + std::to_string(N3_RTL_GEMM_ROWS) + "x" + std::to_string(N3_RTL_GEMM_COLS) + "x" +
                std::to_string(N3_RTL_GEMM_MPE);
#endif
  r.seed = o.seed;
  r.vectors = o.vectors;
  r.shard = o.shard;
  r.shards = o.shards;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string report_json(const CosimReport& r) {
  nlohmann::ordered_json j;
  j["unit"] = r.unit;
  j["design"] = r.design;
  j["seed"] = r.seed;
  j["vectors"] = r.vectors;
  j["shard"] = r.shard;
  j["shards"] = r.shards;
  j["run"] = r.run;
  j["mismatches"] = r.mismatches;
  j["first_mismatch"] = r.first_mismatch;
  j["first_mismatch_index"] = r.first_mismatch_index;
  j["classes"] = r.classes;
  nlohmann::ordered_json c = nlohmann::ordered_json::object();
  for (const auto& [k, s] : r.cycles)
    c[k] = {{"count", s.count}, {"rtl_cycles", s.rtl_cycles}, {"model_cycles", s.model_cycles}, {"worst_rel", s.worst_rel}};
  j["cycles"] = c;
  j["wall_s"] = r.wall_s;
  j["rtl_cycles"] = r.rtl_cycles;
  return j.dump(1) + "\n";
}

CosimReport report_from_json(const std::string& text, const std::string& where) {
  CosimReport r;
  try {
    const nlohmann::json j = parse_json_file(text, where);  // a repeated key is refused there
    r.unit = j.at("unit").get<std::string>();
    r.design = j.at("design").get<std::string>();
    r.seed = j.at("seed").get<uint64_t>();
    r.vectors = j.at("vectors").get<int64_t>();
    r.shard = j.at("shard").get<int>();
    r.shards = j.at("shards").get<int>();
    r.run = j.at("run").get<int64_t>();
    r.mismatches = j.at("mismatches").get<int64_t>();
    r.first_mismatch = j.at("first_mismatch").get<std::string>();
    r.first_mismatch_index = j.at("first_mismatch_index").get<int64_t>();
    r.classes = j.at("classes").get<std::map<std::string, int64_t>>();
    for (const auto& [k, v] : j.at("cycles").items())
      r.cycles[k] = {v.at("count").get<int64_t>(), v.at("rtl_cycles").get<double>(), v.at("model_cycles").get<double>(),
                     v.at("worst_rel").get<double>()};
    r.wall_s = j.at("wall_s").get<double>();
    r.rtl_cycles = j.at("rtl_cycles").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not an n3 cosim report (" + std::string(e.what()) + ")");
  }
  return r;
}

CosimReport merge_reports(const std::vector<CosimReport>& shards) {
  require(!shards.empty(), "n3 cosim --merge: no reports");
  const CosimReport& a = shards.front();
  CosimReport m;
  m.unit = a.unit;
  m.design = a.design;
  m.seed = a.seed;
  m.vectors = a.vectors;
  m.shards = a.shards;
  m.merged = true;
  std::set<int> seen;
  for (const CosimReport& r : shards) {
    require(r.unit == a.unit && r.seed == a.seed && r.vectors == a.vectors && r.shards == a.shards,
            "n3 cosim --merge: shard " + std::to_string(r.shard) + " is of another run (unit " + r.unit + ", seed " +
                std::to_string(r.seed) + ", " + std::to_string(r.vectors) + " vectors, " + std::to_string(r.shards) +
                " shards)");
    require(r.design == a.design, "n3 cosim --merge: shard " + std::to_string(r.shard) + " ran hardware " + r.design +
                                      ", shard " + std::to_string(a.shard) + " " + a.design + ": not one regression");
    require(seen.insert(r.shard).second, "n3 cosim --merge: shard " + std::to_string(r.shard) + " given twice");
    m.run += r.run;
    m.mismatches += r.mismatches;
    // The first mismatch of the merged run is the one with the lowest index.
    if (r.first_mismatch_index >= 0 && (m.first_mismatch_index < 0 || r.first_mismatch_index < m.first_mismatch_index)) {
      m.first_mismatch_index = r.first_mismatch_index;
      m.first_mismatch = r.first_mismatch;
    }
    for (const auto& [k, n] : r.classes) m.classes[k] += n;
    for (const auto& [k, s] : r.cycles) {
      ShapeCycles& t = m.cycles[k];
      t.count += s.count;
      t.rtl_cycles += s.rtl_cycles;
      t.model_cycles += s.model_cycles;
      t.worst_rel = std::max(t.worst_rel, s.worst_rel);
    }
    m.wall_s += r.wall_s;
    m.rtl_cycles += r.rtl_cycles;
  }
  for (int i = 0; i < a.shards; ++i)
    require(seen.count(i), "n3 cosim --merge: shard " + std::to_string(i) + "/" + std::to_string(a.shards) + " is missing");
  require(m.run == m.vectors, "n3 cosim --merge: the shards ran " + std::to_string(m.run) + " of " +
                                  std::to_string(m.vectors) + " vectors");
  return m;
}

void print_summary(const CosimReport& r, std::ostream& out) {
  char line[512];
  // A merged report covers every shard: say so rather than name one.
  const std::string part = r.merged ? "merged from " + std::to_string(r.shards) + " shards"
                                    : "shard " + std::to_string(r.shard) + "/" + std::to_string(r.shards);
  std::snprintf(line, sizeof line, "cosim %s: seed %llu, %lld of %lld vectors (%s), %lld mismatches\n", r.unit.c_str(),
                static_cast<unsigned long long>(r.seed), static_cast<long long>(r.run), static_cast<long long>(r.vectors),
                part.c_str(), static_cast<long long>(r.mismatches));
  out << line;
  for (const auto& [k, n] : r.classes) {
    std::snprintf(line, sizeof line, "  class %-28s %lld\n", k.c_str(), static_cast<long long>(n));
    out << line;
  }
  if (!r.cycles.empty()) {
    out << "  cycles per vector, RTL vs SystemC model formula:\n";
    std::snprintf(line, sizeof line, "  %-36s %8s %12s %12s %8s %9s\n", "shape", "vectors", "rtl", "model", "mean%",
                  "worst%");
    out << line;
    for (const auto& [k, s] : r.cycles) {
      const double rtl = s.rtl_cycles / double(std::max<int64_t>(s.count, 1));
      const double mod = s.model_cycles / double(std::max<int64_t>(s.count, 1));
      std::snprintf(line, sizeof line, "  %-36s %8lld %12.1f %12.1f %8.2f %9.2f\n", k.c_str(),
                    static_cast<long long>(s.count), rtl, mod, rtl > 0 ? 100.0 * (mod - rtl) / rtl : 0.0,
                    100.0 * s.worst_rel);
      out << line;
    }
  }
  if (r.wall_s > 0 && r.rtl_cycles > 0) {
    std::snprintf(line, sizeof line, "  wall %.2f s, %.0f RTL cycles simulated (%.0f cycles/s)\n", r.wall_s,
                  r.rtl_cycles, r.rtl_cycles / r.wall_s);
    out << line;
  } else if (r.wall_s > 0) {  // a combinational unit: no cycles, vectors per second
    std::snprintf(line, sizeof line, "  wall %.2f s, %.0f vectors/s\n", r.wall_s, double(r.run) / r.wall_s);
    out << line;
  }
  if (r.mismatches) out << "  first mismatch: " << r.first_mismatch << "\n";
}

}  // namespace n3::rtl
