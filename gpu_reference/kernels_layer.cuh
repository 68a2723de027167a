// The steps of golden/model.cc between the linear layers, fused per token:
// CUDA blocks (up to kRowThreads) work on one token's vectors (one block, a
// slice of D each, or a head each: see below and qkv_kernel), doing exactly
// the float32 operations model.cc writes inline (scales, residual adds, the
// AltUp loops in their order, the `store` rounding after each) and calling
// the arithmetic's operators (Ops: ops_cuda.cuh) where model.cc calls
// Kernels. Vector reductions run on one warp in the core's order; elements
// are then spread over the block. Outputs that feed a GEMV are quantised to
// BFP as they are written (lane_quantise) when the format allows it.
//
// Each kernel names the model.cc functions it covers. Shapes: T tokens,
// D hidden, S AltUp streams, streams stored [S, T, D].
//
// The kernels with a grid of (slices, T) spread a token over gridDim.x
// blocks: every block computes the vectors its reductions read over all of
// D (the same operations in the same order, so the same values), and writes
// and quantises only its slice [lo, hi) of the outputs. One block on one SM
// was bound by its instruction count; the slices divide the elementwise and
// quantisation work, the redundant reductions are short.
#pragma once
#include "gpu_reference/kernels_gemv.cuh"
#include "gpu_reference/ops_cuda.cuh"

namespace n3::gpu {

// One token's vectors per block: wide blocks keep the elementwise passes
// short (D = 2048 is two elements a thread); registers stay <= 64.
constexpr int kRowThreads = 1024;
constexpr int kMaxStreams = 8;

// The slice of D this block writes (row_slices: D % (32 * gridDim.x) == 0).
struct Slice {
  int lo, hi;
  __device__ bool has(int i) const { return i >= lo && i < hi; }
};
__device__ inline Slice row_slice(int D) {
  const int w = D / int(gridDim.x);
  return {int(blockIdx.x) * w, int(blockIdx.x) + 1 == int(gridDim.x) ? D : (int(blockIdx.x) + 1) * w};
}
// Blocks per token for the sliced kernels: slices of `per` elements (a
// multiple of 32) when D splits evenly, else one block.
inline int row_slices(int D, int per) {
  if (per < 32 || per % 32 != 0 || D % per != 0 || D / per < 2) return 1;
  return D / per;
}

#define N3_ROW_IDS                                                                  \
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nthr = blockDim.x; \
  const int nwarps = nthr >> 5;                                                     \
  (void)lane, (void)warp, (void)nwarps

// Weights are never written, so the kernels copy the weight vectors they
// read into shared memory before pdl_begin(): the loads overlap the tail of
// the previous kernel instead of sitting on the chain of dependent phases.
// The values are the same, so is every result. (A __syncthreads() must
// follow before the copies are read; each kernel has one.)
__device__ inline const float* stage_vec(float* dst, const float* src, int n) {
  if (!src) return nullptr;
  for (int base = threadIdx.x; base < n; base += 4 * blockDim.x) {
    float v[4];  // a thread's loads all go out before its stores (dst may alias src for the compiler)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = base + k * blockDim.x;
      v[k] = i < n ? __ldg(src + i) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = base + k * blockDim.x;
      if (i < n) dst[i] = v[k];
    }
  }
  return dst;
}

// Inputs a kernel reads that the kernel just before it did not write (they
// come from two or more kernels back) are staged before pdl_begin() too:
// every kernel waits for its predecessor before it lets its successor
// launch, so when a kernel starts, all kernels before its predecessor have
// completed and their writes are visible. stage_streams copies the S
// stream rows src + p * TD, p < S, of w elements to dst[p * w + ...], all
// of a thread's loads before its stores.
template <int SM>
__device__ inline void stage_streams(float* dst, const float* src, size_t TD, int S, int w) {
  for (int base = threadIdx.x; base < w; base += blockDim.x) {
    float v[SM];
#pragma unroll
    for (int p = 0; p < SM; ++p) v[p] = p < S ? __ldg(src + p * TD + base) : 0.0f;
#pragma unroll
    for (int p = 0; p < SM; ++p)
      if (p < S) dst[p * w + base] = v[p];
  }
}

