#include "rtl_bridge/sfu_vectors.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "golden/numerics/ops.h"

namespace n3::rtl {

using isa::CvoFunc;
using F = isa::CvoFunc;

const CvoFunc kSfuFuncs[] = {F::EXP,  F::SQRT, F::RSQRT, F::RECIP, F::TANH, F::GELU, F::SIN, F::COS, F::SCALE,
                             F::RELU, F::ADDK, F::MAXK,  F::ADD,   F::SUB,  F::MUL,  F::MAX, F::MAC,
                             F::RSUM, F::RMAX, F::RSUMSQ, F::RMS,
                             F::RMSNORM, F::SOFTMAX, F::ROPE, F::GTOPK, F::SOFTCAP, F::MAGMATCH};
const int kNumSfuFuncs = sizeof(kSfuFuncs) / sizeof(kSfuFuncs[0]);
static_assert(sizeof(kSfuFuncs) / sizeof(kSfuFuncs[0]) == 27, "kSfuCycle counts 27 functions");

int sfu_func_index(int64_t i) {
  const int64_t per = kNumSfuFuncs - kNumSfuRowOps, slot = i % kSfuCycle;
  return slot < per * kSfuRowRatio ? int(slot % per) : int(per + slot - per * kSfuRowRatio);
}

std::string sfu_func_name(CvoFunc f) { return isa::enum_text(isa::EnumId::CvoFunc, uint64_t(f)); }
bool sfu_reads_b(CvoFunc f) {
  return f == F::ADD || f == F::SUB || f == F::MUL || f == F::MAX || f == F::MAC;
}
bool sfu_reads_k(CvoFunc f) { return f == F::SCALE || f == F::ADDK || f == F::MAXK; }
bool sfu_is_reduction(CvoFunc f) { return f == F::RSUM || f == F::RMAX || f == F::RSUMSQ || f == F::RMS; }
bool sfu_is_rowop(CvoFunc f) {
  return f == F::RMSNORM || f == F::SOFTMAX || f == F::ROPE || f == F::GTOPK || f == F::SOFTCAP || f == F::MAGMATCH;
}
int sfu_passes(CvoFunc f) {
  return f == F::SOFTMAX || f == F::GTOPK ? 3 : f == F::RMSNORM || f == F::MAGMATCH ? 2 : 1;
}

namespace {

// The vectors' random source: SplitMix64 keyed by (seed, salt, index), so
// vector i depends on (seed, i) alone as rtl::vector_rng's do, at a fraction
// of the cost of seeding a Mersenne Twister per vector (which took three
// quarters of the cosim's time: the SFU is fast per vector).
struct Rng {
  using result_type = uint64_t;
  uint64_t s;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t(0); }
  uint64_t operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};
Rng keyed_rng(uint64_t seed, uint64_t salt, int64_t index) {
  Rng r{seed ^ salt};
  r.s = r() ^ uint64_t(index);
  r();
  return r;
}
int64_t uni(Rng& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r); }
double unif(Rng& r, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(r); }
bool chance(Rng& r, double p) { return unif(r, 0, 1) < p; }
uint32_t bits(float f) { return num::f2u(f); }
uint32_t sign(Rng& r) { return chance(r, 0.5) ? 0x80000000u : 0u; }

