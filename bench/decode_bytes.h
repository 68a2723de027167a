// The roofline figures shared by golden_decode_bench, cuda_decode_bench and
// cuda_megakernel_probe, so that their percentages compare.
#pragma once

#include <cstdint>
#include <string>

#include "golden/decode_traffic.h"
#include "golden/model_config.h"

namespace n3::bench {

// Bytes one decode token reads from the weights (K/V excluded): the
// estimate's figure (golden/decode_traffic.h), which neither the formats nor
// the context change.
inline double decode_weight_bytes(const ModelConfig& c) { return decode_traffic(c, num::Formats{}, 1).weight_bytes; }

// Peak HBM bandwidth from the data sheets, by device name (bytes/s); 0 if unknown.
inline double spec_hbm_bandwidth(const std::string& name) {
  if (name.find("H200") != std::string::npos) return 4.8e12;
  if (name.find("H100") != std::string::npos) return name.find("PCIe") != std::string::npos ? 2.0e12 : 3.35e12;
  return 0;
}

}  // namespace n3::bench