// dst[m][0..n) = src[m][0..n) for M vectors, by the whole block, each thread
// issuing all its loads (up to 2 elements of each vector) before its stores:
// one round trip to memory instead of one per element.
template <int M>
__device__ inline void load_rows(float* const (&dst)[M], const float* const (&src)[M], int n) {
  for (int base = threadIdx.x; base < n; base += 2 * blockDim.x) {
    float v[M][2];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int i = base + k * blockDim.x;
        v[m][k] = i < n ? src[m][i] : 0.0f;
      }
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int i = base + k * blockDim.x;
        if (i < n) dst[m][i] = v[m][k];
      }
  }
}
// A float32 matrix (the AltUp router) into shared memory as rows * cols floats.
// Up to 8 loads of a thread go out before its stores: the rows were one
// global round trip each, serialised load, store, load, ...
__device__ inline DevMatrix stage_f32_matrix(float* dst, DevMatrix w) {
  const int n = int(w.rows * w.cols), cols = int(w.cols);
  for (int base = threadIdx.x; base < n; base += 8 * blockDim.x) {
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int i = base + k * blockDim.x, r = i / cols;
      v[k] = i < n ? __ldg(reinterpret_cast<const float*>(w.data + r * w.row_bytes) + (i - r * cols)) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int i = base + k * blockDim.x;
      if (i < n) dst[i] = v[k];
    }
  }
  w.data = reinterpret_cast<const uint8_t*>(dst);
  w.row_bytes = w.cols * 4;
  return w;
}
// Shared floats a kernel stages for the router: S * D when it is float32.
inline size_t router_stage_floats(const DevMatrix& router) {
  return router.dtype == 0 ? size_t(router.rows * router.cols) : 0;
}

// embed: x0 = store(E[id] * sqrt(D)).
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    embed_kernel(Ops ops, DevMatrix E, const int32_t* ids, float scale, int D, float* x0, QAct q) {
  pdl_begin();
  N3_ROW_IDS;
  const int t = blockIdx.x, id = ids[t];
  for (int base = 0; base < D; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < D) {
      v = ops.store(load_w(E, id, i) * scale);
      x0[size_t(t) * D + i] = v;
    }
    lane_quantise(q, t, i, v);
  }
}

// per_layer_inputs (after the projection GEMV): pli = store(pli * D^-0.5);
// RMSNorm of each of the L rows of P; pli = store((pli + E_pl[id] * sqrt(P)) / sqrt(2)).
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    per_layer_inputs_kernel(Ops ops, const int32_t* ids, DevMatrix Epl, int vocab_pl, const float* plp_norm, float* pli,
                            int L, int P, float proj_scale, float ple_scale, float mix) {
  pdl_begin();
  N3_ROW_IDS;
  const int t = blockIdx.x, LP = L * P;
  float* r = pli + size_t(t) * LP;
  for (int i = tid; i < LP; i += nthr) r[i] = ops.store(r[i] * proj_scale);
  __syncthreads();
  for (int row = warp; row < L; row += nwarps) {
    float* x = r + row * P;
    const auto nr = ops.norm(x, P);
    for (int i = lane; i < P; i += 32) x[i] = ops.normed(x[i], nr, plp_norm, i);
  }
  __syncthreads();
  const int id = ids[t] < vocab_pl ? ids[t] : 0;  // HF: ids past the table use row 0
  for (int i = tid; i < LP; i += nthr) r[i] = ops.store((r[i] + load_w(Epl, id, i) * ple_scale) * mix);
}

// altup_project (after the projection GEMVs): h0 = x0; h_s rescaled to rms(x0).
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    altup_project_kernel(Ops ops, const float* x0, float* h, int T, int D, int S) {
  pdl_begin();
  N3_ROW_IDS;
  const int t = blockIdx.x;
  const size_t TD = size_t(T) * D;
  const float* x = x0 + size_t(t) * D;
  __shared__ float s_target;
  __shared__ typename Ops::Mag s_mag[kMaxStreams];
  // Every stream is held in the stream format (golden's altup_project).
  for (int i = tid; i < D; i += nthr) h[size_t(t) * D + i] = ops.store_stream(x[i]);
  if (warp == 0) {
    const float tr = ops.rms(x, D);
    if (lane == 0) s_target = tr;
  }
  __syncthreads();
  for (int s = 1 + warp; s < S; s += nwarps) {
    const auto m = ops.mag(h + s * TD + size_t(t) * D, D, s_target, 1e-5f);
    if (lane == 0) s_mag[s] = m;
  }
  __syncthreads();
  for (int s = 1; s < S; ++s) {
    float* hs = h + s * TD + size_t(t) * D;
    for (int i = tid; i < D; i += nthr) hs[i] = ops.store_stream(ops.magged(hs[i], s_mag[s]));
  }
}

