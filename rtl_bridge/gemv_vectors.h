// Random and adversarial GEMV jobs for `n3 cosim --unit gemv`: each vector is
// one real gemv.mv / qk / pv instruction (descriptors, a memory image, the
// number formats it runs under) built from rtl::vector_rng(seed, index)
// alone, so a shard rebuilds exactly the vectors of the unsplit run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "golden/hw_config.h"
#include "isa/isa.h"
#include "sim/systemc/timing.h"
#include "sim/view.h"

namespace n3::rtl {

// The adversarial classes every run covers (docs/rtl.md, `n3 cosim`).
extern const char* const kGemvClasses[];
extern const int kNumGemvClasses;

struct GemvVector {
  isa::GemvMode mode = isa::GemvMode::MV;
  num::Formats formats;             // bfp_block and mantissa widths this job runs under
  sim::View dst, src, w;            // resolved operands (slot 1 each)
  struct Bytes {
    isa::Space space;
    uint64_t addr;
    std::vector<uint8_t> data;
  };
  std::vector<Bytes> image;         // what memory holds before the instruction
  std::string kind;                 // "mv.int4.row", "qk.int8", ... (the engine path)
  std::string cls;                  // adversarial class (kGemvClasses)
  std::string shape_key;            // cycle-table row ("" for vectors run with stalls)
  timing::GemvShape shape;          // for the SystemC model's formula
  double stall_act = 0, stall_w = 0, stall_r = 0, stall_feed = 0;  // random stall probabilities
};

// What `n3 cosim --unit gemm` asks of the generator: MV jobs only, with
// the weight kinds the GEMM engine takes (INT4 row / two-level, INT8), and
// shapes around the array's (T up to rows + 8 tokens, N up to cols + 8
// outputs: ragged against both, kept small for the simulation's speed; a
// sixth of the random class in whole tiles with more tokens than rows, the
// shape the model's formula is calibrated on).
struct GemmDraw {
  int64_t rows = 32, cols = 32, macs_per_pe = 2;
};

// Vector `index` of the regression `seed` under the hardware file `hw`
// (its formats are used for most vectors; the rest draw their own). With
// `gemm`, a GEMM job (its draws differ; without it the GEMV vectors are
// the same as before GemmDraw existed).
GemvVector make_gemv_vector(uint64_t seed, int64_t index, const HwConfig& hw, const GemmDraw* gemm = nullptr);

}  // namespace n3::rtl
