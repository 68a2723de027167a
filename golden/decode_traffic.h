// The bytes one decode token streams from DDR and the MACs it does, from the
// model config and the numerics formats alone: the analytical figure of
// `n3 estimate`, the benches' roofline (bench/) and docs/timing.md. One
// function, so their percentages compare; the timing model (sim/systemc/)
// takes its results as numbers.
#pragma once
#include <cstdint>

#include "golden/model_config.h"
#include "golden/numerics/formats_config.h"

namespace n3 {

// Per decode token: every INT4 matrix once (packed nibbles plus its scales:
// one F32 per row, or per weight_group inputs, as numerics.weight_scale
// says); the tied LM head, i.e. the whole embedding; float matrices and
// vectors; one embedding row and one per-layer-input row (weight_bytes);
// K and V of every layer's attention window at `context` in the KV format
// (kv_bytes); the GEMV MACs of the matrices and of q.k and p.v (macs).
// The roofline tok/s is HwConfig::ddr_roofline_bytes_per_s() / bytes().
struct DecodeTraffic {
  double weight_bytes = 0, kv_bytes = 0, macs = 0;
  double bytes() const { return weight_bytes + kv_bytes; }
};
DecodeTraffic decode_traffic(const ModelConfig& c, const num::Formats& f, int64_t context);

}  // namespace n3