// router: m = tanh((store(RMSNorm(x, w_rn) * (1/D))) W_router^T), all threads of the block.
template <class Ops>
__device__ void router_block(const Ops& ops, const float* x, float* xr, const float* norm_w, const DevMatrix& W, int D,
                             int S, float inv_d, float* s_m, float* m_out) {
  N3_ROW_IDS;
  __shared__ typename Ops::Norm s_n;
  if (warp == 0) {
    const auto r = ops.norm(x, D);
    if (lane == 0) s_n = r;
  }
  __syncthreads();
  for (int i = tid; i < D; i += nthr) xr[i] = ops.store(ops.normed(x[i], s_n, norm_w, i) * inv_d);
  __syncthreads();
  for (int s = warp; s < S; s += nwarps) {
    const float v = ops.tanh(ops.warp_dot(xr, W, s, D));
    if (lane == 0) {
      s_m[s] = v;
      if (m_out) m_out[s] = v;  // written by one block of the token
    }
  }
  __syncthreads();
}

// AltUp's router and prediction coefficients of one layer, for predict:
// m = router(h0); c = m W_pred^T, stored per token as mc[t] = (m[0..S),
// c[0..S*S)). They read only stream 0 of the layer's input, which is
// final well before the layer starts (x0 for layer 0, post_mlp's corr[0]
// of the layer before, which per_layer_out only copies into h[0]), so
// CudaModel runs this kernel on a side stream beside the per-layer-input
// GEMVs and kernels and predict joins it: the router, a chain of
// reductions, is off the decode chain. Dynamic shared memory: 3 D floats +
// router_stage_floats.
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    altup_coefs_kernel(Ops ops, const float* __restrict__ h0, float* __restrict__ mc, DevMatrix router,
                       DevMatrix predw, const float* router_norm, int D, int S, float inv_d) {
  N3_ROW_IDS;
  extern __shared__ __align__(16) unsigned char dsmem[];
  float* A = reinterpret_cast<float*>(dsmem);
  float* B = A + D;
  float* st = B + D;
  router_norm = stage_vec(st, router_norm, D);
  if (router.dtype == 0) router = stage_f32_matrix(st + D, router);
  const int t = blockIdx.x;
  __shared__ float s_m[kMaxStreams];
  {
    float* const dst[1] = {A};
    const float* const src[1] = {h0 + size_t(t) * D};
    load_rows<1>(dst, src, D);
  }
  __syncthreads();
  // Layer 0 reads x0, which stream 0 holds rounded to the stream format
  // (altup_project_kernel); the later layers' corr[0] is already in it, and
  // rounding it again is exact.
  for (int i = tid; i < D; i += nthr) A[i] = ops.store_stream(A[i]);
  __syncthreads();
  router_block(ops, A, B, router_norm, router, D, S, inv_d, s_m, nullptr);
  float* out = mc + size_t(t) * (S + S * S);
  if (tid < S) out[tid] = s_m[tid];
  if (tid < S * S) out[S + tid] = ops.small_dot(s_m, predw, tid, S);
}

