#include <algorithm>

#include "compiler/lower.h"
#include "isa/isa.h"
#include "isa/verify.h"

namespace n3::comp {

namespace {

uint64_t extent(const isa::DescRecord& d) {
  const uint64_t row = uint64_t(isa::data_bytes(d.dtype, d.cols));
  return d.rows ? uint64_t(d.rows - 1) * d.row_stride + row : 0;
}

}  // namespace

std::vector<std::string> verify_compiled(const Compiled& c, const HwLimits& hw) {
  std::vector<std::string> out;
  const isa::Program& p = c.program;
  for (const isa::Diag& d : isa::verify_program(p))
    out.push_back("instruction " + std::to_string(d.pc) + ": " + d.message);
  // L2 buffers: disjoint, inside L2.
  std::vector<std::pair<uint64_t, uint64_t>> a = c.l2_allocs;
  std::sort(a.begin(), a.end());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first + a[i].second > hw.l2)
      out.push_back("L2 buffer at " + std::to_string(a[i].first) + " ends past L2 (" + std::to_string(hw.l2) + " bytes)");
    if (i + 1 < a.size() && a[i].first + a[i].second > a[i + 1].first)
      out.push_back("L2 buffers at " + std::to_string(a[i].first) + " and " + std::to_string(a[i + 1].first) + " overlap");
  }
  for (size_t s = 1; s < p.descs.size(); ++s) {
    const isa::DescRecord d = isa::decode_desc(p.descs[s].data());
    const std::string who = "descriptor " + std::to_string(s) + " (" + p.name_of(isa::SymKind::Desc, uint32_t(s)) + ")";
    if (d.space == isa::Space::L2) {
      // Views moved by a register (a token's heads) are checked at their largest offset by the simulator.
      const uint64_t lo = d.base, hi = d.base + (d.row_reg ? uint64_t(isa::data_bytes(d.dtype, d.cols)) : extent(d));
      const bool inside = std::any_of(a.begin(), a.end(), [&](const std::pair<uint64_t, uint64_t>& b) {
        return lo >= b.first && hi <= b.first + b.second;
      });
      if (!inside) out.push_back(who + ": L2 bytes [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                 ") are not inside one buffer (overlaps another live buffer)");
    } else if (d.space == isa::Space::DDR && !d.row_reg && d.base + extent(d) > hw.ddr) {
      out.push_back(who + ": ends past DDR");
    }
  }
  // The schedule (compiler/emit.cc): a token joins consecutive engine instructions of different engines.
  int prev = -1;
  uint8_t prev_eng = 0;
  std::vector<int64_t> balance(25, 0);
  for (size_t i = 0; i < p.code.size(); ++i) {
    const uint64_t w = p.code[i];
    const isa::OpcodeDef* d = isa::def_of(w);
    if (!d) continue;
    const int e = int(d->engine);
    for (int f = 0; f < 5; ++f) {
      if ((isa::wait_bits(w) >> f) & 1) --balance[size_t(f * 5 + e)];
      if ((isa::signal_bits(w) >> f) & 1) ++balance[size_t(e * 5 + f)];
    }
    if (e == 0) continue;
    if (prev >= 0 && prev_eng != e) {
      const bool linked = ((isa::wait_bits(w) >> prev_eng) & 1) && ((isa::signal_bits(p.code[size_t(prev)]) >> e) & 1);
      if (!linked)
        out.push_back("instruction " + std::to_string(i) + " (" + isa::name_of(d->engine) + ") is not ordered after instruction " +
                      std::to_string(prev) + " (" + isa::name_of(static_cast<isa::Engine>(prev_eng)) + ") by a token");
    }
    prev = int(i);
    prev_eng = uint8_t(e);
  }
  for (int i = 0; i < 25; ++i)
    if (balance[size_t(i)] != 0)
      out.push_back("token queue " + std::to_string(i / 5) + " -> " + std::to_string(i % 5) + ": signals and waits differ by " +
                    std::to_string(balance[size_t(i)]));
  return out;
}

}  // namespace n3::comp
