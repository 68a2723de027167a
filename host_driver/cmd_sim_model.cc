// The model form of n3 sim (brief/cli-contract.md):
//   n3 sim --backend func --model M [--hw H.yaml] --ids P.npy [--feed F.npy] --dump DIR [--chunk N]
// Compiles Gemma 3n for the hardware file (compiler/), runs the prefill in
// chunks of N (default: the largest that fits L2) and one decode program per
// --feed id on the functional simulator, and writes the tensors the programs
// materialise under the golden model's names.
#include <chrono>
#include <cstdio>

#include "golden/dump.h"
#include "golden/error.h"
#include "golden/file_util.h"
#include "golden/hw_config.h"
#include "golden/npy.h"
#include "host_driver/cli_util.h"
#include "host_driver/device_func.h"
#include "host_driver/numerics_select.h"

namespace n3::cli {

int cmd_sim_model(const Args& a) {
  po::options_description d("n3 sim (model form) options");
  std::string backend, model, hw, ids_path, feed_path, dump;
  int chunk = 0;
  d.add_options()("backend", po::value(&backend)->required(), "func")(
      "model", po::value(&model)->required(), "checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "ids", po::value(&ids_path)->required(), "prompt token ids (.npy)")(
      "feed", po::value(&feed_path), "ids fed one by one as decode steps")(
      "dump", po::value(&dump)->required(), "output dump directory")(
      "force", "overwrite a non-empty dump directory")(
      "dump-all", "capture every operator output the programs materialise, not only logits and layers")(
      "chunk", po::value(&chunk)->default_value(0), "prefill chunk (0: the largest that fits L2)");
  po::variables_map vm;
  if (!parse_args("sim", a, d, {}, vm,
                  "n3 sim --backend func --model M [--hw H.yaml] --ids P.npy [--feed F.npy] --dump DIR [--chunk N]"))
    return kExitOk;
  require(backend == "func", "n3 sim --model: only --backend func runs the compiled model (is '" + backend + "')");
  require(chunk >= 0, "--chunk must be >= 0");
  const bool force = vm.count("force") > 0;
  if (file_exists(dump) && !force) prepare_output_dir(dump, false);
  const HwConfig hwc = load_hw_config(hw);
  DumpCollector rec(vm.count("dump-all") > 0);
  rec.set_meta("backend", "func");
  rec.set_meta("numerics", "npu");
  rec.set_meta("model", model);
  rec.set_meta("hw", hwc.name);
  const auto t0 = std::chrono::steady_clock::now();
  FuncModel fm(open_weights_for(model, "npu"), hwc, chunk, vm.count("dump-all") > 0);
  const std::vector<int32_t> ids = read_ids(ids_path, fm.config().vocab);
  std::vector<int32_t> feed;
  if (!feed_path.empty()) feed = read_ids(feed_path, fm.config().vocab);
  const size_t step = size_t(fm.max_chunk());
  for (size_t b = 0; b < ids.size(); b += step)
    fm.forward(std::vector<int32_t>(ids.begin() + long(b), ids.begin() + long(std::min(ids.size(), b + step))),
               Phase::Prefill, &rec);
  for (int32_t id : feed) fm.forward({id}, Phase::Decode, &rec);
  prepare_output_dir(dump, force);
  rec.write(dump);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "n3 sim: compiled and ran %zu prompt tokens (chunk %d) and %zu decode steps in %.2f s; dump in %s\n",
               ids.size(), fm.max_chunk(), feed.size(), s, dump.c_str());
  return kExitOk;
}

}  // namespace n3::cli
