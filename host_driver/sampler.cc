#include "host_driver/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include <omp.h>

#include "base/error.h"

namespace n3::host {

SamplerConfig pccx_preset() {
  SamplerConfig c;
  // Seed section 6 gives rho and p; the temperature is the one of the pccx
  // E4B chat driver (pccx-FPGA-NPU-LLM-kv260, E4B_INT4_MODEL_INFER/main.py:
  // TEMPERATURE 0.65, TOP_P 0.9, REP_PENALTY 1.15), which samples with
  // temperature and top-p after the penalty, as the seed's order does.
  c.temperature = 0.65f;
  c.top_p = 0.9f;
  c.repetition_penalty = 1.15f;
  return c;
}

void validate(const SamplerConfig& c) {
  auto bad = [](const std::string& opt, const std::string& rule, double v) {
    throw Error("sampler: " + opt + " must be " + rule + ", got " + std::to_string(v));
  };
  if (!std::isfinite(c.temperature) || c.temperature < 0) bad("--temperature", ">= 0", c.temperature);
  if (c.top_k < 0) bad("--top-k", ">= 0", c.top_k);
  if (!(c.top_p > 0 && c.top_p <= 1)) bad("--top-p", "in (0, 1]", c.top_p);
  if (!std::isfinite(c.repetition_penalty) || !(c.repetition_penalty > 0))
    bad("--repetition-penalty", "> 0", c.repetition_penalty);
  if (c.max_new < 0) bad("--max-new", ">= 0", c.max_new);
}

namespace sampling {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
}  // namespace

void repetition_penalty(std::vector<double>& z, const std::vector<int>& ids, double rho) {
  for (int id : ids) {
    double& v = z[size_t(id)];
    v = v < 0 ? v * rho : v / rho;
  }
}

int argmax(const std::vector<double>& z) {
  int best = 0;
  for (size_t i = 1; i < z.size(); ++i)
    if (z[i] > z[size_t(best)]) best = int(i);  // strict: ties keep the lower id
  return best;
}

namespace {
int argmax_serial(const float* v, int n) {
  constexpr int L = 16;
  if (n < 2 * L) {
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (v[i] > v[best]) best = i;
    return best;
  }
  // Lane k sees ids k, k + L, ... in order and keeps the first of its maxima;
  // the lowest id among the lanes holding the overall maximum is then the
  // first maximum of all.
  float m[L];
  int ix[L];
  for (int k = 0; k < L; ++k) m[k] = v[k], ix[k] = k;
  int i = L;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k)
      if (v[i + k] > m[k]) m[k] = v[i + k], ix[k] = i + k;
  int best = ix[0];
  float mb = m[0];
  for (int k = 1; k < L; ++k)
    if (m[k] > mb || (m[k] == mb && ix[k] < best)) mb = m[k], best = ix[k];
  for (; i < n; ++i)
    if (v[i] > mb) mb = v[i], best = i;
  return best;
}

// Long vocabularies (262 400 logits) are split over the OpenMP threads: the
// scan of 1 MB just copied from the device is a fifth of a fast backend's
// time per token. Below this the threads' start costs more than they save.
constexpr int kParallelLogits = 1 << 16;

int scan_threads(int n) { return n >= kParallelLogits ? std::min(omp_get_max_threads(), 8) : 1; }
}  // namespace

int argmax(const float* v, int n) {
  const int nt = scan_threads(n);
  if (nt <= 1) return argmax_serial(v, n);
  // Chunk c's first maximum; the chunks are merged in id order, so among
  // equal maxima the lowest id wins, as in one scan.
  int best[8];
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int c = 0; c < nt; ++c) {
    const int lo = int(int64_t(n) * c / nt), hi = int(int64_t(n) * (c + 1) / nt);
    best[c] = lo + argmax_serial(v + lo, hi - lo);
  }
  int b = best[0];
  for (int c = 1; c < nt; ++c)
    if (v[best[c]] > v[b]) b = best[c];
  return b;
}

bool all_finite(const float* v, int n) {
  // Branch-free (it vectorises); split over threads like argmax.
  const int nt = scan_threads(n);
  int bad = 0;
#pragma omp parallel for if (nt > 1) num_threads(nt) reduction(| : bad) schedule(static)
  for (int i = 0; i < n; ++i) bad |= !(std::fabs(v[i]) <= std::numeric_limits<float>::max());
  return !bad;
}

void top_k(std::vector<double>& z, int k) {
  if (k <= 0 || size_t(k) >= z.size()) return;
  std::vector<int> idx(z.size());
  std::iota(idx.begin(), idx.end(), 0);
  // A strict total order (value desc, id asc): the first k are unique,
  // whatever nth_element's algorithm.
  auto before = [&](int a, int b) { return z[size_t(a)] != z[size_t(b)] ? z[size_t(a)] > z[size_t(b)] : a < b; };
  std::nth_element(idx.begin(), idx.begin() + k, idx.end(), before);
  for (size_t i = size_t(k); i < idx.size(); ++i) z[size_t(idx[i])] = kNegInf;
}

