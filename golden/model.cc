#include "golden/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "golden/weight_names.h"

namespace n3 {

// Every weight of one decoder layer, resolved once.
struct GoldenModel::LayerW : LayerTensors<MatrixRef, std::vector<float>> {};

namespace {

// Packs S stream tensors [T, D] into one [S, T, D] buffer for a recorder.
void record_streams(Recorder* rec, Phase ph, Op op, int layer, const std::vector<Tensor>& h) {
  if (!rec || !rec->wants(op)) return;
  const int64_t S = h.size(), TD = h[0].size();
  std::vector<float> buf(static_cast<size_t>(S * TD));
  for (int64_t s = 0; s < S; ++s) std::memcpy(&buf[s * TD], h[s].ptr(), TD * 4);
  rec->record(ph, op, layer, {S, h[0].shape[0], h[0].shape[1]}, buf.data());
}

void record(Recorder* rec, Phase ph, Op op, int layer, const Shape& shape, const float* data) {
  if (rec && rec->wants(op)) rec->record(ph, op, layer, shape, data);
}

}  // namespace

GoldenModel::GoldenModel(std::shared_ptr<const WeightSource> weights, std::unique_ptr<Kernels> kernels)
    : w_(std::move(weights)), k_(std::move(kernels)), cfg_(w_->config()) {
  const WeightSource& w = *w_;
  const ModelWeightNames& g = model_weight_names();
  plp_norm_ = w.vec(g.per_layer_projection_norm);
  final_norm_ = w.vec(g.final_norm);
  auto matrix = [&](const std::string& n) { return w.matrix(n); };
  auto vec = [&](const std::string& n) { return w.vec(n); };
  for (int l = 0; l < cfg_.layers; ++l)
    layers_.push_back({load_layer<MatrixRef, std::vector<float>>(cfg_, l, matrix, vec)});
}

GoldenModel::~GoldenModel() = default;

void Sequence::evict(int64_t sinks, int64_t recent, int64_t kv_dim) {
  const int64_t n = cached();
  if (sinks + recent >= n) return;
  positions.erase(positions.begin() + sinks, positions.begin() + (n - recent));
  for (auto& layer : k)
    if (!layer.empty()) layer.trim(sinks, recent, kv_dim);
  for (auto& layer : v)
    if (!layer.empty()) layer.trim(sinks, recent, kv_dim);
}

Sequence GoldenModel::new_sequence() const {
  Sequence s;
  s.k.resize(cfg_.layers);
  s.v.resize(cfg_.layers);
  return s;
}

// x0 = E[id] * sqrt(D)
void GoldenModel::embed(const std::vector<int32_t>& ids, Tensor& x0) const {
  const MatrixRef E = w_->matrix(model_weight_names().embed);
  const float scale = std::sqrt(float(cfg_.hidden));
  for (size_t t = 0; t < ids.size(); ++t) {
    dequant_row(E, ids[t], x0.row(t));
    for (int i = 0; i < cfg_.hidden; ++i) x0.row(t)[i] *= scale;
  }
  k_->store(x0.ptr(), x0.size());
}

// pli = (RMSNorm((x0 W_plp^T) * D^-0.5, w_plpn) + E_pl[id] * sqrt(P)) / sqrt(2), [T, L, P]
void GoldenModel::per_layer_inputs(const std::vector<int32_t>& ids, const Tensor& x0, Tensor& pli) const {
  const int64_t T = ids.size(), LP = int64_t(cfg_.layers) * cfg_.pl_dim;
  k_->linear(w_->matrix(model_weight_names().per_layer_model_projection), x0.ptr(), T, pli.ptr());
  const float proj_scale = 1.0f / std::sqrt(float(cfg_.hidden));
  for (float& v : pli.data) v *= proj_scale;
  k_->store(pli.ptr(), pli.size());
  k_->rmsnorm(pli.ptr(), plp_norm_.data(), T * cfg_.layers, cfg_.pl_dim, cfg_.rms_eps, pli.ptr());
  const MatrixRef Epl = w_->matrix(model_weight_names().embed_per_layer);
  const float ple_scale = std::sqrt(float(cfg_.pl_dim)), mix = 1.0f / std::sqrt(2.0f);
  std::vector<float> ple(static_cast<size_t>(LP));
  for (int64_t t = 0; t < T; ++t) {
    dequant_row(Epl, ids[t] < cfg_.vocab_pl ? ids[t] : 0, ple.data());  // HF: ids past the table use row 0
    float* r = pli.row(t);
    for (int64_t i = 0; i < LP; ++i) r[i] = (r[i] + ple[i] * ple_scale) * mix;
  }
  k_->store(pli.ptr(), pli.size());
}

// h0 = x0; h_k = (x0 W_ap[k-1]^T) rescaled to rms(x0).
void GoldenModel::altup_project(const Tensor& x0, std::vector<Tensor>& h) const {
  const int64_t T = x0.shape[0], D = cfg_.hidden;
  // Every stream is held in the stream format (exact when it is at least as wide as act_format).
  h[0] = x0;
  k_->store_stream(h[0].ptr(), h[0].size());
  for (int s = 1; s < cfg_.altup_streams; ++s) {
    h[s] = Tensor({T, D});
    k_->linear(w_->matrix(model_weight_names().altup_projection(s)), x0.ptr(), T, h[s].ptr());
    for (int64_t t = 0; t < T; ++t) k_->match_magnitude(h[s].row(t), D, k_->rms(x0.row(t), D), 1e-5f);
    k_->store_stream(h[s].ptr(), h[s].size());
  }
}

// m = tanh((RMSNorm(x, w_rn) / D) W_router^T), [T, S]
void GoldenModel::router(const LayerW& w, const float* x, int64_t T, float* m) const {
  const int64_t D = cfg_.hidden;
  std::vector<float> xn(static_cast<size_t>(T * D));
  k_->rmsnorm(x, w.router_norm.data(), T, D, cfg_.rms_eps, xn.data());
  const float inv_d = 1.0f / float(D);
  for (float& v : xn) v *= inv_d;
  k_->store(xn.data(), xn.size());
  k_->linear(w.router, xn.data(), T, m);
  k_->tanh_inplace(m, T * cfg_.altup_streams);
}

// pred[p] = h[p] + sum_q c[S p + q] h[q], c = m W_pred^T.
void GoldenModel::predict(const LayerW& w, const std::vector<Tensor>& h, std::vector<Tensor>& pred,
                          float* m) const {
  const int64_t S = cfg_.altup_streams, T = h[0].shape[0], D = cfg_.hidden;
  router(w, h[0].ptr(), T, m);
  std::vector<float> c(static_cast<size_t>(T * S * S));
  k_->linear(w.pred, m, T, c.data());
  for (int64_t p = 0; p < S; ++p) {
    pred[p] = h[p];
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < D; ++i) {
        float acc = 0;  // HF: a [D, S] x [S, S] matmul per token, then += h
        for (int64_t q = 0; q < S; ++q) acc += c[t * S * S + p * S + q] * h[q].row(t)[i];
        pred[p].row(t)[i] += acc;
      }
    k_->store_stream(pred[p].ptr(), pred[p].size());
  }
}

