#include "rtl_bridge/cosim_fp_vectors.h"

#include <algorithm>

#include "golden/numerics/common.h"

namespace n3::rtl::fp {
namespace {

using Rng = std::mt19937_64;

// ---- random helpers ----

int uni(Rng& r, int lo, int hi) { return lo + static_cast<int>(r() % static_cast<uint64_t>(hi - lo + 1)); }
bool coin(Rng& r) { return (r() & 1) != 0; }
int bitlen(uint64_t v) { return v ? 64 - num::clz64(v) : 0; }
uint32_t sign_of(Rng& r) { return coin(r) ? 0x80000000u : 0u; }
uint32_t pack(uint32_t sign, int be, uint32_t man) {
  return sign | static_cast<uint32_t>(be) << 23 | (man & 0x7fffffu);
}
int fmt_p(int fmt) { return fmt == 1 ? 8 : fmt == 2 ? 11 : 24; }
int fmt_emin(int fmt) { return fmt == 2 ? -14 : -126; }
int fmt_emax(int fmt) { return fmt == 2 ? 15 : 127; }
// A random odd number of exactly n bits (n >= 1).
uint64_t odd_bits(Rng& r, int n) {
  if (n == 1) return 1;
  return (uint64_t(1) << (n - 1)) | (r() & ((uint64_t(1) << (n - 1)) - 1)) | 1;
}

// Values every float leaf meets: zeros, subnormals, the extreme normals,
// infinities, NaNs (quiet, signalling, negative), 1 and its neighbours, and
// the boundaries of f16 (65504, the overflow tie 65520, 2^-14, 2^-24 and
// the tie 2^-25) and bf16 (its largest value, the overflow tie, its
// subnormal quantum 2^-133 and the tie below it).
constexpr uint32_t kSpecials[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x00000002u, 0x00000003u, 0x007fffffu, 0x00400000u, 0x00400001u,
    0x00800000u, 0x00800001u, 0x00ffffffu, 0x7f7fffffu, 0x7f7ffffeu, 0x7f000000u, 0x7e800000u, 0x7f800000u,
    0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0x7fa00000u, 0xffc00000u, 0x3f800000u, 0x3f7fffffu, 0x3f800001u,
    0x477fe000u, 0x477ff000u, 0x477fefffu, 0x477ff001u, 0x47800000u, 0x38800000u, 0x387fffffu, 0x33800000u,
    0x33000000u, 0x33000001u, 0x32ffffffu, 0x33c00000u, 0x7f7f0000u, 0x7f7f8000u, 0x7f7f7fffu, 0x7f7f8001u,
    0x00010000u, 0x00008000u, 0x00008001u, 0x00018000u, 0x007f8000u, 0x00007fffu, 0x01000000u, 0x4b800000u};
uint32_t special(Rng& r) {
  return kSpecials[r() % (sizeof kSpecials / sizeof kSpecials[0])] ^ (coin(r) ? 0x80000000u : 0u);
}
// Finite non-zero f32 with a random biased exponent in [lo, hi].
uint32_t finite_in(Rng& r, int lo, int hi) { return pack(sign_of(r), uni(r, lo, hi), static_cast<uint32_t>(r())); }

// ---- fp_acc_round ----

// Makes acc * scale * 2^(e_top - 16) equal T * 2^(E - bitlen(T) + 1), with
// T = k * c (c odd, the scale's significand c * 2^(24 - bitlen(c))): acc =
// +-k * 2^s, and e_top and the scale's exponent chosen to put T's leading
// bit at exponent E.
void place_acc(Rng& r, Vec& v, uint64_t k, uint64_t c, int E) {
  const int lc = bitlen(c), lt = bitlen(k * c);
  const int s = uni(r, 0, 62 - bitlen(k));
  v.ar_acc = static_cast<int64_t>(k << s) * (coin(r) ? -1 : 1);
  // bit 0 of T at exponent s + (24 - lc) + X, X = e_top - 16 + (be - 150).
  const int X = E - (lt - 1) - s - (24 - lc);
  int be = uni(r, 1, 254);
  int e_top = X + 166 - be;
  if (e_top < -400 || e_top > 400) {
    be = std::min(254, std::max(1, X + 166 - uni(r, -400, 400)));
    e_top = X + 166 - be;
  }
  v.ar_e_top = static_cast<int16_t>(e_top);
  v.ar_scale = pack(sign_of(r), be, static_cast<uint32_t>(c << (24 - lc)));
}

uint64_t small_odd(Rng& r, int maxbits) { return odd_bits(r, uni(r, 1, std::max(1, maxbits))); }

// k with bitlen(k * c) == n (c < 2^(n-1)), odd when `odd`.
uint64_t k_for(Rng& r, uint64_t c, int n, bool odd) {
  const uint64_t lo = ((uint64_t(1) << (n - 1)) + c - 1) / c, hi = ((uint64_t(1) << n) - 1) / c;
  uint64_t k = lo + r() % (hi - lo + 1);
  if (odd && !(k & 1)) k = k + 1 <= hi ? k + 1 : k - 1;
  return k;
}

const char* gen_acc_round(Rng& r, Vec& v) {
  v.ar_fmt = uni(r, 0, 2);
  const int p = fmt_p(v.ar_fmt), emin = fmt_emin(v.ar_fmt), emax = fmt_emax(v.ar_fmt);
  switch (uni(r, 0, 9)) {
    case 0:
    case 1:
      v.ar_acc = static_cast<int64_t>(r()) >> uni(r, 0, 63);
      v.ar_e_top = static_cast<int16_t>(uni(r, -400, 400));
      v.ar_scale = static_cast<uint32_t>(r());
      return "random";
    case 2:
      v.ar_acc = coin(r) ? 0 : static_cast<int64_t>(r()) >> uni(r, 0, 63);
      v.ar_e_top = static_cast<int16_t>(uni(r, -400, 400));
      v.ar_scale = special(r);
      return "special_scale";
    case 3: {
      // acc near +-2^62 (and the int64 extremes), result placed in or near the format's range.
      static constexpr int64_t kBig[] = {int64_t(1) << 62, (int64_t(1) << 62) - 1, (int64_t(1) << 62) + 1, INT64_MAX,
                                         INT64_MIN,        INT64_MIN + 1,          (int64_t(3) << 61)};
      // Added modulo 2^64 (INT64_MAX + 3 wraps to near INT64_MIN, another
      // extreme): a signed overflow here was undefined (UBSan, the asan preset).
      v.ar_acc = static_cast<int64_t>(static_cast<uint64_t>(kBig[r() % 7]) +
                                      static_cast<uint64_t>(coin(r) ? uni(r, -3, 3) : 0));
      if (v.ar_acc != INT64_MIN && coin(r)) v.ar_acc = -v.ar_acc;
      v.ar_scale = finite_in(r, 1, 254);
      const int es = static_cast<int>((v.ar_scale >> 23) & 0xff) - 127;
      v.ar_e_top = static_cast<int16_t>(uni(r, emin - p - 2, emax + 1) - 62 - es + 16);
      return "acc_2p62";
    }
    case 4: {
      static constexpr int16_t kE[] = {-400, 400, -401, 401, INT16_MIN, INT16_MAX, 0, -16, 16};
      v.ar_acc = static_cast<int64_t>(r()) >> uni(r, 0, 63);
      v.ar_scale = coin(r) ? special(r) : static_cast<uint32_t>(r());
      v.ar_e_top = kE[r() % 9];
      return "e_top_extreme";
    }
    case 5:
    case 6: {
      // An exact tie: T odd with p + 1 bits (normal result), or odd with at
      // most p bits at half the subnormal quantum (subnormal result).
      const uint64_t c = small_odd(r, std::min(10, p - 1));
      if (coin(r)) {
        place_acc(r, v, k_for(r, c, p + 1, true), c, uni(r, emin, emax));
      } else {
        const int n = uni(r, std::max(1, bitlen(c)), p);
        const uint64_t k = k_for(r, c, n, true);
        place_acc(r, v, k, c, emin - p + bitlen(k * c) - 1);
      }
      if (uni(r, 5, 6) == 6) {
        v.ar_acc += coin(r) ? 1 : -1;  // just off the tie
        return "near_tie";
      }
      return "tie";
    }
    case 7: {
      // Around the largest finite value and the overflow threshold.
      const uint64_t c = coin(r) ? 1 : 3;
      const int n = p + uni(r, 1, 4);
      const uint64_t all = (uint64_t(1) << n) - 1 - static_cast<uint64_t>(uni(r, 0, 2));
      place_acc(r, v, all / c, c, emax + uni(r, -1, 1));
      return "overflow";
    }
    case 8: {
      // Subnormal results and the underflow to zero.
      const uint64_t c = small_odd(r, 8);
      const int n = uni(r, bitlen(c), 40);
      place_acc(r, v, k_for(r, c, n, false), c, uni(r, emin - p - 3, emin));
      return "underflow";
    }
    default:
      if (coin(r)) {
        v.ar_acc = 0;
        v.ar_scale = coin(r) ? special(r) : static_cast<uint32_t>(r());
      } else {
        v.ar_acc = static_cast<int64_t>(r()) >> uni(r, 0, 63);
        v.ar_scale = sign_of(r);
      }
      v.ar_e_top = static_cast<int16_t>(uni(r, -400, 400));
      return "zero";
  }
}

// ---- acc_align ----

const char* gen_acc_align(Rng& r, Vec& v) {
  // d = x - e_top + 16, the shift; left shifts stay below 64 (the C++
  // leaves d >= 64 undefined; the engine has d <= 16).
  auto set_d = [&](int d) {
    const int x = uni(r, -200, 200);
    v.al_x = static_cast<int16_t>(x);
    v.al_e_top = static_cast<int16_t>(x + 16 - d);
  };
  switch (uni(r, 0, 6)) {
    case 0:
    case 1:
      v.al_p = static_cast<int64_t>(r()) >> uni(r, 0, 63);
      set_d(uni(r, -70, 16));
      return "random";
    case 2:
    case 3: {
      const int s = uni(r, 1, 62);
      const int mb = uni(r, 0, 62 - s);
      const uint64_t m = mb ? (r() >> (64 - mb)) : 0;
      v.al_p = static_cast<int64_t>((2 * m + 1) << (s - 1)) * (coin(r) ? -1 : 1);
      set_d(-s);
      if (coin(r)) {
        v.al_p += coin(r) ? 1 : -1;
        return "near_tie";
      }
      return "tie";
    }
    case 4:
      v.al_p = static_cast<int64_t>(r()) >> uni(r, 0, 2);
      if (coin(r)) {
        set_d(uni(r, -66, -62));
      } else {
        v.al_x = static_cast<int16_t>(coin(r) ? INT16_MIN : uni(r, INT16_MIN, -100));
        v.al_e_top = static_cast<int16_t>(coin(r) ? INT16_MAX : uni(r, 100, INT16_MAX));
      }
      return "far";
    case 5:
      v.al_p = static_cast<int64_t>(r()) >> uni(r, 0, 63);
      set_d(coin(r) ? uni(r, 0, 16) : uni(r, 17, 63));
      return "left";
    default: {
      static constexpr int64_t kP[] = {INT64_MIN, INT64_MAX, int64_t(1) << 62, -(int64_t(1) << 62), 0, 1, -1,
                                       -2,        3,         INT64_MIN + 1};
      v.al_p = kP[r() % 10];
      set_d(uni(r, -70, 16));
      return "extreme";
    }
  }
}

// ---- fp_mul ----

const char* gen_fp_mul(Rng& r, Vec& v) {
  switch (uni(r, 0, 7)) {
    case 0:
    case 1:
      v.mul_a = static_cast<uint32_t>(r());
      v.mul_b = static_cast<uint32_t>(r());
      return "random";
    case 2:
      v.mul_a = special(r);
      v.mul_b = coin(r) ? special(r) : static_cast<uint32_t>(r());
      if (coin(r)) std::swap(v.mul_a, v.mul_b);
      return "special";
    case 3:
    case 4: {
      // Odd significands ca, cb whose product is halfway between two f32s:
      // 25 bits with the last place of a normal result at its bit 1, or at
      // most 24 bits with its bit 0 at 2^-150, half the subnormal quantum.
      const bool sub = coin(r);
      int la, lb, bit0;
      uint64_t ca, cb;
      if (sub) {
        la = uni(r, 1, 12);
        ca = odd_bits(r, la);
        lb = uni(r, 1, 24 - la);
        cb = odd_bits(r, lb);
        bit0 = -150;
      } else {
        la = uni(r, 2, 23);
        ca = odd_bits(r, la);
        const uint64_t lo = ((uint64_t(1) << 24) + ca - 1) / ca;
        const uint64_t hi = std::min(((uint64_t(1) << 25) - 1) / ca, (uint64_t(1) << 24) - 1);
        cb = lo + r() % (hi - lo + 1);
        if (!(cb & 1)) cb = cb + 1 <= hi ? cb + 1 : cb - 1;
        lb = bitlen(cb);
        bit0 = uni(r, -126, 127) - 24;
      }
      // bit0 = (bea - 150) + (beb - 150) + (24 - la) + (24 - lb)
      const int sum = bit0 + 300 - (24 - la) - (24 - lb);
      const int bea = uni(r, std::max(1, sum - 254), std::min(254, sum - 1));
      v.mul_a = pack(sign_of(r), bea, static_cast<uint32_t>(ca << (24 - la)));
      v.mul_b = pack(sign_of(r), sum - bea, static_cast<uint32_t>(cb << (24 - lb)));
      if (coin(r)) {
        v.mul_b += coin(r) ? 1 : static_cast<uint32_t>(-1);  // just off the tie
        return "near_tie";
      }
      return "tie";
    }
    case 5:
      // Results around the subnormal range and the underflow to zero.
      if (coin(r)) {
        v.mul_a = pack(sign_of(r), 0, static_cast<uint32_t>(r()));  // a subnormal operand
        v.mul_b = finite_in(r, 100, 254);
      } else {
        const int s2 = 254 + (-126 - uni(r, -2, 30));  // product near 2^(bea + beb - 254)
        const int bea = uni(r, std::max(1, s2 - 254), std::min(254, s2 - 1));
        v.mul_a = finite_in(r, bea, bea);
        v.mul_b = finite_in(r, s2 - bea, s2 - bea);
      }
      return "underflow";
    case 6: {
      // Products around the largest finite value and the overflow threshold.
      const int s2 = 254 + uni(r, 125, 128);
      const int bea = uni(r, std::max(1, s2 - 254), std::min(254, s2 - 1));
      v.mul_a = pack(sign_of(r), bea, coin(r) ? 0x7fffffu : static_cast<uint32_t>(r()));
      v.mul_b = pack(sign_of(r), s2 - bea, coin(r) ? 0x7fffffu : static_cast<uint32_t>(r()));
      return "overflow";
    }
    default:
      v.mul_a = coin(r) ? sign_of(r) : pack(sign_of(r), 255, 0);
      v.mul_b = coin(r) ? special(r) : static_cast<uint32_t>(r());
      if (coin(r)) std::swap(v.mul_a, v.mul_b);
      return "zero_inf";
  }
}

// ---- fp_add ----

// The f32 of value q * 2^lsb, exactly representable.
uint32_t f32_of(bool neg, uint64_t q, int lsb) { return num::f2u(num::make_f32(neg, q, lsb)); }

const char* gen_fp_add(Rng& r, Vec& v) {
  switch (uni(r, 0, 8)) {
    case 0:
    case 1:
      v.add_a = static_cast<uint32_t>(r());
      v.add_b = static_cast<uint32_t>(r());
      return "random";
    case 2:
      v.add_a = special(r);
      v.add_b = coin(r) ? special(r) : static_cast<uint32_t>(r());
      if (coin(r)) std::swap(v.add_a, v.add_b);
      return "special";
    case 3: {
      const int be = uni(r, 0, 254);
      v.add_a = pack(sign_of(r), be, static_cast<uint32_t>(r()));
      v.add_b = pack(sign_of(r), std::min(254, std::max(0, be + uni(r, -30, 30))), static_cast<uint32_t>(r()));
      return "close_exp";
    }
    case 4:
      // Cancellation: b = -a, a few units off, or one binade off.
      v.add_a = static_cast<uint32_t>(r()) & 0xff7fffffu;
      v.add_b = (v.add_a ^ 0x80000000u) + static_cast<uint32_t>(uni(r, -3, 3));
      if (coin(r)) v.add_b += (coin(r) ? 1u : static_cast<uint32_t>(-1)) << 23;
      if ((v.add_b & 0x7f800000u) == 0x7f800000u) v.add_b = v.add_a ^ 0x80000000u;
      return "cancel";
    case 5:
    case 6: {
      // a + b with b an odd multiple of half a's last place: an exact tie
      // (unless the sum changes binade); near_tie puts a bit below it.
      const int be = uni(r, 2, 253);
      v.add_a = pack(sign_of(r), be, static_cast<uint32_t>(r()));
      const int lsb = be - 150;
      const bool near = uni(r, 5, 6) == 6;
      const int extra = near ? std::min(uni(r, 1, 20), lsb - 1 + 149) : 0;
      uint64_t q = odd_bits(r, uni(r, 1, 3));
      if (extra > 0) q = (q << extra) + (coin(r) ? 1 : static_cast<uint64_t>(-1));
      v.add_b = f32_of(coin(r), q, lsb - 1 - extra);
      return near ? "near_tie" : "tie";
    }
    case 7:
      if (coin(r)) {  // subnormals, and the boundary to the smallest normal
        v.add_a = pack(sign_of(r), uni(r, 0, 1), static_cast<uint32_t>(r()));
        v.add_b = pack(sign_of(r), uni(r, 0, 1), static_cast<uint32_t>(r()));
        return "subnormal";
      } else {  // the largest finite values, and half a place above them
        v.add_a = pack(0, uni(r, 252, 254), coin(r) ? 0x7fffffu : static_cast<uint32_t>(r()));
        v.add_b = coin(r) ? pack(0, uni(r, 230, 254), static_cast<uint32_t>(r())) : pack(0, 254 - 24, 0);
        const uint32_t s = sign_of(r);
        v.add_a |= s;
        v.add_b |= coin(r) ? s : (s ^ 0x80000000u);
        return "overflow";
      }
    default:
      // Signed zeros: +-0 + +-0, +-0 + x, x - x.
      switch (uni(r, 0, 2)) {
        case 0:
          v.add_a = sign_of(r);
          v.add_b = sign_of(r);
          break;
        case 1:
          v.add_a = sign_of(r);
          v.add_b = coin(r) ? special(r) : static_cast<uint32_t>(r());
          if (coin(r)) std::swap(v.add_a, v.add_b);
          break;
        default:
          v.add_a = static_cast<uint32_t>(r()) & 0xff7fffffu;
          v.add_b = v.add_a ^ 0x80000000u;
      }
      return "zero";
  }
}

// ---- fp_round_fmt ----

// An f32 exactly halfway between two values of fmt (1 bf16, 2 f16), with
// leading exponent E in the format's range or its subnormal range.
uint32_t fmt_tie(Rng& r, int fmt) {
  if (fmt == 1) {  // bf16: the low 16 bits of any finite f32 (subnormals too)
    const int be = uni(r, 0, 254);
    return pack(sign_of(r), be, (static_cast<uint32_t>(r()) & 0x7f0000u) | 0x8000u);
  }
  const int E = uni(r, -25, 15);             // f16: the leading exponent
  const int shift = E >= -14 ? 13 : -1 - E;  // f32 mantissa bits below f16's last place
  uint32_t man = static_cast<uint32_t>(r());
  if (shift == 24) {
    man = 0;  // 2^-25 exactly: half the smallest subnormal
  } else {
    man = (man & ~((1u << shift) - 1)) | (1u << (shift - 1));
  }
  return pack(sign_of(r), E + 127, man);
}

const char* gen_round_fmt(Rng& r, Vec& v) {
  v.rf_fmt = uni(r, 0, 2);
  switch (uni(r, 0, 6)) {
    case 0:
    case 1:
      v.rf_x = static_cast<uint32_t>(r());
      return "random";
    case 2:
      v.rf_x = special(r);
      return "special";
    case 3: {
      v.rf_fmt = uni(r, 1, 2);
      v.rf_x = fmt_tie(r, v.rf_fmt);
      if (coin(r)) {
        v.rf_x += coin(r) ? 1 : static_cast<uint32_t>(-1);
        return "near_tie";
      }
      return "tie";
    }
    case 4:
      v.rf_fmt = uni(r, 1, 2);
      if (v.rf_fmt == 2) {  // around 65504 .. 65536
        v.rf_x = pack(sign_of(r), uni(r, 141, 143), 0x7fc000u | (static_cast<uint32_t>(r()) & 0x3fffu));
      } else {  // around bf16's largest value
        v.rf_x = pack(sign_of(r), 254, 0x7f0000u | (static_cast<uint32_t>(r()) & 0xffffu));
      }
      return "overflow";
    case 5:
      v.rf_fmt = uni(r, 1, 2);
      v.rf_x = v.rf_fmt == 2 ? pack(sign_of(r), uni(r, 127 - 27, 127 - 14), static_cast<uint32_t>(r()))
                             : pack(sign_of(r), uni(r, 0, 2), static_cast<uint32_t>(r()));
      return "underflow";
    default:
      v.rf_x = pack(sign_of(r), 0, static_cast<uint32_t>(r()));
      return "f32_subnormal";
  }
}

// ---- fp_to_f32 ----

const char* gen_to_f32(Rng& r, Vec& v) {
  v.cv_fmt = uni(r, 0, 2);
  const uint32_t hi = static_cast<uint32_t>(r()) & 0xffff0000u;  // ignored for bf16 / f16
  switch (uni(r, 0, 5)) {
    case 0:
    case 1:
      v.cv_bits = static_cast<uint32_t>(r());
      return "random";
    case 2: {
      v.cv_fmt = 2;
      static constexpr uint32_t kM[] = {0, 1, 2, 0x3ff, 0x200, 0x1ff};
      const uint32_t m = coin(r) ? kM[r() % 6] : static_cast<uint32_t>(r()) & 0x3ffu;
      v.cv_bits = hi | (coin(r) ? 0x8000u : 0u) | m;
      return "f16_subnormal";
    }
    case 3:
      v.cv_fmt = 2;
      v.cv_bits = hi | (coin(r) ? 0x8000u : 0u) | 0x7c00u | (coin(r) ? 0u : static_cast<uint32_t>(r()) & 0x3ffu);
      return "f16_inf_nan";
    case 4: {
      v.cv_fmt = 1;
      static constexpr uint32_t kH[] = {0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffff, 0x0001, 0x8000, 0x0000, 0x007f, 0x0080};
      v.cv_bits = hi | kH[r() % 10];
      return "bf16_special";
    }
    default:
      v.cv_fmt = 0;
      v.cv_bits = special(r);
      return "f32_special";
  }
}

// ---- bfp_quant ----

const char* gen_bfp_quant(Rng& r, Vec& v) {
  v.bq_mbits = uni(r, 2, 16);
  v.bq_cnt = kB;
  auto around = [&](int be, int spread) {  // elements with exponents in [be - spread, be]
    for (uint32_t& x : v.bq_x) {
      const int e = std::max(0, be - uni(r, 0, spread));
      x = uni(r, 0, 15) == 0 ? sign_of(r) : pack(sign_of(r), e, static_cast<uint32_t>(r()));
    }
  };
  auto garbage_tail = [&]() {  // elements at and beyond cnt: anything, never counted
    for (int i = v.bq_cnt; i < kB; ++i) v.bq_x[i] = coin(r) ? special(r) : static_cast<uint32_t>(r());
  };
  switch (uni(r, 0, 9)) {
    case 0:
    case 1:
      around(uni(r, 0, 254), uni(r, 0, 40));
      if (coin(r)) v.bq_cnt = uni(r, 0, kB);
      return "random";
    case 2: {
      // One huge element, the others tiny (their mantissas round to 0 or a few units).
      const int be = uni(r, 1, 254);
      for (uint32_t& x : v.bq_x)
        x = coin(r) ? pack(sign_of(r), 0, static_cast<uint32_t>(r()))
                    : pack(sign_of(r), std::max(0, be - uni(r, 10, 60)), static_cast<uint32_t>(r()));
      v.bq_x[r() % kB] = pack(sign_of(r), be, static_cast<uint32_t>(r()));
      return "one_huge";
    }
    case 3:
      v.bq_cnt = uni(r, 0, kB);
      for (int i = 0; i < v.bq_cnt; ++i) v.bq_x[i] = sign_of(r);
      garbage_tail();
      return "all_zero";
    case 4:
      around(uni(r, 0, 254), 30);
      v.bq_cnt = uni(r, 1, kB);
      v.bq_x[r() % static_cast<uint64_t>(v.bq_cnt)] =
          pack(sign_of(r), 255, coin(r) ? 0u : static_cast<uint32_t>(r()) | 1u);
      return "poison";
    case 5:
      around(uni(r, 0, 254), 30);
      v.bq_cnt = uni(r, 0, kB - 1);
      garbage_tail();
      v.bq_x[static_cast<size_t>(uni(r, v.bq_cnt, kB - 1))] = pack(sign_of(r), 255, coin(r) ? 0u : 0x400000u);
      return "cnt_short";
    case 6: {
      // The largest element rounds up to 2^(M-1) and saturates: its top M-1
      // significand bits all ones and the rest at least half.
      around(uni(r, 1, 254), 20);
      const int keep = v.bq_mbits - 1;  // significand bits kept: the leading one and keep - 1 below it
      uint32_t man = 0x7fffffu;
      if (coin(r) && keep < 24)
        man &= ~((1u << (24 - keep - 1)) - 1) | static_cast<uint32_t>(r());  // exactly half, or more
      const int i = uni(r, 0, kB - 1);
      int emax = 0;
      for (const uint32_t x : v.bq_x) emax = std::max(emax, static_cast<int>((x >> 23) & 0xff));
      v.bq_x[static_cast<size_t>(i)] = pack(sign_of(r), std::max(emax, 1), man);
      return "saturate";
    }
    case 7: {
      // Exact ties at the block's last place: odd multiples of 2^(q - 1).
      const int be = uni(r, 30, 254), E = be - 127, q = E - (v.bq_mbits - 2);
      for (uint32_t& x : v.bq_x) {
        const int n = uni(r, 1, v.bq_mbits - 1);
        x = f32_of(coin(r), odd_bits(r, n), q - 1);
      }
      v.bq_x[r() % kB] = pack(sign_of(r), be, 0);
      return "tie";
    }
    case 8:
      around(uni(r, 0, 1), 0);
      if (coin(r))
        for (uint32_t& x : v.bq_x) x &= 0x80000003u;  // down to 2^-149
      return "subnormal";
    default:
      around(coin(r) ? 254 : 0, coin(r) ? 0 : 60);
      return "extreme";
  }
}

}  // namespace

Vec draw(Rng& r) {
  Vec v;
  v.cls[kAccRound] = gen_acc_round(r, v);
  v.cls[kAccAlign] = gen_acc_align(r, v);
  v.cls[kMul] = gen_fp_mul(r, v);
  v.cls[kAdd] = gen_fp_add(r, v);
  v.cls[kRoundFmt] = gen_round_fmt(r, v);
  v.cls[kToF32] = gen_to_f32(r, v);
  v.cls[kBfpQuant] = gen_bfp_quant(r, v);
  return v;
}

}  // namespace n3::rtl::fp
