// Linear layers y[t, :] = W x[t, :] (golden Kernels::linear / lm_head).
//
// NPU numerics (docs/numerics.md, "MAC"): x is quantised to BFP once per
// vector (quantize_*), then every output row is one INT4 dot product with a
// single rounding. The fast kernel (per-row scales, 32-element blocks,
// rows a multiple of 32 inputs: every E4B matrix) gives one warp a row:
// lane j streams the row's 16-byte blocks j, j+32, ... with 128-bit loads,
// computes each block partial with dp4a (bfp_lane.h), aligns it, and the
// 64-bit integer sum (which has no order) is reduced across the warp. Other
// shapes (per-group scales, short rows, other block sizes) run the core's
// dot_int4_row* on one thread per output.
// Reference numerics: one warp a row, float64 accumulation (linear_ref).
//
// Several matrices that read the same token range go in one launch (q, k, v
// and LAuReL's left matrix all read `an`), which saves launches in decode.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "golden/numerics/sfu.h"
#include "gpu_reference/bfp_lane.h"
#include "gpu_reference/cuda_util.cuh"
#include "gpu_reference/dev_types.cuh"

namespace n3::gpu {

// ---- quantisation of activations -------------------------------------------

// One 32-element block of a vector, quantised by a warp (lane = element).
__device__ inline void warp_quantize32(float v, int mbits, int16_t* mant, int32_t* exp) {
  const int lane = threadIdx.x & 31;
  const int32_t q = block_exponent(__reduce_max_sync(kFull, lane_exponent(v)), mbits);
  mant[lane] = static_cast<int16_t>(lane_mantissa(v, q, mbits));
  if (lane == 0) *exp = q;
}

// All 32 lanes of a warp: lane i holds element blk * 32 + i of vector `row`
// (0 past the end). Writes the block's mantissas, exponent, sum and pieces.
__device__ inline void quantize_warp32(const QAct& q, int row, int blk, float v) {
  const int lane = threadIdx.x & 31;
  const int e = __reduce_max_sync(kFull, lane_exponent(v));
  const int32_t qe = block_exponent(e, q.mbits);
  const int m = lane_mantissa(v, qe, q.mbits);
  const size_t b = size_t(row) * q.nb + blk;
  q.mant[b * 32 + lane] = static_cast<int16_t>(m);
  const int s = __reduce_add_sync(kFull, m);
  if (lane == 0) {
    q.exp[b] = qe;
    q.msum[b] = s;
  }
  int8_t* pk = reinterpret_cast<int8_t*>(q.pack + b * q.splits * 8);
  for (int p = 0; p < q.splits; ++p) pk[piece_byte(lane, p)] = static_cast<int8_t>(mantissa_piece(m, p, q.splits));
}

// For producers that write element i = base + threadIdx.x of a vector in a
// block-stride loop (base a multiple of 32; every thread iterates alike):
// quantises the warp's 32 elements when the format allows it in place.
__device__ inline void lane_quantise(const QAct& q, int row, int i, float v) {
  if (!q.lane_quantised()) return;
  const int blk = i >> 5;
  if (blk < q.nb) quantize_warp32(q, row, blk, v);
}

// x: rows vectors of q.n floats, `ld` apart.
__global__ void quantize_kernel(const float* x, int64_t ld, QAct q) {
  pdl_begin();
  const int row = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* xr = x + row * ld;
  if (q.block == 32) {
    lane_quantise(q, row, i, i < q.n ? xr[i] : 0.0f);
    return;
  }
  if (i >= q.nb) return;  // other block sizes: one thread a block, the core's quantiser
  const int lo = i * q.block, cnt = q.n - lo < q.block ? q.n - lo : q.block;
  q.exp[size_t(row) * q.nb + i] =
      num::bfp_quantize_block(xr + lo, cnt, q.block, q.mbits, q.mant + size_t(row) * q.nb * q.block + lo);
}

inline void quantize(const float* x, int64_t ld, int rows, const QAct& q, cudaStream_t s) {
  if (!q.mant || rows == 0) return;
  launch("quantize_kernel", quantize_kernel, dim3(ceil_div(q.n, 256), rows), 256, 0, s, x, ld, q);
}

// ---- one launch, several matrices -------------------------------------------

struct GemvSeg {
  DevMatrix w;
  const float* x = nullptr;  // reference numerics: float inputs [*, cols]
  QAct q;                    // NPU numerics: the same inputs in BFP
  float* y = nullptr;        // [T, rows]
  int t_in0 = 0;             // output row t reads input row t_in0 + t
  num::Fmt out = num::Fmt::F32;
  float cap = 0;  // > 0: softcap the outputs (the LM head)
  int nblk = 0;   // CUDA blocks of this segment
};
constexpr int kMaxSegs = 4;
// Whether two segments read the same activation rows (the same QAct: its
// other arrays follow from the exponents' pointer).
__host__ __device__ inline bool same_input(const GemvSeg& a, const GemvSeg& b) {
  return a.q.exp == b.q.exp && a.q.nb == b.q.nb && a.t_in0 == b.t_in0;
}
struct GemvBatch {
  GemvSeg seg[kMaxSegs];
  int nseg = 0;
  int T = 0;
};

constexpr int kGemvThreads = 256;  // 8 warps, one row each
constexpr int kGemvRows = kGemvThreads / 32;

__device__ inline int find_seg(const GemvBatch& a, int* bx) {
  int s = 0;
  while (s + 1 < a.nseg && *bx >= a.seg[s].nblk) *bx -= a.seg[s++].nblk;
  return s;
}

__device__ inline float npu_epilogue(int64_t acc, int emax, bool poison, float scale, const GemvSeg& g) {
  float y = poison                  ? num::nan_f()
            : emax == num::kBfpZero ? num::acc_finish(0, 0, scale, g.out)
                                    : num::acc_finish(acc, emax, scale, g.out);
  if (g.cap > 0) y = num::round_to(g.out, g.cap * num::tanh_sfu(y * num::recip(g.cap)));
  return y;
}

// e_max and poison of one input vector from its block exponents (bfp_view's
// rule), on one warp; every lane gets them.
// A lane's loads go out 8 at a time (the down projection's 512 blocks are
// 16 a lane: one round trip each was on every block's critical path).
__device__ inline void warp_emax(const int32_t* e, int nb, int* emax, bool* poison) {
  int mx = num::kBfpZero, po = 0;
  for (int b = threadIdx.x & 31; b < nb; b += 32 * 8) {
    int v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = b + 32 * k < nb ? __ldg(e + b + 32 * k) : num::kBfpZero;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (v[k] == num::kBfpPoison)
        po = 1;
      else if (v[k] != num::kBfpZero && v[k] > mx)
        mx = v[k];
    }
  }
  *emax = __reduce_max_sync(kFull, mx);
  *poison = __reduce_or_sync(kFull, po) != 0;
}

