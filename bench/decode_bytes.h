// The roofline arithmetic shared by golden_decode_bench, cuda_decode_bench
// and cuda_megakernel_probe, so that their percentages compare.
#pragma once

#include <cstdint>
#include <string>

#include "golden/model_config.h"
#include "golden/weight_names.h"

namespace n3::bench {

// Bytes one decode token reads from the weights: every matrix it multiplies
// (INT4 + per-row scales; the tied embedding once more as the LM head), one
// row of each embedding table, float32 vectors and matrices. K/V weights of
// shared layers do not exist.
inline double decode_bytes_per_token(const ModelConfig& c) {
  double b = 0;
  for (const auto& s : weight_specs(c)) {
    const int64_t rows = s.shape[0], cols = s.shape.size() > 1 ? s.shape[1] : 1;
    if (s.kind == WeightKind::Vector)
      b += 4.0 * rows;
    else if (s.kind == WeightKind::FloatMatrix)
      b += 4.0 * rows * cols;
    else if (s.is_embedding)
      b += (cols + 1) / 2 + 4;  // one row looked up
    else
      b += rows * ((cols + 1) / 2 + 4.0);
  }
  b += c.vocab * ((c.hidden + 1) / 2 + 4.0);  // tied LM head: the whole embedding
  return b;
}

// Peak HBM bandwidth from the data sheets, by device name (bytes/s); 0 if unknown.
inline double spec_hbm_bandwidth(const std::string& name) {
  if (name.find("H200") != std::string::npos) return 4.8e12;
  if (name.find("H100") != std::string::npos) return name.find("PCIe") != std::string::npos ? 2.0e12 : 3.35e12;
  return 0;
}

}  // namespace n3::bench
