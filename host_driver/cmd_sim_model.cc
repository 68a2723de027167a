// The model form of n3 sim (docs/compiler.md, docs/timing.md):
//   n3 sim --backend func|systemc --model M [--hw H.yaml] --ids P.npy [--feed F.npy] --dump DIR [--chunk N]
//   n3 sim --backend systemc --model M ... [--timing-only] [--stats S.json] [--trace T.json [--trace-aggregate]]
// Compiles Gemma 3n for the hardware file (compiler/), runs the prefill in
// chunks of N (default: the chunk of best modelled throughput, runtime/schedule.h) and one decode program per
// --feed id, and writes the tensors the programs materialise under the golden
// model's names. With --backend systemc every program runs through the
// SystemC timing model (docs/timing.md), whose statistics and trace sum over
// the whole run; --timing-only needs no weights (M may be a model YAML).
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "base/npy.h"
#include "host_driver/cli_util.h"
#include "runtime/device_compiled.h"
#include "runtime/device_systemc.h"
#include "host_driver/rtl_option.h"
#ifdef N3_HAVE_RTL
#include "rtl_bridge/rtl_units.h"
#endif

namespace n3::cli {

namespace {

// Prints a progress line to stderr at most every 2 s of wall time.
class Progress {
 public:
  void step(const char* what, size_t done, size_t total, double sim_cycles) {
    const auto t = std::chrono::steady_clock::now();
    if (t - last_ < std::chrono::seconds(2)) return;
    last_ = t;
    if (sim_cycles >= 0)
      std::fprintf(stderr, "n3 sim: %s %zu/%zu, %.0f cycles simulated\n", what, done, total, sim_cycles);
    else
      std::fprintf(stderr, "n3 sim: %s %zu/%zu\n", what, done, total);
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

std::string counts_json(const sim::Stats& st, bool timing_only);  // cmd_sim.cc

int cmd_sim_model(const Args& a) {
  po::options_description d("n3 sim (model form) options");
  std::string backend, model, hw, ids_path, feed_path, dump, stats, trace;
  RtlCli rtl_cli;
  int chunk = 0;
  int64_t resident = -1;
  d.add_options()("backend", po::value(&backend)->required(), "func | systemc")(
      "model", po::value(&model)->required(), "checkpoint dir or .n3w file (--timing-only: also a model YAML)")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "ids", po::value(&ids_path)->required(), "prompt token ids (.npy)")(
      "feed", po::value(&feed_path), "ids fed one by one as decode steps")(
      "dump", po::value(&dump), "output dump directory (required unless --timing-only)")(
      "force", "overwrite a non-empty dump directory")(
      "dump-all", "capture every operator output the programs materialise, not only logits and layers")(
      "chunk", po::value(&chunk)->default_value(0), "prefill chunk (0: the best modelled prefill throughput; larger than the L2 fit: activations spill to DDR)")(
      "resident-bytes", po::value(&resident)->default_value(-1),
      "L2 bytes for resident weights at most (-1: all the programs leave free; 0: stream every weight)")(
      "timing-only", "systemc: timing without weights or arithmetic (same cycles; --dump DIR gets DIR/stats.json, no tensors)")(
      "stats", po::value(&stats), "systemc: statistics JSON summed over every program run")(
      "trace", po::value(&trace), "systemc: Chrome/Perfetto trace JSON, one track per unit")(
      "trace-aggregate", "systemc: merge consecutive slices of one operator in --trace");
  rtl_cli.add_options(d);
  po::variables_map vm;
  if (!parse_args("sim", a, d, {}, vm,
                  "n3 sim --backend func|systemc --model M [--hw H.yaml] --ids P.npy [--feed F.npy] --dump DIR [--chunk N]\n"
                  "       [--timing-only] [--stats S.json] [--trace T.json [--trace-aggregate]] [--rtl gemv,gemm,dma,sfu [--vcd F.fst [--vcd-instructions N]]] (systemc)"))
    return kExitOk;
  check_output(stats, "--stats");
  check_output(trace, "--trace");
  require(backend == "func" || backend == "systemc", "--backend must be func or systemc (is '" + backend + "')");
  require(chunk >= 0, "--chunk must be >= 0");
  require(resident >= -1, "--resident-bytes must be -1 or more");
  const bool systemc = backend == "systemc";
  const bool timing_only = vm.count("timing-only") > 0;
  const bool dump_all = vm.count("dump-all") > 0;
  require(systemc || (!timing_only && stats.empty() && trace.empty() && !vm.count("trace-aggregate")),
          "--timing-only, --stats, --trace and --trace-aggregate of the model form need --backend systemc");
  require(!timing_only || !dump_all, "--dump-all needs the data: drop --timing-only");
  require(timing_only || !dump.empty(), "n3 sim --model: give --dump DIR (or --timing-only)");
  require(timing_only || !is_model_yaml(model), "n3 sim --model " + model + ": a model YAML has no weights; add --timing-only");
  require(!vm.count("trace-aggregate") || !trace.empty(), "--trace-aggregate needs --trace T.json");
  const std::vector<std::string> rtl_units = rtl_cli.units(vm, systemc, timing_only);
#ifdef N3_HAVE_RTL
  for (const std::string& u : rtl_units)  // before any compute; the guard below removes them on failure
    if (!rtl_cli.vcd.empty()) rtl::check_waveform_path(rtl::rtl_vcd_path(rtl_cli.vcd, u, rtl_units.size()), "--vcd");
#endif
#ifndef N3_HAVE_SYSTEMC
  require(!systemc, "--backend systemc: this n3 was built without SystemC (pkg-config systemc not found)");
#endif
  const bool force = vm.count("force") > 0;
  check_output_dir(dump, force, "--dump");
  const auto t0 = std::chrono::steady_clock::now();
  DeviceOptions opt{model, hw, "npu"};
  opt.dump_all = dump_all;
  opt.max_chunk = chunk;
  opt.resident_bytes = resident;
  opt.timing_only = timing_only;
#ifdef N3_HAVE_SYSTEMC
  std::shared_ptr<SystemcRunner> run;
  if (systemc) {
    const sc::TraceMode keep = trace.empty()                 ? sc::TraceMode::None
                               : vm.count("trace-aggregate") ? sc::TraceMode::Aggregate
                                                             : sc::TraceMode::Plain;
    run = std::make_shared<SystemcRunner>(load_hw_config(hw), keep, !stats.empty() || (timing_only && !dump.empty()), true);
    if (!rtl_cli.list.empty()) run->use_rtl(rtl_units, rtl_cli.vcd, rtl_cli.vcd_instructions);
  }
  std::unique_ptr<Device> dev = run ? make_systemc_device(opt, run) : make_func_device(opt);
  auto cycles = [&]() { return run ? run->totals().cycles(run->totals().total_ps) : -1.0; };
#else
  std::unique_ptr<Device> dev = make_func_device(opt);
  auto cycles = []() { return -1.0; };
#endif
  const std::vector<int32_t> ids = read_ids(ids_path, dev->config().vocab);
  std::vector<int32_t> feed;
  if (!feed_path.empty()) feed = read_ids(feed_path, dev->config().vocab);
  require(!ids.empty(), "--ids " + ids_path + ": no prompt ids");
  check_positions_fit("--ids " + ids_path, ids.size(), feed.size(),
                      "--feed " + feed_path + "'s " + std::to_string(feed.size()) + " ids", dev->config().max_positions);

  DumpCollector rec(dump_all);
  set_run_meta(rec, *dev, model);
  Recorder* r = timing_only ? nullptr : &rec;
  Progress progress;
  // The RTL's waveform: removed on bad input, kept when the RTL differs (it
  // is what shows why), like every output at the end.
  OutputGuard waveform;
#ifdef N3_HAVE_RTL
  for (const std::string& u : rtl_units)
    if (!rtl_cli.vcd.empty()) waveform.add(rtl::rtl_vcd_path(rtl_cli.vcd, u, rtl_units.size()));
#endif
#ifdef N3_HAVE_RTL
  try {
#endif
    run_prompt(*dev, dev->open_sequence(), ids, 0, feed, r,
               [&](size_t i) { progress.step("decode step", i + 1, feed.size(), cycles()); });
#ifdef N3_HAVE_RTL
  } catch (const rtl::RtlMismatch& e) {
    // The RTL and the functional core differ: a finding, not bad input.
    std::fprintf(stderr, "n3 sim: %s\n", e.what());
    waveform.commit();
    return kExitDiffer;
  }
  rtl::print_rtl_summaries(rtl_units, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                           stderr);
#endif

  // Outputs only after every program ran, and all or none of them.
  OutputGuard written;
#ifdef N3_HAVE_SYSTEMC
  if (run) {
    if (!trace.empty()) {
      written.add(trace);
      write_file_atomic(trace, sc::trace_json(run->totals(), vm.count("trace-aggregate") > 0));
    }
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(sc::stats_json(run->totals(), timing_only));
    j["counts"] = nlohmann::ordered_json::parse(counts_json(run->counts(), timing_only));
    if (!stats.empty()) {
      written.add(stats);
      write_file_atomic(stats, j.dump(1) + "\n");
    }
    if (timing_only && !dump.empty()) {
      // No tensors without arithmetic: the directory gets the run's statistics only.
      written.prepare_dir(dump, force);
      write_file_atomic(dump + "/stats.json", j.dump(1) + "\n");
      std::fprintf(stderr, "n3 sim: --timing-only computes no tensors; %s/stats.json holds the timing\n", dump.c_str());
    }
    std::fprintf(stderr, "%s\n", sc::summary_line(run->totals()).c_str());
  }
#endif
  if (!dump.empty() && !timing_only) {
    written.prepare_dir(dump, force);
    rec.write(dump);
  }
  written.commit();
  waveform.commit();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "n3 sim: compiled and ran %zu prompt tokens and %zu decode steps on %s%s in %.2f s%s%s\n",
               ids.size(), feed.size(), backend.c_str(), timing_only ? " (timing only)" : "", s,
               dump.empty() ? "" : "; dump in ", dump.c_str());
  return kExitOk;
}

}  // namespace n3::cli
