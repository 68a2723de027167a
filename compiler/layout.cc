#include "compiler/layout.h"

#include <cstring>

#include "base/error.h"
#include "compiler/lower.h"
#include "golden/numerics/npu_ops.h"
#include "golden/weight_names.h"

namespace n3::comp {

namespace {

uint64_t align16(uint64_t x) { return (x + 15) & ~uint64_t(15); }

}  // namespace

Layout plan_layout(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int max_chunk) {
  require(f.weight_scale == num::WScale::PerRow,
          "compiler: only numerics.weight_scale = per_row is lowered (is " + std::string(num::wscale_name(f.weight_scale)) + ")");
  require(max_chunk >= 1, "compiler: max_chunk must be >= 1");
  Layout lay;
  lay.max_chunk = max_chunk;
  lay.l2_resident_base = hw.l2;
  uint64_t at = 0;
  auto place = [&](Placed p) {
    const uint64_t br = uint64_t(p.rows / p.blocks);
    p.block_stride = align16(p.row_bytes() * br);
    p.base = at;
    at += p.block_stride * uint64_t(p.blocks);
    if (p.int4) {
      p.scale_block_stride = align16(4 * br);
      p.scale_base = at;
      at += p.scale_block_stride * uint64_t(p.blocks);
    }
    return p;
  };
  for (const WeightSpec& s : weight_specs(cfg)) {
    Placed p;
    p.name = s.name;
    p.rows = s.shape.size() >= 2 ? s.shape[0] : 1;
    p.cols = s.shape.size() >= 2 ? s.shape[1] : (s.shape.empty() ? 1 : s.shape[0]);
    p.int4 = s.kind == WeightKind::Matrix;
    if (s.name == model_weight_names().per_layer_model_projection) p.blocks = cfg.layers;
    lay.tensors[s.name] = place(p);
  }
  // RoPE inverse-frequency rows, one per theta (constants the host would otherwise compute).
  for (double theta : {cfg.rope_local, cfg.rope_global}) {
    Placed p;
    p.name = rope_table_name(theta);
    p.rows = 1;
    p.cols = cfg.head_dim / 2;
    lay.consts[p.name] = place(p);
  }
  lay.weights_end = at;
  const uint64_t kvb = uint64_t(num::kv_elem_bytes(f.kv));
  lay.rings.resize(cfg.layers);
  for (int l = 0; l < cfg.layers; ++l) {
    if (!cfg.owns_kv(l)) continue;
    Ring& r = lay.rings[l];
    r.rows = cfg.is_global(l) ? hw.kv_cap : std::min<int64_t>(hw.kv_cap, cfg.sliding_window + max_chunk - 1);
    const uint64_t bytes = align16(uint64_t(r.rows) * cfg.kv_dim() * kvb);
    // INT8 rows carry one F32 scale per KV head (MEMCPY quantises each head's group and writes it).
    const uint64_t scales = f.kv == num::KvFmt::INT8 ? align16(uint64_t(r.rows) * cfg.kv_heads * 4) : 0;
    r.k = at;
    r.k_scale = scales ? at + bytes : 0;
    r.v = at + bytes + scales;
    r.v_scale = scales ? r.v + bytes : 0;
    at += 2 * (bytes + scales);
  }
  lay.input = at;
  lay.input_bytes = align16(16 + 8 * uint64_t(max_chunk) + 16);
  at += lay.input_bytes;
  lay.logits = at;
  lay.logits_bytes = align16(uint64_t(max_chunk) * cfg.vocab * 4);
  at += lay.logits_bytes;
  lay.spill = at;
  uint64_t spill = 0;
  for (int T : chunk_sizes(max_chunk)) spill = std::max(spill, spill_bytes_for(cfg, f, hw, T));
  lay.spill_bytes = align16(spill);
  at += lay.spill_bytes;
  lay.ddr_end = at;
  return lay;
}

void write_weights(const Layout& lay, const WeightSource& w, const ModelConfig& cfg,
                   const std::function<void(uint64_t, const void*, uint64_t)>& put) {
  for (const auto& [name, p] : lay.tensors) {
    if (p.int4) {
      const MatrixRef m = w.matrix(name);
      require(m.dtype == WDType::INT4 && m.group == m.cols && m.rows == p.rows && m.cols == p.cols,
              "compiler: " + name + " must be INT4 with one scale per row (convert or quantise on load)");
      require(uint64_t(m.row_bytes()) == p.row_bytes(), "compiler: " + name + ": unexpected INT4 row size");
      const int64_t br = p.rows / p.blocks;
      for (int64_t b = 0; b < p.blocks; ++b) {
        put(p.base + uint64_t(b) * p.block_stride, m.data + b * br * m.row_bytes(), p.row_bytes() * uint64_t(br));
        put(p.scale_base + uint64_t(b) * p.scale_block_stride, m.scales + b * br, 4 * uint64_t(br));
      }
    } else {
      // Float matrices and vectors are float32 [rows, cols].
      std::vector<float> v;
      if (p.rows > 1) {
        const MatrixRef m = w.matrix(name);
        v.resize(size_t(p.rows * p.cols));
        for (int64_t r = 0; r < p.rows; ++r) dequant_row(m, r, &v[size_t(r * p.cols)]);
      } else {
        v = w.vec(name);
      }
      require(int64_t(v.size()) == p.rows * p.cols, "compiler: " + name + " has an unexpected size");
      put(p.base, v.data(), v.size() * 4);
    }
  }
  for (const auto& [name, p] : lay.consts) {
    const double theta = name == rope_table_name(cfg.rope_local) ? cfg.rope_local : cfg.rope_global;
    const std::vector<float> f = num::rope_inv_freq(theta, cfg.head_dim);
    put(p.base, f.data(), f.size() * 4);
  }
}

std::vector<int32_t> input_words(const Layout& lay, int64_t pos0, int64_t row0, const std::vector<int32_t>& ids) {
  require(int64_t(ids.size()) <= lay.max_chunk, "compiler: more ids than the input region holds");
  std::vector<int32_t> in(size_t(4 + 2 * lay.max_chunk), 0);
  in[0] = int32_t(pos0);
  in[1] = int32_t(row0);
  for (size_t t = 0; t < ids.size(); ++t) {
    in[4 + t] = int32_t(pos0 + int64_t(t));
    in[size_t(4 + lay.max_chunk) + t] = ids[t];
  }
  return in;
}

}  // namespace n3::comp
