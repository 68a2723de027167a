#include "host_driver/estimate_energy.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>

#include "base/error.h"
#include "base/file_util.h"

#ifndef N3_SOURCE_DIR
#define N3_SOURCE_DIR "."
#endif

namespace n3::cli {

Energy energy_per_token(const HwConfig& hw, double ddr_bytes, double l2_bytes, double macs, double sfu_passes,
                        double seconds, double tokens) {
  const double pj = 1e-12 / tokens;
  Energy e;
  e.ddr = ddr_bytes * hw.energy.ddr_pj_per_byte.value * pj;
  e.l2 = l2_bytes * hw.energy.l2_pj_per_byte.value * pj;
  e.mac = macs * hw.energy.mac_pj.value * pj;
  e.sfu = sfu_passes * hw.energy.sfu_pj_per_elem.value * pj;
  e.statik = hw.energy.static_mw.value * 1e-3 * seconds / tokens;
  return e;
}

namespace {

std::string accuracy_path() {
  const std::string rel = "configs/numerics/accuracy.yaml";
  return file_exists(rel) ? rel : std::string(N3_SOURCE_DIR) + "/" + rel;
}

struct Variant {
  num::Formats formats;
  std::vector<AccuracyFigure> measured;
};

// The file, parsed once per process; every entry's formats through the numerics core's own setter.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = [] {
    const std::string path = accuracy_path();
    require(file_exists(path), path + ": no such file (the measured accuracy of numerics formats)");
    std::vector<Variant> out;
    YAML::Node root;
    try {
      root = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
      throw Error(path + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg);
    }
    require(root["variants"] && root["variants"].IsSequence(), path + ": expected 'variants:', a list");
    for (const YAML::Node& n : root["variants"]) {
      const std::string at = path + ":" + std::to_string(n.Mark().line + 1) + ": ";
      require(n.IsMap() && n["formats"] && n["formats"].IsMap() && n["measured"] && n["measured"].IsSequence(),
              at + "a variant is {formats: {...}, measured: [...]}");
      Variant var;
      for (const auto& kv : n["formats"]) {
        const std::string bad = num::set_formats_field(var.formats, kv.first.as<std::string>(), kv.second.as<std::string>());
        require(bad.empty(), at + bad);
      }
      for (const YAML::Node& m : n["measured"]) {
        const std::string mat = path + ":" + std::to_string(m.Mark().line + 1) + ": ";
        require(m.IsMap() && m["on"] && m["logits_cosine"] && m["worst_layer_cosine"] && m["source"],
                mat + "a measurement is {on, logits_cosine, worst_layer_cosine, source}");
        try {
          var.measured.push_back({m["on"].as<std::string>(), m["logits_cosine"].as<double>(),
                                  m["worst_layer_cosine"].as<double>(), -1, m["source"].as<std::string>()});
        } catch (const YAML::Exception&) {
          throw Error(mat + "logits_cosine and worst_layer_cosine must be numbers");
        }
      }
      out.push_back(var);
    }
    // Each measurement beside the same comparison's default-format figure, so the cost reads at a glance.
    const num::Formats defaults;
    for (Variant& var : out)
      for (AccuracyFigure& a : var.measured)
        for (const Variant& d : out)
          if (d.formats == defaults)
            for (const AccuracyFigure& b : d.measured)
              if (b.on == a.on) a.default_logits_cosine = b.logits_cosine;
    return out;
  }();
  return v;
}

}  // namespace

std::vector<AccuracyFigure> measured_accuracy(const num::Formats& f) {
  for (const Variant& v : variants())
    if (v.formats == f) return v.measured;
  return {};
}

std::string accuracy_text(const std::vector<AccuracyFigure>& a) {
  if (a.empty()) return "not measured";
  std::string s;
  for (const AccuracyFigure& m : a) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s: logits cosine %.6f", m.on.c_str(), m.logits_cosine);
    s += (s.empty() ? "" : "; ") + std::string(buf);
    if (m.default_logits_cosine >= 0 && m.default_logits_cosine != m.logits_cosine) {
      std::snprintf(buf, sizeof buf, " (default formats %.6f)", m.default_logits_cosine);
      s += buf;
    }
    std::snprintf(buf, sizeof buf, ", worst layer %.6f", m.worst_layer_cosine);
    s += buf;
  }
  return s;
}

}  // namespace n3::cli
