// Deterministic hashing and counter-based random numbers: the XXH64 hash
// (the .n3w checksums; keys of synth's random streams) and a SplitMix64-style
// generator whose n-th value is a pure function of (key, n), so rows of a
// tensor can be generated in any order, on any number of threads, with the
// same result. Only integer arithmetic and exact int->float conversions: the
// values are the same on every platform.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace n3 {

// XXH64 (Yann Collet's xxHash, 64-bit variant; spec:
// github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md), streaming form.
// Known answers in tests/n3w_test.cc; hashes several GB/s on one core.
class Xxh64 {
 public:
  explicit Xxh64(uint64_t seed = 0) { reset(seed); }
  void reset(uint64_t seed) {
    v_[0] = seed + kP1 + kP2;
    v_[1] = seed + kP2;
    v_[2] = seed;
    v_[3] = seed - kP1;
    seed_ = seed;
    total_ = 0;
    buffered_ = 0;
  }
  void update(const void* data, size_t n) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    total_ += n;
    if (buffered_ + n < 32) {
      std::memcpy(buf_ + buffered_, p, n);
      buffered_ += n;
      return;
    }
    if (buffered_) {
      size_t take = 32 - buffered_;
      std::memcpy(buf_ + buffered_, p, take);
      stripe(buf_);
      p += take;
      n -= take;
      buffered_ = 0;
    }
    uint64_t a = v_[0], b = v_[1], c = v_[2], d = v_[3];
    for (; n >= 32; p += 32, n -= 32) {
      a = round(a, load64(p));
      b = round(b, load64(p + 8));
      c = round(c, load64(p + 16));
      d = round(d, load64(p + 24));
    }
    v_[0] = a, v_[1] = b, v_[2] = c, v_[3] = d;
    std::memcpy(buf_, p, n);
    buffered_ = n;
  }
  uint64_t digest() const {
    uint64_t h;
    if (total_ >= 32) {
      h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
      for (uint64_t v : v_) h = (h ^ round(0, v)) * kP1 + kP4;
    } else {
      h = seed_ + kP5;
    }
    h += total_;
    const uint8_t* p = buf_;
    size_t n = buffered_;
    for (; n >= 8; p += 8, n -= 8) h = rotl(h ^ round(0, load64(p)), 27) * kP1 + kP4;
    if (n >= 4) {
      uint32_t w;
      std::memcpy(&w, p, 4);
      h = rotl(h ^ (uint64_t(w) * kP1), 23) * kP2 + kP3;
      p += 4;
      n -= 4;
    }
    for (; n > 0; ++p, --n) h = rotl(h ^ (uint64_t(*p) * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    return h ^ (h >> 32);
  }

 private:
  static constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full,
                            kP3 = 0x165667B19E3779F9ull, kP4 = 0x85EBCA77C2B2AE63ull,
                            kP5 = 0x27D4EB2F165667C5ull;
  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // little-endian hosts only (x86-64, AArch64)
    return v;
  }
  static uint64_t round(uint64_t acc, uint64_t in) { return rotl(acc + in * kP2, 31) * kP1; }
  void stripe(const uint8_t* p) {
    for (int i = 0; i < 4; ++i) v_[i] = round(v_[i], load64(p + 8 * i));
  }
  uint64_t v_[4];
  uint64_t seed_, total_;
  uint8_t buf_[32];
  size_t buffered_;
};

inline uint64_t xxh64(const void* data, size_t n, uint64_t seed = 0) {
  Xxh64 h(seed);
  h.update(data, n);
  return h.digest();
}
inline uint64_t xxh64(const std::string& s, uint64_t seed = 0) { return xxh64(s.data(), s.size(), seed); }

// SplitMix64's output function (Steele, Lea, Flood 2014; constants of
// Stafford's "Mix13"): a bijective 64-bit mixer.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Counter-based stream: value n is mix64(key + (n + 1) * golden gamma), i.e.
// the n-th output of SplitMix64 seeded with `key`, computable out of order.
struct CounterRng {
  uint64_t key = 0;
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

  uint64_t at(uint64_t n) const { return mix64(key + (n + 1) * kGamma); }
  // An independent stream for sub-index `i` (a row, a group, ...).
  CounterRng child(uint64_t i) const { return CounterRng{mix64(key ^ mix64(i * kGamma + 0x632BE59BD9B4E019ull))}; }
  // Uniform in [0, 1): the top 24 bits, exactly representable as float.
  float uniform(uint64_t n) const { return float(at(n) >> 40) * 0x1p-24f; }
  // Approximately N(0, 1): Irwin-Hall sum of four uniforms, centred and
  // scaled to unit variance. Bounded (|x| < 3.47) and free of libm calls, so
  // identical on every platform.
  float normal(uint64_t n) const {
    float s = uniform(4 * n) + uniform(4 * n + 1) + uniform(4 * n + 2) + uniform(4 * n + 3);
    return (s - 2.0f) * 1.7320508f;
  }
};

}  // namespace n3
