// Random and adversarial inputs of the SFU's element-wise functions for
// `n3 cosim --unit sfu` (docs/rtl.md, "SFU element pipeline"). Vector i is one element of
// function kSfuFuncs[i mod kNumSfuFuncs], built from (seed, i) alone, so a
// shard rebuilds exactly the vectors of the unsplit run. dst's
// format, and whether the streams stall, are drawn per block of
// kSfuBlock indices (one CVO instruction streams many elements in one
// format); SCALE / ADDK / MAXK draw their constant k per vector. A vector
// of a row reduction (RSUM, RMAX, RSUMSQ, RMS; RMS's k is 1/n of its row) is one row: 1 to 16 elements,
// one in ten 17 to 100 (one to three wraps of the 32 accumulator lanes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "golden/numerics/formats.h"
#include "isa/isa.h"

namespace n3::rtl {

extern const isa::CvoFunc kSfuFuncs[];
extern const int kNumSfuFuncs;
constexpr int64_t kSfuBlock = 4096;

// The ISA's name of a function ("EXP", "MAC", ...).
std::string sfu_func_name(isa::CvoFunc f);
// Whether the function reads b, c (MAC's old dst value) or the constant k.
bool sfu_reads_b(isa::CvoFunc f);
bool sfu_reads_k(isa::CvoFunc f);
bool sfu_is_reduction(isa::CvoFunc f);

struct SfuVector {
  isa::CvoFunc func = isa::CvoFunc::EXP;
  uint32_t a = 0, b = 0, c = 0, k = 0;  // f32 bits (b, c, k: 0 where the function has none)
  std::vector<uint32_t> row;            // a reduction's row (f32 bits; a unused)
  num::Fmt fmt = num::Fmt::F32;         // dst's format
  bool stall = false;                   // random valid / ready stalls on the streams
  const char* cls = "";                 // the adversarial class
};

SfuVector make_sfu_vector(uint64_t seed, int64_t index);
// The adversarial classes of a function's vectors ("random", "near_over", ...).
std::vector<std::string> sfu_class_names(isa::CvoFunc f);

// The numerics core's result for the vector (golden/numerics/sfu.h,
// sfu_trig.h, ops.h; the binary functions as sim/exec_sfu.cc computes them),
// rounded into dst's format as write_row does: the f32 bits of that value.
uint32_t sfu_expected(const SfuVector& v);

}  // namespace n3::rtl