// The dp4a pieces of activation block qb (SPLITS * 8 words, 16-byte loads).
template <int SPLITS>
__device__ inline void load_pieces(const QAct& q, size_t qb, int32_t (&pk)[SPLITS * 8]) {
  const int4* pk4 = reinterpret_cast<const int4*>(q.pack + qb * (SPLITS * 8));
#pragma unroll
  for (int h = 0; h < SPLITS * 2; ++h) {
    const int4 v = __ldg(pk4 + h);
    pk[4 * h] = v.x, pk[4 * h + 1] = v.y, pk[4 * h + 2] = v.z, pk[4 * h + 3] = v.w;
  }
}

// The row (< RPW) whose sum warp_rows_sum leaves in `lane`.
template <int RPW>
__device__ inline int rows_sum_row(int lane) {
  return RPW == 4 ? ((lane & 16) ? 2 : 0) + ((lane & 8) ? 1 : 0) : RPW == 2 ? ((lane & 16) ? 1 : 0) : 0;
}

// The RPW row sums of a warp's 64-bit partials (integers: any order gives
// the same sums) by reduce-scatter: the first log2(RPW) shuffle steps
// exchange halves of the rows instead of every row going through all five
// steps. Returns the sum of row *row; lanes row * (32 / RPW) + [0, 32 / RPW)
// hold row `row`. 6 shuffles for 4 rows instead of 20 plus a broadcast.
template <int RPW>
__device__ inline int64_t warp_rows_sum(const int64_t (&acc)[RPW], int lane, int* row) {
  static_assert(RPW == 1 || RPW == 2 || RPW == 4, "rows per warp: 1, 2 or 4");
  int64_t s;
  int off;
  if constexpr (RPW == 4) {
    const bool hi = lane & 16, b3 = lane & 8;
    const int64_t r0 = (hi ? acc[2] : acc[0]) + __shfl_xor_sync(kFull, hi ? acc[0] : acc[2], 16);
    const int64_t r1 = (hi ? acc[3] : acc[1]) + __shfl_xor_sync(kFull, hi ? acc[1] : acc[3], 16);
    s = (b3 ? r1 : r0) + __shfl_xor_sync(kFull, b3 ? r0 : r1, 8);
    *row = (hi ? 2 : 0) + (b3 ? 1 : 0);
    off = 4;
  } else if constexpr (RPW == 2) {
    const bool hi = lane & 16;
    s = (hi ? acc[1] : acc[0]) + __shfl_xor_sync(kFull, hi ? acc[0] : acc[1], 16);
    *row = hi ? 1 : 0;
    off = 8;
  } else {
    s = acc[0];
    *row = 0;
    off = 16;
  }
  for (; off >= 1; off >>= 1) s += __shfl_xor_sync(kFull, s, off);
  return s;
}

