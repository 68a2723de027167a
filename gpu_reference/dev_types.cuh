// What the kernels are handed: weight matrices in GPU memory (the bytes of
// golden/weights.h's MatrixRef, uploaded once), activation vectors in the
// GEMV engine's BFP form, and one layer's KV cache. Plain structs passed to
// kernels by value.
#pragma once
#include <cstdint>

#include "golden/numerics/formats.h"
#include "golden/numerics/formats_config.h"

namespace n3::gpu {

// MatrixRef on the device. dtype: 0 f32, 1 bf16, 2 f16, 3 int4 (WDType's values).
struct DevMatrix {
  const uint8_t* data = nullptr;
  const float* scales = nullptr;  // int4: rows * groups
  int64_t rows = 0, cols = 0, group = 0, row_bytes = 0;
  int dtype = 0;

  int64_t groups() const { return (cols + group - 1) / group; }
};

// Element (r, i) as float32, as golden's dequant_row gives it (int4: q * scale).
__device__ inline float load_w(const DevMatrix& m, int64_t r, int64_t i) {
  const uint8_t* row = m.data + r * m.row_bytes;
  switch (m.dtype) {
    case 0:
      return reinterpret_cast<const float*>(row)[i];
    case 1:
      return num::bf16_value(reinterpret_cast<const uint16_t*>(row)[i]);
    case 2:
      return num::f16_value(reinterpret_cast<const uint16_t*>(row)[i]);
    default: {
      const int nib = (row[i >> 1] >> ((i & 1) * 4)) & 0xf;
      const int64_t g = (m.cols + m.group - 1) / m.group;
      return float(nib >= 8 ? nib - 16 : nib) * m.scales[r * g + i / m.group];
    }
  }
}

// T activation vectors of n elements in BFP (NPU numerics): mantissas
// [T][nb * block], block exponents [T][nb], and for block == 32 the dp4a
// operands of bfp_lane.h: mantissa sums [T][nb] and split pieces
// [T][nb][splits * 8] words. e_max and poison are derived by the consumer
// from the exponents (bfp_view), so blocks can be quantised independently.
struct QAct {
  int16_t* mant = nullptr;
  int32_t* exp = nullptr;
  int32_t* msum = nullptr;
  int32_t* pack = nullptr;
  int n = 0, nb = 0, block = 32, mbits = 12, splits = 2;

  // Producers quantise their output in place when blocks are 32 (one warp a block).
  __host__ __device__ bool lane_quantised() const { return mant != nullptr && block == 32; }
};

// One cache-owning layer's K/V rows ([rows][kv_heads * head_dim] floats in
// the cache format) and, in NPU numerics, every stored key row in BFP (per
// row and KV head: mantissas [nbd * block], exponents [nbd], e_max, poison),
// computed once when the row is appended: the core quantises the same row
// the same way at every query.
// numerics.kv_format = int8 (NPU numerics) keeps neither: K and V are INT8
// codes [rows][kv_heads * head_dim] with one float32 scale per row and KV
// head [rows][kv_heads] (formats.h int8_quantize), which is what num::attend
// reads; k, v and the key BFP are null then.
struct KvDev {
  float* k = nullptr;
  float* v = nullptr;
  int16_t* kmant = nullptr;
  int32_t* kexp = nullptr;
  int32_t* kemax = nullptr;
  int32_t* kpois = nullptr;
  int8_t* k8 = nullptr;
  int8_t* v8 = nullptr;
  float* ks = nullptr;
  float* vs = nullptr;
};

}  // namespace n3::gpu
