// n3 estimate --model MODEL.yaml [--hw H.yaml] [--context 1,1024,4096]
//             [--prompt 128] [--new 128] [--set key=value]... [--json]
//             [--sweep key=v1,v2,...]... [--shard i/n] [--jobs J] [--csv FILE] [--plot DIR]
//             [--target-tok-s X [--target-phase decode|decode@N|prefill]]
// n3 estimate --merge A.csv B.csv ... [--csv FILE] [--plot DIR] [--target-tok-s X ...]
// Throughput of a model on a design point (docs/estimating.md): the hand
// calculation (bytes/token over the memory roofline, MACs over the GEMV rate;
// golden/decode_traffic.h, HwConfig's rates) and the compiled programs run
// timing-only on the SystemC model (estimate_sim.h); --set overrides
// hardware keys through HwConfig's own loader; --sweep runs the product of
// values, one process per point (estimate_sweep.h).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "base/error.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "host_driver/cli_util.h"
#include "host_driver/estimate_report.h"
#include "host_driver/estimate_sim.h"
#include "host_driver/estimate_sweep.h"
#include "host_driver/estimate_target.h"
#include "runtime/device_compiled.h"
#include "sim/systemc/timing.h"

namespace n3::cli {

namespace {

std::vector<int64_t> parse_contexts(const std::string& text) {
  std::vector<int64_t> v;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string one = text.substr(at, comma - at);
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(one, &used);
    } catch (...) {
      used = 0;
    }
    require(used > 0 && used == one.size() && n >= 1 && !std::isspace(static_cast<unsigned char>(one[0])),
            "--context " + text + ": expected positive token counts, e.g. 1,1024,4096");
    // Each context names its CSV columns (decode_tok_s@N): one twice would repeat them.
    require(std::find(v.begin(), v.end(), n) == v.end(),
            "--context " + text + ": context " + std::to_string(n) + " is given twice");
    v.push_back(n);
    at = comma + 1;
  }
  return v;
}

}  // namespace