// Fast INT4 GEMV: per-row scales, cols % 32 == 0, 32-element blocks. A warp
// takes RPW consecutive rows: lane j streams the rows' 16-byte blocks
// j, j+32, ... all at once (U blocks x RPW rows of loads in flight), so each
// activation block it loads serves RPW rows; TT tokens share each weight
// load. With KSPLIT > 1 the block's warps split long rows: warp kw of a row
// group takes the 32-block chunks kw, kw + KSPLIT, ..., and the integer
// partial sums (no order) meet in shared memory. Lane rr finishes row rr
// (TT > 1); decode (TT == 1) finishes row r in lane r * 32 / RPW, after
// warp_rows_sum.
template <int TT, int SPLITS, int U, int RPW, int KSPLIT>
__global__ void __launch_bounds__(kGemvThreads) gemv_int4_kernel(GemvBatch a) {
  constexpr int kGroups = kGemvRows / KSPLIT;  // row groups per block
  int bx = blockIdx.x;
  const GemvSeg& g = a.seg[find_seg(a, &bx)];
  const int t0 = blockIdx.y * TT, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kw = warp % KSPLIT, rw = warp / KSPLIT;
  const int r0 = (bx * kGroups + rw) * RPW;
  const int nr = r0 >= g.w.rows ? 0 : g.w.rows - r0 < RPW ? int(g.w.rows - r0) : RPW;
  const int nb = g.q.nb;
  const uint4* wr = reinterpret_cast<const uint4*>(g.w.data + size_t(r0) * g.w.row_bytes);
  constexpr int kStep = 32 * KSPLIT;  // blocks between a lane's consecutive chunks
  const int first = lane + 32 * kw;
  // Weights are never written: the first loads go out before waiting for the
  // kernel that produces the activations (pdl_begin).
  uint4 wv[U][RPW];
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr)
      if (first + kStep * u < nb && rr < nr) wv[u][rr] = __ldcs(wr + size_t(rr) * nb + first + kStep * u);
  // So is the scale of the row this lane finishes (below): its load is then
  // off the epilogue's path.
  const int my_row = TT == 1 && KSPLIT == 1 ? rows_sum_row<RPW>(lane) : lane;
  const float my_scale = my_row < nr ? __ldg(g.w.scales + r0 + my_row) : 0.0f;
  pdl_begin();
  // Decode: every activation load of a chunk goes out at once (they do not
  // depend on each other), instead of a block's pieces waiting on its
  // exponent; the first chunk's go out before warp_emax's, so the two are
  // one round trip to memory, not two.
  int32_t ev[U], mv[U], pv[U][SPLITS * 8];
  auto load_chunk = [&](int b0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int b = b0 + kStep * u;
      ev[u] = num::kBfpZero;
      if (nr <= 0 || b >= nb || t0 >= a.T) continue;
      const size_t qb = size_t(g.t_in0 + t0) * nb + b;
      ev[u] = __ldg(g.q.exp + qb);
      mv[u] = __ldg(g.q.msum + qb);
      load_pieces<SPLITS>(g.q, qb, pv[u]);
    }
  };
  if constexpr (TT == 1) load_chunk(first);
  int64_t acc[TT][RPW];
  int emax[TT];
  bool pois[TT];