// predict and input_norm, given mc (altup_coefs_kernel): c = mc's
// coefficients; pred[p] = store(h[p] + sum_q c[S p + q] h[q]);
// an = RMSNorm(pred[0], w_in). Dynamic shared memory: 2 D floats (pred[0],
// which an's norm reads, and the norm weight).
// SM: a compile-time bound on S (4 for Gemma 3n, else kMaxStreams), so the
// per-element stream loops carry no dead predicated iterations.
template <class Ops, int SM>
__global__ void __launch_bounds__(kRowThreads)
    predict_kernel(Ops ops, const float* __restrict__ h, const float* __restrict__ mc, float* __restrict__ pred,
                   float* __restrict__ m_out, float* __restrict__ an, QAct qan, const float* in_norm, int T, int D,
                   int S) {
  N3_ROW_IDS;
  extern __shared__ __align__(16) unsigned char dsmem[];
  float* A = reinterpret_cast<float*>(dsmem);
  in_norm = stage_vec(A + D, in_norm, D);
  const int t = blockIdx.y;
  const Slice sl = row_slice(D);
  const size_t TD = size_t(T) * D, row = size_t(t) * D;
  __shared__ typename Ops::Norm s_n;
  // mc is read after the wait: predict's launch follows an event wait on the
  // side stream, and whether stream capture makes that edge a full or a
  // programmatic dependency, griddepcontrol.wait covers it. Each thread
  // keeps the coefficients in registers; their loads and the stream values'
  // below are one round trip.
  const float* mt = mc + size_t(t) * (S + S * S);
  pdl_begin();
  if (blockIdx.x == 0 && m_out && tid < S) m_out[t * S + tid] = __ldg(mt + tid);  // written by one block of the token
  float c[SM][SM];  // indices fixed at compile time: registers, not local memory
#pragma unroll
  for (int p = 0; p < SM; ++p)
#pragma unroll
    for (int q = 0; q < SM; ++q) c[p][q] = p < S && q < S ? __ldg(mt + S + p * S + q) : 0.0f;
  // pred[0] over all of D (an's norm reads it), the other streams over the slice.
  for (int i = tid; i < D; i += nthr) {
    const bool mine = sl.has(i);
    float hv[SM];  // the S stream values of element i, loaded together
#pragma unroll
    for (int q = 0; q < SM; ++q) hv[q] = q < S ? h[q * TD + row + i] : 0.0f;
#pragma unroll
    for (int p = 0; p < SM; ++p) {
      if (p >= S || (p > 0 && !mine)) break;
      float acc = 0;  // HF: a [D, S] x [S, S] matmul per token, then += h
#pragma unroll
      for (int q = 0; q < SM; ++q)
        if (q < S) acc += c[p][q] * hv[q];
      const float v = ops.store_stream(hv[p] + acc);
      if (mine) pred[p * TD + row + i] = v;
      if (p == 0) A[i] = v;
    }
  }
  __syncthreads();
  if (warp == 0) {
    const auto r = ops.norm(A, D);
    if (lane == 0) s_n = r;
  }
  __syncthreads();
  for (int base = sl.lo; base < sl.hi; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < sl.hi) {
      v = ops.normed(A[i], s_n, in_norm, i);
      an[row + i] = v;
    }
    if (base + warp * 32 < sl.hi) lane_quantise(qan, t, i, v);
  }
}

