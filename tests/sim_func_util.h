// Helpers of the ISA and functional-simulator suites: deterministic random
// numbers, assembling test programs, a simulator with small memories, and
// typed reads and writes of memory.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "golden/numerics/formats.h"
#include "isa/asm.h"
#include "sim/func_sim.h"
#include "tests/test_util.h"

namespace n3::test {

// SplitMix64: the same sequence on every platform.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  // Uniform in [-1, 1) on a 2^-23 grid (exact in float32).
  float unit() { return static_cast<float>(static_cast<int64_t>(next() >> 40) - (1 << 23)) / float(1 << 23); }
};

inline std::string example_path(const std::string& name) { return source_dir() + "/isa/examples/" + name; }

inline isa::Program assemble_text(const std::string& text, bool verify = true) {
  isa::AsmOptions o;
  o.verify = verify;
  return isa::assemble(text, "test.s", o);
}
inline isa::Program assemble_example(const std::string& name) {
  return isa::assemble(read_file_text(example_path(name)), name);
}

inline sim::SimOptions small_options() {
  sim::SimOptions o;
  o.caps.ddr = 1ull << 24;
  o.caps.l2 = 1ull << 20;
  o.caps.wbuf = 1ull << 18;
  return o;
}

inline void put_bytes(sim::FuncSim& s, isa::Space sp, uint64_t addr, const void* p, size_t n) {
  s.memory().space(sp).write(addr, p, n);
}
inline void put_f32(sim::FuncSim& s, isa::Space sp, uint64_t addr, const std::vector<float>& v) {
  put_bytes(s, sp, addr, v.data(), v.size() * 4);
}
inline void put_i32(sim::FuncSim& s, isa::Space sp, uint64_t addr, const std::vector<int32_t>& v) {
  put_bytes(s, sp, addr, v.data(), v.size() * 4);
}
// Stores values rounded to bf16 / f16; returns the rounded values.
inline std::vector<float> put_h16(sim::FuncSim& s, isa::Space sp, uint64_t addr, std::vector<float> v, bool bf16) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    h[i] = bf16 ? num::bf16_bits(v[i]) : num::f16_bits(v[i]);
    v[i] = bf16 ? num::bf16_value(h[i]) : num::f16_value(h[i]);
  }
  put_bytes(s, sp, addr, h.data(), h.size() * 2);
  return v;
}
inline std::vector<float> get_f32(const sim::FuncSim& s, isa::Space sp, uint64_t addr, size_t n) {
  std::vector<float> v(n);
  s.memory().space(sp).read(addr, v.data(), n * 4);
  return v;
}
inline std::vector<float> get_h16(const sim::FuncSim& s, isa::Space sp, uint64_t addr, size_t n, bool bf16) {
  std::vector<uint16_t> h(n);
  s.memory().space(sp).read(addr, h.data(), n * 2);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = bf16 ? num::bf16_value(h[i]) : num::f16_value(h[i]);
  return v;
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Bit-exact comparison of two float vectors; reports the first mismatch
// (index, expected, actual) and the count.
inline std::string bit_diff(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (bits(got[i]) != bits(want[i]) && !(num::is_nan(got[i]) && num::is_nan(want[i]))) {
      if (!bad) first = i;
      ++bad;
    }
  size_t nonzero = 0;
  for (float x : want) nonzero += x != 0.0f;
  if (!bad && want.size() > 1 && nonzero == 0) return "expected values are all zero: a vacuous test";
  if (!bad) return "";
  char b[160];
  std::snprintf(b, sizeof b, "%zu of %zu differ; first at %zu: expected %.9g (0x%08x), got %.9g (0x%08x)", bad,
                got.size(), first, want[first], bits(want[first]), got[first], bits(got[first]));
  return b;
}

}  // namespace n3::test
