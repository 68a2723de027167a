#include "rtl_bridge/dma_vectors.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "golden/numerics/formats.h"
#include "isa/verify.h"
#include "rtl_bridge/cosim.h"

namespace n3::rtl {

using isa::Dtype;
using isa::ScaleMode;
using isa::Space;

const char* const kDmaClasses[] = {"random",  "specials", "binade_edges", "subnormals", "int4_-8", "zero_groups",
                                   "odd_len", "single_element", "reshape", "ring", "strided", "large", "round_ties",
                                   "gather", "wrap_last", "group_cuts"};
const int kNumDmaClasses = sizeof(kDmaClasses) / sizeof(kDmaClasses[0]);

namespace {

using Rng = std::mt19937_64;
int64_t uni(Rng& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r); }
bool chance(Rng& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
template <class T>
T pick(Rng& r, std::initializer_list<T> l) {
  return *(l.begin() + uni(r, 0, static_cast<int64_t>(l.size()) - 1));
}

// One conversion the ISA allows: MEMCPY src -> dst (scale modes of the
// scaled sides), or MEMSET of dst.
struct Conv {
  bool memset;
  Dtype s, d;
  ScaleMode ss, ds;
};

std::vector<Conv> conversions() {
  std::vector<Conv> v;
  const Dtype fl[] = {Dtype::F32, Dtype::BF16, Dtype::F16};
  const ScaleMode modes[] = {ScaleMode::ROW, ScaleMode::GROUP, ScaleMode::TWO_LEVEL};
  const ScaleMode N = ScaleMode::NONE;
  for (Dtype t : {Dtype::F32, Dtype::BF16, Dtype::F16, Dtype::INT32}) v.push_back({false, t, t, N, N});  // bits copied
  for (Dtype t : {Dtype::INT4, Dtype::INT8})
    for (ScaleMode m : modes) v.push_back({false, t, t, m, m});  // rows and scale records copied
  for (Dtype s : {Dtype::F32, Dtype::BF16, Dtype::F16, Dtype::INT32})
    for (Dtype d : fl)
      if (s != d) v.push_back({false, s, d, N, N});
  for (Dtype s : {Dtype::INT4, Dtype::INT8})
    for (ScaleMode m : modes)
      for (Dtype d : fl) v.push_back({false, s, d, m, N});  // dequantise
  for (Dtype s : fl)
    for (ScaleMode m : {ScaleMode::ROW, ScaleMode::GROUP}) v.push_back({false, s, Dtype::INT8, N, m});  // quantise
  for (Dtype d : {Dtype::F32, Dtype::BF16, Dtype::F16, Dtype::INT32}) v.push_back({true, d, d, N, N});
  return v;
}
const std::vector<Conv>& convs() {
  static const std::vector<Conv> v = conversions();
  return v;
}

std::string lower(const std::string& s) {
  std::string o = s;
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}
std::string dt(Dtype t, ScaleMode m) {
  std::string s = lower(isa::dtype_text(t));
  if (m != ScaleMode::NONE) s += "." + lower(isa::enum_text(isa::EnumId::ScaleMode, uint64_t(m)));
  return s;
}

uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// An f32 pattern of class `cls` (the values a float source or a MEMSET constant takes).
uint32_t f32_bits(Rng& r, const std::string& cls) {
  const uint32_t sign = chance(r, 0.5) ? 0x80000000u : 0u;
  if (cls == "specials" && chance(r, 0.6))
    return pick<uint32_t>(r, {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                              0x7f800001u, 0x7fbfffffu, 0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu,
                              0xff7fffffu, 0x477fe000u, 0x477ff000u, 0x477fefffu, 0x33800000u, 0x33000000u,
                              0x33000001u, 0x38800000u, 0x387fc000u});
  if (cls == "binade_edges" && chance(r, 0.7)) {
    // Around the bf16 / f16 rounding points: low bits at, just under and over the tie.
    const uint32_t e = static_cast<uint32_t>(uni(r, 100, 150)) << 23;
    const uint32_t hi = static_cast<uint32_t>(uni(r, 0, 0x7f)) << 16;
    const uint32_t lo = pick<uint32_t>(r, {0x8000u, 0x7fffu, 0x8001u, 0x0000u, 0xffffu, 0x1000u, 0x0fffu, 0x1001u});
    const uint32_t top = chance(r, 0.2) ? 0x007f0000u : hi;  // the carry into the next binade
    return sign | e | top | lo;
  }
  if (cls == "subnormals" && chance(r, 0.7)) {
    if (chance(r, 0.5)) return sign | static_cast<uint32_t>(uni(r, 1, 0x7fffff));  // f32 subnormal
    // f16 subnormal range and its underflow: 2^-25 .. 2^-14.
    return sign | static_cast<uint32_t>(uni(r, 102, 113)) << 23 | static_cast<uint32_t>(uni(r, 0, 0x7fffff));
  }
  if (chance(r, 0.1)) return static_cast<uint32_t>(r());  // any pattern (NaN payloads too)
  return sign | static_cast<uint32_t>(uni(r, 120, 134)) << 23 | static_cast<uint32_t>(uni(r, 0, 0x7fffff));
}

// A stored element of float dtype t (its bits), from an f32 pattern.
uint32_t float_elem(Rng& r, Dtype t, const std::string& cls) {
  if (t == Dtype::F32) return f32_bits(r, cls);
  if (chance(r, 0.15)) return static_cast<uint32_t>(r()) & 0xffffu;  // any 16-bit pattern
  const float v = u2f(f32_bits(r, cls));
  return t == Dtype::BF16 ? num::bf16_bits(v) : num::f16_bits(v);
}

uint32_t int32_elem(Rng& r, const std::string& cls) {
  if (cls == "specials" || cls == "binade_edges" || chance(r, 0.2))
    return pick<uint32_t>(r, {0x80000000u, 0x7fffffffu, 0u, 0xffffffffu, 16777217u, uint32_t(-16777217), 33554434u,
                              33554438u, 16777219u, 0x7fffffc0u, 0x7fffffbfu});
  return static_cast<uint32_t>(uni(r, -100000000, 100000000));
}

uint32_t scale_bits(Rng& r, const std::string& cls) {
  if (cls == "specials" && chance(r, 0.5))
    return pick<uint32_t>(r, {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                              0x00000001u, 0x007fffffu, 0x7f7fffffu, 0x3f800000u});
  const uint32_t sign = chance(r, 0.1) ? 0x80000000u : 0u;
  return sign | static_cast<uint32_t>(uni(r, 110, 128)) << 23 | static_cast<uint32_t>(uni(r, 0, 0x7fffff));
}

// Memory layout: regions packed per space from a random start (sometimes
// just below a 4 KB boundary, so bursts split there), with random gaps.
struct Layout {
  DmaVector& g;
  uint64_t next[3];
  Rng& r;
  uint64_t take(Space s, uint64_t n) {
    uint64_t& a = next[static_cast<int>(s)];
    const uint64_t at = a;
    a = (a + n + static_cast<uint64_t>(uni(r, 0, 3)) * 16 + 15) / 16 * 16;
    return at;
  }
  void region(Space s, uint64_t addr, uint64_t n) {
    DmaVector::Bytes b{s, addr, std::vector<uint8_t>(n)};
    for (uint8_t& x : b.data) x = static_cast<uint8_t>(r());
    g.image.push_back(std::move(b));
  }
  void set(Space s, uint64_t addr, const void* p, size_t n) {
    for (DmaVector::Bytes& b : g.image)
      if (b.space == s && addr >= b.addr && addr + n <= b.addr + b.data.size()) {
        std::memcpy(b.data.data() + (addr - b.addr), p, n);
        return;
      }
  }
  // A view of rows x cols: a ring of `phys` rows at offset `off` when
  // phys > rows or off > 0; with `gather`, rows `off` to off + rows - 1 of a
  // table that ends with them (a row register, no ring).
  sim::View view(Dtype t, ScaleMode sm, int64_t group, Space s, int64_t rows, int64_t cols, int64_t phys, int64_t off,
                 int64_t extra_stride, bool gather) {
    if (gather) phys = off + rows;
    sim::View v;
    v.slot = 1;
    v.d.dtype = t;
    v.d.space = s;
    v.d.cols = static_cast<uint32_t>(cols);
    v.d.rows = static_cast<uint32_t>(gather ? rows : phys);
    v.d.ring = !gather && (phys > rows || off > 0) ? 1 : 0;
    v.d.row_reg = v.d.ring || gather ? 1 : 0;
    const int64_t eb = std::max<int64_t>(1, isa::dtype_bits(t) / 8);
    v.d.row_stride = static_cast<uint32_t>((isa::data_bytes(t, cols) + eb - 1) / eb * eb + extra_stride * eb);
    v.d.scale_mode = sm;
    v.d.group = static_cast<uint32_t>(sm == ScaleMode::GROUP || sm == ScaleMode::TWO_LEVEL ? group : 0);
    v.rows = rows;
    v.cols = cols;
    v.row_off = off;
    const uint64_t span = uint64_t(phys - 1) * v.d.row_stride + static_cast<uint64_t>(v.row_bytes());
    v.d.base = take(s, span);
    region(s, v.d.base, span);
    const int64_t rec = isa::scale_record_bytes(v.d);
    if (rec) {
      v.d.scale_stride = static_cast<uint32_t>((rec + 3) / 4 * 4 + 4 * uni(r, 0, 1));
      const uint64_t sspan = uint64_t(phys - 1) * v.d.scale_stride + static_cast<uint64_t>(rec);
      v.d.scale_base = take(s, sspan);
      region(s, v.d.scale_base, sspan);
    }
    return v;
  }
};

}  // namespace

const int kNumDmaConversions = static_cast<int>(conversions().size());

std::string dma_conversion_name(int i) {
  const Conv& c = convs()[static_cast<size_t>(i)];
  if (c.memset) return "memset." + dt(c.d, ScaleMode::NONE);
  if (c.s == c.d) return "copy." + dt(c.s, c.ss);
  return dt(c.s, c.ss) + "->" + dt(c.d, c.ds);
}

DmaVector make_dma_vector(uint64_t seed, int64_t index) {
  Rng r = vector_rng(seed, index);
  DmaVector g;
  const int ci = static_cast<int>(index % kNumDmaConversions);
  const Conv c = convs()[static_cast<size_t>(ci)];
  g.memset = c.memset;
  g.conv = dma_conversion_name(ci);
  g.cls = chance(r, 0.4) ? "random" : kDmaClasses[uni(r, 1, kNumDmaClasses - 1)];
  const std::string& cls = g.cls;
  g.stall = chance(r, 0.5) ? pick<double>(r, {0.1, 0.3, 0.6}) : 0.0;
  Layout L{g, {0, 0, 0}, r};
  for (uint64_t& a : L.next) a = chance(r, 0.3) ? 4096 * uni(r, 1, 3) - 16 * uni(r, 1, 4) : 16 * uni(r, 0, 300);

  // Shapes: mostly small, odd lengths common.
  int64_t rows = uni(r, 1, 5), cols = uni(r, 1, 48);
  if (cls == "odd_len") cols = 2 * uni(r, 0, 30) + 1;
  if (cls == "single_element") rows = cols = 1;
  if (cls == "large") rows = uni(r, 1, 3), cols = uni(r, 200, 1200);
  if (cls == "gather" && chance(r, 0.3)) rows = 1;  // one row fetched by register: the table's last
  const bool scaled_src = c.ss != ScaleMode::NONE, quant = !c.memset && c.d == Dtype::INT8 && c.s != c.d;
  const ScaleMode sm = quant ? c.ds : c.ss;
  int64_t group = 0;
  if (sm == ScaleMode::GROUP || sm == ScaleMode::TWO_LEVEL)
    group = chance(r, 0.5) ? pick<int64_t>(r, {1, 2, 3, 4, 8, 16, 32}) : uni(r, 1, cols);
  // Scale-group cuts at the edges: one group per element, one per row, a
  // group one short of the row (a one-element last group), just over half.
  if (cls == "group_cuts" && group > 0)
    group = pick<int64_t>(r, {1, cols, std::max<int64_t>(1, cols - 1), cols / 2 + 1});
  // Run-time shapes: a dynamic column count below the descriptor's (scale
  // records sized by the latter, so a quantiser zeroes their unused entries).
  int64_t dcols = cols;
  if ((chance(r, 0.15) || (cls == "group_cuts" && chance(r, 0.5))) && cols > 1) cols = uni(r, 1, cols);
  const Space ss = pick<Space>(r, {Space::DDR, Space::L2, Space::WBUF}), ds = pick<Space>(r, {Space::DDR, Space::L2, Space::WBUF});
  const int64_t ex = cls == "strided" ? uni(r, 1, 40) : chance(r, 0.3) ? uni(r, 0, 5) : 0;
  // Each side's rows: straight, a ring (wrapping at its last row: the view's
  // first row there, or its last row the ring's row 0), or a gather.
  auto ring = [&](int64_t n, int64_t* phys, int64_t* off, bool* gather) {
    *phys = n;
    *off = 0;
    *gather = false;
    if (cls == "wrap_last" || chance(r, 0.03)) {
      *phys = n + uni(r, 0, 3);
      *off = chance(r, 0.5) ? *phys - 1 : (*phys - n + 1) % *phys;
    } else if (cls == "gather" || chance(r, 0.05)) {
      *gather = true;
      *off = chance(r, 0.2) ? 0 : uni(r, 1, 6);
    } else if (cls == "ring" || chance(r, 0.05)) {
      *phys = n + uni(r, 0, 4);
      *off = uni(r, 0, *phys - 1);
    }
  };
  auto make = [&](Dtype t, ScaleMode m, Space s, int64_t rr, int64_t cc, int64_t desc_cols) {
    int64_t phys, off;
    bool gather;
    ring(rr, &phys, &off, &gather);
    // A descriptor names one run-time extent: a ring larger than the view
    // (run-time rows) or fewer columns than the descriptor's, not both.
    if (cc != desc_cols && phys > rr) phys = rr, off %= rr;
    sim::View v = L.view(t, m, group, s, rr, desc_cols, phys, off, ex, gather);
    v.cols = cc;
    if (cc != desc_cols || phys > rr) {  // resolved from a register by the dispatcher
      v.d.dyn_reg = 2;
      v.d.dyn_dim = cc != desc_cols ? isa::DynDim::COLS : isa::DynDim::ROWS;
    }
    return v;
  };

  if (c.memset) {
    g.dst = make(c.d, ScaleMode::NONE, ds, rows, cols, dcols);
    g.konst_type = c.d == Dtype::INT32 ? Dtype::INT32 : Dtype::F32;
    g.konst = c.d == Dtype::INT32 ? int32_elem(r, cls) : f32_bits(r, cls);
    return g;
  }
  g.src = make(c.s, c.ss, ss, rows, cols, dcols);
  // The destination: same shape, or (element runs) a reshape with equal numel.
  int64_t drows = rows, dc = cols;
  const bool can_reshape = !quant && !(c.s == c.d && scaled_src);
  if (can_reshape && (cls == "reshape" || chance(r, 0.1))) {
    const int64_t n = rows * cols;
    std::vector<int64_t> divs;
    for (int64_t k = 1; k <= n; ++k)
      if (n % k == 0) divs.push_back(k);
    dc = divs[static_cast<size_t>(uni(r, 0, static_cast<int64_t>(divs.size()) - 1))];
    drows = n / dc;
  }
  g.dst = make(c.d, quant ? c.ds : c.ds, ds, drows, dc, (drows == rows && dc == cols) ? dcols : dc);

  // Source contents: the elements of every row the view reads, and its scale records.
  const sim::View& v = g.src;
  for (int64_t rr = 0; rr < v.rows; ++rr) {
    const uint64_t a = v.row_addr(rr);
    if (c.s == Dtype::INT4 || c.s == Dtype::INT8) {
      std::vector<uint8_t> b(static_cast<size_t>(v.row_bytes()));
      for (uint8_t& x : b) x = static_cast<uint8_t>(r());
      if (cls == "int4_-8") std::fill(b.begin(), b.end(), c.s == Dtype::INT4 ? 0x88 : 0x80);
      L.set(v.d.space, a, b.data(), b.size());
    } else {
      const int eb = isa::dtype_bits(c.s) / 8;
      const bool zero_group = quant && cls == "zero_groups", ties = quant && cls == "round_ties";
      int64_t gk = -1, tie_e = 0, tie_at = 0;
      int mode = 0;  // zero_groups: per group 0 normal, 1 zeros, 2 tiny (the scale underflows), 3 NaN / inf
      for (int64_t k = 0; k < v.cols; ++k) {
        const int64_t gg = isa::scale_group(g.dst.d);
        if (zero_group && k / gg != gk) gk = k / gg, mode = static_cast<int>(uni(r, 0, 3));
        if (ties && k / gg != gk) {
          // max|x| = 127 * 2^e makes the scale 2^e exactly, so (k + 1/2) 2^e
          // divides to a tie the code rounds to even.
          gk = k / gg;
          tie_e = uni(r, -10, 10);
          tie_at = gk * gg + uni(r, 0, std::min(gg, v.cols - gk * gg) - 1);
        }
        uint32_t e = c.s == Dtype::INT32 ? int32_elem(r, cls) : float_elem(r, c.s, cls);
        if (zero_group && mode == 1) e = chance(r, 0.5) ? 0 : (c.s == Dtype::F32 ? 0x80000000u : 0x8000u);
        if (zero_group && mode == 2 && c.s == Dtype::F32) e = static_cast<uint32_t>(uni(r, 0, 60)) | (chance(r, 0.5) ? 0x80000000u : 0);
        if (zero_group && mode == 3 && chance(r, 0.3)) e = c.s == Dtype::F32 ? 0x7f800000u : c.s == Dtype::BF16 ? 0xff80u : 0x7e00u;
        if (ties) {
          const double m = k == tie_at ? 127.0 : double(uni(r, 0, 125)) + 0.5;
          const float x = static_cast<float>(std::ldexp(chance(r, 0.5) ? -m : m, static_cast<int>(tie_e)));
          e = c.s == Dtype::F32 ? f2u(x) : c.s == Dtype::BF16 ? num::bf16_bits(x) : num::f16_bits(x);
        }
        L.set(v.d.space, a + static_cast<uint64_t>(k * eb), &e, static_cast<size_t>(eb));
      }
    }
    if (scaled_src) {
      std::vector<uint8_t> rec(static_cast<size_t>(v.scale_bytes()));
      const int64_t nf = v.d.scale_mode == ScaleMode::GROUP ? static_cast<int64_t>(rec.size()) / 4 : 1;
      for (int64_t k = 0; k < nf; ++k) {
        const uint32_t s = scale_bits(r, cls);
        std::memcpy(rec.data() + 4 * k, &s, 4);
      }
      for (size_t k = static_cast<size_t>(4 * nf); k < rec.size(); ++k)
        rec[k] = cls == "specials" ? pick<uint8_t>(r, {0, 255, 1, 128}) : static_cast<uint8_t>(r());
      L.set(v.d.space, v.scale_addr(rr), rec.data(), rec.size());
    }
  }
  return g;
}

}  // namespace n3::rtl
