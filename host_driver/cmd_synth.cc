// n3 synth --model MODEL.yaml --seed S -o X.n3w [--group G]: seeded random
// INT4 weights for a model config (golden/synth.h, docs/weights.md).
#include <chrono>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "golden/model_config.h"
#include "golden/synth.h"
#include "host_driver/cli_util.h"

namespace n3::cli {

namespace {

std::string size_str(uint64_t bytes) {
  char b[32];
  if (bytes >= 1000000000) std::snprintf(b, sizeof b, "%.2f GB", bytes / 1e9);
  else std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

uint64_t parse_seed(const std::string& s) {
  bool digits = !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
  require(digits, "--seed '" + s + "' is not an unsigned 64-bit integer");
  try {
    return std::stoull(s);
  } catch (const std::exception&) {
    throw Error("--seed '" + s + "' is not an unsigned 64-bit integer");
  }
}

}  // namespace

int cmd_synth(const Args& a) {
  po::options_description desc("n3 synth options");
  std::string model, out, seed;
  int64_t group = 0;
  bool quiet = false;
  desc.add_options()
      ("model", po::value(&model)->required(), "model YAML (or config.json / checkpoint directory)")
      ("seed", po::value(&seed)->default_value("0"), "RNG seed (unsigned 64-bit); same seed, same file")
      ("out,o", po::value(&out)->required(), "output .n3w file (written atomically)")
      ("group", po::value(&group)->default_value(0), "INT4 elements per scale; 0 = one scale per row")
      ("quiet,q", po::bool_switch(&quiet), "no progress on stderr");
  po::variables_map vm;
  if (!parse_args("synth", a, desc, {}, vm, "n3 synth --model MODEL.yaml --seed S -o X.n3w [--group G]"))
    return kExitOk;
  check_output(out, "-o");
  require(group >= 0, "--group must be >= 0");
  const uint64_t s = parse_seed(seed);
  const ModelConfig c = load_model_config(model);

  const auto t0 = std::chrono::steady_clock::now();
  SynthOptions opt;
  opt.group = group;
  int shown = 0;
  if (!quiet)
    opt.progress = [&](uint64_t done, uint64_t total) {
      int pct = int(100.0 * double(done) / double(total));
      if (pct / 10 > shown / 10 && pct < 100) {
        shown = pct;
        std::fprintf(stderr, "n3 synth: %3d%% (%s of %s)\n", pct, size_str(done).c_str(),
                     size_str(total).c_str());
      }
    };
  const uint64_t bytes = synth_n3w(c, s, out, opt);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!quiet)
    std::fprintf(stderr, "n3 synth: wrote %s (model '%s', seed %llu, %s) in %.1f s\n", out.c_str(),
                 c.name.c_str(), static_cast<unsigned long long>(s), size_str(bytes).c_str(), secs);
  return kExitOk;
}

}  // namespace n3::cli