#pragma unroll
  for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) acc[tt][rr] = 0;
    emax[tt] = num::kBfpZero;
    pois[tt] = false;
    if (t0 + tt < a.T) warp_emax(g.q.exp + size_t(g.t_in0 + t0 + tt) * nb, nb, &emax[tt], &pois[tt]);
  }
  if (nr > 0) {
    for (int b0 = first; b0 < nb; b0 += kStep * U) {
      if (b0 != first) {
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int rr = 0; rr < RPW; ++rr)
            if (b0 + kStep * u < nb && rr < nr) wv[u][rr] = __ldcs(wr + size_t(rr) * nb + b0 + kStep * u);
      }
      if constexpr (TT == 1) {
        if (b0 != first) load_chunk(b0);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int32_t e = ev[u];
          if (e == num::kBfpZero || e == num::kBfpPoison) continue;
#pragma unroll
          for (int rr = 0; rr < RPW; ++rr) {
            if (rr >= nr) break;
            const uint32_t w[4] = {wv[u][rr].x, wv[u][rr].y, wv[u][rr].z, wv[u][rr].w};
            acc[0][rr] += num::acc_align(int4_block_partial_split<SPLITS>(w, pv[u], mv[u]), e, emax[0]);
          }
        }
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int b = b0 + kStep * u;
          if (b >= nb) break;
#pragma unroll
          for (int tt = 0; tt < TT; ++tt) {
            if (t0 + tt >= a.T) break;
            const size_t qb = size_t(g.t_in0 + t0 + tt) * nb + b;
            const int32_t e = __ldg(g.q.exp + qb);
            if (e == num::kBfpZero || e == num::kBfpPoison) continue;
            int32_t pk[SPLITS * 8];
            load_pieces<SPLITS>(g.q, qb, pk);
            const int32_t msum = __ldg(g.q.msum + qb);
#pragma unroll
            for (int rr = 0; rr < RPW; ++rr) {
              if (rr >= nr) break;
              const uint32_t w[4] = {wv[u][rr].x, wv[u][rr].y, wv[u][rr].z, wv[u][rr].w};
              acc[tt][rr] += num::acc_align(int4_block_partial_split<SPLITS>(w, pk, msum), e, emax[tt]);
            }
          }
        }
      }
    }
  }
  __shared__ int64_t s_part[kGemvRows][TT][RPW];
  if constexpr (TT == 1) {
    int row;
    const int64_t sum = warp_rows_sum<RPW>(acc[0], lane, &row);
    const bool leader = (lane & (32 / RPW - 1)) == 0;
    if (KSPLIT == 1) {  // lane row * (32 / RPW) finishes its row; TT == 1 runs only with T == 1 (no t0 offset)
      if (!leader || row >= nr) return;
      g.y[r0 + row] = npu_epilogue(sum, emax[0], pois[0], my_scale, g);
      return;
    }
    if (leader) s_part[warp][0][row] = sum;
  } else {
#pragma unroll
    for (int tt = 0; tt < TT; ++tt)
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) acc[tt][rr] = warp_sum_i64(acc[tt][rr]);  // in lane 0
    if (KSPLIT > 1 && lane == 0)
#pragma unroll
      for (int tt = 0; tt < TT; ++tt)
#pragma unroll
        for (int rr = 0; rr < RPW; ++rr) s_part[warp][tt][rr] = acc[tt][rr];
  }
  if (KSPLIT > 1) {
    __syncthreads();
    if (kw != 0) return;
#pragma unroll
    for (int tt = 0; tt < TT; ++tt)
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) {
        int64_t sum = 0;
        for (int k = 0; k < KSPLIT; ++k) sum += s_part[warp + k][tt][rr];
        acc[tt][rr] = sum;  // every lane holds the row group's sums
      }
  } else {
#pragma unroll
    for (int tt = 0; tt < TT; ++tt)
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) acc[tt][rr] = __shfl_sync(kFull, acc[tt][rr], 0);
  }
  if (lane >= nr) return;
  // Lane `lane` finishes row r0 + lane (a register array indexed by a
  // constant: select it without local memory).
  const float scale = my_scale;
  for (int tt = 0; tt < TT && t0 + tt < a.T; ++tt) {
    int64_t mine = acc[tt][0];
#pragma unroll
    for (int rr = 1; rr < RPW; ++rr)
      if (lane == rr) mine = acc[tt][rr];
    g.y[size_t(t0 + tt) * g.w.rows + r0 + lane] = npu_epilogue(mine, emax[tt], pois[tt], scale, g);
  }
}

// Any INT4 matrix in NPU numerics: one thread per output, the core's dot products.
__global__ void gemv_int4_generic_kernel(GemvSeg g, int T) {
  pdl_begin();
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(T) * g.w.rows) return;
  const int t = int(idx / g.w.rows);
  const int64_t r = idx % g.w.rows;
  const int in = g.t_in0 + t;
  const num::BfpView x =
      bfp_view(g.q.mant + size_t(in) * g.q.nb * g.q.block, g.q.exp + size_t(in) * g.q.nb, g.w.cols, g.q.block);
  const uint8_t* row = g.w.data + r * g.w.row_bytes;
  float y;
  if (g.w.group >= g.w.cols) {
    y = num::dot_int4_row(row, g.w.cols, x, g.w.scales[r], g.out);
  } else {
    const int64_t ng = (g.w.cols + g.w.group - 1) / g.w.group;
    y = num::dot_int4_row_grouped(row, g.w.cols, x, g.w.scales + r * ng, g.w.group, g.out);
  }
  if (g.cap > 0) y = num::round_to(g.out, g.cap * num::tanh_sfu(y * num::recip(g.cap)));
  g.y[size_t(t) * g.w.rows + r] = y;
}

