// The hazard checker: proves that a program's tokens order every pair of
// conflicting accesses, whatever the engines' timing.
//
// Each engine executes its queue in order. Instruction I on engine e starts
// with a vector clock VC_I: VC_I[f] = how many of engine f's instructions
// are known to have completed before I starts (through I's engine's own
// order, the control engine's dispatch order, and the tokens I and its
// predecessors popped; a token carries its producer's clock). An earlier
// access by instruction J (engine f, J is f's n-th instruction) is ordered
// before I iff n <= VC_I[f]. Two accesses to the same byte by different
// engines, at least one a write, that are not ordered are a hazard: on some
// timing the reader sees data the writer has not finished (RAW), the writer
// overwrites data not yet read (WAR) or two writes race (WAW).
//
// Shadow state per memory space is a map of byte intervals holding the last
// writer and the last reader per engine (FastTrack's epochs), so checking
// costs per access interval, not per byte, and multi-GB spaces are cheap.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "isa/isa.h"

namespace n3::sim {

using VClock = std::array<uint64_t, isa::kNumEngines>;

inline void join(VClock& a, const VClock& b) {
  for (int i = 0; i < isa::kNumEngines; ++i) a[i] = a[i] > b[i] ? a[i] : b[i];
}

struct MemAccess {
  isa::Space space;
  uint64_t lo, hi;  // [lo, hi)
  bool write;
};

class HazardChecker {
 public:
  // Checks the accesses of instruction `pc` (the `seq`-th instruction of
  // `engine`, starting with clock `vc`) against everything recorded, then
  // records them. Returns "" or a one-line description of the first hazard.
  std::string access(int engine, uint64_t seq, uint32_t pc, const VClock& vc, const std::vector<MemAccess>& acc);
  size_t segments() const;

 private:
  struct Epoch {
    uint64_t seq = 0;  // 0: none
    uint32_t pc = 0;
  };
  struct Seg {
    uint64_t hi = 0;
    int writer_engine = -1;
    Epoch writer;
    std::array<Epoch, isa::kNumEngines> readers{};
  };
  using Map = std::map<uint64_t, Seg>;  // keyed by lo; segments do not overlap

  // Makes [lo, hi) exactly covered by segments (splitting, filling gaps).
  static Seg fresh(uint64_t hi);
  void cover(Map& m, uint64_t lo, uint64_t hi);
  void merge_around(Map& m, uint64_t lo, uint64_t hi);
  std::string check(const Map& m, const MemAccess& a, int engine, const VClock& vc) const;

  std::array<Map, 8> spaces_;
};

}  // namespace n3::sim