// lo = an + RMSNorm((an W_ll^T) W_lr^T, w_laurel)
void GoldenModel::laurel(const LayerW& w, const Tensor& an, Tensor& lo) const {
  const int64_t T = an.shape[0], D = cfg_.hidden;
  std::vector<float> mid(static_cast<size_t>(T * cfg_.laurel_rank));
  k_->linear(w.ll, an.ptr(), T, mid.data());
  k_->linear(w.lr, mid.data(), T, lo.ptr());
  k_->rmsnorm(lo.ptr(), w.laurel_norm.data(), T, D, cfg_.rms_eps, lo.ptr());
  for (int64_t i = 0; i < T * D; ++i) lo.data[i] += an.data[i];
  k_->store(lo.ptr(), lo.size());
}

void GoldenModel::attention(int l, const LayerW& w, const Tensor& an, Sequence& seq, Phase ph, Recorder* rec,
                            Tensor& out) const {
  const int64_t T = an.shape[0], H = cfg_.q_heads, KVH = cfg_.kv_heads, hd = cfg_.head_dim;
  const int64_t KVD = cfg_.kv_dim(), p0 = seq.pos;
  const double theta = cfg_.rope_theta(l);
  Tensor q({T, H, hd});
  k_->linear(w.q, an.ptr(), T, q.ptr());
  k_->rmsnorm(q.ptr(), w.q_norm.data(), T * H, hd, cfg_.rms_eps, q.ptr());
  for (int64_t t = 0; t < T; ++t) k_->rope(q.row(t), H, hd, p0 + t, theta);
  record(rec, ph, Op::AttnQ, l, q.shape, q.ptr());

  if (cfg_.owns_kv(l)) {
    Tensor kk({T, KVH, hd}), vv({T, KVH, hd});
    k_->linear(w.k, an.ptr(), T, kk.ptr());
    k_->rmsnorm(kk.ptr(), w.k_norm.data(), T * KVH, hd, cfg_.rms_eps, kk.ptr());
    for (int64_t t = 0; t < T; ++t) k_->rope(kk.row(t), KVH, hd, p0 + t, theta);
    k_->linear(w.v, an.ptr(), T, vv.ptr());
    k_->rmsnorm(vv.ptr(), nullptr, T * KVH, hd, cfg_.rms_eps, vv.ptr());
    require(int64_t(seq.k[l].val.size()) == (seq.cached() - T) * KVD,
            "golden: KV cache of layer " + std::to_string(l) + " out of step with the sequence");
    k_->append_kv(seq.k[l], kk.ptr(), T, KVH, hd);
    k_->append_kv(seq.v[l], vv.ptr(), T, KVH, hd);
    record(rec, ph, Op::AttnK, l, kk.shape, kk.ptr());
    record(rec, ph, Op::AttnV, l, vv.shape, vv.ptr());
  }

  // KV-shared layers read the (post-norm, post-RoPE) cache of their source layer.
  const int src = cfg_.kv_source(l);
  const KvStore& K = seq.k[src];
  const KvStore& V = seq.v[src];
  const int64_t group = H / KVH;
  Tensor ctx({T, H * hd});
  const std::vector<int64_t>& pos = seq.positions;  // sorted ascending
  for (int64_t t = 0; t < T; ++t) {
    const int64_t qpos = p0 + t;
    // Causal; local layers see kv > q - window.
    const int64_t first = cfg_.is_global(l) ? 0 : qpos - cfg_.sliding_window + 1;
    const int64_t lo = std::lower_bound(pos.begin(), pos.end(), first) - pos.begin();
    const int64_t hi = std::upper_bound(pos.begin(), pos.end(), qpos) - pos.begin() - 1;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kvh = h / group;
      k_->attend(q.row(t) + h * hd, K, V, kvh, KVH, lo, hi, hd, ctx.row(t) + h * hd);
    }
  }
  record(rec, ph, Op::AttnCtx, l, ctx.shape, ctx.ptr());
  k_->linear(w.o, ctx.ptr(), T, out.ptr());
  record(rec, ph, Op::AttnOut, l, out.shape, out.ptr());
}