// Reference numerics: float64 sums of x * dequantised w, one warp a row.
template <int TT>
__global__ void __launch_bounds__(kGemvThreads) gemv_ref_kernel(GemvBatch a) {
  pdl_begin();
  int bx = blockIdx.x;
  const GemvSeg& g = a.seg[find_seg(a, &bx)];
  const int t0 = blockIdx.y * TT, lane = threadIdx.x & 31;
  const int64_t r = int64_t(bx) * kGemvRows + (threadIdx.x >> 5);
  if (r >= g.w.rows) return;
  const int64_t cols = g.w.cols;
  double acc[TT];
  for (int tt = 0; tt < TT; ++tt) acc[tt] = 0;
  for (int64_t i = lane; i < cols; i += 32) {
    const double w = load_w(g.w, r, i);
#pragma unroll
    for (int tt = 0; tt < TT; ++tt)
      if (t0 + tt < a.T) acc[tt] += double(g.x[(g.t_in0 + t0 + tt) * cols + i]) * w;
  }
  for (int tt = 0; tt < TT; ++tt) acc[tt] = warp_sum_f64(acc[tt]);
  if (lane != 0) return;
  for (int tt = 0; tt < TT && t0 + tt < a.T; ++tt) {
    float y = float(acc[tt]);
    if (g.cap > 0) y = float(double(g.cap) * ::tanh(double(y) / double(g.cap)));
    g.y[size_t(t0 + tt) * g.w.rows + r] = y;
  }
}

// ---- launchers ---------------------------------------------------------------

// Whether the fast kernel takes this matrix and input format.
inline bool gemv_fast(const DevMatrix& w, const QAct& q) {
  return w.dtype == 3 && w.group >= w.cols && w.cols % 32 == 0 && q.block == 32 && q.pack != nullptr;
}