// Uniform bit patterns: every class of float, NaN payloads included.
uint32_t random_bits(Rng& r) { return static_cast<uint32_t>(r()); }
// Zeros, infinities, NaNs (quiet, signalling, negative, full payload), the
// subnormal and normal extremes, +-1.
uint32_t special(Rng& r) {
  static const uint32_t v[] = {0x00000000u, 0x7f800000u, 0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0x00000001u,
                               0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x3f800000u, 0x00400000u, 0x7f7ffffeu};
  return v[uni(r, 0, sizeof(v) / sizeof(v[0]) - 1)] | sign(r);
}
// 2^e and its neighbours (up to 2 units either way), e over the whole range.
uint32_t binade(Rng& r) {
  const int64_t e = uni(r, 1, 254);
  return static_cast<uint32_t>((e << 23) + uni(r, -2, 2)) | sign(r);
}
uint32_t subnormal(Rng& r) { return static_cast<uint32_t>(uni(r, 1, 0x7fffff)) | sign(r); }
// Magnitude with a uniform exponent in [e0, e1] and a random significand.
uint32_t logu(Rng& r, int e0, int e1, bool any_sign = true) {
  const uint32_t m = static_cast<uint32_t>(uni(r, 0, 0x7fffff));
  const uint32_t u = static_cast<uint32_t>(uni(r, e0 + 127, e1 + 127)) << 23 | m;
  return u | (any_sign ? sign(r) : 0u);
}
uint32_t range(Rng& r, double lo, double hi) { return bits(static_cast<float>(unif(r, lo, hi))); }
// x moved by up to `ulps` representable steps (through zero if it must).
uint32_t near(Rng& r, float x, int ulps) {
  const uint32_t u = bits(x);
  // Floats in order as integers: negative ones mirrored below zero.
  int64_t key = (u >> 31) ? -int64_t(u & 0x7fffffffu) : int64_t(u);
  key += uni(r, -ulps, ulps);
  return key < 0 ? static_cast<uint32_t>(-key) | 0x80000000u : static_cast<uint32_t>(key);
}
float with_random_sign(Rng& r, float x) { return num::u2f(bits(x) | sign(r)); }

// GELU switches to its large-exponent branch where v = -2 sqrt(2/pi)
// (x + 0.044715 x^3) passes 40 (sfu.h); the boundary found here in double
// (bisection on v's formula, which the numerics core evaluates in
// double-float) lies within a few units of the float the core switches at,
// and near_v40 draws 256 units either side of it.
float gelu_v40() {
  static const float x0 = [] {
    auto v = [](double x) { return -2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); };
    double lo = -10, hi = 0;  // v(lo) > 40 > v(hi)
    for (int i = 0; i < 200; ++i) {
      const double m = (lo + hi) / 2;
      (v(m) > 40 ? lo : hi) = m;
    }
    return static_cast<float>(lo);
  }();
  return x0;
}

// A near-multiple of pi/2: the float nearest k pi/2 for k up to 2^24 (or
// beyond, scaled to huge arguments), moved a few units.
uint32_t near_pio2(Rng& r) {
  const int64_t k = uni(r, 1, int64_t(1) << uni(r, 1, 24));
  const double x = double(k) * (M_PI / 2) * std::ldexp(1.0, chance(r, 0.2) ? int(uni(r, 0, 100)) : 0);
  return near(r, with_random_sign(r, static_cast<float>(x)), 4);
}

uint32_t pick_zero_inf(Rng& r) {
  static const uint32_t v[] = {0x00000000u, 0x80000000u, 0xff800000u, 0x7f800000u, 0x00000001u, 0x80000001u};
  return v[uni(r, 0, sizeof(v) / sizeof(v[0]) - 1)];
}

