// `n3 sim --rtl LIST`: the engines to run on their Verilated RTL, a comma
// list of unit names (docs/rtl.md). Read here, in every build, so a build
// without Verilator refuses it with the same messages.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/error.h"
#include "host_driver/cli_util.h"

namespace n3::cli {

// "decoder,gemv,gemm" -> {"decoder", "gemv", "gemm"}; "" -> {}. Throws (one
// line) on an unknown name, an empty item or a name given twice. (A unit
// this build lacks is refused when the units are elaborated,
// rtl::use_rtl_units.)
inline std::vector<std::string> parse_rtl_list(const std::string& list) {
  std::vector<std::string> units;
  if (list.empty()) return units;
  size_t at = 0;
  while (true) {
    const size_t comma = list.find(',', at);
    const std::string u = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    require(u == "decoder" || u == "ctl" || u == "gemv" || u == "gemm" || u == "dma" || u == "sfu",
            "--rtl: the RTL units that can take their model's place are: decoder, ctl, gemv, gemm, dma, sfu (is '" + u + "' in '" +
                list + "')");
    for (const std::string& v : units) require(v != u, "--rtl: '" + u + "' is given twice in '" + list + "'");
    units.push_back(u);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return units;
}

// The RTL options both forms of `n3 sim` take: --rtl LIST, --vcd F (older
// spelling --rtl-vcd) and --vcd-instructions N.
struct RtlCli {
  std::string list, vcd, old_vcd;
  int64_t vcd_instructions = -1;  // each unit's waveform holds its first N instructions (-1: all)

  void add_options(boost::program_options::options_description& d) {
    namespace po = boost::program_options;
    d.add_options()("rtl", po::value(&list),
                    "systemc: run these units on their Verilated RTL, a comma list (decoder, ctl, gemv, gemm, dma, sfu)")(
        "vcd", po::value(&vcd),
        "systemc --rtl: the RTL's waveform, FST (F.fst; GTKWave opens it; with several units one file per unit, "
        "F.gemv.fst ...)")("rtl-vcd", po::value(&old_vcd), "the older spelling of --vcd")(
        "vcd-instructions", po::value(&vcd_instructions),
        "--vcd: each RTL unit's waveform ends after its first N instructions (default: the whole run)");
  }

  // The units, after checking the options against each other; throws (one line).
  std::vector<std::string> units(const boost::program_options::variables_map& vm, bool systemc, bool timing_only) {
    const std::vector<std::string> u = parse_rtl_list(list);
    require(list.empty() || systemc, "--rtl needs --backend systemc");
    require(list.empty() || !timing_only, "--rtl needs the data: drop --timing-only");
    require(vcd.empty() || old_vcd.empty(), "--vcd and --rtl-vcd are one option: give it once");
    if (vcd.empty()) vcd = old_vcd;
    check_output(vcd, "--vcd");
    require(vcd.empty() || !list.empty(), "--vcd needs --rtl (decoder, ctl, gemv, gemm, dma, sfu)");
    require(!vm.count("vcd-instructions") || !vcd.empty(), "--vcd-instructions needs --vcd F.fst");
    require(!vm.count("vcd-instructions") || vcd_instructions >= 1,
            "--vcd-instructions must be 1 or more (is " + std::to_string(vcd_instructions) + ")");
    return u;
  }
};

}  // namespace n3::cli
