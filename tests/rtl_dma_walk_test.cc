// Mutation awareness of the DMA cosim's vectors (rtl_bridge/dma_vectors.cc,
// docs/rtl_dma.md "Verification"). The cosim compares every byte the RTL
// engine writes with the functional simulator's; a bug in the engine's
// descriptor walk (n3_dma_walk) is caught only if some vector makes it
// change a byte. Each mutant here is such a bug expressed on the resolved
// views (a wrap one row early or late, a gather one row off, a stride one
// element long, a scale-group cut one column late): the test runs the
// functional MEMCPY / MEMSET on the true and the mutated views over the
// cosim's vectors and requires the mutant to change bytes, in the
// adversarial class aimed at it too. A generator that stopped covering a
// case (wraps, gathers, group edges) fails here, not silently.
#ifdef N3_HAVE_RTL_DMA
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "isa/verify.h"
#include "rtl_bridge/dma_vectors.h"
#include "sim/func_sim.h"

namespace n3 {
namespace {

// The bytes of every region of the vector after the instruction on
// (dst, src); empty when the instruction traps or leaves memory.
std::vector<uint8_t> outcome(const rtl::DmaVector& g, const sim::View& dst, const sim::View& src) {
  sim::SimOptions so;
  so.caps = {uint64_t(1) << 32, uint64_t(1) << 24, uint64_t(1) << 24};
  isa::Program prog;
  prog.code = {0};
  sim::FuncSim m(prog, so);
  for (const rtl::DmaVector::Bytes& b : g.image) m.memory().space(b.space).write(b.addr, b.data.data(), b.data.size());
  sim::Issued in;
  in.def = isa::opcode_def(static_cast<uint32_t>(g.memset ? isa::Opcode::MEMSET : isa::Opcode::MEMCPY));
  in.sub = &in.def->subops[0];
  in.views[static_cast<size_t>(isa::field_index(*in.def, "dst"))] = dst;
  if (!g.memset) in.views[static_cast<size_t>(isa::field_index(*in.def, "src"))] = src;
  in.konst = g.konst;
  in.konst_type = g.konst_type;
  std::vector<uint8_t> out;
  try {
    sim::exec_dma(m, in);
  } catch (...) {
    return out;
  }
  for (const rtl::DmaVector::Bytes& b : g.image) {
    std::vector<uint8_t> got(b.data.size());
    m.memory().space(b.space).read(b.addr, got.data(), got.size());
    out.insert(out.end(), got.begin(), got.end());
  }
  return out;
}

// A walk bug, applied to one view; false where the view gives it no hold.
using Mutant = std::function<bool(sim::View&, bool is_src, bool converts)>;

struct Case {
  std::string name, aimed_class;  // the class whose vectors must catch it
  Mutant mutate;
};

std::vector<Case> cases() {
  return {
      {"ring wraps one row early", "wrap_last",
       [](sim::View& v, bool, bool) {
         if (!v.d.ring || v.d.rows < 2) return false;
         --v.d.rows;
         v.row_off %= v.d.rows;
         return true;
       }},
      {"ring wraps one row late", "wrap_last",
       [](sim::View& v, bool, bool) {
         if (!v.d.ring) return false;
         ++v.d.rows;
         return true;
       }},
      {"gather one row off", "gather",
       [](sim::View& v, bool, bool) {
         if (!v.d.row_reg) return false;
         v.row_off = v.d.ring ? (v.row_off + 1) % v.d.rows : v.row_off + 1;
         return true;
       }},
      {"row stride one element long", "strided",
       [](sim::View& v, bool, bool) {
         if (v.rows < 2) return false;
         v.d.row_stride += static_cast<uint32_t>(std::max(1, isa::dtype_bits(v.d.dtype) / 8));
         return true;
       }},
      {"scale-group cut one column late", "group_cuts",
       [](sim::View& v, bool is_src, bool converts) {
         // A dequantising src's groups (the runs the walk cuts at them).
         if (!is_src || !converts || v.d.group == 0 || v.d.group >= uint32_t(v.cols)) return false;
         ++v.d.group;
         return true;
       }},
  };
}

TEST(RtlDmaWalk, EveryWalkMutantChangesBytesOfTheCosimVectors) {
  constexpr int64_t kVectors = 4000;  // the first vectors of `n3 cosim --unit dma --seed 1`
  std::vector<rtl::DmaVector> vs;
  std::vector<std::vector<uint8_t>> want;
  for (int64_t i = 0; i < kVectors; ++i) {
    vs.push_back(rtl::make_dma_vector(1, i));
    want.push_back(outcome(vs.back(), vs.back().dst, vs.back().src));
    ASSERT_FALSE(want.back().empty()) << "vector " << i << " traps in the functional simulator";
  }
  for (const Case& c : cases()) {
    int64_t applies = 0, caught = 0, aimed = 0, aimed_caught = 0;
    for (size_t i = 0; i < vs.size(); ++i) {
      const rtl::DmaVector& g = vs[i];
      sim::View dst = g.dst, src = g.src;
      const bool converts = !g.memset && g.src.d.dtype != g.dst.d.dtype;
      bool hit = c.mutate(dst, false, converts);
      if (!g.memset) hit = c.mutate(src, true, converts) || hit;
      if (!hit) continue;
      ++applies;
      const bool differs = outcome(g, dst, src) != want[i];
      caught += differs;
      if (g.cls == c.aimed_class) ++aimed, aimed_caught += differs;
    }
    std::printf("%-34s applies to %5lld vectors, caught by %5lld; class %-10s %4lld of %4lld\n", c.name.c_str(),
                static_cast<long long>(applies), static_cast<long long>(caught), c.aimed_class.c_str(),
                static_cast<long long>(aimed_caught), static_cast<long long>(aimed));
    EXPECT_GT(aimed, 20) << c.name << ": the class aimed at it is rare";
    // Most of the vectors the mutant touches must show it (a mutant that
    // moves nothing, e.g. a wrap in a one-row ring, is the rest).
    EXPECT_GT(caught, applies / 2) << c.name;
    EXPECT_GT(aimed_caught, aimed / 2) << c.name;
  }
}

}  // namespace
}  // namespace n3
#endif  // N3_HAVE_RTL_DMA
