// n3 convert --model HFDIR -o X.n3w [--group G]: a HuggingFace checkpoint (or
// another .n3w) to an n3 weights file: Matrix tensors quantised to INT4,
// the AltUp coefficient matrices and vectors kept float32 (golden/quantize.h).
#include <chrono>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "golden/quantize.h"
#include "golden/weights.h"
#include "host_driver/cli_util.h"

namespace n3::cli {

namespace {

std::string size_str(uint64_t bytes) {
  char b[32];
  if (bytes >= 1000000000) std::snprintf(b, sizeof b, "%.2f GB", bytes / 1e9);
  else std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

}  // namespace

int cmd_convert(const Args& a) {
  po::options_description desc("n3 convert options");
  std::string model, out;
  int64_t group = 0;
  bool quiet = false;
  desc.add_options()
      ("model", po::value(&model)->required(), "HuggingFace checkpoint directory (or an .n3w file)")
      ("out,o", po::value(&out)->required(), "output .n3w file (written atomically)")
      ("group", po::value(&group)->default_value(0), "INT4 elements per scale; 0 = one scale per row")
      ("quiet,q", po::bool_switch(&quiet), "no progress on stderr");
  po::variables_map vm;
  if (!parse_args("convert", a, desc, {}, vm, "n3 convert --model HFDIR -o X.n3w [--group G]")) return kExitOk;
  check_output(out, "-o");
  require(group >= 0, "--group must be >= 0");

  const auto t0 = std::chrono::steady_clock::now();
  const std::unique_ptr<WeightSource> src = open_weights(model);
  QuantizeOptions opt;
  opt.group = group;
  int shown = 0;
  if (!quiet)
    opt.progress = [&](uint64_t done, uint64_t total) {
      int pct = int(100.0 * double(done) / double(total));
      if (pct / 10 > shown / 10 && pct < 100) {
        shown = pct;
        std::fprintf(stderr, "n3 convert: %3d%% (%s of %s)\n", pct, size_str(done).c_str(),
                     size_str(total).c_str());
      }
    };
  const uint64_t bytes = quantize_to_n3w(*src, out, opt);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!quiet)
    std::fprintf(stderr, "n3 convert: wrote %s from %s (%s) in %.1f s\n", out.c_str(),
                 src->describe().c_str(), size_str(bytes).c_str(), secs);
  return kExitOk;
}

}  // namespace n3::cli
