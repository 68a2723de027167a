// The summary `n3 cosim` prints (rtl_bridge/cosim.cc print_summary), parsed
// once for every unit's tests: the header line, the classes, the cycle table
// and the first mismatch.
#pragma once
#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

namespace n3::test {

struct CosimSummary {
  int64_t run = -1, vectors = -1, mismatches = -1;  // -1: no header line of the unit asked for
  std::map<std::string, int64_t> classes;
  std::map<std::string, std::pair<double, double>> cycles;  // table row -> (rtl, model) per vector
  std::string first_mismatch;
};

// `unit` as it prints (`cosim <unit>: seed ...`): another unit's summary
// leaves run / vectors / mismatches at -1, so a test cannot read the wrong one.
inline CosimSummary parse_cosim_summary(const std::string& unit, const std::string& out) {
  CosimSummary s;
  const std::regex head("^cosim " + unit +
                        R"(: seed \d+, (\d+) of (\d+) vectors \((?:shard \d+/\d+|merged from \d+ shards)\), (\d+) mismatches$)");
  static const std::regex cls(R"(^  class (\S+) +(\d+)$)");
  // "%-36s %8lld %12.1f %12.1f %8.2f %9.2f": row names may hold spaces.
  static const std::regex cyc(R"(^  (\S.*?) +\d+ +([0-9.]+) +([0-9.]+) +\S+ +\S+$)");
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, head)) {
      s.run = std::stoll(m[1]);
      s.vectors = std::stoll(m[2]);
      s.mismatches = std::stoll(m[3]);
    } else if (std::regex_match(line, m, cls)) {
      s.classes[m[1]] = std::stoll(m[2]);
    } else if (std::regex_match(line, m, cyc)) {
      s.cycles[m[1]] = {std::stod(m[2]), std::stod(m[3])};
    } else if (line.rfind("  first mismatch: ", 0) == 0) {
      s.first_mismatch = line.substr(18);
    }
  }
  return s;
}

}  // namespace n3::test