// y = (GELU(topk(x W_gate^T)) * (x W_up^T)) W_down^T
void GoldenModel::mlp(int l, const LayerW& w, const Tensor& x, Phase ph, Recorder* rec, Tensor& y) const {
  const int64_t T = x.shape[0], F = cfg_.ffn[l];
  Tensor g({T, F}), u({T, F});
  k_->linear(w.gate, x.ptr(), T, g.ptr());
  const float topk_mult = cfg_.topk_multiplier(l);
  if (topk_mult > 0)
    for (int64_t t = 0; t < T; ++t) k_->gaussian_topk(g.row(t), F, topk_mult);
  record(rec, ph, Op::MlpGate, l, g.shape, g.ptr());
  k_->linear(w.up, x.ptr(), T, u.ptr());
  record(rec, ph, Op::MlpUp, l, u.shape, u.ptr());
  k_->gelu_inplace(g.ptr(), g.size());
  for (int64_t i = 0; i < T * F; ++i) g.data[i] *= u.data[i];
  k_->store(g.ptr(), g.size());
  record(rec, ph, Op::MlpAct, l, g.shape, g.ptr());
  k_->linear(w.down, g.ptr(), T, y.ptr());
  record(rec, ph, Op::MlpDown, l, y.shape, y.ptr());
}