// Classes of the unary functions: [0] random, [1] special, [2] binade,
// [3] subnormal, then the function's own.
uint32_t unary_input(CvoFunc f, int cls, Rng& r, const char** name) {
  switch (cls) {
    case 0: *name = "random"; return random_bits(r);
    case 1: *name = "special"; return special(r);
    case 2: *name = "binade"; return binade(r);
    case 3: *name = "subnormal"; return subnormal(r);
    default: break;
  }
  const int c = cls - 4;
  switch (f) {
    case F::EXP: {
      static const char* n[] = {"near_over", "near_under", "range", "tiny", "subnormal_result"};
      *name = n[c];
      if (c == 0) return near(r, num::kExpOver, 64);
      if (c == 1) return near(r, num::kExpUnder, 64);
      if (c == 2) return range(r, -104, 89);
      if (c == 3) return logu(r, -40, -2);
      return range(r, -104, -87);
    }
    case F::SQRT: case F::RSQRT: case F::RECIP: {
      static const char* n[] = {"square", "near_square", "whole_range", "negative", "huge"};
      *name = n[c];
      // Squares of 12-bit significands are exact: sqrt / rsqrt's exact case.
      const float s = num::u2f(logu(r, -70, 60, false) & 0xfffff800u);
      if (c == 0) return bits(s * s);
      if (c == 1) return near(r, s * s, 2);
      if (c == 2) return logu(r, -126, 127, false);
      if (c == 3) return logu(r, -126, 127, false) | 0x80000000u;
      return logu(r, 120, 127);
    }
    case F::TANH: {
      static const char* n[] = {"near_0.55", "near_9", "range", "tiny", "poly_range"};
      *name = n[c];
      if (c == 0) return near(r, with_random_sign(r, 0.55f), 64);
      if (c == 1) return near(r, with_random_sign(r, 9.0f), 64);
      if (c == 2) return range(r, -10, 10);
      if (c == 3) return logu(r, -40, -3);
      return range(r, -0.56, 0.56);
    }
    case F::GELU: {
      static const char* n[] = {"near_10", "near_-20", "near_v40", "range", "tail", "tiny"};
      *name = n[c];
      if (c == 0) return near(r, 10.0f, 64);
      if (c == 1) return near(r, -20.0f, 64);
      if (c == 2) return near(r, gelu_v40(), 256);
      if (c == 3) return range(r, -21, 11);
      if (c == 4) return range(r, -20, -4);
      return logu(r, -40, -3);
    }
    case F::SIN: case F::COS: {
      static const char* n[] = {"near_pi/2", "huge", "range", "small", "near_0.78125"};
      *name = n[c];
      if (c == 0) return near_pio2(r);
      if (c == 1) return logu(r, 20, 127);
      if (c == 2) return range(r, -10, 10);
      if (c == 3) return logu(r, -40, -1);
      return near(r, with_random_sign(r, 0.78125f), 64);
    }
    default: {  // RELU
      *name = "range";
      return range(r, -4, 4);
    }
  }
}
int unary_classes(CvoFunc f) {
  switch (f) {
    case F::GELU: return 10;
    case F::RELU: return 5;
    default: return 9;
  }
}

// Operands of the functions of two inputs (b or k): both from one kind:
// random, special, binade, mixed (one special), cancel (b near -a or a),
// overflow (both huge), underflow (both tiny, subnormal results), range.
constexpr int kPairClasses = 8;
void pair_input(CvoFunc f, int cls, Rng& r, uint32_t* a, uint32_t* b, const char** name) {
  static const char* n[] = {"random", "special", "binade", "mixed", "cancel", "overflow", "underflow", "range"};
  *name = n[cls];
  switch (cls) {
    case 0: *a = random_bits(r); *b = random_bits(r); return;
    case 1: *a = special(r); *b = special(r); return;
    case 2: *a = binade(r); *b = binade(r); return;
    case 3: *a = random_bits(r); *b = special(r); if (chance(r, 0.5)) std::swap(*a, *b); return;
    case 4: {
      *a = logu(r, -130, 127);
      const bool neg = f == F::SUB || f == F::MAX || f == F::MAXK;  // SUB cancels a - a; MAX ties
      *b = near(r, num::u2f(neg ? *a : *a ^ 0x80000000u), 3);
      return;
    }
    case 5: *a = logu(r, 60, 127); *b = logu(r, 60, 127); return;
    case 6: *a = logu(r, -149 + 23, -40); *b = logu(r, -100, -20); return;
    default: *a = range(r, -100, 100); *b = range(r, -100, 100); return;
  }
}

