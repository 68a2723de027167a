// n3 sim: runs a program on a simulator backend (docs/sim.md, docs/timing.md).
//   n3 sim --backend func --program P [--hw H.yaml] --mem-in IMG [--mem-out IMG] [--trace-insn]
//   n3 sim --backend systemc --program P ... [--timing-only] [--trace T.json] [--stats S.json]
// The model form (--model ...) compiles Gemma 3n first: cmd_sim_model.cc.
// docs/sim.md describes the state, traps, trace and images;
// docs/timing.md the SystemC backend.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "base/npy.h"
#include "host_driver/cli_util.h"
#include "runtime/compiled_model.h"
#include "isa/verify.h"
#include "sim/func_sim.h"
#include "sim/sim_dump.h"
#ifdef N3_HAVE_SYSTEMC
#include "sim/systemc/npu.h"
#include "sim/systemc/report.h"
#endif
#include "host_driver/rtl_option.h"
#ifdef N3_HAVE_RTL
#include "rtl_bridge/rtl_units.h"
#endif

namespace n3::cli {

namespace {

// "ddr:0x1000=FILE": raw bytes, or the data of a .npy file.
void load_spec(const std::string& spec, sim::Memory& mem) {
  const std::string what = "--load expects SPACE:ADDR=FILE (SPACE ddr, l2 or wbuf), got '" + spec + "'";
  const size_t colon = spec.find(':'), eq = spec.find('=');
  require(colon != std::string::npos && eq != std::string::npos && colon < eq, what);
  uint32_t sp;
  require(isa::enum_value(isa::EnumId::Space, spec.substr(0, colon), &sp), what);
  const std::string a = spec.substr(colon + 1, eq - colon - 1), file = spec.substr(eq + 1);
  char* end = nullptr;
  errno = 0;
  const unsigned long long addr = std::strtoull(a.c_str(), &end, 0);
  require(!a.empty() && *end == '\0' && errno == 0 && a[0] != '-', what);
  std::vector<uint8_t> bytes;
  if (file.size() > 4 && file.substr(file.size() - 4) == ".npy") {
    NpyArray arr = read_npy(file);
    bytes = std::move(arr.bytes);
  } else {
    // A device or FIFO has no size to read: /dev/zero "loaded" nothing.
    std::error_code ec;
    require(std::filesystem::is_regular_file(file, ec), "--load " + spec + ": " + file + " is not a regular file");
    bytes = read_file_bytes(file);
  }
  require(!bytes.empty(), "--load " + spec + ": " + file + " holds no bytes (nothing to load)");
  sim::SpaceMemory& m = mem.space(static_cast<isa::Space>(sp));
  require(m.in_range(addr, bytes.size()), "--load " + spec + ": " + std::to_string(bytes.size()) +
                                              " bytes at " + a + " do not fit " + m.name() + " (" +
                                              std::to_string(m.capacity()) + " bytes)");
  m.write(addr, bytes.data(), bytes.size());
}

}  // namespace

// The functional core's counts as JSON (also the model form's "counts").
// Timing-only runs execute no arithmetic, so they have no byte, MAC or SFU
// counts of their own (the timing model's are in "bandwidth" and
// "mac_utilisation").
std::string counts_json(const sim::Stats& st, bool timing_only) {
  nlohmann::ordered_json j;
  j["fetched"] = st.fetched;
  for (int e = 0; e < isa::kNumEngines; ++e) j["instructions"][isa::name_of(static_cast<isa::Engine>(e))] = st.insns[e];
  if (timing_only) return j.dump(1) + "\n";
  const char* spaces[] = {"DDR", "L2", "WBUF"};
  for (int i = 0; i < 3; ++i) {
    j["bytes_read"][spaces[i]] = st.bytes_read[i];
    j["bytes_written"][spaces[i]] = st.bytes_written[i];
  }
  j["macs"] = st.macs;
  j["sfu_elements"] = st.sfu_elems;
  return j.dump(1) + "\n";
}

int cmd_sim_model(const Args& a);  // cmd_sim_model.cc: the model form

int cmd_sim(const Args& a) {
  for (const std::string& s : a)
    if (s == "--model" || s.rfind("--model=", 0) == 0) return cmd_sim_model(a);
  po::options_description d("n3 sim options");
  std::string backend, program, hw, mem_in, mem_out, dump, stats, model, trace;
  RtlCli rtl_cli;
  std::vector<std::string> loads;
  std::string max_steps;
  d.add_options()("backend", po::value(&backend)->required(), "func | systemc")(
      "program", po::value(&program), "program container (.n3p) to run")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file (capacities, numerics formats)")(
      "mem-in", po::value(&mem_in), "memory image loaded before the run")(
      "mem-out", po::value(&mem_out), "memory image written after the run")(
      "load", po::value(&loads)->multitoken(), "SPACE:ADDR=FILE: also load raw bytes or .npy data (repeatable)")(
      "trace-insn", "print one line per executed instruction to stdout")(
      "dump", po::value(&dump), "write the program's tensor symbols as a dump directory")(
      "force", "overwrite a non-empty dump directory")(
      "no-hazard-check", "do not check that tokens order conflicting accesses")(
      "max-steps", po::value(&max_steps)->default_value(std::to_string(sim::kDefaultMaxSteps)),
      "trap after fetching this many instructions (compiled programs are straight-line and fetch at most their length)")(
      "stats", po::value(&stats), "write instruction, byte and MAC counts as JSON")(
      "model", po::value(&model), "model form: compile and run Gemma 3n (see n3 sim --model x --help)")(
      "ids", po::value<std::string>(), "model form: prompt ids")("feed", po::value<std::string>(), "model form")(
      "timing-only", "systemc: timing without arithmetic (same cycles; memory and dumps are not computed)")(
      "trace", po::value(&trace), "systemc: Chrome/Perfetto trace JSON, one track per unit")(
      "trace-aggregate", "systemc: merge consecutive slices of one operator in --trace");
  rtl_cli.add_options(d);
  po::variables_map vm;
  if (!parse_args("sim", a, d, {}, vm,
                  "n3 sim --backend func|systemc --program P [--hw H.yaml] --mem-in IMG [--mem-out IMG] [--trace-insn]\n"
                  "       [--timing-only] [--trace T.json [--trace-aggregate]] [--stats S.json] (systemc)"))
    return kExitOk;
  check_output(mem_out, "--mem-out");
  check_output(stats, "--stats");
  check_output(trace, "--trace");
  require(backend == "func" || backend == "systemc", "--backend must be func or systemc (is '" + backend + "')");
  require(!vm.count("ids") && !vm.count("feed"), "--ids and --feed belong to the model form: give --model M");
  require(!program.empty(), "n3 sim: give --program P (or the model form, --model M)");
  const bool timing_only = vm.count("timing-only") > 0;
  const bool systemc = backend == "systemc";
  require(systemc || (!timing_only && trace.empty() && !vm.count("trace-aggregate")),
          "--timing-only, --trace and --trace-aggregate need --backend systemc");
  require(!timing_only || dump.empty(), "--dump needs the data: drop --timing-only");
  const std::vector<std::string> rtl_units = rtl_cli.units(vm, systemc, timing_only);
#ifndef N3_HAVE_RTL
  require(rtl_cli.list.empty(), "--rtl " + rtl_cli.list + ": this n3 was built without Verilator: the RTL units are left out (docs/rtl.md)");
#endif
#ifndef N3_HAVE_SYSTEMC
  require(!systemc, "--backend systemc: this n3 was built without SystemC (pkg-config systemc not found)");
#endif
  const bool force = vm.count("force") > 0;
  check_output_dir(dump, force, "--dump");