// num::acc_align(p, x, e_top) for a 32-bit block partial, given the shift
// d = x - e_top + kAccFrac (<= kAccFrac): shift_rne's steps in 32 bits.
__device__ inline int64_t align_i32(int32_t p, int d) {
  if (d >= 0) return static_cast<int64_t>(p) << d;
  const int sft = -d;
  if (sft >= 32) return 0;  // |p| < 2^31 <= 2^(sft - 1): below half a unit
  const uint32_t a = p < 0 ? 0u - static_cast<uint32_t>(p) : static_cast<uint32_t>(p);
  uint32_t q = a >> sft;
  const uint32_t rem = a & ((1u << sft) - 1u), half = 1u << (sft - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return p < 0 ? -static_cast<int64_t>(q) : static_cast<int64_t>(q);
}

// Decode (one token): persistent warps. A task is RPW consecutive rows of
// one segment (a.seg[s].nblk tasks each); the KSPLIT warps of a row group
// (in one CUDA block) take the 32 * UMAX-block chunks kw of the row (rows of
// at most KSPLIT * 32 * UMAX blocks) and add their integer sums in shared
// memory. Row group w of the grid takes tasks w, w + NG, ... and loads the
// weights of its next task before working on the current one, so every
// warp keeps UMAX x RPW 16-byte loads in flight for the whole launch rather
// than one batch per short-lived block. Lane j holds its activation blocks
// (exponent, alignment shift, mantissa sum, dp4a pieces) for the current
// segment. The block partials and their alignment are gemv_int4_kernel's
// (integers, no order), so are the bits.
template <int SPLITS, int RPW, int UMAX, int KSPLIT>
__global__ void __launch_bounds__(kGemvThreads, 2) gemv_int4_persist_kernel(GemvBatch a, int ntask) {
  constexpr int kGroups = kGemvRows / KSPLIT;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, kw = warp % KSPLIT, rw = warp / KSPLIT;
  const int NG = gridDim.x * kGroups, b0 = kw * 32 * UMAX + lane;
  int task = blockIdx.x * kGroups + rw;
  auto locate = [&](int k, int* seg, int* r0) {
    int sg = 0;
    while (sg + 1 < a.nseg && k >= a.seg[sg].nblk) k -= a.seg[sg++].nblk;
    *seg = sg;
    *r0 = k * RPW;
  };
  // The lane that finishes a row (rows_sum_row; lane < RPW with KSPLIT > 1)
  // fetches its scale with the weights.
  const int my_row = KSPLIT == 1 ? rows_sum_row<RPW>(lane) : lane;
  auto fetch = [&](int k, uint4 (&w)[UMAX][RPW], float* sc) {
    int sg, r0;
    locate(k, &sg, &r0);
    const GemvSeg& g = a.seg[sg];
    const int nb = g.q.nb;
    const int nr = g.w.rows - r0 < RPW ? int(g.w.rows - r0) : RPW;
    const uint4* wr = reinterpret_cast<const uint4*>(g.w.data + size_t(r0) * g.w.row_bytes);
    *sc = my_row < nr ? __ldg(g.w.scales + r0 + my_row) : 0.0f;
#pragma unroll
    for (int u = 0; u < UMAX; ++u)
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr)
        if (b0 + 32 * u < nb && rr < nr) w[u][rr] = __ldcs(wr + size_t(rr) * nb + b0 + 32 * u);
  };
  uint4 wc[UMAX][RPW], wn[UMAX][RPW];
  float sc_c = 0.0f, sc_n = 0.0f;
  if (task < ntask) fetch(task, wc, &sc_c);  // weights first: they do not depend on the producer
  pdl_begin();
  __shared__ int64_t s_part[kGemvRows][RPW];
  int cur = -1, emax = num::kBfpZero;
  bool pois = false;
  int32_t ex[UMAX], sh[UMAX], ms[UMAX], pk[UMAX][SPLITS * 8];
  // Every warp of a block runs the same number of iterations (KSPLIT > 1:
  // the block's warps share each task), so the barriers below are uniform.
  for (; task < ntask; task += NG) {
    if (task + NG < ntask) fetch(task + NG, wn, &sc_n);
    int sg, r0;
    locate(task, &sg, &r0);
    const GemvSeg& g = a.seg[sg];
    const int nb = g.q.nb;
    const int nr = g.w.rows - r0 < RPW ? int(g.w.rows - r0) : RPW;
    // Segments reading the same activation (q, k, v and LAuReL's left
    // matrix; gate and up) keep the lane's blocks, e_max and shifts.
    if (sg != cur && (cur < 0 || !same_input(g, a.seg[cur]))) {
      cur = sg;
      const size_t q0 = size_t(g.t_in0) * nb;
      // All of the lane's activation loads first (one round trip to memory).
#pragma unroll
      for (int u = 0; u < UMAX; ++u) {
        const int b = b0 + 32 * u;
        ex[u] = num::kBfpZero;
        if (b >= nb) continue;
        ex[u] = __ldg(g.q.exp + q0 + b);
        ms[u] = __ldg(g.q.msum + q0 + b);
        load_pieces<SPLITS>(g.q, q0 + b, pk[u]);
      }
      if (KSPLIT == 1 && nb <= 32 * UMAX) {
        // The lanes' blocks are then the whole vector: e_max and poison are
        // warp_emax's rule over the exponents already loaded.
        int mx = num::kBfpZero, po = 0;
#pragma unroll
        for (int u = 0; u < UMAX; ++u) {
          if (ex[u] == num::kBfpPoison)
            po = 1;
          else if (ex[u] != num::kBfpZero && ex[u] > mx)
            mx = ex[u];
        }
        emax = __reduce_max_sync(kFull, mx);
        pois = __reduce_or_sync(kFull, po) != 0;
      } else {
        warp_emax(g.q.exp + q0, nb, &emax, &pois);
      }
#pragma unroll
      for (int u = 0; u < UMAX; ++u) sh[u] = ex[u] - emax + num::kAccFrac;
    }
    int64_t acc[RPW];
#pragma unroll
    for (int rr = 0; rr < RPW; ++rr) acc[rr] = 0;
#pragma unroll
    for (int u = 0; u < UMAX; ++u) {
      if (ex[u] == num::kBfpZero || ex[u] == num::kBfpPoison) continue;
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) {
        if (rr >= nr) break;
        const uint32_t w[4] = {wc[u][rr].x, wc[u][rr].y, wc[u][rr].z, wc[u][rr].w};
        acc[rr] += align_i32(int4_block_partial_split<SPLITS>(w, pk[u], ms[u]), sh[u]);
      }
    }
    if constexpr (KSPLIT == 1) {
      int row;
      const int64_t sum = warp_rows_sum<RPW>(acc, lane, &row);
      if ((lane & (32 / RPW - 1)) == 0 && row < nr)
        g.y[r0 + row] = npu_epilogue(sum, emax, pois, sc_c, g);
    } else {
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) acc[rr] = warp_sum_i64(acc[rr]);  // in lane 0
      if (lane == 0)
#pragma unroll
        for (int rr = 0; rr < RPW; ++rr) s_part[warp][rr] = acc[rr];
      __syncthreads();
      if (kw == 0)
#pragma unroll
        for (int rr = 0; rr < RPW; ++rr) {
          int64_t sum = 0;
          for (int k = 0; k < KSPLIT; ++k) sum += s_part[warp + k][rr];
          acc[rr] = sum;
        }
      __syncthreads();
      if (kw == 0 && lane < nr) {
        int64_t mine = acc[0];
#pragma unroll
        for (int rr = 1; rr < RPW; ++rr)
          if (lane == rr) mine = acc[rr];
        g.y[r0 + lane] = npu_epilogue(mine, emax, pois, sc_c, g);
      }
    }
    sc_c = sc_n;