// corr[p] = pred[p] + (m2 W_corr^T + 1)[p] * (o - pred[0]), m2 = router(o)
void GoldenModel::correct(const LayerW& w, const std::vector<Tensor>& pred, const Tensor& o,
                          std::vector<Tensor>& corr, float* m2) const {
  const int64_t S = cfg_.altup_streams, T = o.shape[0], D = cfg_.hidden;
  router(w, o.ptr(), T, m2);
  std::vector<float> cc(static_cast<size_t>(T * S));
  k_->linear(w.corr, m2, T, cc.data());
  for (float& v : cc) v += 1.0f;
  k_->store(cc.data(), cc.size());
  for (int64_t p = 0; p < S; ++p) {
    corr[p] = pred[p];
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < D; ++i)
        corr[p].row(t)[i] += (o.row(t)[i] - pred[0].row(t)[i]) * cc[t * S + p];
    k_->store_stream(corr[p].ptr(), corr[p].size());
  }
}

// corr[1..] += RMSNorm(GELU((corr0 * scale) W_gate_pl^T) * pli[n]) W_proj_pl^T, w_post_pl)
void GoldenModel::per_layer_mix(int l, const LayerW& w, const Tensor& pli, std::vector<Tensor>& corr, Phase ph,
                                Recorder* rec) const {
  const int64_t T = corr[0].shape[0], D = cfg_.hidden, P = cfg_.pl_dim;
  Tensor gin = corr[0];
  if (cfg_.altup_correct_scale)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < D; ++i) gin.row(t)[i] *= w.out_scale[i];
  k_->store(gin.ptr(), gin.size());
  Tensor f({T, P});
  k_->linear(w.pl_gate, gin.ptr(), T, f.ptr());
  k_->gelu_inplace(f.ptr(), f.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < P; ++i) f.row(t)[i] *= pli.row(t)[int64_t(l) * P + i];
  k_->store(f.ptr(), f.size());
  record(rec, ph, Op::PleGate, l, f.shape, f.ptr());
  Tensor add({T, D});
  k_->linear(w.pl_proj, f.ptr(), T, add.ptr());
  k_->rmsnorm(add.ptr(), w.post_pl.data(), T, D, cfg_.rms_eps, add.ptr());
  record(rec, ph, Op::PleOut, l, add.shape, add.ptr());
  for (int s = 1; s < cfg_.altup_streams; ++s) {
    for (int64_t i = 0; i < T * D; ++i) corr[s].data[i] += add.data[i];
    k_->store_stream(corr[s].ptr(), corr[s].size());
  }
}

void GoldenModel::decoder_layer(int l, std::vector<Tensor>& h, const Tensor& pli, Sequence& seq, Phase ph,
                                Recorder* rec) const {
  const LayerW& w = layers_[l];
  const int64_t T = h[0].shape[0], D = cfg_.hidden, S = cfg_.altup_streams;
  const float inv_sqrt2 = 1.0f / std::sqrt(2.0f);
  std::vector<float> m(static_cast<size_t>(T * S));
  std::vector<Tensor> pred(S);
  predict(w, h, pred, m.data());
  record(rec, ph, Op::Router, l, {T, S}, m.data());
  record_streams(rec, ph, Op::Pred, l, pred);

  const Tensor& a = pred[0];
  Tensor an({T, D});
  k_->rmsnorm(a.ptr(), w.in_norm.data(), T, D, cfg_.rms_eps, an.ptr());
  record(rec, ph, Op::InputNorm, l, an.shape, an.ptr());
  Tensor lo({T, D});
  laurel(w, an, lo);
  record(rec, ph, Op::Laurel, l, lo.shape, lo.ptr());

  Tensor attn({T, D});
  attention(l, w, an, seq, ph, rec, attn);
  k_->rmsnorm(attn.ptr(), w.post_attn.data(), T, D, cfg_.rms_eps, attn.ptr());
  Tensor al({T, D});
  for (int64_t i = 0; i < T * D; ++i) attn.data[i] += a.data[i];  // ag
  k_->store_stream(attn.ptr(), attn.size());
  record(rec, ph, Op::AttnGated, l, attn.shape, attn.ptr());
  for (int64_t i = 0; i < T * D; ++i) al.data[i] = (attn.data[i] + lo.data[i]) * inv_sqrt2;
  k_->store_stream(al.ptr(), al.size());
  record(rec, ph, Op::AttnLaurel, l, al.shape, al.ptr());

  Tensor xn({T, D}), y({T, D});
  k_->rmsnorm(al.ptr(), w.pre_ffn.data(), T, D, cfg_.rms_eps, xn.ptr());
  mlp(l, w, xn, ph, rec, y);
  k_->rmsnorm(y.ptr(), w.post_ffn.data(), T, D, cfg_.rms_eps, y.ptr());
  for (int64_t i = 0; i < T * D; ++i) y.data[i] += al.data[i];  // o
  k_->store_stream(y.ptr(), y.size());
  record(rec, ph, Op::FfnOut, l, y.shape, y.ptr());

  std::vector<Tensor> corr(S);
  correct(w, pred, y, corr, m.data());
  record(rec, ph, Op::CorrRouter, l, {T, S}, m.data());
  record_streams(rec, ph, Op::Corr, l, corr);
  per_layer_mix(l, w, pli, corr, ph, rec);
  h = std::move(corr);
  record_streams(rec, ph, Op::LayerOut, l, h);
}

