// `n3 sim --rtl LIST`: the engines to run on their Verilated RTL, a comma
// list of unit names (docs/rtl.md). Read here, in every build, so a build
// without Verilator refuses it with the same messages.
#pragma once
#include <string>
#include <vector>

#include "base/error.h"

namespace n3::cli {

// "gemv,dma" -> {"gemv", "dma"}; "" -> {}. Throws (one line) on an unknown
// name, an empty item, a name given twice, or a unit not built yet (sfu).
inline std::vector<std::string> parse_rtl_list(const std::string& list) {
  std::vector<std::string> units;
  if (list.empty()) return units;
  size_t at = 0;
  while (true) {
    const size_t comma = list.find(',', at);
    const std::string u = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    require(u != "sfu", "--rtl sfu: the RTL SFU is not built yet (the RTL units are: gemv, dma)");
    require(u == "gemv" || u == "dma",
            "--rtl: the RTL units that can replace an engine are: gemv, dma (is '" + u + "' in '" + list + "')");
    for (const std::string& v : units) require(v != u, "--rtl: '" + u + "' is given twice in '" + list + "'");
    units.push_back(u);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return units;
}

}  // namespace n3::cli