#pragma unroll
    for (int u = 0; u < UMAX; ++u)
#pragma unroll
      for (int rr = 0; rr < RPW; ++rr) wc[u][rr] = wn[u][rr];
  }
}

// Grid of the persistent kernel: as many blocks as stay resident.
template <class K>
int persist_blocks(K* k) {
  static int n = 0;
  if (n == 0) {
    int dev = 0, sms = 0, per = 0;
    N3_CUDA(cudaGetDevice(&dev));
    N3_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    N3_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, kGemvThreads, 0));
    n = sms * (per > 0 ? per : 1);
  }
  return n;
}

// How decode GEMVs are launched (CudaModel fills it from N3_CUDA_GEMV_PERSIST
// and N3_CUDA_GEMV_BLOCKS). The persistent kernel measured at or slightly
// above gemv_int4_kernel on E4B (H200): 203.6 against 203.2 tok/s in one run,
// 207.2 against 199.0 in another (a ping-pong variant with two tasks in
// flight measured 192.3; the old kernel compiled for 4 blocks per SM, 191.9).
struct GemvPlan {
  bool persist = true;  // persistent warps for rows of up to 128 blocks
  // > 0: at most this many persistent blocks. The test models' matrices are
  // otherwise one task a warp; a small grid gives each warp many (the next
  // task's prefetch, the activation kept across segments).
  int max_blocks = 0;
};

template <int SPLITS, int RPW, int UMAX, int KSPLIT>
void launch_persist(const char* name, GemvBatch b, cudaStream_t s, int max_blocks) {
  int ntask = 0;
  for (int i = 0; i < b.nseg; ++i) {
    b.seg[i].nblk = ceil_div(b.seg[i].w.rows, RPW);
    ntask += b.seg[i].nblk;
  }
  auto* k = gemv_int4_persist_kernel<SPLITS, RPW, UMAX, KSPLIT>;
  int blocks = std::min(persist_blocks(k), ceil_div(ntask, kGemvRows / KSPLIT));
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  launch(name, k, blocks, kGemvThreads, 0, s, b, ntask);
}

