#include "sim/hazard.h"

#include <cstdio>

namespace n3::sim {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

const char* eng(int e) { return isa::name_of(static_cast<isa::Engine>(e)); }

std::string where(const MemAccess& a, uint64_t lo, uint64_t hi) {
  const uint64_t l = lo > a.lo ? lo : a.lo, h = hi < a.hi ? hi : a.hi;
  return std::string(isa::name_of(a.space)) + " [" + hex(l) + ", " + hex(h) + ")";
}



}  // namespace

HazardChecker::Seg HazardChecker::fresh(uint64_t hi) {
  Seg s;
  s.hi = hi;
  return s;
}

void HazardChecker::cover(Map& m, uint64_t lo, uint64_t hi) {
  // Split a segment that straddles lo.
  auto it = m.upper_bound(lo);
  if (it != m.begin()) {
    auto prev = std::prev(it);
    if (prev->first < lo && prev->second.hi > lo) {
      Seg tail = prev->second;
      prev->second.hi = lo;
      m.emplace(lo, tail);
    }
  }
  // Walk [lo, hi): fill gaps, split the segment straddling hi.
  uint64_t cur = lo;
  it = m.lower_bound(lo);
  while (cur < hi) {
    if (it == m.end() || it->first >= hi) {
      m.emplace(cur, fresh(hi));
      break;
    }
    if (it->first > cur) {
      m.emplace(cur, fresh(it->first));
      cur = it->first;
      continue;
    }
    // it->first == cur
    if (it->second.hi > hi) {
      Seg tail = it->second;
      it->second.hi = hi;
      m.emplace(hi, tail);
    }
    cur = it->second.hi;
    ++it;
  }
}

void HazardChecker::merge_around(Map& m, uint64_t lo, uint64_t hi) {
  auto it = m.lower_bound(lo);
  if (it != m.begin()) --it;
  while (it != m.end() && it->first <= hi) {
    auto next = std::next(it);
    if (next == m.end()) break;
    const Seg& a = it->second;
    const Seg& b = next->second;
    bool eq = a.hi == next->first && a.writer_engine == b.writer_engine && a.writer.seq == b.writer.seq;
    for (int e = 0; eq && e < isa::kNumEngines; ++e) eq = a.readers[e].seq == b.readers[e].seq;
    if (eq) {
      it->second.hi = b.hi;
      m.erase(next);
    } else {
      it = next;
    }
  }
}

std::string HazardChecker::check(const Map& m, const MemAccess& a, int engine, const VClock& vc) const {
  auto it = m.upper_bound(a.lo);
  if (it != m.begin()) --it;
  for (; it != m.end() && it->first < a.hi; ++it) {
    const Seg& s = it->second;
    if (s.hi <= a.lo) continue;
    const int we = s.writer_engine;
    if (we >= 0 && we != engine && s.writer.seq > vc[we])
      return std::string(a.write ? "WAW" : "RAW") + " hazard on " + where(a, it->first, s.hi) + ": " +
             (a.write ? "writes" : "reads") + " data that instruction " + std::to_string(s.writer.pc) + " (" +
             eng(we) + ") writes, and no token orders that write before this " +
             (a.write ? "write" : "read");
    if (a.write)
      for (int f = 0; f < isa::kNumEngines; ++f)
        if (f != engine && s.readers[f].seq > vc[f])
          return "WAR hazard on " + where(a, it->first, s.hi) + ": overwrites data that instruction " +
                 std::to_string(s.readers[f].pc) + " (" + eng(f) + ") reads, and no token orders that read before " +
                 "this write";
  }
  return "";
}

std::string HazardChecker::access(int engine, uint64_t seq, uint32_t pc, const VClock& vc,
                                  const std::vector<MemAccess>& acc) {
  for (const MemAccess& a : acc) {
    if (a.hi <= a.lo) continue;
    std::string m = check(spaces_[static_cast<int>(a.space)], a, engine, vc);
    if (!m.empty()) return m;
  }
  for (const MemAccess& a : acc) {
    if (a.hi <= a.lo) continue;
    Map& m = spaces_[static_cast<int>(a.space)];
    cover(m, a.lo, a.hi);
    for (auto it = m.lower_bound(a.lo); it != m.end() && it->first < a.hi; ++it) {
      Seg& s = it->second;
      if (a.write) {
        s.writer_engine = engine;
        s.writer = {seq, pc};
        s.readers = {};
      } else {
        s.readers[engine] = {seq, pc};
      }
    }
    merge_around(m, a.lo, a.hi);
  }
  return "";
}

size_t HazardChecker::segments() const {
  size_t n = 0;
  for (const Map& m : spaces_) n += m.size();
  return n;
}

}  // namespace n3::sim
