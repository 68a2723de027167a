// The golden model: Gemma 3n's text decoder (docs/golden.md), one short
// function per operator, computed through a Kernels implementation
// (reference float32 or NPU numerics). Prefill and KV-cached decode are the
// same forward over a chunk of tokens at consecutive positions.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "golden/dump.h"
#include "golden/kernels.h"
#include "golden/model_config.h"
#include "base/tensor.h"
#include "golden/weights.h"

namespace n3 {

// One sequence's state: the KV cache of every cache-owning layer and the
// next position. K/V rows are [kv_heads * head_dim] floats in the cache's
// storage format (Kernels::append_kv). `positions` lists the token
// position of each cached row (the same for every layer); it is 0..pos-1
// until the host evicts rows (host_driver's KV policy), after which
// attention masks by position, not by row index.
struct Sequence {
  int64_t pos = 0;
  std::vector<int64_t> positions;
  std::vector<KvStore> k, v;  // per layer; empty for KV-shared layers

  int64_t cached() const { return static_cast<int64_t>(positions.size()); }
  // Keeps the first `sinks` rows and the last `recent` rows of every layer.
  void evict(int64_t sinks, int64_t recent, int64_t kv_dim);
};

class GoldenModel {
 public:
  GoldenModel(std::shared_ptr<const WeightSource> weights, std::unique_ptr<Kernels> kernels);
  ~GoldenModel();
  const ModelConfig& config() const { return cfg_; }
  const Kernels& kernels() const { return *k_; }

  Sequence new_sequence() const;
  // Runs ids at positions seq.pos .. seq.pos+T-1, appends their K/V and
  // returns the softcapped logits [T, V] (only the last row when last_only).
  // Ids must lie in [0, vocab); `rec` (optional) receives every op output.
  Tensor forward(Sequence& seq, const std::vector<int32_t>& ids, Phase phase, Recorder* rec,
                 bool last_only = false) const;

 private:
  struct LayerW;
  void embed(const std::vector<int32_t>& ids, Tensor& x0) const;
  void per_layer_inputs(const std::vector<int32_t>& ids, const Tensor& x0, Tensor& pli) const;
  void altup_project(const Tensor& x0, std::vector<Tensor>& h) const;
  void router(const LayerW& w, const float* x, int64_t T, float* m) const;
  void predict(const LayerW& w, const std::vector<Tensor>& h, std::vector<Tensor>& pred, float* m) const;
  void laurel(const LayerW& w, const Tensor& an, Tensor& lo) const;
  void attention(int layer, const LayerW& w, const Tensor& an, Sequence& seq, Phase phase, Recorder* rec,
                 Tensor& out) const;
  void mlp(int layer, const LayerW& w, const Tensor& x, Phase phase, Recorder* rec, Tensor& y) const;
  void correct(const LayerW& w, const std::vector<Tensor>& pred, const Tensor& o, std::vector<Tensor>& corr,
               float* m2) const;
  void per_layer_mix(int layer, const LayerW& w, const Tensor& pli, std::vector<Tensor>& corr, Phase phase,
                     Recorder* rec) const;
  void decoder_layer(int layer, std::vector<Tensor>& h, const Tensor& pli, Sequence& seq, Phase phase,
                     Recorder* rec) const;
  void final_logits(std::vector<Tensor>& h, Phase phase, Recorder* rec, bool last_only, Tensor& logits) const;

  std::shared_ptr<const WeightSource> w_;
  std::unique_ptr<Kernels> k_;
  ModelConfig cfg_;
  std::vector<LayerW> layers_;
  std::vector<float> plp_norm_, final_norm_;
};

}  // namespace n3
