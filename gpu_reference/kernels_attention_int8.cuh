// Attention over an INT8 KV cache (numerics.kv_format = int8, NPU numerics):
// the INT8 branch of num::attend bit for bit. K and V are INT8 codes with one
// float32 scale per row and KV head (KvDev k8 / ks, v8 / vs, appended by
// qkv_kernel through the core's int8_quantize pieces).
//   scores: s_t = dot_int8_bfp(k_t, q, ks_t) rounded to score_format; the
//     INT8 operand has exponent 0, so e_top is q's e_max for every t;
//   softmax as for f16 / bf16 caches;
//   p'_t = RNE_score(RNE_score(e_t * r) * vs_t) (the probability, then its
//     product with the token's V scale), p' to BFP over t (blocks from lo);
//   out_d = dot_int8_bfp(V[:, d], p', 1) rounded to act_format: e_top is
//     p''s e_max for every column, so no per-column exponent pass.
// The kernels follow kernels_attention.cuh's: attention_scores_int8_kernel
// (decode, scores over T x KVH x positions / 32 blocks) and
// attention_group_int8_kernel (a KV group's heads, a slice of columns) for
// 32-element blocks; attention_int8_npu_kernel (the core's functions a
// thread each) for other block sizes. Integer block partials have no order,
// so lanes, shuffles and shared-memory atomics give the core's sums.
#pragma once
#include "gpu_reference/kernels_attention.cuh"

