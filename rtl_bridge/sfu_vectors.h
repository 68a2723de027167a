// Random and adversarial inputs of the SFU's functions for
// `n3 cosim --unit sfu` (docs/rtl_sfu.md, "SFU element pipeline", "SFU row operators"). Vector i
// is one element (a row for the row functions) of function sfu_func_of(i),
// built from (seed, i) alone, so a shard rebuilds exactly the vectors of the
// unsplit run. Of every kSfuCycle consecutive indices, each element-wise
// function and row reduction has kSfuRowRatio, each fused row operator one:
// its row holds about as many elements as those kSfuRowRatio vectors. dst's
// format, and whether the streams stall, are drawn per block of
// kSfuBlock indices (one CVO instruction streams many elements in one
// format); SCALE / ADDK / MAXK draw their constant k per vector. A vector
// of a row reduction (RSUM, RMAX, RSUMSQ, RMS) is one row: 1 to 16 elements,
// one in ten 17 to 100 (one to three wraps of the 32 accumulator lanes).
// A row operator's vector is a row of 1 to 16 elements, one in four 17 to
// 100, one in twenty 101 to 300 (ROPE: an even count), its k (eps, mult, cap,
// floor; ROPE's k is its rows' length d) and RMSNORM's weight drawn per block
// (the rows of a block are one command), MAGMATCH's target per row.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "golden/numerics/formats.h"
#include "isa/isa.h"

namespace n3::rtl {

// One element the unit takes.
struct SfuElem {
  uint32_t a = 0, b = 0, c = 0;  // f32 bits: a, b (binary functions), c (MAC's old dst value)
};

extern const isa::CvoFunc kSfuFuncs[];
extern const int kNumSfuFuncs;
constexpr int64_t kSfuBlock = 4096;
constexpr int kNumSfuRowOps = 6;  // the last of kSfuFuncs
constexpr int64_t kSfuRowRatio = 20;  // a row operator's row: about 30 elements, so 1.5 x the elements
constexpr int64_t kSfuCycle = (27 - kNumSfuRowOps) * kSfuRowRatio + kNumSfuRowOps;
// Index into kSfuFuncs of vector i's function.
int sfu_func_index(int64_t i);

// The ISA's name of a function ("EXP", "MAC", ...).
std::string sfu_func_name(isa::CvoFunc f);
// Whether the function reads b, c (MAC's old dst value) or the constant k.
bool sfu_reads_b(isa::CvoFunc f);
bool sfu_reads_k(isa::CvoFunc f);
bool sfu_is_reduction(isa::CvoFunc f);
// The fused row operators (RMSNORM, SOFTMAX, ROPE, GTOPK, SOFTCAP, MAGMATCH).
bool sfu_is_rowop(isa::CvoFunc f);
// Reads of each row the RTL makes (RMSNORM, MAGMATCH 2; SOFTMAX, GTOPK 3; else 1).
int sfu_passes(isa::CvoFunc f);

struct SfuVector {
  isa::CvoFunc func = isa::CvoFunc::EXP;
  uint32_t a = 0, b = 0, c = 0, k = 0;  // f32 bits (b, c, k: 0 where the function has none)
  std::vector<uint32_t> row;            // a reduction's or row operator's row (f32 bits; a unused)
  std::vector<uint32_t> rowb;           // RMSNORM's weight row, MAGMATCH's target (one), ROPE's angles (d/2)
  bool hasb = false;                    // RMSNORM: with a weight
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
// A row operator's: its row's results.
std::vector<uint32_t> sfu_expected_row(const SfuVector& v);
// The elements a row operator's row streams (ROPE: a the element, b its
// pair's other one, c the angle; RMSNORM: b the weight; MAGMATCH: b the target).
std::vector<SfuElem> sfu_row_elems(const SfuVector& v);

}  // namespace n3::rtl