std::vector<double> softmax(const std::vector<double>& z) {
  double m = *std::max_element(z.begin(), z.end());
  std::vector<double> p(z.size());
  double sum = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    p[i] = std::exp(z[i] - m);  // exp(-inf) = 0
    sum += p[i];
  }
  for (double& v : p) v /= sum;
  return p;
}

void top_p(std::vector<double>& probs, double p) {
  if (p >= 1) return;
  std::vector<int> idx;
  for (size_t i = 0; i < probs.size(); ++i)
    if (probs[i] > 0) idx.push_back(int(i));
  auto order = [&](int a, int b) {
    return probs[size_t(a)] != probs[size_t(b)] ? probs[size_t(a)] > probs[size_t(b)] : a < b;
  };
  // `before` is the seed's cumsum_i - p_i, summed directly so no rounding of
  // the subtraction moves an id across the boundary. Only the sorted prefix
  // the sum reaches matters: the order is strict and total, so sorting the
  // first m (m growing until the sum reaches p inside them) gives the same
  // prefix, the same sum and the same kept set as sorting all 262 400 ids.
  // Each round selects the next ids after the prefix already in place and
  // sorts only those (a flat distribution, whose nucleus is most of the
  // vocabulary, costs a few selections more than one full sort).
  double before = 0;
  size_t n = 0;
  for (size_t done = 0, m = std::min<size_t>(idx.size(), 1024);; done = m, m = std::min(idx.size(), m * 8)) {
    const auto from = idx.begin() + std::ptrdiff_t(done), to = idx.begin() + std::ptrdiff_t(m);
    if (m < idx.size()) std::nth_element(from, to, idx.end(), order);  // the next m - done ids, unordered
    std::sort(from, to, order);
    before = 0;
    for (n = 0; n < m && before < p; ++n) before += probs[size_t(idx[n])];
    if (before >= p || m == idx.size()) break;
  }
  for (size_t i = n; i < idx.size(); ++i) probs[size_t(idx[i])] = 0;
  for (size_t i = 0; i < n; ++i) probs[size_t(idx[i])] /= before;  // `before` is now the kept mass
}

int draw(const std::vector<double>& probs, double u) {
  double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  double target = u * total, cum = 0;
  int last = -1;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    cum += probs[i];
    last = int(i);
    if (cum > target) return last;
  }
  return last;  // only when rounding left cum <= target: the last possible id
}

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace sampling

Sampler::Sampler(SamplerConfig cfg, std::vector<int> prompt_ids) : cfg_(std::move(cfg)), rng_(cfg_.seed) {
  validate(cfg_);
  for (int id : prompt_ids) {
    require(id >= 0, "sampler: prompt id " + std::to_string(id) + " is negative");
    see(id);
  }
}

void Sampler::see(int id) {
  if (size_t(id) >= seen_mask_.size()) seen_mask_.resize(size_t(id) + 1, 0);
  if (!seen_mask_[size_t(id)]) {
    seen_mask_[size_t(id)] = 1;
    seen_.push_back(id);
  }
}

bool Sampler::done() const { return stopped_ || int(output_.size()) >= cfg_.max_new; }

int Sampler::next(const float* logits, int V) {
  require(!done(), "sampler: next() called after generation ended");
  require(V > 0, "sampler: empty logits");
  // The message only on failure: built eagerly for each of 262 400 logits
  // it cost tens of milliseconds a token.
  if (!sampling::all_finite(logits, V))
    for (int i = 0; i < V; ++i)
      if (!std::isfinite(logits[i]))
        require(false, "sampler: logit of id " + std::to_string(i) + " is " + std::to_string(logits[i]));
  if (!seen_.empty() && seen_mask_.size() > size_t(V))
    for (int id : seen_)
      require(id < V, "sampler: id " + std::to_string(id) + " is outside the vocabulary of " +
                          std::to_string(V) + " logits");

  int id;
  if (cfg_.temperature == 0 && cfg_.repetition_penalty == 1) {
    id = sampling::argmax(logits, V);  // float to double keeps the order: the same id, no copy
  } else if (cfg_.temperature == 0) {
    std::vector<double> z(logits, logits + V);
    sampling::repetition_penalty(z, seen_, cfg_.repetition_penalty);
    id = sampling::argmax(z);
  } else {
    std::vector<double> z(logits, logits + V);
    if (cfg_.repetition_penalty != 1) sampling::repetition_penalty(z, seen_, cfg_.repetition_penalty);
    // No overflow: |logit| < 2^128 and rho, T are floats >= 2^-149, so
    // |z| * rho / T stays far inside double's range.
    const double t = cfg_.temperature;
    for (double& v : z) v /= t;
    sampling::top_k(z, cfg_.top_k);
    std::vector<double> p = sampling::softmax(z);
    sampling::top_p(p, cfg_.top_p);
    id = sampling::draw(p, sampling::uniform01(rng_));
  }

  output_.push_back(id);
  see(id);
  stopped_ = std::find(cfg_.stop_ids.begin(), cfg_.stop_ids.end(), id) != cfg_.stop_ids.end();
  return id;
}

}  // namespace n3::host