  const HwConfig hwc = load_hw_config(hw);
  const std::vector<uint8_t> bin = read_file_bytes(program);
  isa::Program prog = isa::parse_program(bin.data(), bin.size(), program);
  sim::SimOptions opt;
  opt.formats = hwc.numerics.formats;
  opt.caps = sim_capacities(hwc);
  opt.hazards = vm.count("no-hazard-check") == 0;
  opt.max_steps = parse_count(max_steps, "--max-steps", 1, uint64_t(1) << 40);
  opt.trace = vm.count("trace-insn") ? stdout : nullptr;
  opt.effects = !timing_only;
  sim::FuncSim s(prog, opt);
  if (!mem_in.empty()) sim::load_image(mem_in, s.memory());
  for (const std::string& l : loads) load_spec(l, s.memory());
  OutputGuard written;  // every output, or none when a later one fails
  // The RTL's waveform: removed on bad input, kept when the RTL differs (it
  // is what shows why).
#ifdef N3_HAVE_RTL
  for (const std::string& u : rtl_units)
    if (!rtl_cli.vcd.empty()) {
      // Checked first: a refused path (a symlink) is not the run's to remove.
      rtl::check_waveform_path(rtl::rtl_vcd_path(rtl_cli.vcd, u, rtl_units.size()), "--vcd");
      written.add(rtl::rtl_vcd_path(rtl_cli.vcd, u, rtl_units.size()));
    }
#endif
  // A trap (a runaway program's step limit, a bad address) names the program file too.
  try {
#ifdef N3_HAVE_SYSTEMC
  if (systemc) {
    const timing::Params tp = timing::load_params(hwc);
    sc::RunOptions ro;
    ro.trace = !trace.empty() || !stats.empty();
    ro.progress = true;
#ifdef N3_HAVE_RTL
    rtl::use_rtl_units(&ro, hwc, rtl_units, rtl_cli.vcd, rtl_cli.vcd_instructions);
    const auto t0 = std::chrono::steady_clock::now();
    sc::Report rep;
    try {
      rep = sc::run_npu(s, tp, ro);
    } catch (const rtl::RtlMismatch& e) {
      // The RTL and the functional core differ: a finding, not bad input.
      std::fprintf(stderr, "n3 sim: %s\n", e.what());
      written.commit();  // only the waveform is written so far
      return kExitDiffer;
    }
    rtl::print_rtl_summaries(rtl_units, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                             stderr);
#else
    const sc::Report rep = sc::run_npu(s, tp, ro);
#endif
    if (!trace.empty()) {
      written.add(trace);
      write_file_atomic(trace, sc::trace_json(rep, prog, vm.count("trace-aggregate") > 0));
    }
    if (!stats.empty()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(sc::stats_json(rep, prog, timing_only));
      j["counts"] = nlohmann::ordered_json::parse(counts_json(s.stats(), timing_only));
      written.add(stats);
      write_file_atomic(stats, j.dump(1) + "\n");
      stats.clear();
    }
    std::fprintf(stderr, "%s\n", sc::summary_line(rep).c_str());
  } else {
    s.run();
  }
#else
  s.run();
#endif
  } catch (const sim::Trap& e) {
    throw Error(program + ": " + e.what());
  }

