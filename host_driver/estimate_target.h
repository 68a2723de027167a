// `n3 estimate --sweep ... --target-tok-s X [--target-phase P]`: among a
// sweep's points (its CSV), the cheapest under the hardware file's cost
// section (the `cost` column, HwConfig::cost_parts) that reaches X tok/s in
// phase P, with its figures and what binds it; if none does, the closest
// (the highest tok/s) and what binds that. Read from the CSV alone, so a
// merged sweep answers as the unsharded one, and a test can check the
// choice against the rows. docs/estimating.md, "--target-tok-s".
#pragma once
#include <string>
#include <vector>

namespace n3::cli {

// "20" -> 20; throws one line unless a positive finite number.
double parse_target_tok_s(const std::string& text);
// P: "decode" (the first --context), "decode@N" (N one of the contexts) or
// "prefill"; the CSV columns it reads: tok/s, roofline and bound.
struct TargetColumns {
  std::string tok_s, roofline, bound, label;
};
// Throws one line when `phase` is malformed or names a context not in `contexts`
// (prefill needs prompt > 0).
TargetColumns target_columns(const std::string& phase, const std::vector<int64_t>& contexts, bool prefill);
// The answer's text (several lines). Throws one line when the CSV lacks
// the phase's columns or a cost.
std::string target_answer(const std::string& csv, double tok_s, const std::string& phase);

}  // namespace n3::cli
