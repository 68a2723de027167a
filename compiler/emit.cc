#include "compiler/emit.h"

#include <array>
#include <cctype>
#include <cstring>

#include "base/error.h"
#include "isa/isa.h"

namespace n3::comp {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

const char* kEngineNames[] = {"ctl", "dma", "gemv", "gemm", "sfu"};

std::string mask_text(uint8_t m) {
  std::string s;
  for (int e = 0; e < 5; ++e)
    if ((m >> e) & 1) s += (s.empty() ? "" : "|") + std::string(kEngineNames[e]);
  return s;
}

}  // namespace

int64_t dtype_bytes(const std::string& dt) {
  if (dt == "f32" || dt == "int32") return 4;
  if (dt == "bf16" || dt == "f16") return 2;
  if (dt == "int8") return 1;
  return 0;
}

Buf view(const Buf& b, int64_t rows, int64_t cols, uint64_t byte_offset, int64_t stride) {
  Buf v = b;
  v.rows = rows;
  v.cols = cols;
  v.base = b.base + byte_offset;
  if (stride >= 0) v.stride = stride;
  return v;
}

Buf Emitter::l2(int64_t rows, int64_t cols, const std::string& dtype, bool aligned_rows) {
  Buf b;
  b.space = "l2";
  b.dtype = dtype;
  b.base = l2_top_;
  b.rows = rows;
  b.cols = cols;
  b.stride = cols * dtype_bytes(dtype);
  if (aligned_rows) b.stride = (b.stride + 15) / 16 * 16;
  allocs_.push_back({b.base, uint64_t(rows * b.stride)});
  l2_top_ = (l2_top_ + uint64_t(rows * b.stride) + 15) & ~uint64_t(15);
  return b;
}

Buf Emitter::ddr_scratch(int64_t rows, int64_t cols, const std::string& dtype, bool aligned_rows) {
  Buf b;
  b.space = "ddr";
  b.dtype = dtype;
  b.base = ddr_top_;
  b.rows = rows;
  b.cols = cols;
  b.stride = cols * dtype_bytes(dtype);
  if (aligned_rows) b.stride = (b.stride + 15) / 16 * 16;
  ddr_top_ = (ddr_top_ + uint64_t(rows * b.stride) + 15) & ~uint64_t(15);
  return b;
}

std::string Emitter::d(const Buf& b, const std::string& extra) {
  require(b.base % 16 == 0, "compiler: descriptor base " + hex(b.base) + " is not 16-byte aligned");
  std::string spec = "dtype=" + b.dtype + " space=" + b.space + " base=" + hex(b.base) + " rows=" +
                     std::to_string(b.rows) + " cols=" + std::to_string(b.cols) +
                     " row_stride=" + std::to_string(b.stride);
  if (b.dtype == "int4") spec += " scale_mode=row scale_base=" + hex(b.scale_base) + " scale_stride=4";
  if (b.dtype == "int8")
    spec += " scale_mode=group scale_base=" + hex(b.scale_base) + " scale_stride=" + std::to_string(b.scale_stride) +
            " group=" + std::to_string(b.group);
  if (!extra.empty()) spec += " " + extra;
  auto it = descs_.find(spec);
  if (it != descs_.end()) return it->second;
  // The buffer's name; further views of it get _2, _3, ...
  std::string name = "d" + std::to_string(descs_.size() + 1);
  if (!b.name.empty()) {
    const int k = ++desc_uses_[b.name];
    name = k == 1 ? b.name : b.name + "_" + std::to_string(k);
  }
  require(descs_.size() + 1 < isa::kDescSlots, "compiler: the program needs more than " +
                                                  std::to_string(isa::kDescSlots - 1) + " descriptors");
  descs_[spec] = name;
  head_.push_back(".desc " + name + " " + spec);
  // The bytes the view can reach. A register-moved L2 view: its whole buffer;
  // a ring: the ring; a register-moved DDR row (embedding rows): from its base up.
  const bool moved = extra.find("row_reg") != std::string::npos;
  Access a{b.space == "l2" ? 1 : 0, b.base, 0, false};
  const uint64_t row = b.dtype == "int4" ? uint64_t((b.cols + 1) / 2) : uint64_t(b.cols * dtype_bytes(b.dtype));
  a.hi = b.base + uint64_t(b.rows - 1) * uint64_t(b.stride) + row;
  if (extra.find("ring=1") != std::string::npos) {
    a.hi = b.base + uint64_t(b.rows) * uint64_t(b.stride);
  } else if (moved && b.space == "l2") {
    for (const auto& al : allocs_)
      if (b.base >= al.first && b.base < al.first + al.second) {
        a.lo = al.first;
        a.hi = al.first + al.second;
      }
  } else if (moved) {
    a.hi = UINT64_MAX;
  }
  range_[name] = a;
  return name;
}

