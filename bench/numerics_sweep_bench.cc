// Exhaustive float32 sweep of the SFU: every float32 input in each
// function's documented range against the long double reference; prints max
// ULP error (and where), the share above 0.5 and 1 ULP, mean error, and
// throughput. A plain main (figures for docs/numerics.md), not a Google
// Benchmark fixture: one pass over 2^32 inputs is the measurement.
//   numerics_sweep_bench [function ...]   (default: all)
//   numerics_sweep_bench --step K ...     (every K-th input: a quick look)
//   numerics_sweep_bench --long ...       (long double reference; default
//                                          double, see tests/numerics_ulp.h)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>

#include "golden/numerics/sfu.h"
#include "golden/numerics/sfu_trig.h"
#include "tests/numerics_ulp.h"

using namespace n3::num;

namespace {

struct Fn {
  const char* name;
  float (*f)(float);
  long double (*ref)(long double);   // long double reference (--long)
  long double (*refd)(long double);  // double reference (default, faster)
  float lo, hi;  // documented range (all floats in it are swept)
};

const Fn kFns[] = {
    {"exp", exp_sfu, ref_exp, refd_exp, kExpUnder, kExpOver},
    {"tanh", tanh_sfu, ref_tanh, refd_tanh, -kFltMax, kFltMax},
    {"gelu_tanh", gelu_tanh_sfu, ref_gelu, refd_gelu, -kFltMax, kFltMax},
    {"sin", sin_sfu, ref_sin, refd_sin, -kFltMax, kFltMax},
    {"cos", cos_sfu, ref_cos, refd_cos, -kFltMax, kFltMax},
    {"recip", recip, ref_recip, refd_recip, kFltMinSub, kFltMax},
    {"sqrt", sqrt_rn, ref_sqrt, refd_sqrt, kFltMinSub, kFltMax},
    {"rsqrt", rsqrt_rn, ref_rsqrt, refd_rsqrt, kFltMinSub, kFltMax},
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t step = 1;
  bool use_long = false;
  std::vector<std::string> want;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--step") == 0 && i + 1 < argc) step = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--long") == 0) use_long = true;
    else want.push_back(argv[i]);
  }
  std::printf("%-10s %-28s %12s %10s %-16s %12s %12s %10s %8s\n", "function", "range", "inputs", "max_ulp",
              "at", ">0.5ulp", ">1ulp", "mean_ulp", "sec");
  for (const Fn& fn : kFns) {
    bool sel = want.empty();
    for (const auto& w : want) sel |= w == fn.name;
    if (!sel) continue;
    const int64_t a = float_index(fn.lo), b = float_index(fn.hi);
    const uint64_t span = static_cast<uint64_t>(b - a) + 1;
    const auto t0 = std::chrono::steady_clock::now();
    const UlpStats s = sweep_range(fn.f, use_long ? fn.ref : fn.refd, fn.lo, fn.hi, (span + step - 1) / step);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char range[64];
    std::snprintf(range, sizeof range, "[%.6g, %.6g]", fn.lo, fn.hi);
    std::printf("%-10s %-28s %12llu %10.4f %-16a %12llu %12llu %10.4f %8.1f\n", fn.name, range,
                static_cast<unsigned long long>(s.points), s.max_ulp, s.worst_x,
                static_cast<unsigned long long>(s.over_half), static_cast<unsigned long long>(s.over_one),
                s.sum_ulp / static_cast<double>(s.points), sec);
    std::fflush(stdout);
  }
  std::printf("threads: %d, reference: %s\n", omp_get_max_threads(), use_long ? "long double" : "double");
  return 0;
}
