// The hardware file: capacities, clocks (and, as later parts land, numerics
// formats and timing) of one NPU design point. Every parameter carries the
// source of its value (`{value: 400, source: "pccx v002 docs"}`), so a
// designer can tell measured numbers from assumptions.
#pragma once
#include <map>
#include <string>

#include "golden/numerics/formats_config.h"

namespace n3 {

struct HwParam {
  std::string text;   // the value as written
  double number = 0;  // when numeric
  bool is_number = false;
  std::string source;
};

struct HwConfig {
  std::string name, description, path;
  std::map<std::string, HwParam> params;  // "section.key"

  bool has(const std::string& key) const { return params.count(key) > 0; }
  double num(const std::string& key) const;         // throws naming the key and file
  int64_t integer(const std::string& key) const;    // throws unless integral
  const std::string& str(const std::string& key) const;
};

// Known keys: section.key -> (required, numeric). Unknown keys are errors.
HwConfig load_hw_config(const std::string& path);
HwConfig parse_hw_config(const std::string& text, const std::string& where);
// The numerics section as num::Formats; throws naming the file and the
// fields of an unknown value or an incompatible combination.
num::Formats numerics_formats(const HwConfig& hw);
// configs/hw/kv260.yaml, found relative to the working directory or the source tree.
std::string default_hw_path();

}  // namespace n3
