// The vectors of `n3 cosim --unit fp` (cosim_fp.cc, docs/rtl.md "Floating-point
// and BFP leaves"): one vector holds an input for every leaf of rtl/fp/,
// each drawn from one class: `random` (uniform bit patterns) or an
// adversarial kind (signed zeros, subnormals, extreme normals, inf and NaN,
// exact rounding ties built from odd significands and their neighbours, the
// overflow and underflow boundaries of bf16 and f16, accumulators near 2^62,
// e_top extremes, BFP blocks with one huge element, zero, poison and partial
// blocks, saturating mantissas). Independent of the RTL and of SystemC.
#pragma once
#include <array>
#include <cstdint>
#include <random>

namespace n3::rtl::fp {

constexpr int kB = 32;  // the block of n3_fp_units' quantiser

// The leaves, by the names the summary and N3_COSIM_FP_INJECT use.
enum Leaf { kAccRound, kAccAlign, kMul, kAdd, kRoundFmt, kToF32, kBfpQuant, kLeaves };
constexpr const char* kLeafName[kLeaves] = {"fp_acc_round", "acc_align", "fp_mul",   "fp_add",
                                            "fp_round_fmt", "fp_to_f32", "bfp_quant"};

// One vector: the inputs of every leaf, and the class each was drawn from.
struct Vec {
  int64_t ar_acc = 0;
  int16_t ar_e_top = 0;
  uint32_t ar_scale = 0;
  int ar_fmt = 0;
  int64_t al_p = 0;
  int16_t al_x = 0, al_e_top = 0;
  uint32_t mul_a = 0, mul_b = 0, add_a = 0, add_b = 0;
  uint32_t rf_x = 0;
  int rf_fmt = 0;
  uint32_t cv_bits = 0;
  int cv_fmt = 0;
  std::array<uint32_t, kB> bq_x{};
  int bq_cnt = 0, bq_mbits = 2;
  std::array<const char*, kLeaves> cls{};
};

// The outputs of every leaf (RTL, or the C++ expectation).

// Draws one vector from r (the vector's own stream, vector_rng(seed, i)).
Vec draw(std::mt19937_64& r);

}  // namespace n3::rtl::fp
