// Shared helpers for the suites: paths to fixtures and the n3 binary, running
// n3 as a subprocess, temp dirs, and whole-tensor comparisons that print the
// worst element against its tolerance.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/tensor.h"

namespace n3::test {

std::string source_dir();                 // repository root
std::string fixture(const std::string& rel);  // tests/fixtures/<rel>
std::string n3_binary();
// A fresh empty directory under the build's temp area, removed at exit.
std::string temp_dir(const std::string& tag);

// An opt-in suite's switch: the variable set to exactly "1" (N3_RTL_LARGE=1).
inline bool opt_in(const char* var) {
  const char* v = std::getenv(var);
  return v && std::string(v) == "1";
}

struct RunResult {
  int status;
  std::string out, err;
};
// configs/hw/kv260.yaml with some values replaced ("kv.cap_tokens" -> "32",
// ...; each key must exist in the file), written as <temp dir of tag>/hw.yaml.
std::string hw_variant(const std::string& tag, const std::vector<std::pair<std::string, std::string>>& values);
// " --hw <kv260 without the weight prefetch>": for runs compared with the
// RTL GEMV bridge, which does not prefetch (timing.wbuf_prefetch_tiles 0).
std::string hw_without_prefetch(const std::string& tag);

// configs/models/tiny.yaml synthesised with seed 1 (`n3 synth`), made once per process.
const std::string& tiny_n3w();
// The RTL bridge tests' tiny-model run: a `prompt`-token prompt and `steps`
// fed tokens written into `dir`, as " --model <tiny> --ids .. --feed ..
// --dump-all --force" for `n3 sim` / `n3 golden`.
std::string tiny_run_io(const std::string& dir, int prompt, int steps);

// Runs `n3 <args>` (args joined by spaces, shell-quoted by the caller).
RunResult run_n3(const std::string& args);

// The simulator backends of this build: func, and systemc where SystemC was found.
std::vector<std::string> sim_backends();
// For every simulator backend B: `n3 sim --backend B <args> --dump <dir>/B`
// exits 0 and `n3 diff <dir>/B <ref>` exits 0 (bit-identical).
void expect_sims_match(const std::string& args, const std::string& dir, const std::string& ref);

// max|a-b| / max|b| over all elements (NaN anywhere = +inf).
double rel_max_err(const Tensor& a, const Tensor& b);
double max_abs_err(const Tensor& a, const Tensor& b);
double cosine(const Tensor& a, const Tensor& b);

// Sets an environment variable for a scope (an empty value leaves it alone)
// and puts back what was there before, also when the scope ends by an
// exception or a failed ASSERT: a suite run with the variable exported
// keeps it for the tests after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
  bool set_ = false;
};

}  // namespace n3::test