namespace n3::gpu {

// ---- any block size: a CUDA block per (query token, query head) ------------

__global__ void __launch_bounds__(kAttnThreads) attention_int8_npu_kernel(AttnArgs a, num::Formats f) {
  pdl_begin();
  extern __shared__ __align__(16) unsigned char smem[];  // attn_npu_smem's layout
  const int t = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int B = f.bfp_block, M = f.attn_mant_bits, hd = a.hd;
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1;
  const int nbd = ceil_div(hd, B), nbn = ceil_div(n, B);
  int16_t* mq = reinterpret_cast<int16_t*>(smem);
  int16_t* mp = mq + nbd * B;
  float* scores = reinterpret_cast<float*>(mp + nbn * B);
  int32_t* ep = reinterpret_cast<int32_t*>(scores + n);
  int32_t* eq = ep + nbn;
  __shared__ float s_val;

  const float* q = a.q + (size_t(t) * a.H + h) * hd;
  for (int b = tid; b < nbd; b += blockDim.x)
    eq[b] = num::bfp_quantize_block(q + b * B, hd - b * B < B ? hd - b * B : B, B, M, mq + b * B);
  __syncthreads();
  const num::BfpView qv = bfp_view(mq, eq, hd, B);
  const int kvh = h / (a.H / a.KVH);
  for (int j = tid; j < n; j += blockDim.x) {
    const size_t r = size_t(lo + j) * a.KVH + kvh;
    scores[j] = num::dot_int8_bfp(a.kv.k8 + r * hd, qv, a.kv.ks[r], f.score);
  }
  __syncthreads();
  if (warp == 0) {
    const float m = warp_tree_max(n, [scores](int i) { return scores[i]; });
    if (lane == 0) s_val = m;
  }
  __syncthreads();
  const float mx = s_val;
  for (int j = tid; j < n; j += blockDim.x) scores[j] = num::exp_sfu(scores[j] - mx);
  __syncthreads();
  if (warp == 0) {
    const float z = warp_tree_sum(n, [scores](int i) { return scores[i]; });
    if (lane == 0) s_val = num::recip(z);
  }
  __syncthreads();
  const float rz = s_val;
  for (int j = tid; j < n; j += blockDim.x) {
    const float p = num::round_to(f.score, scores[j] * rz);
    scores[j] = num::round_to(f.score, p * a.kv.vs[size_t(lo + j) * a.KVH + kvh]);
  }
  __syncthreads();
  for (int b = tid; b < nbn; b += blockDim.x)
    ep[b] = num::bfp_quantize_block(scores + b * B, n - b * B < B ? n - b * B : B, B, M, mp + b * B);
  __syncthreads();
  const num::BfpView pv = bfp_view(mp, ep, n, B);
  const int64_t stride = int64_t(a.KVH) * hd;
  const int8_t* v = a.kv.v8 + lo * stride + kvh * hd;
  float* out = a.ctx + (size_t(t) * a.H + h) * hd;
  const bool fuse = a.qctx.lane_quantised() && hd % 32 == 0;
  for (int base = 0; base < hd; base += blockDim.x) {
    const int d = base + tid;
    float y = 0.0f;
    if (d < hd) y = num::dot_int8_bfp_strided(v + d, stride, pv, 1.0f, f.act);
    if (d < hd) out[d] = y;
    if (fuse && base + warp * 32 < hd) lane_quantise(a.qctx, t, h * hd + d, y);
  }
}

// ---- 32-element blocks: q.k in lane groups ----------------------------------

// What a lane of scores_int8_lanes reads: block k (32 codes) of its key row
// and the row's scale.
struct Key8Lane {
  int4 c[2];
  float s;
};
__device__ inline Key8Lane load_key8_lane(const AttnArgs& a, int kvh, int lo, int base, int j0, int j1, int nbd) {
  const int tid = threadIdx.x, k = tid % nbd, j = base + tid / nbd;
  const bool live = j < j1;
  const size_t r = size_t(lo + (live ? j : j0)) * a.KVH + kvh;
  const int4* src = reinterpret_cast<const int4*>(a.kv.k8 + r * a.hd + k * 32);
  Key8Lane kl;
  kl.c[0] = live ? src[0] : make_int4(0, 0, 0, 0);
  kl.c[1] = live ? src[1] : make_int4(0, 0, 0, 0);
  kl.s = live ? a.kv.ks[r] : 0.0f;
  return kl;
}

// Scores of G query heads (BFP in shared memory: mantissas mq[hh * nbd * 32],
// exponents eq[hh * nbd], e_max qemax[hh], poison qpois[hh]) against the
// INT8 key rows lo + j, j in [j0, j1), of KV head kvh: num::dot_int8_bfp bit
// for bit. The nbd lanes of a lane group take a row's nbd blocks; a block
// partial is 16 dp2a (two int16 mantissas times two int8 codes each, exact
// in int32: |P| < 32 * 127 * 2^15); the aligned partials are an integer sum
// (no order). Writes out[hh * ld + j - j0]. Every thread of the block calls
// it. pre: the lane's key block, already loaded, when one pass covers [j0, j1).
template <int G>
__device__ inline void scores_int8_lanes(const AttnArgs& a, const num::Formats& f, const int16_t* mq,
                                         const int32_t* eq, const int32_t* qemax, const int* qpois, int kvh, int lo,
                                         int j0, int j1, int nbd, float* out, int ld, const Key8Lane* pre = nullptr) {
  const int tid = threadIdx.x, k = tid % nbd, per = blockDim.x / nbd;
  for (int base = j0; base < j1; base += per) {  // the same trip count on every lane
    const int j = base + tid / nbd;
    const bool live = j < j1;  // uniform over a lane group; groups never straddle a warp
    const Key8Lane kl = pre ? *pre : load_key8_lane(a, kvh, lo, base, j0, j1, nbd);
    const int cw[8] = {kl.c[0].x, kl.c[0].y, kl.c[0].z, kl.c[0].w, kl.c[1].x, kl.c[1].y, kl.c[1].z, kl.c[1].w};
#pragma unroll
    for (int hh = 0; hh < G; ++hh) {
      const int32_t e = eq[hh * nbd + k], top = qemax[hh];
      int64_t p = 0;
      if (e != num::kBfpZero && !qpois[hh]) {
        const int4* q4 = reinterpret_cast<const int4*>(mq + hh * nbd * 32 + k * 32);
        int32_t s = 0;
#pragma unroll
        for (int c = 0; c < 4; ++c) {  // mantissas 8c .. 8c + 7 against codes words 2c, 2c + 1
          const int4 xq = q4[c];
          s = __dp2a_lo(xq.x, cw[2 * c], s);
          s = __dp2a_hi(xq.y, cw[2 * c], s);
          s = __dp2a_lo(xq.z, cw[2 * c + 1], s);
          s = __dp2a_hi(xq.w, cw[2 * c + 1], s);
        }
        p = num::acc_align(s, e, top);
      }
      for (int off = 1; off < nbd; off <<= 1) p += __shfl_xor_sync(kFull, p, off);
      if (live && k == 0)
        out[hh * ld + j - j0] = qpois[hh]                ? num::nan_f()
                                : top == num::kBfpZero ? num::acc_finish(0, 0, kl.s, f.score)
                                                       : num::acc_finish(p, top, kl.s, f.score);
    }
  }
}

// q of G heads to BFP (a warp a block) with each head's e_max and poison.
template <int G>
__device__ inline void quantize_q_heads(const AttnArgs& a, int t, int h0, int M, int16_t* mq, int32_t* eq,
                                        int32_t* qemax, int* qpois) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5, hd = a.hd;
  const int nbd = ceil_div(hd, 32);
  for (int wb = warp; wb < G * nbd; wb += nwarps) {
    const int hh = wb / nbd, k = wb % nbd, i = k * 32 + lane;
    const float v = i < hd ? a.q[(size_t(t) * a.H + h0 + hh) * hd + i] : 0.0f;
    warp_quantize32(v, M, mq + hh * nbd * 32 + k * 32, eq + hh * nbd + k);
  }
  __syncthreads();
  if (tid < G) {
    const num::BfpView qv = bfp_view(mq + tid * nbd * 32, eq + tid * nbd, hd, 32);
    qemax[tid] = qv.e_max;
    qpois[tid] = qv.poison ? 1 : 0;
  }
  __syncthreads();
}