int cmd_estimate(const Args& a) {
  po::options_description d("n3 estimate options");
  std::string model, hw, contexts, shard, csv, plot, target, target_phase;
  int64_t prompt = 128, new_tokens = 128;
  int jobs = 0;
  std::vector<std::string> sets, sweeps, merge;
  d.add_options()("model", po::value(&model), "model YAML, .n3w or checkpoint directory (only its shapes are read)")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file (clocks, memory, compute, timing)")(
      "context", po::value(&contexts)->default_value("1"), "tokens in the KV cache at a decode token, comma-separated")(
      "prompt", po::value(&prompt)->default_value(128), "prompt tokens prefilled (0: no prefill or request figures)")(
      "new", po::value(&new_tokens)->default_value(128), "tokens a request generates after the prompt")(
      "set", po::value(&sets)->composing(), "override a hardware key: key=value (repeatable)")(
      "json", po::bool_switch(), "write the estimate as JSON")(
      "sweep", po::value(&sweeps)->composing(), "sweep a hardware key: key=v1,v2,... (repeatable; the product)")(
      "shard", po::value(&shard), "run shard i of n of the sweep's points: i/n")(
      "jobs", po::value(&jobs)->default_value(0), "sweep worker processes (0: one per CPU this process may run on)")(
      "csv", po::value(&csv), "write the sweep's (or merge's) CSV here, atomically (default: stdout)")(
      "plot", po::value(&plot), "with --sweep --csv: plots of tok/s against each swept key into this directory")(
      "merge", po::value(&merge)->multitoken(), "merge shard CSVs into the unsharded CSV")(
      "target-tok-s", po::value(&target),
      "with --sweep or --merge and --csv: the cheapest point (the hardware file's cost) reaching this tok/s")(
      "target-phase", po::value(&target_phase), "the phase --target-tok-s reads: decode (first context), decode@N, prefill")(
      "csv-row", po::bool_switch(), "(sweep workers) print the figures' header and row as CSV");
  po::variables_map vm;
  if (!parse_args("estimate", a, d, {}, vm,
                  "n3 estimate --model MODEL.yaml [--hw H.yaml] [--context 1,1024] [--prompt 128] [--new 128] "
                  "[--set key=value]... [--json] [--sweep key=v1,v2]... [--shard i/n] [--csv FILE] [--target-tok-s X] | "
                  "--merge A.csv ..."))
    return kExitOk;
  check_output(csv, "--csv");
  // The plots' folder, before the sweep: a file given as the folder ended in
  // the plot script's traceback after every point had run.
  if (!plot.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(plot, ec))
      require(std::filesystem::is_directory(plot, ec), "--plot " + plot + ": is not a directory");
    else
      check_output(plot, "--plot");
  }
  // --target-tok-s answers from a whole sweep's CSV: checked here, before anything runs or is written.
  std::function<std::string(const std::string&)> answer;
  if (!target.empty() || !target_phase.empty()) {
    require(!target.empty(), "--target-phase goes with --target-tok-s");
    const double tok_s = parse_target_tok_s(target);
    require(!sweeps.empty() || !merge.empty(), "--target-tok-s " + target +
                                                   " picks among a sweep's points: give --sweep key=v1,v2,... (or --merge)");
    require(!csv.empty(), "--target-tok-s prints its answer on stdout: write the CSV with --csv FILE");
    require(shard.empty(), "--target-tok-s needs every point: run it on --merge of the shards' CSVs");
    answer = [tok_s, target_phase](const std::string& text) { return target_answer(text, tok_s, target_phase); };
  }
  if (!merge.empty()) {
    require(model.empty() && sweeps.empty() && sets.empty(), "--merge takes the shard CSVs (and --csv, --plot) alone");
    require(plot.empty() || !csv.empty(), "--plot needs --csv (the plots are drawn from the CSV file)");
    return merge_csvs(merge, csv, answer, plot);
  }
  require(!model.empty(), "the option '--model' is required but missing");
  require(prompt >= 0, "--prompt must not be negative");
  require(new_tokens >= 1, "--new must be at least 1");
  require(jobs >= 0, "--jobs must not be negative (0: one worker per usable CPU)");
  EstimateRequest req;
  req.contexts = parse_contexts(contexts);
  req.prompt = prompt;
  req.new_tokens = new_tokens;
  std::vector<HwOverride> overrides;
  for (const std::string& s : sets) overrides.push_back(parse_hw_override(s, "--set"));
  if (!sweeps.empty()) {
    require(!vm["json"].as<bool>() && !vm["csv-row"].as<bool>(), "--sweep writes CSV: --json and --csv-row do not apply");
    require(plot.empty() || !csv.empty(), "--plot needs --csv (the plots are drawn from the CSV file)");
    SweepOptions o{model, hw, contexts, prompt, new_tokens, sets, sweeps, shard, csv, plot, jobs, answer, req};
    if (answer) {
      // The phase names a simulated column, and the file states a cost, before the points run.
      target_columns(target_phase.empty() ? "decode" : target_phase, req.contexts, prompt > 0);
      require(load_hw_config(hw, overrides).has_cost(),
              "--target-tok-s: " + hw + " states no cost section (cost.* keys, docs/estimating.md)");
    }
    return run_sweep(o);
  }
  require(shard.empty() && csv.empty() && plot.empty(), "--shard, --csv and --plot go with --sweep");
  const ModelConfig c = load_model_shapes(model);  // a model YAML, an .n3w or a checkpoint: the shapes only
  const HwConfig p = timing::load_params(load_hw_config(hw, overrides));
  check_request(c, p, req);  // before any simulation: a context past the KV cap fails now, not minutes in
  const Estimate e = run_estimate(c, p, req);
  if (vm["csv-row"].as<bool>()) {
    std::string head, row;
    for (const auto& [k, v] : estimate_figures(e)) {
      head += (head.empty() ? "" : ",") + k;
      row += (row.empty() ? "" : ",") + v;
    }
    std::printf("%s\n%s\n", head.c_str(), row.c_str());
  } else {
    const std::string out = vm["json"].as<bool>() ? estimate_json(e, p) : estimate_text(e, p);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return kExitOk;
}

}  // namespace n3::cli