// attention, before attend: q = RoPE(RMSNorm_per_head(q, w_qn)); on
// cache-owning layers k = RoPE(RMSNorm_per_head(k, w_kn)), v = v_norm(v),
// both converted to the cache format (to_kv) and appended at row step[1] + t
// (NPU: the key row's BFP too; an INT8 cache (kv.k8): the head's codes and
// scale, and k / v hold the stored values q * scale, which golden dumps).
// Also quantises LAuReL's mid (ll output).
// Grid (H + 2 KVH or H, T): a block per head (query heads, then key heads,
// then value heads), the heads being independent; block 0 also quantises mid.
// Int8: the INT8 cache's append, a separate instance so that the f16 / bf16
// one keeps its code (a run-time branch cost it 0.3 us a launch on the H100).
template <class Ops, bool Int8 = false>
__global__ void __launch_bounds__(kRowThreads)
    qkv_kernel(Ops ops, float* __restrict__ q, float* __restrict__ k, float* __restrict__ v, const float* q_norm, const float* k_norm, const float* inv_freq,
               int H, int KVH, int hd, bool owns, const int64_t* step, KvDev kv, int B, int attn_mbits,
               const float* __restrict__ mid, QAct qmid, int R) {
  N3_ROW_IDS;
  const int t = blockIdx.y, hb = blockIdx.x, KVD = KVH * hd, half = hd / 2;
  const int kind = hb < H ? 0 : hb < H + KVH ? 1 : 2;  // query, key, value head
  const int head = kind == 0 ? hb : kind == 1 ? hb - H : hb - H - KVH;
  __shared__ float s_w[512], s_freq[256], s_x[512];
  __shared__ typename Ops::CS s_cs[256];
  __shared__ typename Ops::Norm s_n;
  __shared__ uint32_t s_amax;
  __shared__ int s_bad;
  const float* w = kind == 0 ? stage_vec(s_w, q_norm, hd) : kind == 1 ? stage_vec(s_w, k_norm, hd) : nullptr;
  if (kind < 2) inv_freq = stage_vec(s_freq, inv_freq, half);
  if constexpr (Int8) {
    if (tid == 0) s_amax = 0, s_bad = 0;
  }
  __syncthreads();
  // The RoPE angles need only the position (host-written before the
  // forward's first kernel): before the wait.
  const int64_t pos = step[0] + t;
  if (kind < 2)
    for (int i = tid; i < half; i += nthr) s_cs[i] = ops.rope_cs(pos, inv_freq[i]);
  pdl_begin();
  float* x = kind == 0 ? q + (size_t(t) * H + head) * hd : (kind == 1 ? k : v) + size_t(t) * KVD + head * hd;
  for (int i = tid; i < hd; i += nthr) s_x[i] = x[i];
  __syncthreads();
  if (warp == 0) {
    const auto nr = ops.norm(s_x, hd);
    if (lane == 0) s_n = nr;
  }
  __syncthreads();
  for (int i = tid; i < hd; i += nthr) s_x[i] = ops.normed(s_x[i], s_n, w, i);
  __syncthreads();
  if (kind < 2)
    for (int i = tid; i < half; i += nthr) {
      float a = s_x[i], b = s_x[i + half];
      ops.rope(a, b, s_cs[i]);
      s_x[i] = a;
      s_x[i + half] = b;
    }
  __syncthreads();
  const int64_t row = step[1] + t;
  if constexpr (!Int8) {
    for (int i = tid; i < hd; i += nthr) {
      const float y = kind == 0 ? s_x[i] : ops.to_kv(s_x[i]);
      x[i] = y;
      if (kind == 1) kv.k[row * KVD + head * hd + i] = y;
      if (kind == 2) kv.v[row * KVD + head * hd + i] = y;
      s_x[i] = y;
    }
  } else {
    // num::int8_quantize of a key or value head, in parallel: max|x| and
    // whether an element is NaN or infinite are a max and an or (no order),
    // then each element's code comes from the core's int8_scale /
    // int8_code, its stored value from int8_value.
    int8_t* codes = kind == 1 ? kv.k8 : kv.v8;
    float sc = 0.0f;
    if (kind > 0) {
      uint32_t m = 0;
      int bad = 0;
      for (int i = tid; i < hd; i += nthr) {
        const float xv = s_x[i];
        if (!num::is_finite(xv)) bad = 1;
        m = max(m, num::f2u(num::abs_f(xv)));  // non-negative floats order as their bits
      }
      m = __reduce_max_sync(kFull, m);
      bad = __reduce_or_sync(kFull, bad);
      if (lane == 0) {
        atomicMax(&s_amax, m);
        atomicOr(&s_bad, bad);
      }
      __syncthreads();
      sc = num::int8_scale(num::u2f(s_amax), s_bad != 0);
      if (tid == 0) (kind == 1 ? kv.ks : kv.vs)[row * KVH + head] = sc;
    }
    for (int i = tid; i < hd; i += nthr) {
      float y = s_x[i];
      if (kind > 0) {
        const int8_t c = num::int8_code(y, sc);
        codes[row * KVD + head * hd + i] = c;
        y = num::int8_value(c, sc);
      }
      x[i] = y;
      s_x[i] = y;
    }
  }
  if (kind == 1 && kv.kmant) {
    __syncthreads();
    const int nbd = (hd + B - 1) / B;
    const size_t r = size_t(row) * KVH + head;
    if (B == 32) {  // a warp a block
      for (int bb = warp; bb < nbd; bb += nwarps) {
        const int i = bb * 32 + lane;
        warp_quantize32(i < hd ? s_x[i] : 0.0f, attn_mbits, kv.kmant + (r * nbd + bb) * 32, kv.kexp + r * nbd + bb);
      }
    } else {
      for (int bb = tid; bb < nbd; bb += nthr) {
        const int cnt = hd - bb * B < B ? hd - bb * B : B;
        kv.kexp[r * nbd + bb] = num::bfp_quantize_block(s_x + bb * B, cnt, B, attn_mbits, kv.kmant + r * nbd * B + bb * B);
      }
    }
    __syncthreads();
    if (tid == 0) {
      const num::BfpView bv = bfp_view(kv.kmant + r * nbd * B, kv.kexp + r * nbd, hd, B);
      kv.kemax[r] = bv.e_max;
      kv.kpois[r] = bv.poison ? 1 : 0;
    }
  }
  if (hb == 0)
    for (int base = 0; base < R; base += nthr) {
      const int i = base + tid;
      lane_quantise(qmid, t, i, i < R ? mid[size_t(t) * R + i] : 0.0f);
    }
}

