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
#include "host_driver/generate.h"
#include "host_driver/sampler.h"
#include "host_driver/tokenizer.h"

namespace n3::cli {

int cmd_run(const Args& a) {
  po::options_description d("n3 run options");
  std::string backend, model, hw, numerics, out, preset, tokenizer, prompt, dump;
  std::vector<std::string> ids_paths;
  int max_new = 0;
  float temperature = 0, top_p = 1, rep = 1;
  int top_k = 0;
  std::string seed;  // parse_count: po's uint64_t took "-1" as 2^64 - 1
  std::vector<int> stop;
  d.add_options()("backend", po::value(&backend)->default_value("golden"), "golden | func | systemc | cuda")(
      "model", po::value(&model)->required(), "checkpoint dir or .n3w file")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file")(
      "ids", po::value(&ids_paths)->composing(),
      "prompt token ids (.npy); given several times, the prompts run as one batch (one sequence each)")(
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
  check_output(out, "--out");
  require(vm.count("ids") + vm.count("prompt") == 1, "n3 run: give exactly one of --ids and --prompt");
  const size_t batch = std::max<size_t>(1, ids_paths.size());
  require(batch == 1 || dump.empty(), "n3 run: --dump records one sequence; give one --ids");
  require(batch == 1 || !vm.count("tokenizer"), "n3 run: --tokenizer prints one sequence's text; give one --ids");
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
  if (vm.count("seed")) sc.seed = parse_count(seed, "--seed", 0, UINT64_MAX);
  sc.max_new = max_new;
  sc.stop_ids = stop;

  std::unique_ptr<host::Tokenizer> tok;
  if (vm.count("tokenizer")) tok = std::make_unique<host::Tokenizer>(tokenizer);
  const bool force = vm.count("force") > 0;
  check_output_dir(dump, force, "--dump");  // refuse before running
  DeviceOptions opt{model, hw, numerics};
  opt.dump_all = vm.count("dump-all") > 0;
  std::unique_ptr<Device> dev = open_device(backend, opt);
  // The run's own tensors: prefill (the last position's logits, as every
  // backend returns them) and each decode step, comparable with n3 diff.
  DumpCollector rec(opt.dump_all);
  set_run_meta(rec, *dev, model);
  rec.set_logits_last(true);
  Recorder* r = dump.empty() ? nullptr : &rec;
  const int V = dev->config().vocab;

  std::vector<std::vector<int32_t>> prompts(batch);
  if (tok) {
    if (vm.count("prompt"))
      for (int id : tok->encode_prompt(prompt)) prompts[0].push_back(id);
    for (int s : tok->stop_ids()) sc.stop_ids.push_back(s);
  }
  for (size_t i = 0; i < ids_paths.size(); ++i) prompts[i] = read_ids(ids_paths[i], V);
  // The prompt and the --max-new tokens after it must all have positions:
  // refused here, before the first prefill and before any output exists,
  // rather than when a decode step runs out of positions part-way.
  for (size_t i = 0; i < batch; ++i)
    check_positions_fit(ids_paths.empty() ? std::string("--prompt (tokenized)") : "--ids " + ids_paths[i],
                        prompts[i].size(), size_t(std::max(max_new, 0)), "--max-new " + std::to_string(max_new),
                        dev->config().max_positions);
  std::unique_ptr<host::TextStream> text;
  if (tok) text = std::make_unique<host::TextStream>(*tok);
  bool first = true;
  const host::Generation g = host::generate(*dev, prompts, sc, r, [&](size_t, int id) {
    if (batch > 1) return;  // one sequence streams its ids (or text) as they come
    if (text) std::fputs(text->push(id).c_str(), stdout);
    else std::printf("%s%d", first ? "" : " ", id);
    first = false;
    std::fflush(stdout);
  });
  const std::vector<std::vector<int32_t>>& gen = g.ids;
  if (batch == 1) {
    if (text) std::fputs(text->finish().c_str(), stdout);
    std::printf("\n");
  } else {  // a batch prints one line per sequence, in --ids order, when all are done
    for (size_t i = 0; i < batch; ++i) {
      for (size_t k = 0; k < gen[i].size(); ++k) std::printf("%s%d", k ? " " : "", gen[i][k]);
      std::printf("\n");
    }
  }
  if (!dump.empty()) {
    OutputGuard written;  // a folder this run made goes again on failure or a signal
    written.prepare_dir(dump, force);
    rec.write(dump);
    written.commit();
  }
  // --out last, after the dump: a dump that fails leaves no --out behind,
  // even before the run journal (main.cc) removes what failed.
  if (!out.empty()) {
    if (batch == 1) {
      write_npy_i32(out, gen[0]);
    } else {  // [batch, longest], -1 after a sequence stopped
      size_t n = 0;
      for (const auto& g : gen) n = std::max(n, g.size());
      std::vector<int32_t> all(batch * n, -1);
      for (size_t i = 0; i < batch; ++i) std::copy(gen[i].begin(), gen[i].end(), all.begin() + long(i * n));
      write_npy_raw(out, "i4", {int64_t(batch), int64_t(n)}, all.data(), all.size() * 4);
    }
  }
  size_t prompt_tokens = 0, generated = 0;
  for (size_t i = 0; i < batch; ++i) {
    prompt_tokens += prompts[i].size();
    generated += gen[i].size();
  }
  const int64_t steps = g.decoded;
  const double prefill_s = g.prefill_s, decode_s = g.decode_s, sample_s = g.sample_s, sim_s = g.sim_s;
  const int64_t sim_cycles = g.sim_cycles;
  const bool have_sim = g.simulated, stopped = g.stopped;
  std::fprintf(stderr, "n3 run: %s backend, %s numerics: %s%zu prompt tokens in %.3f s, %zu generated", backend.c_str(),
               numerics.c_str(), batch > 1 ? (std::to_string(batch) + " sequences, ").c_str() : "", prompt_tokens,
               prefill_s, generated);
  if (steps > 0) std::fprintf(stderr, ", decode %.2f tok/s (wall)", steps / std::max(decode_s, 1e-9));
  if (generated) std::fprintf(stderr, ", sampler %.3f ms/token on the host", 1e3 * sample_s / double(generated));
  if (have_sim && steps > 0)
    std::fprintf(stderr, ", modelled NPU %.2f tok/s (%lld cycles/token)", steps / std::max(sim_s, 1e-12),
                 (long long)(sim_cycles / steps));
  std::fprintf(stderr, "%s\n", stopped ? "; stopped on a stop id" : "");
  return kExitOk;
}

}  // namespace n3::cli