std::string Emitter::kf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  std::string txt;
  const std::string key = "f" + std::to_string(bits);
  auto it = consts_.find(key);
  if (it != consts_.end()) return it->second;
  const std::string name = "k" + std::to_string(consts_.size() + 1);
  require(consts_.size() + 1 < isa::kConstSlots, "compiler: more than 255 constants");
  consts_[key] = name;
  if (isa::float_text(bits, &txt)) head_.push_back(".const " + name + " f32 " + txt);
  else head_.push_back(".const " + name + " raw=" + hex(uint64_t(bits) << 32));
  return name;
}

std::string Emitter::ki(int32_t v) {
  const std::string key = "i" + std::to_string(v);
  auto it = consts_.find(key);
  if (it != consts_.end()) return it->second;
  const std::string name = "k" + std::to_string(consts_.size() + 1);
  consts_[key] = name;
  head_.push_back(".const " + name + " i32 " + std::to_string(v));
  return name;
}

void Emitter::op(Engine e, const std::string& text) {
  if (lane_ >= 0) {
    lanes_[size_t(lane_)].push_back({false, e, text, "", std::move(pending_comments_)});
    pending_comments_.clear();
    return;
  }
  code_.push_back({e, text, 0, 0});
  acc_.push_back(accesses_of(text));
}

std::vector<Emitter::Access> Emitter::accesses_of(const std::string& text) const {
  std::vector<Access> acc;
  // Operands "field=NAME" naming a descriptor: dst is written, every other read.
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string tok = text.substr(at, end - at);
    const size_t eq = tok.find('=');
    if (eq != std::string::npos) {
      auto r = range_.find(tok.substr(eq + 1));
      if (r != range_.end()) {
        Access a = r->second;
        a.write = tok.compare(0, eq, "dst") == 0;
        acc.push_back(a);
      }
    }
    at = end + 1;
  }
  return acc;
}

// Dependency tokens: instruction i on engine E must follow every earlier
// instruction j of another engine F that touches the same bytes (one of them
// writing). known[i][F] is the last F instruction already ordered before i
// (its queue predecessor's knowledge, joined over the tokens it waits for:
// vector clocks). When the latest conflicting j is not known, j signals E and
// i waits for F. Tokens pair first-in first-out per engine pair, and both the
// signalling j and the waiting i increase, so each wait pops j's token.
void Emitter::schedule_deps() {
  const size_t n = code_.size();
  std::vector<std::array<int64_t, 5>> known(n);
  std::array<int64_t, 5> last{-1, -1, -1, -1, -1};  // last instruction per engine so far
  auto conflict = [&](size_t i, size_t j) {
    for (const Access& a : acc_[i])
      for (const Access& b : acc_[j])
        if (a.space == b.space && (a.write || b.write) && a.lo < b.hi && b.lo < a.hi) return true;
    return false;
  };
  for (size_t i = 0; i < n; ++i) {
    Insn& in = code_[i];
    if (in.e == CTL) continue;
    std::array<int64_t, 5> k{-1, -1, -1, -1, -1};
    const int64_t qp = last[in.e];
    if (qp >= 0) {
      k = known[size_t(qp)];
      k[in.e] = qp;
    }
    for (int f = 1; f < 5; ++f) {
      if (f == in.e) continue;
      for (int64_t j = last[f]; j > k[f]; --j) {
        if (code_[size_t(j)].e != f || !conflict(i, size_t(j))) continue;
        code_[size_t(j)].signal |= uint8_t(1u << in.e);
        in.wait |= uint8_t(1u << f);
        for (int g = 0; g < 5; ++g) k[g] = std::max(k[g], known[size_t(j)][g]);
        k[f] = j;
        break;
      }
    }
    known[i] = k;
    last[in.e] = int64_t(i);
  }
}

void Emitter::capture(const std::string& name, const std::string& desc) {
  if (lane_ >= 0) {
    lanes_[size_t(lane_)].push_back({true, CTL, name, desc, {}});
    return;
  }
  require(!code_.empty(), "compiler: capture before any instruction");
  // A capture reads its tensor when instruction `at` completes: later writers must wait for it.
  Access a = range_.at(desc);
  a.write = false;
  acc_[code_.size() - 1].push_back(a);
  tensors_.push_back(".tensor " + name + " desc=" + desc + " at=" + std::to_string(code_.size() - 1));
}

void Emitter::comment(const std::string& text) {
  if (lane_ >= 0) pending_comments_.push_back(text);
  else comments_[code_.size()] += "; " + text + "\n";
}

void Emitter::begin_lanes(int n) {
  require(lane_ < 0 && n >= 1, "compiler: lanes begun twice");
  lanes_.assign(size_t(n), {});
  lane_ = 0;
}

void Emitter::lane(int i) {
  require(lane_ >= 0 && i >= 0 && size_t(i) < lanes_.size(), "compiler: no such lane");
  pending_comments_.clear();
  lane_ = i;
}

