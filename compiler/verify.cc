#include <algorithm>
#include <array>
#include <deque>

#include "compiler/lower.h"
#include "isa/isa.h"
#include "isa/verify.h"

namespace n3::comp {

namespace {

uint64_t extent(const isa::DescRecord& d) {
  const uint64_t row = uint64_t(isa::data_bytes(d.dtype, d.cols));
  return d.rows ? uint64_t(d.rows - 1) * d.row_stride + row : 0;
}

// The descriptor an instruction's operand field names, if the field exists.
bool operand(const isa::Program& p, uint64_t w, const isa::OpcodeDef& d, const char* field, isa::DescRecord* out) {
  const int f = isa::field_index(d, field);
  if (f < 0) return false;
  const uint64_t slot = isa::field_raw(w, d.fields[f]);
  if (slot == 0 || slot >= p.descs.size()) return false;
  *out = isa::decode_desc(p.descs[slot].data());
  return true;
}

std::string dims(const isa::DescRecord& d) { return "[" + std::to_string(d.rows) + ", " + std::to_string(d.cols) + "]"; }

// Static operand shapes (views whose extent a register sets at run time are
// left to the simulator's traps): a matrix product y[T, N] = x[T, K] W[N, K]^T
// (gemv.mv, gemm) and a copy's element count (memcpy).
void check_shapes(const isa::Program& p, std::vector<std::string>& out) {
  for (size_t i = 0; i < p.code.size(); ++i) {
    const uint64_t w = p.code[i];
    const isa::OpcodeDef* d = isa::def_of(w);
    if (!d) continue;
    isa::DescRecord y, x, m;
    const std::string at = "instruction " + std::to_string(i) + " (" + d->name + "): ";
    const bool mv = d->opcode == isa::Opcode::GEMM ||
                    (d->opcode == isa::Opcode::GEMV && d->subop_field >= 0 &&
                     static_cast<isa::GemvMode>(isa::field_raw(w, d->fields[d->subop_field])) == isa::GemvMode::MV);
    if (mv && operand(p, w, *d, "dst", &y) && operand(p, w, *d, "src", &x) && operand(p, w, *d, "w", &m) &&
        !y.dyn_reg && !x.dyn_reg && !m.dyn_reg) {
      if (m.cols != x.cols || y.rows != x.rows || y.cols != m.rows)
        out.push_back(at + "shapes dst " + dims(y) + " = src " + dims(x) + " x w " + dims(m) + "^T do not match");
    } else if (d->opcode == isa::Opcode::MEMCPY && operand(p, w, *d, "dst", &y) && operand(p, w, *d, "src", &x) &&
               !y.dyn_reg && !x.dyn_reg && uint64_t(y.rows) * y.cols != uint64_t(x.rows) * x.cols) {
      out.push_back(at + "shapes dst " + dims(y) + " and src " + dims(x) + " hold different element counts");
    }
  }
}

}  // namespace

std::vector<std::string> verify_compiled(const Compiled& c, const HwLimits& hw) {
  std::vector<std::string> out;
  const isa::Program& p = c.program;
  for (const isa::Diag& d : isa::verify_program(p))
    out.push_back("instruction " + std::to_string(d.pc) + ": " + d.message);
  check_shapes(p, out);
  // L2 buffers: disjoint, inside L2.
  std::vector<std::pair<uint64_t, uint64_t>> a = c.l2_allocs;
  std::sort(a.begin(), a.end());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first + a[i].second > hw.l2)
      out.push_back("L2 buffer at " + std::to_string(a[i].first) + " ends past L2 (" + std::to_string(hw.l2) + " bytes)");
    if (i + 1 < a.size() && a[i].first + a[i].second > a[i + 1].first)
      out.push_back("L2 buffers at " + std::to_string(a[i].first) + " and " + std::to_string(a[i + 1].first) + " overlap");
  }
  // Resident weights are loaded once by the preload program and only read here.
  for (size_t i = 0; i < c.accesses.size(); ++i)
    for (const Emitter::Access& x : c.accesses[i])
      for (const auto& r : c.resident)
        if (x.write && x.space == 1 && x.lo < r.first + r.second && r.first < x.hi)
          out.push_back("instruction " + std::to_string(i) + " writes resident weights (L2 " +
                        std::to_string(r.first) + ")");
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
  // The schedule: replay the tokens (first in, first out per engine pair) into
  // vector clocks, then every conflicting pair of different engines must be ordered.
  std::vector<int64_t> balance(25, 0);
  const size_t n = p.code.size();
  std::vector<std::array<int64_t, 5>> known(n);
  std::array<int64_t, 5> last{-1, -1, -1, -1, -1};
  std::array<std::deque<size_t>, 25> fifo;
  std::array<std::vector<size_t>, 5> by_engine;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t w = p.code[i];
    const isa::OpcodeDef* d = isa::def_of(w);
    if (!d) continue;
    const int e = int(d->engine);
    std::array<int64_t, 5> k{-1, -1, -1, -1, -1};
    if (last[size_t(e)] >= 0) {
      k = known[size_t(last[size_t(e)])];
      k[size_t(e)] = last[size_t(e)];
    }
    for (int f = 0; f < 5; ++f) {
      if ((isa::wait_bits(w) >> f) & 1) {
        --balance[size_t(f * 5 + e)];
        std::deque<size_t>& q = fifo[size_t(f * 5 + e)];
        if (q.empty()) {
          out.push_back("instruction " + std::to_string(i) + " waits for a token from " +
                        isa::name_of(static_cast<isa::Engine>(f)) + " that no earlier instruction signals");
          continue;
        }
        const size_t j = q.front();
        q.pop_front();
        for (int g = 0; g < 5; ++g) k[size_t(g)] = std::max(k[size_t(g)], known[j][size_t(g)]);
        k[size_t(f)] = std::max<int64_t>(k[size_t(f)], int64_t(j));
      }
      if ((isa::signal_bits(w) >> f) & 1) {
        ++balance[size_t(e * 5 + f)];
        fifo[size_t(e * 5 + f)].push_back(i);
      }
    }
    known[i] = k;
    last[size_t(e)] = int64_t(i);
    if (e != 0 && i < c.accesses.size()) {
      for (int f = 1; f < 5; ++f) {
        if (f == e) continue;
        const std::vector<size_t>& list = by_engine[size_t(f)];
        for (auto it = list.rbegin(); it != list.rend() && int64_t(*it) > k[size_t(f)]; ++it) {
          bool clash = false;
          for (const Emitter::Access& x : c.accesses[i])
            for (const Emitter::Access& y : c.accesses[*it])
              clash |= x.space == y.space && (x.write || y.write) && x.lo < y.hi && y.lo < x.hi;
          if (clash) {
            out.push_back("instruction " + std::to_string(i) + " (" + isa::name_of(d->engine) +
                          ") is not ordered after instruction " + std::to_string(*it) + " (" +
                          isa::name_of(static_cast<isa::Engine>(f)) + ") by a token, and they touch the same bytes");
            break;
          }
        }
      }
      by_engine[size_t(e)].push_back(i);
    }
  }
  for (int i = 0; i < 25; ++i)
    if (balance[size_t(i)] != 0)
      out.push_back("token queue " + std::to_string(i / 5) + " -> " + std::to_string(i % 5) + ": signals and waits differ by " +
                    std::to_string(balance[size_t(i)]));
  return out;
}

}  // namespace n3::comp
