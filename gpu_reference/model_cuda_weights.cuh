// What the CUDA model (model_cuda.cu) holds in GPU memory besides its
// forward's float32 scratch: the weights, uploaded once from a WeightSource
// under golden/weight_names.h's names, and the storage layout of activations
// in the GEMV engine's BFP form (QBuf). Internal to gpu_reference/: plain
// host code, no kernels, so it compiles apart from the forward.
#pragma once
#include <deque>
#include <string>
#include <vector>

#include "golden/numerics/formats_config.h"
#include "golden/weight_names.h"
#include "golden/weights.h"
#include "gpu_reference/cuda_util.cuh"
#include "gpu_reference/dev_types.cuh"

namespace n3::gpu {

// Every weight of one decoder layer on the GPU (k, v, k_norm: null on KV-shared layers).
using LayerW = LayerTensors<DevMatrix, const float*>;

// The model's weights in GPU memory. npu: NPU numerics (the RoPE tables are
// the NPU's constants, npu_ops.h; the AltUp coefficient matrices must be
// float32), else HF's float32 RoPE values (kernels_ref.cc).
class CudaWeights {
 public:
  CudaWeights(const WeightSource& w, bool npu);

  DevMatrix E, Epl, plp;             // embedding (also the LM head), per-layer embedding, its projection
  std::vector<DevMatrix> ap, unemb;  // AltUp projection into / out of stream s, at [s] (s >= 1)
  const float *plp_norm = nullptr, *final_norm = nullptr;
  const float *freq_local = nullptr, *freq_global = nullptr;  // RoPE inverse frequencies
  std::vector<LayerW> layers;
  // Bytes of the matrices (data and scales) in GPU memory.
  size_t matrix_bytes() const { return matrix_bytes_; }

 private:
  DevMatrix matrix(const WeightSource& w, const std::string& name);
  const float* floats(const std::vector<float>& v);

  std::deque<DevBuf<uint8_t>> data_;
  std::deque<DevBuf<float>> floats_;
  size_t matrix_bytes_ = 0;
};

// A QAct with its storage; empty (no-op) in reference numerics.
struct QBuf {
  DevBuf<int16_t> mant;
  DevBuf<int32_t> exp, msum, pack;
  QAct q;

  void alloc(int rows, int n, const num::Formats& f);
};

// The same QAct starting `rows` vectors further.
QAct rows_from(QAct q, int rows);

}  // namespace n3::gpu