// Decode: the scores of a KV group's G heads over positions [z * kScorePos,
// (z + 1) * kScorePos) of the attended range (attention_scores_kernel's
// grid and its loads before the wait: the key rows the kernel before did
// not append).
template <int G>
__global__ void __launch_bounds__(kScoreThreads) attention_scores_int8_kernel(AttnArgs a, num::Formats f) {
  const int t = blockIdx.x, h0 = blockIdx.y * G, tid = threadIdx.x, hd = a.hd, nbd = hd >> 5;
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1, j0 = blockIdx.z * kScorePos;
  const int kvh = h0 / (a.H / a.KVH);
  const int j1 = n - j0 < kScorePos ? n : j0 + kScorePos;
  const int my_row = lo + j0 + tid / nbd;
  const bool early = j0 < n && (!a.appends || my_row < a.step[1] || j0 + tid / nbd >= j1);
  Key8Lane kl;
  if (early) {
    kl = load_key8_lane(a, kvh, lo, j0, j0, j1, nbd);
  } else if (j0 < n && tid % nbd == 0) {
    const size_t r = size_t(my_row) * a.KVH + kvh;
    prefetch_l2(a.kv.k8 + r * hd);
    prefetch_l2(a.kv.ks + r);
  }
  pdl_begin();
  if (j0 >= n) return;
  if (!early) kl = load_key8_lane(a, kvh, lo, j0, j0, j1, nbd);
  __shared__ __align__(16) int16_t mq[G * kScoreMaxHd];
  __shared__ int32_t eq[G * (kScoreMaxHd / 32)];
  __shared__ int32_t s_qemax[G];
  __shared__ int s_qpois[G];
  quantize_q_heads<G>(a, t, h0, f.attn_mant_bits, mq, eq, s_qemax, s_qpois);
  scores_int8_lanes<G>(a, f, mq, eq, s_qemax, s_qpois, kvh, lo, j0, j1, nbd,
                       a.scores + (size_t(t) * a.H + h0) * a.sld + j0, a.sld, &kl);
}

// ---- 32-element blocks: softmax and p'.V for a KV group ---------------------
//
// G heads of a KV group, a slice of hdb columns (blockIdx.z). p'.V: a lane
// holds 4 adjacent columns (one 32-bit load of codes a row) and 4 positions
// of each 32-position block; the 8 lanes of a block's positions sum their
// partials by shuffles, warp sets take the position blocks ps, ps + nps, ...;
// the aligned block partials of a column meet in shared memory (int64
// atomics: no order) and are finished once per (head, column).