  if (!dump.empty()) {
    written.prepare_dir(dump, force);
    sim::write_dump(dump, s.captures(), {{"backend", backend}, {"program", program}, {"hw", hwc.name}});
  }
  // The memory image after the dump: single files last (docs/host_driver.md).
  if (!mem_out.empty()) written.add(mem_out);
  if (!mem_out.empty())
    sim::save_image(mem_out, s.memory(), [&](isa::Space sp, uint64_t addr) {
      for (const isa::Region& r : prog.regions)
        if (r.space == sp && addr >= r.base && addr - r.base < r.size) return r.name;
      return std::string();
    });
  if (!stats.empty()) {
    written.add(stats);
    write_file_atomic(stats, counts_json(s.stats(), false));
  }
  written.commit();
  const sim::Stats& st = s.stats();
  std::fprintf(stderr, "n3 sim: %llu instructions fetched (CTL %llu, DMA %llu, GEMV %llu, GEMM %llu, SFU %llu), "
                       "%llu MACs, hazard check %s\n",
               static_cast<unsigned long long>(st.fetched), static_cast<unsigned long long>(st.insns[0]),
               static_cast<unsigned long long>(st.insns[1]), static_cast<unsigned long long>(st.insns[2]),
               static_cast<unsigned long long>(st.insns[3]), static_cast<unsigned long long>(st.insns[4]),
               static_cast<unsigned long long>(st.macs), opt.hazards ? "on" : "off");
  return kExitOk;
}

}  // namespace n3::cli
