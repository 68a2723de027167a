// `n3 estimate --sweep`: the product of hardware-key values, each point run
// as its own `n3 estimate --set ... --csv-row` process (sc::run_npu
// elaborates one design point per process), --jobs at a time, one CSV row per
// point in the product's order (first key slowest); --shard i/n keeps the
// points whose index is i-1 modulo n, and --merge puts shard CSVs back into
// the unsharded one. Every point's hardware file is checked before any runs,
// and the CSV is written atomically at the end: a bad key or value, or a
// failing worker, leaves no CSV (a point the compiler cannot lower is a row
// with its reason, not a failure). The header comes from the hand
// calculation before any point runs, so an empty shard's CSV merges.
// docs/estimating.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host_driver/estimate_sim.h"

namespace n3::cli {

struct SweepOptions {
  std::string model, hw, contexts;
  int64_t prompt = 0, new_tokens = 0;
  std::vector<std::string> sets, sweeps;
  std::string shard, csv;
  std::string plot;  // directory for tools/plot_estimate.py's plots ("": none); needs csv
  int jobs = 0;  // 0: one per CPU of the affinity mask (a Slurm task's or cgroup's share)
  // Given, the text printed on stdout after the CSV is written (--target-tok-s),
  // made from the whole CSV before anything is written (so it may refuse cleanly).
  std::function<std::string(const std::string& csv)> answer;
  // The parsed --context/--prompt/--new: every point's positions are checked
  // against its KV cap, and the CSV header made, before any point runs.
  EstimateRequest req;
};

int run_sweep(const SweepOptions& o);
// A failed worker's first stderr line without its own "n3 estimate: error: "
// (the sweep's message adds the prefix once, after "--sweep point N (...): ").
std::string worker_message(const std::string& err);
// Runs tools/plot_estimate.py on `csv` into `dir` (its messages on stderr);
// without matplotlib it says so and returns true (nothing to draw with).
// False when the script failed or python3 could not start: one line more
// says so, and the CSV stands (run_sweep then exits 1).
bool plot_csv(const std::string& csv, const std::string& dir);
// Merges shard CSVs into the unsharded one (at `csv`, or stdout); with
// `plot`, draws it as a sweep does (plot_csv: exit 1 where that fails).
int merge_csvs(const std::vector<std::string>& files, const std::string& csv,
               const std::function<std::string(const std::string&)>& answer = nullptr, const std::string& plot = "");

}  // namespace n3::cli
