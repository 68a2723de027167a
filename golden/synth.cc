#include "golden/synth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "golden/n3w_file.h"
#include "base/rng.h"

namespace n3 {

namespace {

// Output row blocks of about this many bytes are generated at a time.
constexpr int64_t kBlockBytes = 16 << 20;
// Standard deviation of synth's q: sqrt(2 * (1^2 + ... + 7^2) / 16) = sqrt(17.5).
const double kQStd = std::sqrt(17.5);
constexpr float kAltupStd = 0.3f;

// One INT4 row: 4 random bits per element straight from the row's stream, the
// nibble 8 (q = -8) mapped to 0, so q is symmetric on [-7, 7] (P(0) = 2/16,
// others 1/16). A mean-free q matters: the fixture recipe's q uniform on
// [-8, 7] has mean -0.5, which gives every W x a common component along
// sum(x); through the layers it makes all positions' logits nearly one vector
// (cosine 0.97 on mid.yaml). Then per group a scale and one element forced to
// -8, so that max|w| / 8 recovers the scale and re-quantising is exact.
void synth_int4_row(const CounterRng& rr, int64_t cols, int64_t group, float base, uint8_t* packed, float* scales) {
  const int64_t rb = (cols + 1) / 2, words = (rb + 7) / 8;
  for (int64_t j = 0; j < words; ++j) {
    uint64_t v = rr.at(uint64_t(j));
    // Nibbles equal to 8 (q = -8) become 0: q in [-7, 7], symmetric, mean 0.
    const uint64_t hi = v & 0x8888888888888888ull, lo = v & 0x7777777777777777ull;
    v ^= hi & ~((lo + 0x7777777777777777ull) & 0x8888888888888888ull);
    const int64_t n = std::min<int64_t>(8, rb - 8 * j);
    std::memcpy(packed + 8 * j, &v, static_cast<size_t>(n));  // little-endian: byte k = bits 8k..8k+7
  }
  if (cols % 2) packed[rb - 1] &= 0x0f;  // padding nibble is 0
  for (int64_t g0 = 0, gi = 0; g0 < cols; g0 += group, ++gi) {
    const int64_t len = std::min(group, cols - g0);
    const uint64_t ctr = uint64_t(words) + 2 * uint64_t(gi);
    scales[gi] = base * (0.5f + rr.uniform(ctr));
    const int64_t i = g0 + int64_t(rr.at(ctr + 1) % uint64_t(len));
    const int sh = int(i & 1) * 4;
    packed[i >> 1] = static_cast<uint8_t>((packed[i >> 1] & ~(0xf << sh)) | (0x8 << sh));
  }
}

void synth_int4(const N3wTensor& t, const WeightSpec& s, const CounterRng& tk, size_t index, N3wWriter& w) {
  const int64_t rb = t.row_bytes(), gpr = t.groups_per_row();
  const float base = static_cast<float>(synth_base_scale(s));
  const int64_t block = std::max<int64_t>(1, std::min(t.rows(), kBlockBytes / rb));
  std::vector<uint8_t> packed(static_cast<size_t>(block * rb));
  std::vector<float> scales(static_cast<size_t>(block * gpr));
  for (int64_t r0 = 0; r0 < t.rows(); r0 += block) {
    const int64_t nb = std::min(block, t.rows() - r0);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < nb; ++r)
      synth_int4_row(tk.child(uint64_t(r0 + r)), t.cols(), t.group, base, packed.data() + r * rb,
                     scales.data() + r * gpr);
    w.append_int4(index, nb, packed.data(), scales.data());
  }
}

// AltUp coefficient matrices ~ N(0, 0.3^2); norm weights and scalars U(0.5, 1.5),
// except q_norm/k_norm, scaled by head_dim^-1/4: Gemma 3n has no 1/sqrt(d)
// attention scale, so with unit weights scores have std ~sqrt(d) (16 at d =
// 256), attention is nearly one-hot and the random model becomes chaotic (any
// rounding flips which key wins). With the scale, scores have std ~1 at every
// head dim, as in a trained model.
void synth_f32(const N3wTensor& t, bool qk_norm, const CounterRng& tk, size_t index, N3wWriter& w) {
  std::vector<float> v(static_cast<size_t>(numel(t.shape)));
  const float qk_scale = qk_norm ? float(1.0 / std::sqrt(std::sqrt(double(v.size())))) : 1.0f;
  for (size_t n = 0; n < v.size(); ++n)
    v[n] = t.kind == WeightKind::FloatMatrix ? kAltupStd * tk.normal(n) : (0.5f + tk.uniform(n)) * qk_scale;
  w.append_f32(index, t.rows(), v.data());
}

}  // namespace

double synth_base_scale(const WeightSpec& s) {
  const double cols = double(s.shape.back());
  return s.is_embedding ? 4.0 / std::sqrt(cols) / kQStd : 1.0 / std::sqrt(cols) / kQStd;
}

uint64_t synth_n3w(const ModelConfig& c, uint64_t seed, const std::string& path, const SynthOptions& opt) {
  N3wWriter w(path, c, opt.group);
  const std::vector<WeightSpec> specs = weight_specs(c);
  std::set<std::string> qk_norms;
  for (int l = 0; l < c.layers; ++l) {
    const LayerWeightNames n = layer_weight_names(l);
    qk_norms.insert({n.q_norm, n.k_norm});
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const N3wTensor& t = w.tensors()[i];
    // Keyed by name, so a tensor's values do not depend on the other tensors.
    const CounterRng tk{xxh64(t.name, seed)};
    if (t.dtype == WDType::INT4) synth_int4(t, specs[i], tk, i, w);
    else synth_f32(t, qk_norms.count(t.name) > 0, tk, i, w);
    if (opt.progress) opt.progress(w.bytes_written(), w.file_bytes());
  }
  w.finish();
  return w.file_bytes();
}

}  // namespace n3
