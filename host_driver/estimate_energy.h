// Energy per token, the design point's cost and the measured accuracy of its
// numerics formats: what `n3 estimate` sets beside the speed
// (docs/estimating.md, "Energy per token", "Scenarios").
// Energy multiplies the timing model's counts of a phase (DDR bytes, L2
// bytes, MACs of both engines, SFU element passes) and its simulated time
// (static power) by the hardware file's `energy:` section; without that
// section the estimate says energy is absent.
#pragma once
#include <string>
#include <vector>

#include "golden/hw_config.h"

namespace n3::cli {

// Joules per token by where they go.
struct Energy {
  double ddr = 0, l2 = 0, mac = 0, sfu = 0, statik = 0;
  double total() const { return ddr + l2 + mac + sfu + statik; }
};
// The phase's counts (the whole phase; `tokens` divides them) under the
// hardware file's energies. hw.has_energy() must hold.
Energy energy_per_token(const HwConfig& hw, double ddr_bytes, double l2_bytes, double macs, double sfu_passes,
                        double seconds, double tokens);

// One measured accuracy of a set of numerics formats, from
// configs/numerics/accuracy.yaml (copied from bench/accuracy_report's
// printed tables in docs/numerics.md).
struct AccuracyFigure {
  std::string on;                   // what was compared, e.g. "gemma3n-dev vs HF transformers"
  double logits_cosine = 0, worst_layer_cosine = 0;
  double default_logits_cosine = -1;  // the same comparison with the default formats (-1: not measured)
  std::string source;
};
// The measurements of exactly these formats (empty: not measured). Throws
// one line naming the file and line on a malformed accuracy file.
std::vector<AccuracyFigure> measured_accuracy(const num::Formats& f);
// "gemma3n-dev vs HF: logits cosine 0.999976 (default 0.999971); ..." or "not measured".
std::string accuracy_text(const std::vector<AccuracyFigure>& a);

}  // namespace n3::cli
