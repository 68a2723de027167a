// The host's sampling loop state: repetition penalty, greedy or temperature
// sampling with top-k / top-p, a seeded RNG, stop ids and max new tokens.
// Definitions (with formulas) in docs/sampling.md. Every stage is off by default,
// so a default SamplerConfig is greedy.
//
// Determinism: the RNG is std::mt19937_64 (its output sequence is fixed by
// the C++ standard) and uniforms are made from its bits here, never through
// std::uniform_real_distribution or std::discrete_distribution, whose
// algorithms are implementation-defined. Every sort orders by value, then by
// id, so ties never depend on the library's sort. The same seed therefore
// gives the same ids on every platform.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace n3::host {

struct SamplerConfig {
  float temperature = 0;          // 0: greedy (argmax, ties to the lowest id)
  int top_k = 0;                  // 0: off; else keep the k largest logits
  float top_p = 1;                // 1: off; else nucleus of mass p, 0 < p <= 1
  float repetition_penalty = 1;   // 1: off; rho > 0 on ids seen so far
  uint64_t seed = 0;              // mt19937_64 seed
  std::vector<int> stop_ids;      // generation ends after sampling one of these
  int max_new = 0;                // generation ends after this many ids
};

// The pccx reference driver's settings (seed section 6: rho 1.15, top-p 0.9;
// its E4B chat driver samples at temperature 0.65). Stop ids and max_new are
// left to the caller: the stop ids come from the tokenizer.
SamplerConfig pccx_preset();

// Throws n3::Error naming the option (as `n3 run` spells it) when a field is
// out of range: temperature >= 0, top_k >= 0, 0 < top_p <= 1,
// repetition_penalty > 0, max_new >= 0, all finite.
void validate(const SamplerConfig& cfg);

// The stages, exposed for tests and for callers that want one of them alone.
// Work vectors are double; index = token id.
namespace sampling {

// z_i *= rho if z_i < 0, z_i /= rho if z_i >= 0, once for each id in `ids`
// (which must be distinct and inside z).
void repetition_penalty(std::vector<double>& z, const std::vector<int>& ids, double rho);
// Index of the largest value; ties go to the lowest id.
int argmax(const std::vector<double>& z);
// The same over n > 0 finite floats (the logits as a backend returns them),
// with 16 independent running maxima, and from 65 536 values on in chunks
// over up to 8 OpenMP threads: the greedy path of a 262 400-id vocabulary
// is then a fraction of a millisecond less per token.
int argmax(const float* v, int n);
// Whether all n values are finite (one pass, chunked over threads as argmax).
bool all_finite(const float* v, int n);
// Keeps the k largest values (order: value descending, then id ascending, so
// ties at the boundary keep the lower ids); the rest become -inf. k <= 0 or
// k >= size: no change.
void top_k(std::vector<double>& z, int k);
// exp(z_i - max z) / sum_j exp(z_j - max z); -inf entries get probability 0.
std::vector<double> softmax(const std::vector<double>& z);
// Orders ids by probability descending, then id ascending; keeps those whose
// mass before them (the seed's cumsum_i - p_i) is < p; zeroes the rest and
// renormalises the kept ones to sum 1. p >= 1: no change.
void top_p(std::vector<double>& probs, double p);
// Inverse CDF over ids in ascending order: the first id whose cumulative
// probability exceeds u * sum(probs). probs need not be normalised; ids of
// probability 0 are never drawn. u in [0, 1).
int draw(const std::vector<double>& probs, double u);
// A double in [0, 1) from the top 53 bits of one 64-bit draw.
double uniform01(std::mt19937_64& rng);

}  // namespace sampling

class Sampler {
 public:
  // Validates cfg. The prompt ids count as seen for the repetition penalty.
  Sampler(SamplerConfig cfg, std::vector<int> prompt_ids);

  // Picks the next id from logits[0 .. V) (the softcapped logits of the last
  // position), records it and returns it. Throws n3::Error when a logit is
  // not finite, when a seen id is outside [0, V), or when called after done().
  int next(const float* logits, int V);

  // True once a stop id was returned or max_new ids were.
  bool done() const;
  // True when generation ended on a stop id (the last id of output()).
  bool stopped() const { return stopped_; }
  // The ids returned so far, the stop id included.
  const std::vector<int>& output() const { return output_; }
  const SamplerConfig& config() const { return cfg_; }

 private:
  void see(int id);

  SamplerConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<int> seen_;            // distinct ids of prompt + output, first-seen order
  std::vector<uint8_t> seen_mask_;   // seen_mask_[id] = 1 when id is in seen_
  std::vector<int> output_;
  bool stopped_ = false;
};

}  // namespace n3::host