// NPU numerics: y = W x for every segment, T output rows each.
inline void gemv_npu(std::vector<GemvSeg> segs, int T, cudaStream_t s, const char* name = "gemv_int4_kernel",
                     const GemvPlan& plan = {}) {
  GemvBatch fast;
  fast.T = T;
  int blocks = 0;
  for (GemvSeg& g : segs) {
    require(g.w.dtype == 3, "cuda: a non-INT4 matrix reached the NPU GEMV (quantise float checkpoints on load)");
    require(g.w.cols == g.q.n,
            "cuda: GEMV input length " + std::to_string(g.q.n) + " != matrix columns " + std::to_string(g.w.cols));
    require(g.w.cols <= num::kMaxDotLen,
            "cuda: GEMV of " + std::to_string(g.w.cols) + " inputs exceeds the accumulator bound");
    if (gemv_fast(g.w, g.q)) {
      require(fast.nseg < kMaxSegs, "cuda: too many GEMV segments");
      g.nblk = ceil_div(g.w.rows, kGemvRows);
      blocks += g.nblk;
      fast.seg[fast.nseg++] = g;
      continue;
    }
    require(g.w.group >= g.w.cols || g.w.group % g.q.block == 0, "INT4 weight group " + std::to_string(g.w.group) +
                                                                     " is not a multiple of numerics.bfp_block " +
                                                                     std::to_string(g.q.block));
    const int64_t n = int64_t(T) * g.w.rows;
    launch("gemv_int4_generic_kernel", gemv_int4_generic_kernel, ceil_div(n, 128), 128, 0, s, g, T);
  }
  if (fast.nseg == 0) return;
  const int splits = fast.seg[0].q.splits;
  for (int i = 0; i < fast.nseg; ++i)
    require(fast.seg[i].q.splits == splits, "cuda: GEMV segments with different mantissa widths");
  // Decode (one token): 4 rows a warp and long rows split over 8 warps, as
  // long as that leaves two blocks per SM; small matrices get a row a warp
  // (and split rows) so that enough of the GPU streams them. Prefill: 4
  // tokens a weight load.
  int max_nb = 0;
  for (int i = 0; i < fast.nseg; ++i) max_nb = std::max(max_nb, fast.seg[i].q.nb);
  // Decode: persistent warps for rows of up to 128 blocks (the down
  // projection measured faster on gemv_int4_kernel's 8-warp split, 12.4
  // against 14.9 us in ncu).
  if (T == 1 && max_nb <= 128 && plan.persist) {
    const int mb = plan.max_blocks;
    if (max_nb <= 64) {
      if (splits == 2)
        launch_persist<2, 4, 2, 1>(name, fast, s, mb);
      else
        launch_persist<3, 4, 2, 1>(name, fast, s, mb);
    } else {
      if (splits == 2)
        launch_persist<2, 2, 4, 1>(name, fast, s, mb);
      else
        launch_persist<3, 2, 4, 1>(name, fast, s, mb);
    }
    return;
  }
  auto count = [&](int rpw, int ksplit) {
    int n = 0;
    for (int i = 0; i < fast.nseg; ++i) n += ceil_div(fast.seg[i].w.rows, (kGemvRows / ksplit) * rpw);
    return n;
  };
  int rpw = 1, ksplit = 1;
  if (T == 1) {
    const int enough = 2 * 132;
    rpw = 4;
    ksplit = max_nb >= 256 ? 8 : 1;
    if (count(rpw, ksplit) < enough) rpw = 1;
    if (count(rpw, ksplit) < enough && max_nb >= 64) ksplit = 8;
  }
  for (int i = 0; i < fast.nseg; ++i) fast.seg[i].nblk = ceil_div(fast.seg[i].w.rows, (kGemvRows / ksplit) * rpw);
  blocks = count(rpw, ksplit);
  if (T == 1) {
    const dim3 grid(blocks, 1);
    const int key = (splits == 2 ? 0 : 4) + (rpw == 4 ? 0 : 2) + (ksplit == 8 ? 1 : 0);
    switch (key) {
      case 0:
        launch(name, gemv_int4_kernel<1, 2, 2, 4, 1>, grid, kGemvThreads, 0, s, fast);
        break;
      case 1:
        launch(name, gemv_int4_kernel<1, 2, 2, 4, 8>, grid, kGemvThreads, 0, s, fast);
        break;
      case 2:
        launch(name, gemv_int4_kernel<1, 2, 2, 1, 1>, grid, kGemvThreads, 0, s, fast);
        break;
      case 3:
        launch(name, gemv_int4_kernel<1, 2, 2, 1, 8>, grid, kGemvThreads, 0, s, fast);
        break;
      case 4:
        launch(name, gemv_int4_kernel<1, 3, 2, 4, 1>, grid, kGemvThreads, 0, s, fast);
        break;
      case 5:
        launch(name, gemv_int4_kernel<1, 3, 2, 4, 8>, grid, kGemvThreads, 0, s, fast);
        break;
      case 6:
        launch(name, gemv_int4_kernel<1, 3, 2, 1, 1>, grid, kGemvThreads, 0, s, fast);
        break;
      default:
        launch(name, gemv_int4_kernel<1, 3, 2, 1, 8>, grid, kGemvThreads, 0, s, fast);
    }
  } else {
    const dim3 grid(blocks, ceil_div(T, 4));
    if (splits == 2)
      launch(name, gemv_int4_kernel<4, 2, 2, 1, 1>, grid, kGemvThreads, 0, s, fast);
    else
      launch(name, gemv_int4_kernel<4, 3, 2, 1, 1>, grid, kGemvThreads, 0, s, fast);
  }
}

// Reference numerics: y = W x in float64 for every segment.
inline void gemv_ref(std::vector<GemvSeg> segs, int T, cudaStream_t s, const char* name = "gemv_ref_kernel") {
  GemvBatch b;
  b.T = T;
  int blocks = 0;
  for (GemvSeg& g : segs) {
    g.nblk = ceil_div(g.w.rows, kGemvRows);
    blocks += g.nblk;
    require(b.nseg < kMaxSegs, "cuda: too many GEMV segments");
    b.seg[b.nseg++] = g;
  }
  if (T == 1)
    launch(name, gemv_ref_kernel<1>, dim3(blocks, 1), kGemvThreads, 0, s, b);
  else
    launch(name, gemv_ref_kernel<4>, dim3(blocks, ceil_div(T, 4)), kGemvThreads, 0, s, b);
}

}  // namespace n3::gpu
