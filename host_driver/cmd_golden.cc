// n3 golden: prefill over --ids, one KV-cached decode step per --feed id,
// every tensor recorded and written as a dump (docs/golden.md, docs/dumps.md).
#include <chrono>
#include <cstdio>
#include <iostream>

#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "base/npy.h"
#include "host_driver/cli_util.h"
#include "host_driver/backends.h"
#include "runtime/numerics_select.h"

namespace n3::cli {

int cmd_golden(const Args& a) {
  po::options_description d("n3 golden options");
  std::string model, hw, ids_path, feed_path, numerics, dump, logits, backend;
  int chunk = 0;
  d.add_options()("model", po::value(&model)->required(), "checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "ids", po::value(&ids_path)->required(), "prompt token ids (.npy, int32/int64, [T] or [1,T])")(
      "feed", po::value(&feed_path), "ids fed one by one as KV-cached decode steps")(
      "numerics", po::value(&numerics)->default_value("npu"), "npu | reference")(
      "dump", po::value(&dump)->required(), "output dump directory")(
      "force", "overwrite a non-empty dump directory")(
      "dump-all", "dump every operator output, not only logits and layer outputs")(
      "logits", po::value(&logits)->default_value("all"), "all | last: prefill logits rows to keep")(
      "chunk", po::value(&chunk)->default_value(0), "prefill chunk size (0: whole prompt at once)")(
      "backend", po::value(&backend)->default_value("golden"),
      "golden | cuda: any other backend runs the same flow through the Device API");
  po::variables_map vm;
  if (!parse_args("golden", a, d, {}, vm,
                  "n3 golden --model M [--hw H.yaml] --ids P.npy [--feed F.npy] "
                  "[--numerics npu|reference] [--backend golden|cuda] --dump DIR"))
    return kExitOk;
  require(logits == "all" || logits == "last", "--logits must be 'all' or 'last' (is '" + logits + "')");
  require(chunk >= 0, "--chunk must be >= 0");
  const bool force = vm.count("force") > 0;
  // Refuse early, before any work, but create nothing until the run succeeded.
  check_output_dir(dump, force, "--dump");

  // Every backend, golden included, runs the same flow through the Device API.
  std::unique_ptr<Device> dev = open_device(backend, DeviceOptions{model, hw, numerics});
  DumpCollector rec(vm.count("dump-all") > 0);
  rec.set_logits_last(logits == "last");
  set_run_meta(rec, *dev, model);
  const std::vector<int32_t> ids = read_ids(ids_path, dev->config().vocab);
  std::vector<int32_t> feed;
  if (!feed_path.empty()) feed = read_ids(feed_path, dev->config().vocab);
  check_positions_fit("--ids " + ids_path, ids.size(), feed.size(),
                      "--feed " + feed_path + "'s " + std::to_string(feed.size()) + " ids", dev->config().max_positions);
  const int seq = dev->open_sequence();
  const PromptTimes t = run_prompt(*dev, seq, ids, size_t(chunk), feed, &rec);

  OutputGuard written;  // a folder this run made goes again on failure or a signal
  written.prepare_dir(dump, force);
  rec.write(dump);
  written.commit();
  const double pre = t.prefill_s, dec = t.decode_s;
  std::fprintf(stderr, "n3 golden: %s numerics%s%s, %zu prompt tokens in %.3f s", numerics.c_str(),
               backend == "golden" ? "" : " on backend ", backend == "golden" ? "" : backend.c_str(), ids.size(), pre);
  if (!feed.empty()) std::fprintf(stderr, ", %zu decode steps in %.3f s (%.2f tok/s)", feed.size(), dec,
                                  feed.size() / std::max(dec, 1e-9));
  std::fprintf(stderr, "; dump in %s\n", dump.c_str());
  return kExitOk;
}

}  // namespace n3::cli