// After attention and LAuReL: ag = store(a + RMSNorm(attn, w_post_attn));
// lo = store(an + RMSNorm(lr, w_laurel)); al = store((ag + lo) / sqrt(2));
// xn = RMSNorm(al, w_pre_ffn) (the MLP input). Dynamic shared memory: 7 D floats.
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    post_attention_kernel(Ops ops, const float* __restrict__ attn, const float* __restrict__ lr,
                          const float* __restrict__ a, const float* __restrict__ an, const float* post_attn,
                          const float* laurel_norm, const float* pre_ffn, float* __restrict__ ag,
                          float* __restrict__ lo, float* __restrict__ al, float* __restrict__ xn, QAct qxn, int D,
                          float inv_sqrt2) {
  N3_ROW_IDS;
  extern __shared__ __align__(16) unsigned char dsmem[];
  float* A = reinterpret_cast<float*>(dsmem);
  float* B = A + D;
  post_attn = stage_vec(B + D, post_attn, D);
  laurel_norm = stage_vec(B + 2 * D, laurel_norm, D);
  pre_ffn = stage_vec(B + 3 * D, pre_ffn, D);
  const int t = blockIdx.y;
  const Slice sl = row_slice(D);
  const size_t row = size_t(t) * D;
  const float* as = stage_vec(B + 4 * D, a + row, D);  // predict's outputs, three kernels back
  const float* ans = stage_vec(B + 5 * D, an + row, D);
  pdl_begin();
  __shared__ typename Ops::Norm s_n[3];
  {
    float* const dst[2] = {A, B};
    const float* const src[2] = {attn + row, lr + row};
    load_rows<2>(dst, src, D);
  }
  __syncthreads();
  if (warp < 2) {
    const auto r = ops.norm(warp == 0 ? A : B, D);
    if (lane == 0) s_n[warp] = r;
  }
  __syncthreads();
  for (int i = tid; i < D; i += nthr) {
    const float g = ops.store_stream(ops.normed(A[i], s_n[0], post_attn, i) + as[i]);
    const float l = ops.store(ops.normed(B[i], s_n[1], laurel_norm, i) + ans[i]);
    const float v = ops.store_stream((g + l) * inv_sqrt2);
    if (sl.has(i)) {
      ag[row + i] = g;
      lo[row + i] = l;
      al[row + i] = v;
    }
    A[i] = v;
  }
  __syncthreads();
  if (warp == 0) {
    const auto r = ops.norm(A, D);
    if (lane == 0) s_n[2] = r;
  }
  __syncthreads();
  for (int base = sl.lo; base < sl.hi; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < sl.hi) {
      v = ops.normed(A[i], s_n[2], pre_ffn, i);
      xn[row + i] = v;
    }
    if (base + warp * 32 < sl.hi) lane_quantise(qxn, t, i, v);
  }
}

