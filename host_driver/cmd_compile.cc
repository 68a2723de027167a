// n3 compile --model M --hw H.yaml -o DIR: compiles Gemma 3n into ISA
// programs (decode, one token; prefill at the chunk of best modelled
// throughput, runtime/schedule.h, or --chunk, and every power of two below
// it, the set the host covers any prompt with: comp::chunk_sizes) and a
// report of the memory plan (DDR footprint against capacity, L2 high-water
// against size), the chunk choice and, with --report, each program's
// schedule against its bound. M may be a model YAML: the plan and programs
// need shapes only. Exits 2 when either memory does not fit.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "golden/hw_config.h"
#include "host_driver/cli_util.h"
#include "runtime/compile_outputs.h"
#include "runtime/device_compiled.h"
#include "runtime/numerics_select.h"
#include "runtime/schedule.h"

namespace n3::cli {

int cmd_compile(const Args& a) {
  po::options_description d("n3 compile options");
  std::string model, hw, out;
  int chunk = 0;
  int64_t resident = -1;
  d.add_options()("model", po::value(&model)->required(), "model YAML, checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "out,o", po::value(&out)->required(), "output directory")(
      "chunk", po::value(&chunk)->default_value(0),
      "largest prefill chunk (0: the best modelled prefill throughput, activations spilled to DDR where that pays)")(
      "resident-bytes", po::value(&resident)->default_value(-1),
      "L2 bytes for resident weights at most (-1: all the programs leave free; 0: stream every weight)")(
      "image", "also write ddr.img (n3 sim --mem-in): the weights and constants in their DDR places (needs weights)")(
      "ids", po::value<std::string>(), "with --image: a prompt (T ids, T one of the program sizes) in the input region, "
                                       "at position 0")(
      "report", "per program: the binding unit, its bound, the simulated time (timing-only SystemC) and the binding "
                "unit's longest idle gaps with what they wait for; also in report.json")(
      "dump-all", "accepted for older scripts: every program's symbol table names every tensor it materialises")(
      "force", "overwrite a non-empty output directory");
  po::variables_map vm;
  if (!parse_args("compile", a, d, {}, vm, "n3 compile --model M --hw H.yaml -o DIR")) return kExitOk;
  const bool force = vm.count("force") > 0;
  check_output_dir(out, force, "-o");
  require(chunk >= 0, "--chunk must be >= 0 (0: the chunk of best modelled prefill throughput)");
  require(resident >= -1, "--resident-bytes must be -1 or more");
  const bool image = vm.count("image") > 0;
  require(image || !vm.count("ids"), "--ids needs --image");
  const HwConfig hwc = load_hw_config(hw);
  require(!image || !is_model_yaml(model), "--image needs weights (a checkpoint or .n3w), not a model YAML");
  // The plan and programs need shapes only; the image needs the weights.
  const std::unique_ptr<CompiledModel> m = open_compiled_model(model, hwc, CompiledOptions{chunk, resident}, image);
  CompileOutputs o;
  o.image = image;
  o.model_name = model;
  o.hw_name = hwc.name;
  o.report = vm.count("report") > 0;
  if (vm.count("ids")) {
    const std::string ids_path = vm["ids"].as<std::string>();
    o.prompt = read_ids(ids_path, m->config().vocab);
    check_positions_fit("--ids " + ids_path, o.prompt.size(), 0, "", m->config().max_positions);
    const std::vector<int>& sizes = m->chunk_sizes();
    require(std::find(sizes.begin(), sizes.end(), int(o.prompt.size())) != sizes.end(),
            "--ids " + ids_path + ": " + std::to_string(o.prompt.size()) + " ids; a program exists for the largest chunk (" +
                std::to_string(m->max_chunk()) + ") and the powers of two below it only");
  }
  // A failure while writing (disk full, a signal) removes a folder this run
  // made; every file in it is written atomically, so one that existed keeps
  // only whole files.
  OutputGuard guard;
  guard.prepare_dir(out, force);
  const uint64_t tile_bytes = uint64_t(hwc.weight_tile_bytes());  // one slot of timing.wbuf_tiles
  const CompileSummary r = write_compiled(*m, out, o, tile_bytes);
  guard.commit();
  std::printf("DDR %llu of %llu bytes (%.1f%%, %llu free); L2 high-water %llu + %llu resident of %llu bytes (%llu free); max chunk %d\n",
              static_cast<unsigned long long>(r.ddr_bytes), static_cast<unsigned long long>(r.ddr_capacity),
              100.0 * double(r.ddr_bytes) / double(r.ddr_capacity), static_cast<unsigned long long>(r.ddr_capacity - r.ddr_bytes),
              static_cast<unsigned long long>(r.l2_high_water), static_cast<unsigned long long>(r.l2_resident),
              static_cast<unsigned long long>(r.l2_capacity), static_cast<unsigned long long>(r.l2_resident_base - r.l2_high_water),
              r.max_chunk);
  std::string set;
  for (int T : r.sizes) set += (set.empty() ? "" : " ") + std::to_string(T);
  std::printf("programs for %s tokens (decode = 1; a prompt runs as chunks of %d, its tail as a greedy cover)\n", set.c_str(), r.max_chunk);
  std::printf("weights: %zu tensors resident in L2 (%llu bytes, loaded once by preload.n3p); %llu bytes stay in DDR, streamed through %llu-byte weight-buffer tiles\n",
              r.resident_tensors, static_cast<unsigned long long>(r.resident_weight_bytes),
              static_cast<unsigned long long>(r.streamed_weight_bytes), static_cast<unsigned long long>(r.weight_tile_bytes));
  std::printf("%s", chunk_choice_text(m->chunk_choice()).c_str());
  for (const ScheduleReport& s : r.schedule) std::printf("%s", schedule_report_text(s).c_str());
  return kExitOk;
}

}  // namespace n3::cli