// Shared memory for G heads and at most nmax positions.
inline size_t attn_group_int8_smem(int G, int nmax, int hd) {
  const size_t nbn = ceil_div(nmax, 32), nbd = ceil_div(hd, 32);
  return size_t(G) * (8 * size_t(hd) + 2 * 32 * (nbd + nbn) + 4 * (size_t(nmax) + nbn + nbd)) + 4 * size_t(nmax) + 64;
}
// Whether the quad p'.V path takes a slice of hdb columns (else a thread a
// (head, column), the core's strided dot).
inline __host__ __device__ bool attn_int8_quads(int hd, int hdb, int nwarps) {
  return hd % 4 == 0 && hdb % 4 == 0 && ceil_div(hdb / 4, 4) <= nwarps;
}

template <int G>
__global__ void __launch_bounds__(kGroupThreads) attention_group_int8_kernel(AttnArgs a, num::Formats f) {
  const bool pre = a.scores != nullptr;  // scores from attention_scores_int8_kernel
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = blockIdx.x, h0 = blockIdx.y * G, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nthr = blockDim.x, nwarps = nthr >> 5, hd = a.hd, M = f.attn_mant_bits;
  const int hdb = hd / gridDim.z, d0 = blockIdx.z * hdb;
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1, nbd = ceil_div(hd, 32), nbn = ceil_div(n, 32);
  int64_t* acc_s = reinterpret_cast<int64_t*>(smem);            // [G][hdb]
  int16_t* mq = reinterpret_cast<int16_t*>(acc_s + G * hd);     // [G][nbd * 32]
  int16_t* mp = mq + G * nbd * 32;                              // [G][nbn * 32]
  float* scores = reinterpret_cast<float*>(mp + G * nbn * 32);  // [G][n]
  int32_t* ep = reinterpret_cast<int32_t*>(scores + G * n);     // [G][nbn]
  int32_t* eq = ep + G * nbn;                                   // [G][nbd]
  float* vsc = reinterpret_cast<float*>(eq + G * nbd);          // [n]: V's scales
  __shared__ int32_t s_qemax[G], s_pemax[G];
  __shared__ int s_qpois[G], s_ppois[G];
  const int64_t stride = int64_t(a.KVH) * hd;
  const int kvh = h0 / (a.H / a.KVH);
  const int8_t* vb = a.kv.v8 + lo * stride + kvh * hd + d0;
  // After the scores kernel, V's rows and scales are final (appended by
  // qkv_kernel two kernels back: cuda_util.cuh, pdl_begin): the scales go to
  // shared memory and the slice's codes are asked of L1 before the wait.
  auto stage_scales = [&] {
    for (int j = tid; j < n; j += nthr) vsc[j] = a.kv.vs[size_t(lo + j) * a.KVH + kvh];
  };
  if (pre) {
    stage_scales();
    for (int j = tid; j < n; j += nthr) {
      prefetch_l1(vb + j * stride);
      prefetch_l1(vb + j * stride + hdb - 1);
    }
  }
  pdl_begin();
  if (!pre) stage_scales();
  for (int i = tid; i < G * hdb; i += nthr) acc_s[i] = 0;
  if (pre) {
    for (int idx = tid; idx < G * n; idx += nthr) {
      const int hh = idx / n, j = idx % n;
      scores[hh * n + j] = a.scores[(size_t(t) * a.H + h0 + hh) * a.sld + j];
    }
  } else {
    quantize_q_heads<G>(a, t, h0, M, mq, eq, s_qemax, s_qpois);
    if (attn_scores_lanes(hd)) {
      scores_int8_lanes<G>(a, f, mq, eq, s_qemax, s_qpois, kvh, lo, 0, n, nbd, scores, n);
    } else {
      for (int idx = tid; idx < G * n; idx += nthr) {
        const int hh = idx / n, j = idx % n;
        const num::BfpView qv = bfp_view(mq + hh * nbd * 32, eq + hh * nbd, hd, 32);
        const size_t r = size_t(lo + j) * a.KVH + kvh;
        scores[hh * n + j] = num::dot_int8_bfp(a.kv.k8 + r * hd, qv, a.kv.ks[r], f.score);
      }
    }
  }
  __syncthreads();

  // Softmax (num::softmax) of each head on one warp, then p'.
  for (int hh = warp; hh < G; hh += nwarps) {
    float* s = scores + hh * n;
    const float m = warp_tree_max(n, [s](int i) { return s[i]; });
    for (int i = lane; i < n; i += 32) s[i] = num::exp_sfu(s[i] - m);
    __syncwarp();
    const float r = num::recip(warp_tree_sum(n, [s](int i) { return s[i]; }));
    for (int i = lane; i < n; i += 32) s[i] = num::round_to(f.score, num::round_to(f.score, s[i] * r) * vsc[i]);
  }
  __syncthreads();
  // p' -> BFP over the attended positions, a warp a block.
  for (int wb = warp; wb < G * nbn; wb += nwarps) {
    const int hh = wb / nbn, k = wb % nbn, i = k * 32 + lane;
    warp_quantize32(i < n ? scores[hh * n + i] : 0.0f, M, mp + hh * nbn * 32 + k * 32, ep + hh * nbn + k);
  }
  __syncthreads();
  if (tid < G) {
    const num::BfpView pv = bfp_view(mp + tid * nbn * 32, ep + tid * nbn, n, 32);
    s_pemax[tid] = pv.e_max;
    s_ppois[tid] = pv.poison ? 1 : 0;
  }
  __syncthreads();

  const bool quads = attn_int8_quads(hd, hdb, nwarps);
  if (quads) {
    const int Q = hdb / 4, W = ceil_div(Q, 4);  // column quads; warps per set of position blocks
    const int nps = nwarps / W, ps = warp / W, quad = (warp % W) * 4 + (lane >> 3), sub = lane & 7;
    if (ps < nps) {  // warp-uniform, as are the loops below
      const bool col_ok = quad < Q;
      int64_t acc[G][4];
      int32_t tops[G];
      bool use_h[G];
#pragma unroll
      for (int hh = 0; hh < G; ++hh) {
        tops[hh] = s_pemax[hh];
        use_h[hh] = !s_ppois[hh] && tops[hh] != num::kBfpZero;
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[hh][c] = 0;
      }
      const int8_t* vq = vb + quad * 4;
      for (int k = ps; k < nbn; k += nps) {
        bool use = false;
#pragma unroll
        for (int hh = 0; hh < G; ++hh) use = use || (use_h[hh] && ep[hh * nbn + k] != num::kBfpZero);
        if (!use) continue;
        uint32_t w[4];  // rows k * 32 + sub * 4 + j: 4 codes of columns quad * 4 ..
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int pos = k * 32 + sub * 4 + j;
          w[j] = col_ok && pos < n ? *reinterpret_cast<const uint32_t*>(vq + pos * stride) : 0u;
        }
#pragma unroll
        for (int hh = 0; hh < G; ++hh) {
          const int32_t e = ep[hh * nbn + k];
          if (!use_h[hh] || e == num::kBfpZero) continue;
          const int16_t* pm = mp + hh * nbn * 32 + k * 32 + sub * 4;
          int32_t P[4] = {0, 0, 0, 0};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int32_t m = pm[j];
#pragma unroll
            for (int c = 0; c < 4; ++c) P[c] += m * int32_t(int8_t(w[j] >> (8 * c)));
          }
#pragma unroll
          for (int c = 0; c < 4; ++c) {
#pragma unroll
            for (int off = 1; off < 8; off <<= 1) P[c] += __shfl_xor_sync(kFull, P[c], off);
            acc[hh][c] += num::acc_align(P[c], e, tops[hh]);
          }
        }
      }
      if (sub == 0 && col_ok)
#pragma unroll
        for (int hh = 0; hh < G; ++hh)
#pragma unroll
          for (int c = 0; c < 4; ++c)
            if (acc[hh][c] != 0)
              atomicAdd(reinterpret_cast<unsigned long long*>(&acc_s[hh * hdb + quad * 4 + c]),
                        static_cast<unsigned long long>(acc[hh][c]));
    }
    __syncthreads();
  }

  // Finish once per (head, column); without quads, the core's strided dot.
  const bool fuse = a.qctx.lane_quantised() && hdb % 32 == 0;
  for (int base = 0; base < G * hdb; base += nthr) {
    const int idx = base + tid, hh = idx / hdb, c = idx % hdb;
    float y = 0.0f;
    if (idx < G * hdb) {
      const int32_t top = s_pemax[hh];
      if (!quads)
        y = num::dot_int8_bfp_strided(vb + c, stride, bfp_view(mp + hh * nbn * 32, ep + hh * nbn, n, 32), 1.0f, f.act);
      else
        y = s_ppois[hh]                ? num::nan_f()
            : top == num::kBfpZero ? num::acc_finish(0, 0, 1.0f, f.act)
                                   : num::acc_finish(acc_s[idx], top, 1.0f, f.act);
      a.ctx[(size_t(t) * a.H + h0 + hh) * hd + d0 + c] = y;
    }
    if (fuse && base + warp * 32 < G * hdb) lane_quantise(a.qctx, t, (h0 + hh) * hd + d0 + c, y);
  }
}