// mlp between the GEMVs: g = topk(g) on sparse layers (mult > 0);
// act = store(GELU(g) * u). Grid (F / kRowThreads, T).
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    mlp_act_kernel(Ops ops, const float* __restrict__ g_raw, const float* __restrict__ u, float* __restrict__ g,
                   float* __restrict__ act, QAct qact, int F, float mult) {
  pdl_begin();
  N3_ROW_IDS;
  const int t = blockIdx.y;
  const float* gr = g_raw + size_t(t) * F;
  __shared__ typename Ops::Cut s_cut;
  if (mult > 0) {
    // The threshold needs the whole row: staged in shared memory (dynamic,
    // F floats) by the block, then reduced by one warp in the core's order.
    extern __shared__ __align__(16) unsigned char dsmem[];
    float* row = reinterpret_cast<float*>(dsmem);
    for (int base = tid; base < F; base += 8 * nthr) {  // 8 loads in flight a thread
      float v[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = base + k * nthr < F ? gr[base + k * nthr] : 0.0f;
#pragma unroll
      for (int k = 0; k < 8; ++k)
        if (base + k * nthr < F) row[base + k * nthr] = v[k];
    }
    __syncthreads();
    if (warp == 0) {
      const auto c = ops.cut(row, F, mult);
      if (lane == 0) s_cut = c;
    }
    __syncthreads();
  }
  const int i = blockIdx.x * nthr + tid;
  float v = 0.0f;
  if (i < F) {
    const float gv = mult > 0 ? ops.cutted(gr[i], s_cut) : gr[i];
    g[size_t(t) * F + i] = gv;
    v = ops.store(ops.gelu(gv) * u[size_t(t) * F + i]);
    act[size_t(t) * F + i] = v;
  }
  lane_quantise(qact, t, i, v);
}

// After the MLP: o = store(al + RMSNorm(y, w_post_ffn)); correct:
// m2 = router(o); cc = store(m2 W_corr^T + 1);
// corr[p] = store(pred[p] + (o - pred[0]) * cc[p]); per_layer_mix's input
// gin = store(corr[0] * correct_output_scale). Dynamic shared memory: 6 D
// floats + router_stage_floats + S slices.
template <class Ops, int SM>
__global__ void __launch_bounds__(kRowThreads)
    post_mlp_kernel(Ops ops, const float* __restrict__ y, const float* __restrict__ al,
                    const float* __restrict__ pred, float* __restrict__ o, float* __restrict__ m_out,
                    float* __restrict__ corr, float* __restrict__ gin, QAct qgin, const float* post_ffn, const float* router_norm, DevMatrix router,
                    DevMatrix corrw, const float* out_scale, int T, int D, int S, float inv_d) {
  N3_ROW_IDS;
  extern __shared__ __align__(16) unsigned char dsmem[];
  float* A = reinterpret_cast<float*>(dsmem);
  float* B = A + D;
  float* st = B + D;
  post_ffn = stage_vec(st, post_ffn, D);
  router_norm = stage_vec(st + D, router_norm, D);
  out_scale = stage_vec(st + 2 * D, out_scale, D);
  float* ex = st + 3 * D + (router.dtype == 0 ? int(router.rows * router.cols) : 0);
  if (router.dtype == 0) router = stage_f32_matrix(st + 3 * D, router);
  const int t = blockIdx.y;
  const Slice sl = row_slice(D);
  const int w = sl.hi - sl.lo;
  const size_t TD = size_t(T) * D, row = size_t(t) * D;
  const float* als = stage_vec(ex, al + row, D);  // post_attention's, four kernels back
  float* preds = ex + D;                          // predict's streams over the slice
  stage_streams<SM>(preds, pred + row + sl.lo, TD, S, w);
  pdl_begin();
  __shared__ typename Ops::Norm s_n;
  __shared__ float s_m[kMaxStreams], s_cc[kMaxStreams];
  {
    float* const dst[1] = {A};
    const float* const src[1] = {y + row};
    load_rows<1>(dst, src, D);
  }
  __syncthreads();
  if (warp == 0) {
    const auto r = ops.norm(A, D);
    if (lane == 0) s_n = r;
  }
  __syncthreads();
  for (int i = tid; i < D; i += nthr) {
    const float v = ops.store_stream(ops.normed(A[i], s_n, post_ffn, i) + als[i]);
    if (sl.has(i)) o[row + i] = v;
    B[i] = v;
  }
  __syncthreads();
  router_block(ops, B, A, router_norm, router, D, S, inv_d, s_m, blockIdx.x == 0 ? m_out + t * S : nullptr);
  if (tid < S) s_cc[tid] = ops.store(ops.small_dot(s_m, corrw, tid, S) + 1.0f);
  __syncthreads();
  for (int base = sl.lo; base < sl.hi; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < sl.hi) {
      float pv[SM];  // the S pred values of element i, loaded together
#pragma unroll
      for (int p = 0; p < SM; ++p) pv[p] = p < S ? preds[p * w + i - sl.lo] : 0.0f;
      const float innov = B[i] - pv[0];
      float c0 = 0;
#pragma unroll
      for (int p = 0; p < SM; ++p) {
        if (p >= S) break;
        const float c = ops.store_stream(pv[p] + innov * s_cc[p]);
        corr[p * TD + row + i] = c;
        if (p == 0) c0 = c;
      }
      v = ops.store(out_scale ? c0 * out_scale[i] : c0);
      gin[row + i] = v;
    }
    if (base + warp * 32 < sl.hi) lane_quantise(qgin, t, i, v);
  }
}

// per_layer_mix between its GEMVs: f = store(GELU(f) * pli[t, layer]).
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    per_layer_gate_kernel(Ops ops, const float* __restrict__ f_raw, const float* __restrict__ pli,
                          float* __restrict__ f, QAct qf, int P, int LP, int layer) {
  N3_ROW_IDS;
  const int t = blockIdx.x;
  // pli is written once per forward, before the first layer: read before the wait.
  const float* pl = pli + size_t(t) * LP + size_t(layer) * P;
  const float pl0 = tid < P ? pl[tid] : 0.0f;
  pdl_begin();
  for (int base = 0; base < P; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < P) {
      v = ops.store(ops.gelu(f_raw[size_t(t) * P + i]) * (base == 0 ? pl0 : pl[i]));
      f[size_t(t) * P + i] = v;
    }
    lane_quantise(qf, t, i, v);
  }
}