// Rows of the reductions: random bits, values in [-100, 100], the same with
// specials among them, cancelling pairs (x, -x, so the lane order decides
// the rounding), huge values (sums and squares overflow), tiny ones
// (subnormal sums), signed zeros and infinities (the identities and the
// max's ties: nmax keeps its first operand), equal values with a few
// neighbours (max ties).
constexpr int kRowClasses = 8;
void row_input(int cls, Rng& r, std::vector<uint32_t>* row, const char** name) {
  static const char* n[] = {"random", "range", "specials", "cancel", "huge", "tiny", "zeros_infs", "ties"};
  *name = n[cls];
  const int64_t len = chance(r, 0.1) ? uni(r, 17, 100) : uni(r, 1, 16);
  row->resize(static_cast<size_t>(len));
  const float base = num::u2f(logu(r, -20, 20));
  for (int64_t i = 0; i < len; ++i) {
    uint32_t& x = (*row)[static_cast<size_t>(i)];
    switch (cls) {
      case 0: x = random_bits(r); break;
      case 1: x = range(r, -100, 100); break;
      case 2: x = chance(r, 0.1) ? special(r) : range(r, -100, 100); break;
      case 3: x = (i % 2 && chance(r, 0.8)) ? near(r, -num::u2f((*row)[size_t(i - 1)]), 1) : logu(r, -30, 30); break;
      case 4: x = logu(r, 100, 127); break;
      case 5: x = chance(r, 0.5) ? subnormal(r) : logu(r, -126, -100); break;
      case 6: x = pick_zero_inf(r); break;
      default: x = near(r, base, chance(r, 0.7) ? 0 : 1); break;
    }
  }
}

// A row operator's rows: the reductions' classes, and small values (where
// exp, tanh and the roots are far from their special cases).
constexpr int kRowOpClasses = kRowClasses + 1;
int64_t rowop_len(Rng& r) {
  const double u = unif(r, 0, 1);
  return u < 0.05 ? uni(r, 101, 300) : u < 0.3 ? uni(r, 17, 100) : uni(r, 1, 16);
}
void rowop_input(int cls, Rng& r, int64_t len, std::vector<uint32_t>* row, const char** name) {
  if (cls < kRowClasses) {
    row_input(cls, r, row, name);
    row->resize(size_t(len));
    std::vector<uint32_t> more;
    for (size_t i = 0; i < row->size(); i += more.size()) {  // refill to len with the class's values
      const char* n;
      row_input(cls, r, &more, &n);
      for (size_t j = 0; j < more.size() && i + j < row->size(); ++j) (*row)[i + j] = more[j];
    }
    return;
  }
  *name = "small";
  row->resize(size_t(len));
  for (uint32_t& x : *row) x = range(r, -8, 8);
}
// The command's k per block: a usual value, a random one, or a special one.
uint32_t rowop_k(CvoFunc f, Rng& r) {
  const double u = unif(r, 0, 1);
  if (u < 0.08) return special(r);
  switch (f) {
    case F::RMSNORM: return u < 0.4 ? bits(1e-6f) : u < 0.6 ? 0u : logu(r, -40, 0, false);
    case F::GTOPK: return u < 0.4 ? bits(1.6448536f) : range(r, -3, 3);
    case F::SOFTCAP: return u < 0.3 ? bits(30.0f) : u < 0.5 ? bits(50.0f) : logu(r, -10, 10);
    default: return u < 0.4 ? bits(1e-12f) : u < 0.6 ? 0u : logu(r, -60, 10, false);  // MAGMATCH's floor
  }
}
// An angle: small, near a multiple of pi/2, anywhere, huge, special.
uint32_t angle(Rng& r) {
  const double u = unif(r, 0, 1);
  return u < 0.4 ? range(r, -10, 10) : u < 0.6 ? near_pio2(r) : u < 0.8 ? logu(r, -40, 30) : u < 0.95 ? logu(r, 20, 127) : special(r);
}

}  // namespace

