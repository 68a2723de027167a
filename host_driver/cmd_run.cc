// n3 run: the host sampling loop over any backend (docs/host_driver.md).
// Prefill the prompt, then sample and feed one token at a time; ids (or text
// with --tokenizer) stream to stdout as they come, a summary goes to stderr.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "golden/dump.h"
#include "base/error.h"
#include "base/file_util.h"
#include "golden/hw_config.h"
#include "base/npy.h"
#include "host_driver/cli_util.h"
#include "host_driver/backends.h"
#include "host_driver/sampler.h"
#include "host_driver/tokenizer.h"

namespace n3::cli {

int cmd_run(const Args& a) {
  po::options_description d("n3 run options");
  std::string backend, model, hw, ids_path, numerics, out, preset, tokenizer, prompt, dump;
  int max_new = 0;
  float temperature = 0, top_p = 1, rep = 1;
  int top_k = 0;
  uint64_t seed = 0;
  std::vector<int> stop;
  d.add_options()("backend", po::value(&backend)->default_value("golden"), "golden | func | systemc | cuda")(
      "model", po::value(&model)->required(), "checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "ids", po::value(&ids_path), "prompt token ids (.npy)")(
      "prompt", po::value(&prompt), "prompt text (needs --tokenizer)")(
      "tokenizer", po::value(&tokenizer), "SentencePiece tokenizer.model")(
      "max-new", po::value(&max_new)->required(), "tokens to generate at most")(
      "temperature", po::value(&temperature), "sampling temperature (default 0: greedy)")(
      "top-k", po::value(&top_k), "keep the k most likely ids (default off)")(
      "top-p", po::value(&top_p), "nucleus mass (default off)")(
      "repetition-penalty", po::value(&rep), "penalty on prompt+output ids (default off)")(
      "seed", po::value(&seed), "sampler RNG seed")(
      "stop", po::value(&stop)->multitoken(), "stop ids (added to the tokenizer's EOS/<end_of_turn>)")(
      "preset", po::value(&preset), "pccx: repetition penalty 1.15, top-p 0.9 (explicit options override)")(
      "numerics", po::value(&numerics)->default_value("npu"), "npu | reference")(
      "out", po::value(&out), "write the generated ids (int32 [N]) here")(
      "dump", po::value(&dump), "write this run's tensors (prefill, then every decode step) as a dump directory")(
      "dump-all", "with --dump: every intermediate tensor, not only logits and layers.N")(
      "force", "with --dump: overwrite a non-empty directory");
  po::variables_map vm;
  if (!parse_args("run", a, d, {}, vm,
                  "n3 run --backend golden|func|systemc|cuda --model M [--hw H.yaml] --ids P.npy --max-new N "
                  "[--temperature T] [--top-k K] [--top-p P] [--repetition-penalty R] [--seed S] "
                  "[--numerics npu|reference] [--out IDS.npy] [--dump DIR [--dump-all]]"))
    return kExitOk;
  require(vm.count("ids") + vm.count("prompt") == 1, "n3 run: give exactly one of --ids and --prompt");
  require(!vm.count("prompt") || vm.count("tokenizer"),
          "n3 run: --prompt needs --tokenizer tokenizer.model (SentencePiece) to turn text into ids");

  host::SamplerConfig sc;
  if (vm.count("preset")) {
    require(preset == "pccx", "n3 run: unknown --preset '" + preset + "' (pccx)");
    sc = host::pccx_preset();
  }
  if (vm.count("temperature")) sc.temperature = temperature;
  if (vm.count("top-k")) sc.top_k = top_k;
  if (vm.count("top-p")) sc.top_p = top_p;
  if (vm.count("repetition-penalty")) sc.repetition_penalty = rep;
  if (vm.count("seed")) sc.seed = seed;
  sc.max_new = max_new;
  sc.stop_ids = stop;

  std::unique_ptr<host::Tokenizer> tok;
  if (vm.count("tokenizer")) tok = std::make_unique<host::Tokenizer>(tokenizer);
  const bool force = vm.count("force") > 0;
  if (!dump.empty() && file_exists(dump) && !force) prepare_output_dir(dump, false);  // refuse before running
  DeviceOptions opt{model, hw, numerics};
  opt.dump_all = vm.count("dump-all") > 0;
  std::unique_ptr<Device> dev = open_device(backend, opt);
  // The run's own tensors: prefill (the last position's logits, as every
  // backend returns them) and each decode step, comparable with n3 diff.
  DumpCollector rec(opt.dump_all);
  rec.set_meta("backend", backend);
  rec.set_meta("numerics", numerics);
  rec.set_meta("model", model);
  rec.set_logits_last(true);
  Recorder* r = dump.empty() ? nullptr : &rec;
  const int V = dev->config().vocab;

  std::vector<int32_t> ids;
  if (tok) {
    if (vm.count("prompt"))
      for (int id : tok->encode_prompt(prompt)) ids.push_back(id);
    for (int s : tok->stop_ids()) sc.stop_ids.push_back(s);
  }
  if (vm.count("ids")) ids = read_ids(ids_path, V);
  for (int32_t id : ids)
    require(id >= 0 && id < V, "n3 run: prompt id " + std::to_string(id) + " is out of range [0, " +
                                   std::to_string(V) + ") for this model");
  host::Sampler sampler(sc, std::vector<int>(ids.begin(), ids.end()));
  std::unique_ptr<host::TextStream> text;
  if (tok) text = std::make_unique<host::TextStream>(*tok);

  const int seq = dev->open_sequence();
  Logits lg = dev->prefill(seq, ids, r);
  const double prefill_s = dev->last_timing().wall_s;
  double decode_s = 0, sim_s = 0;
  int64_t sim_cycles = 0;
  bool have_sim = false;
  std::vector<int32_t> gen;
  double sample_s = 0;  // host sampling: not in the backend's decode time
  while (!sampler.done() && max_new > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const int id = sampler.next(lg.values.row(lg.values.shape[0] - 1), V);
    sample_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gen.push_back(id);
    if (text) std::fputs(text->push(id).c_str(), stdout);
    else std::printf("%s%d", gen.size() > 1 ? " " : "", id);
    std::fflush(stdout);
    if (sampler.done()) break;
    lg = dev->decode({seq}, {id}, r);
    const StepTiming& t = dev->last_timing();
    decode_s += t.wall_s;
    if (t.sim_cycles >= 0) {
      have_sim = true;
      sim_cycles += t.sim_cycles;
      sim_s += t.sim_seconds;
    }
  }
  if (text) std::fputs(text->finish().c_str(), stdout);
  std::printf("\n");
  if (!out.empty()) write_npy_i32(out, gen);
  if (!dump.empty()) {
    prepare_output_dir(dump, force);
    rec.write(dump);
  }
  const int steps = std::max<int>(0, int(gen.size()) - 1);
  std::fprintf(stderr, "n3 run: %s backend, %s numerics: %zu prompt tokens in %.3f s, %zu generated", backend.c_str(),
               numerics.c_str(), ids.size(), prefill_s, gen.size());
  if (steps > 0) std::fprintf(stderr, ", decode %.2f tok/s (wall)", steps / std::max(decode_s, 1e-9));
  if (!gen.empty()) std::fprintf(stderr, ", sampler %.3f ms/token on the host", 1e3 * sample_s / double(gen.size()));
  if (have_sim && steps > 0)
    std::fprintf(stderr, ", modelled NPU %.2f tok/s (%lld cycles/token)", steps / std::max(sim_s, 1e-12),
                 (long long)(sim_cycles / steps));
  std::fprintf(stderr, "%s\n", sampler.stopped() ? "; stopped on a stop id" : "");
  return kExitOk;
}

}  // namespace n3::cli
