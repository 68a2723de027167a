#include "compiler/residency.h"

#include <algorithm>

#include "base/error.h"
#include "golden/weight_names.h"
#include "isa/asm.h"

namespace n3::comp {

namespace {

uint64_t align16(uint64_t x) { return (x + 15) & ~uint64_t(15); }

// Embedding tables are gathered row by row and, as the LM head, are larger
// than any L2: never candidates.
bool candidate(const std::string& name) {
  const ModelWeightNames& n = model_weight_names();
  return name != n.embed && name != n.embed_per_layer;
}

}  // namespace

void plan_residency(Layout& lay, const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw,
                    const ResidencyOptions& opt) {
  lay.resident.clear();
  lay.l2_resident_base = hw.l2;
  // Every program of the set shares the resident region: a smaller chunk that
  // fits L2 unspilled may need more L2 than the largest one, spilled.
  uint64_t act = 0;
  for (int T : chunk_sizes(lay.max_chunk)) act = std::max(act, l2_bytes_for(cfg, f, hw, T, true));
  uint64_t budget = act < hw.l2 ? (hw.l2 - act) & ~uint64_t(15) : 0;
  if (opt.max_bytes >= 0) budget = std::min<uint64_t>(budget, uint64_t(opt.max_bytes) & ~uint64_t(15));
  if (budget == 0) return;
  CompileOptions dec;
  dec.tokens = 1;
  const std::map<std::string, int> uses = compile_forward(cfg, lay, f, hw, dec).weight_uses;
  std::vector<Resident> cand;
  for (const auto& [name, n] : uses) {
    if (!candidate(name)) continue;
    const Placed& p = lay.at(name);
    Resident r;
    r.name = name;
    r.uses = n;
    r.data_bytes = p.block_stride * uint64_t(p.blocks);
    r.scale_bytes = p.int4 ? p.scale_block_stride * uint64_t(p.blocks) : 0;
    const double bytes = double(r.data_bytes + r.scale_bytes);
    r.score = double(n) * (double(hw.ddr_latency_bytes) + bytes) / bytes;
    cand.push_back(r);
  }
  std::sort(cand.begin(), cand.end(), [](const Resident& a, const Resident& b) {
    const uint64_t sa = a.data_bytes + a.scale_bytes, sb = b.data_bytes + b.scale_bytes;
    if (a.score != b.score) return a.score > b.score;
    if (sa != sb) return sa < sb;
    return a.name < b.name;
  });
  uint64_t used = 0;
  for (Resident& r : cand) {
    const uint64_t need = align16(r.data_bytes) + align16(r.scale_bytes);
    if (used + need > budget) continue;  // a smaller one further down may still fit
    used += need;
    lay.resident.push_back(r);
  }
  // Placed from the top of L2 down, in priority order.
  uint64_t at = hw.l2;
  for (Resident& r : lay.resident) {
    at -= align16(r.data_bytes);
    r.l2_base = at;
    if (r.scale_bytes) {
      at -= align16(r.scale_bytes);
      r.l2_scale_base = at;
    }
  }
  lay.l2_resident_base = at;
}

Compiled compile_preload(const Layout& lay, const HwLimits& hw) {
  Emitter e;
  e.region("weights space=ddr role=weights base=0x0 size=0x" + [&] {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(std::max<uint64_t>(lay.weights_end, 16)));
    return std::string(b);
  }());
  for (const Resident& r : lay.resident) {
    e.reserve_l2(r.l2_base, r.data_bytes);
    if (r.scale_bytes) e.reserve_l2(r.l2_scale_base, r.scale_bytes);
  }
  e.comment("preload: copy the resident weights from DDR into L2 once");
  for (const Resident& r : lay.resident) {
    const Placed& p = lay.at(r.name);
    const int64_t br = p.rows / p.blocks;
    for (int64_t k = 0; k < p.blocks; ++k) {  // one copy per 16-byte aligned block
      Buf src;
      src.space = "ddr";
      src.dtype = p.int4 ? "int4" : "f32";
      src.rows = br;
      src.cols = p.cols;
      src.stride = int64_t(p.row_bytes());
      src.base = p.base + uint64_t(k) * p.block_stride;
      src.scale_base = p.scale_base + uint64_t(k) * p.scale_block_stride;
      src.name = r.name;  // listings and traces name the weight each copy moves
      Buf dst = src;
      dst.space = "l2";
      dst.name = "resident." + r.name;
      dst.base = r.l2_base + uint64_t(k) * p.block_stride;
      dst.scale_base = r.l2_scale_base + uint64_t(k) * p.scale_block_stride;
      e.op(Emitter::DMA, "memcpy dst=" + e.d(dst) + " src=" + e.d(src));
    }
  }
  Compiled c;
  c.l2_allocs = e.l2_allocs();
  c.instructions = e.size() + 1;
  c.text = e.finish(false);
  c.accesses = e.accesses();
  c.program = isa::assemble(c.text, "preload.s");
  const std::vector<std::string> bad = verify_compiled(c, hw);  // c.resident empty: the preload writes them
  require(bad.empty(), "compiler: the preload program fails verification: " + (bad.empty() ? "" : bad[0]));
  return c;
}

uint64_t resident_bytes(const Layout& lay) {
  uint64_t n = 0;
  for (const Resident& r : lay.resident) n += r.data_bytes + r.scale_bytes;
  return n;
}

}  // namespace n3::comp
