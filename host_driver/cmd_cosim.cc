// n3 cosim --unit decoder|gemv|gemm|dma|sfu|sfu-count|fp|ctl|cdc [--vectors N] [--seed S] [--shard i/n]
//          [--vcd F] [--hw H.yaml] [--report F.json]
// n3 cosim --merge A.json B.json ...
// Runs an RTL unit against its C++ counterpart (rtl_bridge/cosim.h,
// docs/rtl.md) and prints the summary; --report writes the shard's JSON
// report, --merge checks and merges the reports of a sharded run. Exit 0: all
// vectors match; 1: some differ; 2: bad input (or a build without Verilator).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "host_driver/cli_util.h"
#ifdef N3_HAVE_RTL
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/waveform.h"
#endif

namespace n3::cli {

#ifdef N3_HAVE_RTL
namespace {

void parse_shard(const std::string& s, rtl::CosimOptions* o) {
  const std::string what = "--shard expects i/n with 0 <= i < n, got '" + s + "'";
  const size_t slash = s.find('/');
  require(slash != std::string::npos && slash > 0 && slash + 1 < s.size(), what);
  try {
    size_t a = 0, b = 0;
    o->shard = std::stoi(s.substr(0, slash), &a);
    o->shards = std::stoi(s.substr(slash + 1), &b);
    require(a == slash && b == s.size() - slash - 1, what);
  } catch (const std::logic_error&) {
    throw Error(what);
  }
  require(o->shards >= 1 && o->shard >= 0 && o->shard < o->shards, what);
}

}  // namespace
#endif

int cmd_cosim(const Args& a) {
  po::options_description d("n3 cosim options");
  std::string shard = "0/1", report;
  std::vector<std::string> merge;
  std::string unit, vcd, hw;
  int64_t vectors = 10000;
  uint64_t seed = 1;
  d.add_options()("unit", po::value(&unit), "RTL unit: decoder, gemv, gemm, dma, sfu, sfu-count, fp, ctl or cdc")(
      "vectors", po::value(&vectors)->default_value(10000), "vectors of the whole run (over all shards)")(
      "seed", po::value(&seed)->default_value(1), "seed: vector i depends only on (seed, i)")(
      "shard", po::value(&shard)->default_value("0/1"), "i/n: run the vectors whose index % n == i")(
      "vcd", po::value(&vcd), "write the RTL's waveform to this file: FST (F.fst; GTKWave opens it)")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file (the GEMV engine's formats, the clocks)")(
      "report", po::value(&report), "write this shard's JSON report (for --merge)")(
      "merge", po::value(&merge)->multitoken(), "merge the JSON reports of a sharded run and print the summary");
  po::variables_map vm;
  if (!parse_args("cosim", a, d, {}, vm,
                  "n3 cosim --unit decoder|gemv|gemm|dma|sfu|sfu-count|fp|ctl|cdc [--vectors N] [--seed S] [--shard i/n] [--vcd F.fst] [--report F.json]\n"
                  "       n3 cosim --merge A.json B.json ..."))
    return kExitOk;
  check_output(vcd, "--vcd");
  check_output(report, "--report");
#ifndef N3_HAVE_RTL
  throw Error("n3 cosim: this n3 was built without Verilator (or SystemC): the RTL units are left out (docs/rtl.md)");
#else
  if (!merge.empty()) {
    require(unit.empty() && report.empty() && vcd.empty(), "n3 cosim --merge takes only report files");
    std::vector<rtl::CosimReport> shards;
    for (const std::string& f : merge) shards.push_back(rtl::report_from_json(read_file_text(f), f));
    const rtl::CosimReport m = rtl::merge_reports(shards);
    rtl::print_summary(m, std::cout);
    return m.mismatches ? kExitDiffer : kExitOk;
  }
  require(!unit.empty(), "n3 cosim: --unit decoder|gemv|gemm|dma|sfu|sfu-count|fp|ctl|cdc is required");
  rtl::CosimOptions o;
  o.unit = unit;
  o.vectors = vectors;
  o.seed = seed;
  o.vcd = vcd;
  o.hw = hw;
  parse_shard(shard, &o);
  OutputGuard guard;
  if (!vcd.empty()) {
    rtl::check_waveform_path(vcd, "--vcd");  // first: a refused path (a symlink) is not the run's to remove
    guard.add(vcd);
  }
  const rtl::CosimReport r = rtl::run_cosim(o, std::cerr);
  if (!report.empty()) {
    guard.add(report);
    write_file_atomic(report, rtl::report_json(r));
  }
  guard.commit();
  rtl::print_summary(r, std::cout);
  return r.mismatches ? kExitDiffer : kExitOk;
#endif
}

}  // namespace n3::cli
