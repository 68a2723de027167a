#include "golden/decode_traffic.h"

#include <algorithm>
#include <cmath>

#include "golden/weight_names.h"

namespace n3 {

namespace {

// Scale bytes of one INT4 row of `cols` inputs: one f32 per row; per_group
// one f32 per weight_group inputs (a last partial group too); two_level
// block_scale_bits per group under one f32 per row (docs/numerics.md, Weights).
double row_scale_bytes(const num::Formats& f, double cols) {
  const double groups = std::ceil(cols / double(f.weight_group));
  switch (f.weight_scale) {
    case num::WScale::PerRow: return 4;
    case num::WScale::PerGroup: return 4 * groups;
    case num::WScale::TwoLevel: return 4 + std::ceil(groups * double(f.block_scale_bits) / 8);
  }
  return 4;
}

}  // namespace

DecodeTraffic decode_traffic(const ModelConfig& c, const num::Formats& f, int64_t context) {
  DecodeTraffic t;
  for (const WeightSpec& w : weight_specs(c)) {
    const double n = double(numel(w.shape));
    const double rows = w.shape.size() == 2 ? double(w.shape[0]) : 1.0;
    const double cols = w.shape.size() == 2 ? double(w.shape[1]) : n;
    if (w.kind == WeightKind::Vector) {
      t.weight_bytes += n * 4;
    } else if (w.kind == WeightKind::FloatMatrix) {
      t.weight_bytes += n * 4;
      t.macs += n;
    } else if (w.is_embedding) {
      t.weight_bytes += cols / 2 + row_scale_bytes(f, cols);  // the looked-up row
      if (rows == c.vocab && cols == c.hidden) {  // tied LM head: every row
        t.weight_bytes += n / 2 + rows * row_scale_bytes(f, cols);
        t.macs += n;
      }
    } else {
      t.weight_bytes += n / 2 + rows * row_scale_bytes(f, cols);
      t.macs += n;
    }
  }
  const double kv_elem_bytes = num::kv_elem_bytes(f.kv);
  for (int l = 0; l < c.layers; ++l) {
    const int64_t window = c.is_global(l) ? context : std::min<int64_t>(context, c.sliding_window);
    t.kv_bytes += 2.0 * double(window) * double(c.kv_dim()) * kv_elem_bytes;  // K and V
    t.macs += 2.0 * double(window) * double(c.q_dim());                      // q.k and p.v
  }
  return t;
}

}  // namespace n3