// ---- launch --------------------------------------------------------------------

// gpu::attention for an INT8 cache (NPU numerics). nmax: the most positions
// any query of the launch can attend to.
inline void attention_int8(const AttnArgs& a, const num::Formats& f, int nmax, size_t smem_limit, cudaStream_t s) {
  AttnArgs b = a;  // b.scores: null unless the split path runs
  if (f.bfp_block != 32) {
    const size_t smem = attn_npu_smem(nmax, a.hd, f.bfp_block);
    launch("attention_int8_npu_kernel", attention_int8_npu_kernel, dim3(a.T, a.H), kAttnThreads, smem, s, a, f);
    return;
  }
  const int group = a.H / a.KVH;
  const bool split = a.scores && attn_scores_split(a.hd) && (group == 1 || group == 2 || group == 4 || group == 8);
  int G = 1;
  for (int g = kMaxGroup; g > 1; g /= 2)
    if (group % g == 0 && attn_group_int8_smem(g, nmax, a.hd) <= smem_limit) {
      G = g;
      break;
    }
  int slice = attn_slice(a.hd);
  if (split) {
    const dim3 sg(a.T, a.KVH, ceil_div(nmax, kScorePos));
    switch (group) {
      case 8:
        launch("attention_scores_int8_kernel", attention_scores_int8_kernel<8>, sg, kScoreThreads, 0, s, a, f);
        break;
      case 4:
        launch("attention_scores_int8_kernel", attention_scores_int8_kernel<4>, sg, kScoreThreads, 0, s, a, f);
        break;
      case 2:
        launch("attention_scores_int8_kernel", attention_scores_int8_kernel<2>, sg, kScoreThreads, 0, s, a, f);
        break;
      default:
        launch("attention_scores_int8_kernel", attention_scores_int8_kernel<1>, sg, kScoreThreads, 0, s, a, f);
    }
    slice = 32;
  } else {
    b.scores = nullptr;
    if (a.T == 1 && attn_scores_lanes(a.hd)) slice = 32;
  }
  const size_t smem = attn_group_int8_smem(G, nmax, a.hd);
  const dim3 grid(a.T, a.H / G, a.hd / slice);
  switch (G) {
    case 8:
      launch("attention_group_int8_kernel", attention_group_int8_kernel<8>, grid, kGroupThreads, smem, s, b, f);
      break;
    case 4:
      launch("attention_group_int8_kernel", attention_group_int8_kernel<4>, grid, kGroupThreads, smem, s, b, f);
      break;
    case 2:
      launch("attention_group_int8_kernel", attention_group_int8_kernel<2>, grid, kGroupThreads, smem, s, b, f);
      break;
    default:
      launch("attention_group_int8_kernel", attention_group_int8_kernel<1>, grid, kGroupThreads, smem, s, b, f);
  }
}

inline void attention_int8_init(size_t optin) {
  allow_smem(attention_group_int8_kernel<1>, optin);
  allow_smem(attention_group_int8_kernel<2>, optin);
  allow_smem(attention_group_int8_kernel<4>, optin);
  allow_smem(attention_group_int8_kernel<8>, optin);
  allow_smem(attention_int8_npu_kernel, optin);
}

}  // namespace n3::gpu
