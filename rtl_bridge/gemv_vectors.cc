#include "rtl_bridge/gemv_vectors.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "golden/numerics/formats.h"
#include "isa/verify.h"
#include "rtl_bridge/cosim.h"

namespace n3::rtl {

using isa::Dtype;
using isa::ScaleMode;
using isa::Space;

const char* const kGemvClasses[] = {"random",      "large",          "extreme_exp", "int4_all_-8",
                                    "zero_blocks", "denormal_act",   "nan_inf_act", "special_scale",
                                    "round_ties",  "k_not_mult_32",  "single_element"};
const int kNumGemvClasses = sizeof(kGemvClasses) / sizeof(kGemvClasses[0]);

namespace {

using Rng = std::mt19937_64;
int64_t uni(Rng& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r); }
bool chance(Rng& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
template <class T>
T pick(Rng& r, std::initializer_list<T> l) {
  return *(l.begin() + uni(r, 0, static_cast<int64_t>(l.size()) - 1));
}

// How the float data of a vector are drawn.
enum class Style { Normal, Extreme, Denormal, Ties, NanInf, Prob };

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A value with a random sign, 23 random mantissa bits and a power of two in [elo, ehi].
float rand_val(Rng& r, int elo, int ehi) {
  const uint32_t s = chance(r, 0.5) ? 0x80000000u : 0u;
  const int e = static_cast<int>(uni(r, elo, ehi));
  return from_bits(s | uint32_t(e + 127) << 23 | (static_cast<uint32_t>(r()) & 0x7fffffu));
}

// The exponent range a storage format holds as normals.
void exp_range(Dtype t, int* lo, int* hi) {
  if (t == Dtype::F16) *lo = -14, *hi = 15;
  else *lo = -126, *hi = 127;
}

// Values of one row of n elements (blocks of B for the styles that care).
void draw_row(Rng& r, Style st, Dtype t, int64_t n, int B, int mbits, float* x) {
  int elo, ehi;
  exp_range(t, &elo, &ehi);
  int64_t q = uni(r, -6, 4);
  for (int64_t i = 0; i < n; ++i) {
    if (i % B == 0 && st == Style::Extreme) q = uni(r, elo, ehi - 1);  // each block its own binade
    if (i % B == 0 && st == Style::Ties) q = uni(r, -6, 2);
    float v;
    switch (st) {
      case Style::Extreme:
        v = rand_val(r, static_cast<int>(std::max<int64_t>(elo, q - 3)), static_cast<int>(std::min<int64_t>(ehi, q + 1)));
        break;
      case Style::Denormal:
        if (t == Dtype::F16) v = num::f16_value(static_cast<uint16_t>(uni(r, 1, 0x3ff) | (chance(r, 0.5) ? 0x8000 : 0)));
        else v = from_bits(static_cast<uint32_t>(uni(r, 1, 0x7fffff)) | (chance(r, 0.5) ? 0x80000000u : 0u));
        if (chance(r, 0.2)) v = rand_val(r, -20, -10);
        break;
      case Style::Ties: {
        // Integers and half-integers in units of 2^q: the block LSB of the BFP
        // quantiser sits at 2^q when the block's largest magnitude reaches
        // 2^(q + M - 2), and the halves then round to even.
        const int64_t lim = (int64_t(1) << (mbits - 1)) - 1;
        double m = static_cast<double>(uni(r, -lim, lim)) + (chance(r, 0.5) ? 0.5 : 0.0);
        if (i % B == 0) m = static_cast<double>(int64_t(1) << (mbits - 2)) * (chance(r, 0.5) ? 1 : -1);
        v = static_cast<float>(std::ldexp(m, static_cast<int>(q)));
        break;
      }
      case Style::Prob:
        v = chance(r, 0.2) ? 0.0f : static_cast<float>(std::uniform_real_distribution<double>(0, 1)(r));
        break;
      default:
        v = rand_val(r, -6, 3);
        if (chance(r, 0.05)) v = 0.0f;
    }
    x[i] = v;
  }
  if (st == Style::NanInf) {
    for (int k = static_cast<int>(uni(r, 1, 3)); k > 0; --k)
      x[uni(r, 0, n - 1)] = pick(r, {num::nan_f(), from_bits(0x7f800001u), from_bits(0xffc00000u), num::inf_f(false),
                                     num::inf_f(true)});
  }
}

// Zeroes some whole blocks (and sometimes the whole row).
void zero_blocks(Rng& r, int64_t n, int B, float* x) {
  if (chance(r, 0.15)) {
    std::fill(x, x + n, chance(r, 0.5) ? 0.0f : -0.0f);
    return;
  }
  for (int64_t b = 0; b * B < n; ++b)
    if (chance(r, 0.5)) std::fill(x + b * B, x + std::min<int64_t>(n, (b + 1) * B), 0.0f);
}

void encode(Dtype t, float v, uint8_t* out) {
  if (t == Dtype::F32) {
    std::memcpy(out, &v, 4);
  } else {
    const uint16_t h = t == Dtype::BF16 ? num::bf16_bits(v) : num::f16_bits(v);
    std::memcpy(out, &h, 2);
  }
}

float special_scale(Rng& r) {
  return from_bits(pick<uint32_t>(r, {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                      0x00000001u, 0x007fffffu, 0x7f7fffffu, 0x0d000000u, 0x3f800000u}));
}
float normal_scale(Rng& r) { return rand_val(r, -10, 1); }

// Memory layout of one job: views packed in their spaces, 64-byte aligned.
struct Builder {
  GemvVector& g;
  uint64_t next[3] = {0x40, 0x40, 0x40};
  uint64_t take(Space s, uint64_t n) {
    uint64_t& a = next[static_cast<int>(s)];
    const uint64_t at = a;
    a = (a + n + 63) / 64 * 64;
    return at;
  }
  // A view of `rows` logical rows; a ring of `phys` physical rows starting at `off` when phys > 0.
  sim::View view(Dtype t, Space s, int64_t rows, int64_t cols, ScaleMode sm, int64_t group, int64_t phys, int64_t off) {
    sim::View v;
    v.slot = 1;
    v.d.dtype = t;
    v.d.space = s;
    v.d.cols = static_cast<uint32_t>(cols);
    v.d.rows = static_cast<uint32_t>(phys > 0 ? phys : rows);
    v.d.ring = phys > 0 ? 1 : 0;
    v.d.row_stride = static_cast<uint32_t>((isa::data_bytes(t, cols) + 3) / 4 * 4);
    v.d.scale_mode = sm;
    v.d.group = static_cast<uint32_t>(group);
    v.rows = rows;
    v.cols = cols;
    v.row_off = phys > 0 ? off : 0;
    v.d.base = take(s, uint64_t(v.d.rows) * v.d.row_stride);
    const int64_t rec = isa::scale_record_bytes(v.d);
    if (rec) {
      v.d.scale_stride = static_cast<uint32_t>((rec + 3) / 4 * 4);
      v.d.scale_base = take(s, uint64_t(v.d.rows) * v.d.scale_stride);
    }
    return v;
  }
  void put(const sim::View& v, uint64_t addr, const uint8_t* p, size_t n) {
    g.image.push_back({v.d.space, addr, std::vector<uint8_t>(p, p + n)});
  }
  // Float row r of v from x.
  void put_row(const sim::View& v, int64_t r, const float* x) {
    const int eb = v.d.dtype == Dtype::F32 ? 4 : 2;
    std::vector<uint8_t> b(static_cast<size_t>(v.cols * eb));
    for (int64_t i = 0; i < v.cols; ++i) encode(v.d.dtype, x[i], b.data() + i * eb);
    put(v, v.row_addr(r), b.data(), b.size());
  }
};

struct LargeShape {
  const char* key;
  isa::GemvMode mode;
  const char* kind;
  int64_t a, b, c, heads, kvh;  // mv: T, K, N; qk: d, n; pv: n, d
};
const LargeShape kLarge[] = {
    {"mv.int4.row K=2048 N=64", isa::GemvMode::MV, "mv.int4.row", 1, 2048, 64, 0, 0},
    {"mv.int4.row K=2048 N=16 T=4", isa::GemvMode::MV, "mv.int4.row", 4, 2048, 16, 0, 0},
    {"mv.int4.row K=16384 N=4", isa::GemvMode::MV, "mv.int4.row", 1, 16384, 4, 0, 0},
    {"mv.int4.group K=1024 N=32", isa::GemvMode::MV, "mv.int4.group", 1, 1024, 32, 0, 0},
    {"mv.int8 K=1024 N=32", isa::GemvMode::MV, "mv.int8", 1, 1024, 32, 0, 0},
    {"mv.float K=256 N=16", isa::GemvMode::MV, "mv.float", 1, 256, 16, 0, 0},
    {"qk.float d=256 n=256 H=8 G=2", isa::GemvMode::QK, "qk.float", 0, 256, 256, 8, 2},
    {"pv.float n=256 d=256 H=8 G=2", isa::GemvMode::PV, "pv.float", 0, 256, 256, 8, 2},
    {"qk.int8 d=256 n=128 H=8 G=2", isa::GemvMode::QK, "qk.int8", 0, 256, 128, 8, 2},
    {"pv.int8 n=128 d=256 H=8 G=2", isa::GemvMode::PV, "pv.int8", 0, 128, 256, 8, 2},
};
// GEMM: prefill-like shapes (several tokens, whole and ragged arrays).
const LargeShape kLargeGemm[] = {
    {"gemm int4.row T=64 K=512 N=64", isa::GemvMode::MV, "mv.int4.row", 64, 512, 64, 0, 0},
    {"gemm int4.row T=40 K=300 N=70", isa::GemvMode::MV, "mv.int4.row", 40, 300, 70, 0, 0},
    {"gemm int4.two_level T=32 K=256 N=32", isa::GemvMode::MV, "mv.int4.two_level", 32, 256, 32, 0, 0},
    {"gemm int8 T=16 K=1024 N=32", isa::GemvMode::MV, "mv.int8", 16, 1024, 32, 0, 0},
};

}  // namespace

GemvVector make_gemv_vector(uint64_t seed, int64_t index, const HwConfig& hw, const GemmDraw* gemm) {
  Rng r = vector_rng(seed, index);
  GemvVector g;
  Builder bld{g};
  // Class: mostly random data, each adversarial class ~5%, a few large shapes.
  const bool large = chance(r, 0.002);
  g.cls = large ? "large" : chance(r, 0.45) ? "random" : kGemvClasses[uni(r, 2, kNumGemvClasses - 1)];
  g.formats = hw.numerics.formats;
  if (!large && chance(r, 0.35)) {
    g.formats.bfp_block = static_cast<int>(pick<int64_t>(r, {8, 16, 32, 64}));
    g.formats.act_mant_bits = static_cast<int>(uni(r, 2, 16));
    g.formats.attn_mant_bits = static_cast<int>(uni(r, 2, 16));
  }
  const int B = g.formats.bfp_block;
  const LargeShape* L = !large ? nullptr
                        : gemm  ? &kLargeGemm[uni(r, 0, sizeof(kLargeGemm) / sizeof(kLargeGemm[0]) - 1)]
                                : &kLarge[uni(r, 0, sizeof(kLarge) / sizeof(kLarge[0]) - 1)];
  // Mode and engine path.
  if (L) {
    g.mode = L->mode;
    g.kind = L->kind;
  } else if (g.cls == "int4_all_-8" || g.cls == "special_scale") {
    g.mode = isa::GemvMode::MV;
    if (gemm)
      g.kind = g.cls == "int4_all_-8" ? pick(r, {"mv.int4.row", "mv.int4.two_level"})
                                       : pick(r, {"mv.int4.row", "mv.int4.two_level", "mv.int8"});
    else
      g.kind = g.cls == "int4_all_-8" ? pick(r, {"mv.int4.row", "mv.int4.group", "mv.int4.two_level"})
                                     : pick(r, {"mv.int4.row", "mv.int4.group", "mv.int4.two_level", "mv.int8", "qk.int8",
                                                "pv.int8"});
    if (g.kind[0] == 'q') g.mode = isa::GemvMode::QK;
    if (g.kind[0] == 'p') g.mode = isa::GemvMode::PV;
  } else if (gemm) {
    g.mode = isa::GemvMode::MV;
    g.kind = pick(r, {"mv.int4.row", "mv.int4.row", "mv.int4.two_level", "mv.int8"});
  } else {
    const int64_t m = uni(r, 0, 99);
    g.mode = m < 55 ? isa::GemvMode::MV : m < 78 ? isa::GemvMode::QK : isa::GemvMode::PV;
    if (g.mode == isa::GemvMode::MV)
      g.kind = pick(r, {"mv.int4.row", "mv.int4.row", "mv.int4.group", "mv.int4.two_level", "mv.int8", "mv.float"});
    else
      g.kind = std::string(g.mode == isa::GemvMode::QK ? "qk" : "pv") + (chance(r, 0.3) ? ".int8" : ".float");
  }
  const Style st = g.cls == "extreme_exp"   ? Style::Extreme
                   : g.cls == "denormal_act" ? Style::Denormal
                   : g.cls == "round_ties"   ? Style::Ties
                   : g.cls == "nan_inf_act"  ? Style::NanInf
                                             : Style::Normal;
  // The dot length: K (mv), d (qk), n (pv).
  auto draw_len = [&](int64_t hi) {
    if (g.cls == "single_element") return int64_t(1);
    if (g.cls == "k_not_mult_32") {
      int64_t k = uni(r, 33, 200);
      return k % 32 ? k : k + 1;
    }
    return chance(r, 0.3) ? uni(r, 1, 16) : uni(r, 1, hi);
  };
  const Dtype fmts[] = {Dtype::F32, Dtype::BF16, Dtype::F16};
  auto any_fmt = [&] { return fmts[uni(r, 0, 2)]; };
  Dtype ofmt = any_fmt();
  if (st == Style::Ties && chance(r, 0.7)) ofmt = chance(r, 0.5) ? Dtype::BF16 : Dtype::F16;

  std::vector<float> x;
  if (g.mode == isa::GemvMode::MV) {
    int64_t T = L ? L->a : gemm ? uni(r, 1, gemm->rows + 8) : (chance(r, 0.7) ? 1 : uni(r, 2, 4));
    int64_t K = L ? L->b : draw_len(160);
    int64_t N = L ? L->c : gemm ? uni(r, 1, gemm->cols + 8) : uni(r, 1, 12);
    if (gemm && !L && g.cls == "random" && chance(r, 1.0 / 6)) {
      T = uni(r, gemm->rows + 1, gemm->rows + 8);
      K = gemm->rows * gemm->macs_per_pe * uni(r, 1, 2);
      N = gemm->cols * uni(r, 1, 2);
    }
    Dtype wt = Dtype::INT4;
    ScaleMode sm = ScaleMode::ROW;
    int64_t group = 0;
    if (g.kind == "mv.int4.group" || g.kind == "mv.int4.two_level") {
      sm = g.kind == "mv.int4.group" ? ScaleMode::GROUP : ScaleMode::TWO_LEVEL;
      group = L ? 128 : B * uni(r, 1, 4);
    } else if (g.kind == "mv.int8") {
      wt = Dtype::INT8;
    } else if (g.kind == "mv.float") {
      wt = any_fmt();
      sm = ScaleMode::NONE;
    }
    const Dtype at = any_fmt();
    g.src = bld.view(at, Space::L2, T, K, ScaleMode::NONE, 0, 0, 0);
    g.w = bld.view(wt, Space::DDR, N, K, sm, group, 0, 0);
    g.dst = bld.view(ofmt, Space::L2, T, N, ScaleMode::NONE, 0, 0, 0);
    x.resize(static_cast<size_t>(K));
    for (int64_t t = 0; t < T; ++t) {
      draw_row(r, st, at, K, B, g.formats.act_mant_bits, x.data());
      if (g.cls == "zero_blocks") zero_blocks(r, K, B, x.data());
      bld.put_row(g.src, t, x.data());
    }
    for (int64_t o = 0; o < N; ++o) {
      if (g.w.is_float()) {
        // The NaN/Inf and subnormal classes reach float weights too (half the rows).
        const bool special = (st == Style::NanInf || st == Style::Denormal) && chance(r, 0.5);
        draw_row(r, special ? st : Style::Normal, wt, K, B, 12, x.data());
        bld.put_row(g.w, o, x.data());
        continue;
      }
      std::vector<uint8_t> row(static_cast<size_t>(g.w.row_bytes()));
      for (auto& b : row) b = g.cls == "int4_all_-8" ? 0x88 : static_cast<uint8_t>(r());
      bld.put(g.w, g.w.row_addr(o), row.data(), row.size());
      std::vector<uint8_t> rec(static_cast<size_t>(g.w.scale_bytes()));
      const bool spec = g.cls == "special_scale";
      auto scale = [&] { return spec && chance(r, 0.4) ? special_scale(r) : normal_scale(r); };
      if (sm == ScaleMode::GROUP) {
        for (size_t i = 0; i < rec.size() / 4; ++i) {
          const float s = scale();
          std::memcpy(rec.data() + 4 * i, &s, 4);
        }
      } else {
        const float s = st == Style::Ties ? std::ldexp(1.0f, static_cast<int>(uni(r, -3, 3))) : scale();
        std::memcpy(rec.data(), &s, 4);
        for (size_t i = 4; i < rec.size(); ++i) rec[i] = static_cast<uint8_t>(spec && chance(r, 0.3) ? pick<int>(r, {0, 255}) : uni(r, 1, 15));
      }
      bld.put(g.w, g.w.scale_addr(o), rec.data(), rec.size());
    }
  } else {
    const bool qk = g.mode == isa::GemvMode::QK;
    const int64_t H = L ? L->heads : pick<int64_t>(r, {1, 1, 2, 4, 8});
    int64_t G = L ? L->kvh : H;
    if (!L)
      while (G > 1 && chance(r, 0.6)) G /= 2;
    const int64_t d = L ? (qk ? L->b : L->c) : (qk ? draw_len(80) : uni(r, 1, 24));
    const int64_t n = L ? (qk ? L->c : L->b) : (qk ? uni(r, 1, 24) : draw_len(80));
    const bool i8 = g.kind.find("int8") != std::string::npos;
    const Dtype kt = i8 ? Dtype::INT8 : any_fmt();
    const ScaleMode sm = i8 ? (G == 1 && chance(r, 0.5) ? ScaleMode::ROW : ScaleMode::GROUP) : ScaleMode::NONE;
    // KV windows sometimes sit in a ring at an offset (the KV cache).
    const int64_t phys = chance(r, 0.25) ? n + uni(r, 1, 8) : 0;
    const int64_t off = phys ? uni(r, 0, phys - 1) : 0;
    const Dtype at = qk ? any_fmt() : pick(r, {Dtype::F32, Dtype::F32, Dtype::F16, Dtype::BF16});
    g.src = bld.view(at, Space::L2, H, qk ? d : n, ScaleMode::NONE, 0, 0, 0);
    g.w = bld.view(kt, Space::L2, n, G * d, sm, sm == ScaleMode::GROUP ? d : 0, phys, off);
    g.dst = bld.view(ofmt, Space::L2, H, qk ? n : d, ScaleMode::NONE, 0, 0, 0);
    const int64_t alen = qk ? d : n;
    x.resize(static_cast<size_t>(std::max(alen, G * d)));
    const int mb = g.formats.attn_mant_bits;
    for (int64_t h = 0; h < H; ++h) {
      draw_row(r, qk || st != Style::Normal ? st : Style::Prob, at, alen, B, mb, x.data());
      if (g.cls == "zero_blocks") zero_blocks(r, alen, B, x.data());
      bld.put_row(g.src, h, x.data());
    }
    for (int64_t t = 0; t < n; ++t) {
      if (!i8) {
        // Float K/V rows take the vector's style (subnormals: the core's row
        // blocker sees them), and the NaN/Inf class puts NaN, +inf or -inf in.
        const bool keep = st == Style::Ties || st == Style::Extreme || st == Style::Denormal;
        draw_row(r, keep ? st : Style::Normal, kt, G * d, B, mb, x.data());
        if (st == Style::NanInf && chance(r, 0.1))
          x[uni(r, 0, G * d - 1)] = pick<float>(r, {num::nan_f(), std::numeric_limits<float>::infinity(),
                                                     -std::numeric_limits<float>::infinity()});
        if (g.cls == "zero_blocks" && chance(r, 0.3)) std::fill(x.begin(), x.begin() + G * d, 0.0f);
        bld.put_row(g.w, t, x.data());
        continue;
      }
      std::vector<uint8_t> row(static_cast<size_t>(G * d));
      for (auto& b : row) b = static_cast<uint8_t>(uni(r, -128, 127));
      bld.put(g.w, g.w.row_addr(t), row.data(), row.size());
      std::vector<uint8_t> rec(static_cast<size_t>(g.w.scale_bytes()));
      for (size_t i = 0; i < rec.size() / 4; ++i) {
        const float s = g.cls == "special_scale" && chance(r, 0.3) ? special_scale(r) : normal_scale(r);
        std::memcpy(rec.data() + 4 * i, &s, 4);
      }
      bld.put(g.w, g.w.scale_addr(t), rec.data(), rec.size());
    }
  }
  g.shape = timing::gemv_shape(g.mode, g.dst, g.src, g.w, g.formats.bfp_block);
  // Half the vectors run with random stalls on every stream; the others time
  // the engine for the cycle table.
  if (!large && chance(r, 0.5)) {
    std::uniform_real_distribution<double> p(0.05, 0.5);
    g.stall_act = p(r);
    g.stall_w = p(r);
    g.stall_r = p(r);
    g.stall_feed = p(r);
  } else {
    g.shape_key = L ? L->key : g.kind + " small";
  }
  return g;
}

}  // namespace n3::rtl
