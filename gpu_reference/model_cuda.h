// The CUDA reference path: golden/model.cc's Gemma 3n forward on a GPU, in
// NPU numerics (bit-exact with GoldenModel + NpuKernels) or reference
// numerics (float32 with float64 sums, within ~1e-7 of ReferenceKernels).
// Weights are uploaded once; each sequence keeps its KV cache on the GPU.
// A plain C++ header: callers need no CUDA headers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "base/tensor.h"
#include "golden/weights.h"

namespace n3::gpu {

// Device queries (cuda_query.cu).
// "" when a CUDA device this build can run on is present, else why not (one line).
std::string cuda_problem();
// "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)".
std::string cuda_device_name();
// Device-to-device copy bandwidth in bytes/s (bytes read + written) over a
// buffer of `bytes`: what streaming kernels can reach on this GPU.
double copy_bandwidth(size_t bytes);

class CudaModel {
 public:
  // numerics: "npu" (weights must be INT4: open them with open_weights_for)
  // or "reference". The KV cache holds hw's kv.cap_tokens rows per sequence.
  CudaModel(std::shared_ptr<const WeightSource> weights, const std::string& numerics, const HwConfig& hw);
  ~CudaModel();
  const ModelConfig& config() const;
  const char* numerics() const;

  int new_sequence();
  void free_sequence(int seq);
  // GoldenModel::forward on the GPU: runs ids at the sequence's next
  // positions, appends their K/V, returns softcapped logits [T, V] (the last
  // row only when last_only). `rec` receives every op output it wants, with
  // golden's names and shapes.
  Tensor forward(int seq, const std::vector<int32_t>& ids, Phase phase, Recorder* rec, bool last_only);
  int64_t position(int seq) const;
  int64_t cached(int seq) const;
  int64_t kv_capacity() const;
  // Sequence::evict: keeps the first `sinks` and the last `recent` cache rows.
  void evict(int seq, int64_t sinks, int64_t recent);

  // Single-token steps without a recorder replay a captured CUDA graph
  // (default on; N3_CUDA_GRAPHS=0 turns it off).
  void use_graphs(bool on);
  // Per-kernel timing (CUDA events around every launch, no graphs, no
  // overlap): profile_kernels(true) starts it afresh; kernel_profile() is the
  // table per forward step.
  void profile_kernels(bool on);
  std::string kernel_profile() const;
  // GPU time of the last forward (CUDA events around its kernels), seconds.
  double last_gpu_seconds() const;
  // Bytes of weights in GPU memory.
  size_t weight_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace n3::gpu
