#include "gpu_reference/model_cuda_weights.cuh"

#include <cmath>

#include "golden/numerics/npu_ops.h"
#include "golden/weight_names.h"
#include "gpu_reference/bfp_lane.h"

namespace n3::gpu {

CudaWeights::CudaWeights(const WeightSource& w, bool npu) {
  const ModelConfig& cfg = w.config();
  const int S = cfg.altup_streams;
  const ModelWeightNames& g = model_weight_names();
  E = matrix(w, g.embed);
  Epl = matrix(w, g.embed_per_layer);
  plp = matrix(w, g.per_layer_model_projection);
  ap.resize(S);
  unemb.resize(S);
  for (int s = 1; s < S; ++s) {
    ap[s] = matrix(w, g.altup_projection(s));
    unemb[s] = matrix(w, g.altup_unembed_projection(s));
  }
  plp_norm = floats(w.vec(g.per_layer_projection_norm));
  final_norm = floats(w.vec(g.final_norm));
  const int hd = cfg.head_dim;
  auto table = [&](double theta) {
    if (npu) return num::rope_inv_freq(theta, hd);
    std::vector<float> t(hd / 2);
    for (int i = 0; i < hd / 2; ++i) t[i] = float(1.0 / std::pow(theta, double(2 * i) / double(hd)));
    return t;
  };
  freq_local = floats(table(cfg.rope_local));
  freq_global = floats(table(cfg.rope_global));
  auto mat = [&](const std::string& name) { return matrix(w, name); };
  auto vec = [&](const std::string& name) { return floats(w.vec(name)); };
  for (int l = 0; l < cfg.layers; ++l) {
    const LayerW lw = load_layer<DevMatrix, const float*>(cfg, l, mat, vec);
    if (npu)
      for (const DevMatrix* m : {&lw.router, &lw.pred, &lw.corr})
        require(m->dtype == int(WDType::F32), "cuda: AltUp coefficient matrices must be float32 in NPU numerics");
    layers.push_back(lw);
  }
}

DevMatrix CudaWeights::matrix(const WeightSource& w, const std::string& name) {
  const MatrixRef m = w.matrix(name);
  DevMatrix d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.row_bytes = m.row_bytes();
  d.dtype = int(m.dtype);
  d.group = m.group <= 0 ? m.cols : m.group;
  const size_t bytes = size_t(m.rows) * d.row_bytes;
  data_.emplace_back(bytes);
  data_.back().upload(m.data, bytes);
  d.data = data_.back().get();
  matrix_bytes_ += bytes;
  if (m.dtype == WDType::INT4) {
    const size_t n = size_t(m.rows) * ((m.cols + d.group - 1) / d.group);
    floats_.emplace_back(n);
    floats_.back().upload(m.scales, n);
    d.scales = floats_.back().get();
    matrix_bytes_ += n * 4;
  }
  return d;
}

const float* CudaWeights::floats(const std::vector<float>& v) {
  floats_.emplace_back(v.size());
  floats_.back().upload(v.data(), v.size());
  return floats_.back().get();
}

void QBuf::alloc(int rows, int n, const num::Formats& f) {
  q.n = n;
  q.block = f.bfp_block;
  q.mbits = f.act_mant_bits;
  q.splits = splits_for(q.mbits);
  q.nb = ceil_div(n, q.block);
  const size_t blocks = size_t(rows) * q.nb;
  mant.resize(blocks * q.block);
  exp.resize(blocks);
  q.mant = mant.get();
  q.exp = exp.get();
  if (q.block == 32) {
    msum.resize(blocks);
    pack.resize(blocks * q.splits * 8);
    q.msum = msum.get();
    q.pack = pack.get();
  }
}

QAct rows_from(QAct q, int rows) {
  if (!q.mant) return q;
  const size_t b = size_t(rows) * q.nb;
  q.mant += b * q.block;
  q.exp += b;
  if (q.msum) q.msum += b;
  if (q.pack) q.pack += b * q.splits * 8;
  return q;
}

}  // namespace n3::gpu