SfuVector make_sfu_vector(uint64_t seed, int64_t index) {
  SfuVector v;
  v.func = kSfuFuncs[sfu_func_index(index)];
  // Per block: dst's format (f32 half the time) and the stalls (a quarter).
  Rng blk = keyed_rng(seed, 0x5f0c1a55ull, index / kSfuBlock);
  const int64_t fmt = uni(blk, 0, 3);
  v.fmt = fmt == 1 ? num::Fmt::BF16 : fmt == 2 ? num::Fmt::F16 : num::Fmt::F32;
  v.stall = chance(blk, 0.25);
  Rng r = keyed_rng(seed, 0, index);
  if (sfu_is_rowop(v.func)) {
    // Per block: k (ROPE: its rows' length d), RMSNORM's weight or none.
    Rng kb = keyed_rng(seed, 0x6b0c1a55ull + uint64_t(v.func), index / kSfuBlock);
    v.k = rowop_k(v.func, kb);
    v.hasb = v.func == F::RMSNORM && chance(kb, 0.75);
    int64_t len = rowop_len(r);
    if (v.func == F::ROPE) {  // a block's rows are one command: one head_dim, even
      len = rowop_len(kb);
      len += len % 2;
    }
    rowop_input(static_cast<int>(uni(r, 0, kRowOpClasses - 1)), r, len, &v.row, &v.cls);
    if (v.hasb) {
      Rng wr = keyed_rng(seed, 0x77ull, index / kSfuBlock);  // one weight row a block: its first len elements
      v.rowb.resize(size_t(len));
      for (uint32_t& w : v.rowb) w = chance(wr, 0.05) ? special(wr) : range(wr, -2, 2);
    } else if (v.func == F::MAGMATCH) {
      v.rowb = {chance(r, 0.1) ? special(r) : logu(r, -10, 10)};
    } else if (v.func == F::ROPE) {
      v.rowb.resize(size_t(len / 2));
      for (uint32_t& a : v.rowb) a = angle(r);
      v.k = static_cast<uint32_t>(len);  // the command's k: the row length d (a's cols)
    }
  } else if (sfu_is_reduction(v.func)) {
    row_input(static_cast<int>(uni(r, 0, kRowClasses - 1)), r, &v.row, &v.cls);
  } else if (sfu_reads_b(v.func) || sfu_reads_k(v.func)) {
    pair_input(v.func, static_cast<int>(uni(r, 0, kPairClasses - 1)), r, &v.a, sfu_reads_k(v.func) ? &v.k : &v.b, &v.cls);
    if (v.func == F::MAC) {  // the old dst value: random, or cancelling the product
      const float p = num::u2f(v.a) * num::u2f(v.b);
      v.c = chance(r, 0.3) ? near(r, -p, 3) : chance(r, 0.3) ? special(r) : logu(r, -126, 127);
    }
  } else {
    v.a = unary_input(v.func, static_cast<int>(uni(r, 0, unary_classes(v.func) - 1)), r, &v.cls);
  }
  return v;
}

std::vector<std::string> sfu_class_names(CvoFunc f) {
  std::vector<std::string> names;
  Rng r{0};
  uint32_t a, b;
  const char* n = "";
  std::vector<uint32_t> row;
  const int classes = sfu_is_rowop(f)                      ? kRowOpClasses
                      : sfu_is_reduction(f)                ? kRowClasses
                      : sfu_reads_b(f) || sfu_reads_k(f) ? kPairClasses
                                                         : unary_classes(f);
  for (int c = 0; c < classes; ++c) {
    if (sfu_is_rowop(f)) rowop_input(c, r, 1, &row, &n);
    else if (sfu_is_reduction(f)) row_input(c, r, &row, &n);
    else if (sfu_reads_b(f) || sfu_reads_k(f)) pair_input(f, c, r, &a, &b, &n);
    else unary_input(f, c, r, &n);
    names.push_back(n);
  }
  return names;
}