// x = RMSNorm(mean(h0, rescaled h_k W_unemb[k-1]^T)); logits = softcap(x E^T)
void GoldenModel::final_logits(std::vector<Tensor>& h, Phase ph, Recorder* rec, bool last_only,
                               Tensor& logits) const {
  const int64_t T = h[0].shape[0], D = cfg_.hidden, S = cfg_.altup_streams;
  for (int s = 1; s < S; ++s) {
    Tensor u({T, D});
    k_->linear(w_->matrix(model_weight_names().altup_unembed_projection(s)), h[s].ptr(), T, u.ptr());
    for (int64_t t = 0; t < T; ++t) k_->match_magnitude(u.row(t), D, k_->rms(h[0].row(t), D), 1e-5f);
    k_->store_stream(u.ptr(), u.size());  // held in the stream buffers, as the projections above
    h[s] = std::move(u);
  }
  record_streams(rec, ph, Op::Unembed, -1, h);
  Tensor x({T, D});
  for (int64_t i = 0; i < T * D; ++i) {
    float acc = 0;
    for (int s = 0; s < S; ++s) acc += h[s].data[i];
    x.data[i] = acc / float(S);
  }
  k_->store(x.ptr(), x.size());
  k_->rmsnorm(x.ptr(), final_norm_.data(), T, D, cfg_.rms_eps, x.ptr());
  record(rec, ph, Op::FinalNorm, -1, x.shape, x.ptr());
  const int64_t rows = last_only ? 1 : T;
  logits = Tensor({rows, cfg_.vocab});
  k_->lm_head(w_->matrix(model_weight_names().embed), x.row(T - rows), rows, logits.ptr());
  if (cfg_.softcap > 0) k_->softcap(logits.ptr(), logits.size(), float(cfg_.softcap));
  record(rec, ph, Op::Logits, -1, logits.shape, logits.ptr());
}

Tensor GoldenModel::forward(Sequence& seq, const std::vector<int32_t>& ids, Phase ph, Recorder* rec,
                            bool last_only) const {
  const int64_t T = ids.size(), D = cfg_.hidden;
  require(T > 0, "golden: empty token chunk");
  for (size_t i = 0; i < ids.size(); ++i)
    require(ids[i] >= 0 && ids[i] < cfg_.vocab, "golden: token id " + std::to_string(ids[i]) + " at index " +
                                                    std::to_string(i) + " is out of range [0, " +
                                                    std::to_string(cfg_.vocab) + ")");
  for (int64_t t = 0; t < T; ++t) seq.positions.push_back(seq.pos + t);
  Tensor x0({T, D});
  embed(ids, x0);
  record(rec, ph, Op::Embed, -1, x0.shape, x0.ptr());
  Tensor pli({T, cfg_.layers, cfg_.pl_dim});
  per_layer_inputs(ids, x0, pli);
  record(rec, ph, Op::PerLayerInputs, -1, pli.shape, pli.ptr());
  std::vector<Tensor> h(cfg_.altup_streams);
  altup_project(x0, h);
  record_streams(rec, ph, Op::AltupIn, -1, h);
  for (int l = 0; l < cfg_.layers; ++l) decoder_layer(l, h, pli, seq, ph, rec);
  seq.pos += T;
  Tensor logits;
  final_logits(h, ph, rec, last_only, logits);
  return logits;
}

}  // namespace n3