void Emitter::merge_lanes() {
  require(lane_ >= 0, "compiler: merge_lanes without begin_lanes");
  lane_ = -1;
  pending_comments_.clear();
  // Steps: [first, ops_end) instructions of one engine, then captures to `end`.
  struct Step {
    size_t first, ops_end, end;
    Engine e;
  };
  std::vector<std::vector<Step>> steps(lanes_.size());
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const std::vector<Rec>& r = lanes_[l];
    for (size_t i = 0; i < r.size(); ++i) {
      std::vector<Step>& s = steps[l];
      if (r[i].capture) {
        require(!s.empty(), "compiler: a lane begins with a capture");
        s.back().end = i + 1;
        continue;
      }
      if (s.empty() || s.back().end != s.back().ops_end || s.back().e != r[i].e) s.push_back({i, i, i, r[i].e});
      s.back().ops_end = s.back().end = i + 1;
    }
  }
  // Every lane runs the same operator sequence on other rows: the same steps.
  for (size_t l = 1; l < lanes_.size(); ++l) {
    require(steps[l].size() == steps[0].size(), "compiler: lanes with different steps");
    for (size_t k = 0; k < steps[0].size(); ++k)
      require(steps[l][k].e == steps[0][k].e &&
                  steps[l][k].end - steps[l][k].ops_end == steps[0][k].end - steps[0][k].ops_end,
              "compiler: lanes with different steps");
  }
  std::vector<std::vector<Rec>> lanes = std::move(lanes_);
  lanes_.clear();
  const size_t L = lanes.size(), K = steps[0].size();
  auto emit_step = [&](size_t l, size_t k) {
    for (size_t i = steps[l][k].first; i < steps[l][k].ops_end; ++i) {
      const Rec& r = lanes[l][i];
      if (l == 0)
        for (const std::string& c : r.comments) comment(c);
      op(r.e, r.text);
    }
  };
  // Lane l may run up to skew_ steps ahead of lane l + 1. A capture names the
  // whole tensor and is taken after the last lane's step; until then no lane
  // that passed that step may write the bytes it reads (the dump would see
  // the later value), so such a step waits.
  std::vector<size_t> pos(L, 0);
  size_t captured = 0;  // captures of steps < captured are emitted
  auto blocked = [&](size_t l) {
    const size_t k = pos[l];
    if (l > 0 && k >= pos[l - 1]) return true;
    if (l + 1 < L && k >= pos[l + 1] + size_t(skew_) + 1) return true;
    for (size_t c = captured; c < k; ++c)
      for (size_t i = steps[0][c].ops_end; i < steps[0][c].end; ++i) {
        const Access cap = range_.at(lanes[0][i].desc);
        for (size_t j = steps[l][k].first; j < steps[l][k].ops_end; ++j)
          for (const Access& a : accesses_of(lanes[l][j].text))
            if (a.write && a.space == cap.space && a.lo < cap.hi && cap.lo < a.hi) return true;
      }
    return false;
  };
  while (pos[L - 1] < K) {
    bool moved = false;
    for (size_t l = 0; l < L; ++l) {
      if (pos[l] >= K || blocked(l)) continue;
      emit_step(l, pos[l]++);
      moved = true;
      break;
    }
    require(moved, "compiler: lanes cannot advance");
    for (; captured < pos[L - 1]; ++captured)
      for (size_t i = steps[0][captured].ops_end; i < steps[0][captured].end; ++i)
        capture(lanes[0][i].text, lanes[0][i].desc);
  }
}

// Synchronisation: every instruction on an engine other than the control
// engine waits for the previous such instruction when that ran on another
// engine (which signals it). Same-engine successors are ordered by their
// queue. The result is a chain: every pair of memory accesses of different
// engines is ordered, so the hazard checker cannot fire, and each token queue
// holds at most one token. Engines still overlap with the control engine's
// run-ahead; the overlap of weight streaming with compute that a
// dependency-based schedule would give is future work (docs/compiler.md).
std::string Emitter::finish(bool chain) {
  if (chain) {
    int prev = -1;
    for (size_t i = 0; i < code_.size(); ++i) {
      Insn& in = code_[i];
      if (in.e == CTL) continue;
      if (prev >= 0 && code_[size_t(prev)].e != in.e) {
        code_[size_t(prev)].signal |= uint8_t(1u << in.e);
        in.wait |= uint8_t(1u << code_[size_t(prev)].e);
      }
      prev = int(i);
    }
  } else {
    schedule_deps();
  }
  std::string out = ".isa 1\n";
  for (const std::string& h : head_) out += h + "\n";
  for (const std::string& t : tensors_) out += t + "\n";
  for (size_t i = 0; i < code_.size(); ++i) {
    const Insn& in = code_[i];
    auto c = comments_.find(i);
    if (c != comments_.end()) out += c->second;
    out += "    " + in.text;
    if (in.wait) out += " wait=" + mask_text(in.wait);
    if (in.signal) out += " signal=" + mask_text(in.signal);
    out += "\n";
  }
  out += "    sys.halt\n";
  return out;
}

}  // namespace n3::comp