uint32_t sfu_expected(const SfuVector& v) {
  const float a = num::u2f(v.a), b = num::u2f(v.b), c = num::u2f(v.c), k = num::u2f(v.k);
  float y = 0;
  switch (v.func) {
    case F::EXP: y = num::exp_sfu(a); break;
    case F::SQRT: y = num::sqrt_rn(a); break;
    case F::RSQRT: y = num::rsqrt_rn(a); break;
    case F::RECIP: y = num::recip(a); break;
    case F::TANH: y = num::tanh_sfu(a); break;
    case F::GELU: y = num::gelu_tanh_sfu(a); break;
    case F::SIN: y = num::sin_sfu(a); break;
    case F::COS: y = num::cos_sfu(a); break;
    case F::RELU: y = num::relu(a); break;
    case F::SCALE: y = a * k; break;
    case F::ADDK: y = a + k; break;
    case F::MAXK: y = num::nmax(a, k); break;
    case F::ADD: y = a + b; break;
    case F::SUB: y = a - b; break;
    case F::MUL: y = a * b; break;
    case F::MAX: y = num::nmax(a, b); break;
    case F::MAC: {
      const float p = a * b;  // rounded to float32 before the sum, as exec_sfu does: no FMA
      y = c + p;
      break;
    }
    case F::RSUM: case F::RMAX: case F::RSUMSQ: case F::RMS: {  // exec_sfu's row reductions
      std::vector<float> x(v.row.size());
      for (size_t i = 0; i < x.size(); ++i) x[i] = num::u2f(v.row[i]);
      const int64_t n = static_cast<int64_t>(x.size());
      y = v.func == F::RSUM     ? num::tree_sum(x.data(), n)
          : v.func == F::RMAX   ? num::tree_max(x.data(), n)
          : v.func == F::RSUMSQ ? num::tree_sumsq(x.data(), n)
                                : num::rms(x.data(), n);
      break;
    }
    default: y = num::nan_f(); break;
  }
  return bits(num::round_to(v.fmt, y));
}

std::vector<uint32_t> sfu_expected_row(const SfuVector& v) {
  std::vector<float> x(v.row.size()), b(v.rowb.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = num::u2f(v.row[i]);
  for (size_t i = 0; i < b.size(); ++i) b[i] = num::u2f(v.rowb[i]);
  const int64_t n = static_cast<int64_t>(x.size());
  const float k = num::u2f(v.k);
  switch (v.func) {  // as sim/exec_sfu.cc calls them on one row
    case F::RMSNORM: num::rmsnorm(x.data(), v.hasb ? b.data() : nullptr, n, k, x.data(), v.fmt); break;
    case F::SOFTMAX: num::softmax(x.data(), n, v.fmt); break;
    case F::GTOPK: num::gaussian_topk(x.data(), n, k, v.fmt); break;
    case F::SOFTCAP: num::softcap(x.data(), n, k, v.fmt); break;
    case F::MAGMATCH: num::match_magnitude(x.data(), n, b[0], k, v.fmt); break;
    case F::ROPE: num::rope(x.data(), 1, n, 1, b.data(), v.fmt); break;
    default: for (float& y : x) y = num::nan_f(); break;
  }
  std::vector<uint32_t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = bits(x[i]);
  return y;
}

std::vector<SfuElem> sfu_row_elems(const SfuVector& v) {
  std::vector<SfuElem> e(v.row.size());
  const size_t n = v.row.size(), half = n / 2;
  for (size_t i = 0; i < n; ++i) {
    e[i].a = v.row[i];
    if (v.func == F::ROPE) {
      e[i].b = v.row[(i + half) % n];
      e[i].c = v.rowb[i % half];
    } else if (v.hasb) {
      e[i].b = v.rowb[i];
    } else if (v.func == F::MAGMATCH) {
      e[i].b = v.rowb[0];
    }
  }
  return e;
}

}  // namespace n3::rtl