// per_layer_mix's end: add = RMSNorm(add, w_post_pl); h[0] = corr[0],
// h[s] = store(corr[s] + add) for s >= 1: the layer's output. Dynamic shared
// memory: 2 D floats + S slices.
template <class Ops, int SM>
__global__ void __launch_bounds__(kRowThreads)
    per_layer_out_kernel(Ops ops, const float* __restrict__ add_raw, const float* post_pl, float* __restrict__ add,
                         const float* __restrict__ corr, float* __restrict__ h, int T, int D, int S) {
  N3_ROW_IDS;
  extern __shared__ __align__(16) unsigned char dsmem[];
  float* A = reinterpret_cast<float*>(dsmem);
  post_pl = stage_vec(A + D, post_pl, D);
  const int t = blockIdx.y;
  const Slice sl = row_slice(D);
  const int w = sl.hi - sl.lo;
  const size_t TD = size_t(T) * D, row = size_t(t) * D;
  float* corrs = A + 2 * D;  // post_mlp's streams over the slice, three kernels back
  stage_streams<SM>(corrs, corr + row + sl.lo, TD, S, w);
  pdl_begin();
  __shared__ typename Ops::Norm s_n;
  {
    float* const dst[1] = {A};
    const float* const src[1] = {add_raw + row};
    load_rows<1>(dst, src, D);
  }
  __syncthreads();
  if (warp == 0) {
    const auto r = ops.norm(A, D);
    if (lane == 0) s_n = r;
  }
  __syncthreads();
  for (int i = sl.lo + tid; i < sl.hi; i += nthr) {
    float cv[SM];  // the S corr values of element i, loaded together
#pragma unroll
    for (int p = 0; p < SM; ++p) cv[p] = p < S ? corrs[p * w + i - sl.lo] : 0.0f;
    const float v = ops.normed(A[i], s_n, post_pl, i);
    add[row + i] = v;
    h[row + i] = cv[0];
#pragma unroll
    for (int p = 1; p < SM; ++p)
      if (p < S) h[p * TD + row + i] = ops.store_stream(cv[p] + v);
  }
}

// final_logits before the LM head: u_s (unembed GEMV outputs) rescaled to
// rms(h0); x = store(mean of h0, u_1..); x = RMSNorm(x, w_final).
// u[0] receives a copy of h0 so u holds the dumped altup_out streams.
template <class Ops>
__global__ void __launch_bounds__(kRowThreads)
    final_norm_kernel(Ops ops, const float* h, float* u, const float* final_norm, float* x, QAct qx, int T, int D,
                      int S) {
  pdl_begin();
  N3_ROW_IDS;
  const int t = blockIdx.x;
  const size_t TD = size_t(T) * D, row = size_t(t) * D;
  __shared__ float s_target;
  __shared__ typename Ops::Mag s_mag[kMaxStreams];
  __shared__ typename Ops::Norm s_n;
  if (warp == 0) {
    const float tr = ops.rms(h + row, D);
    if (lane == 0) s_target = tr;
  }
  __syncthreads();
  for (int s = 1 + warp; s < S; s += nwarps) {
    const auto m = ops.mag(u + s * TD + row, D, s_target, 1e-5f);
    if (lane == 0) s_mag[s] = m;
  }
  __syncthreads();
  for (int i = tid; i < D; i += nthr) {
    const float h0 = h[row + i];
    u[row + i] = h0;
    float acc = 0;
    acc += h0;
    for (int s = 1; s < S; ++s) {
      const float us = ops.store_stream(ops.magged(u[s * TD + row + i], s_mag[s]));
      u[s * TD + row + i] = us;
      acc += us;
    }
    x[row + i] = ops.store(num::div_rn(acc, float(S)));
  }
  __syncthreads();
  if (warp == 0) {
    const auto r = ops.norm(x + row, D);
    if (lane == 0) s_n = r;
  }
  __syncthreads();
  for (int base = 0; base < D; base += nthr) {
    const int i = base + tid;
    float v = 0.0f;
    if (i < D) {
      v = ops.normed(x[row + i], s_n, final_norm, i);
      x[row + i] = v;
    }
    lane_quantise(qx, t, i, v);
  }
}

#undef N3_ROW_IDS

}  // namespace n3::gpu
