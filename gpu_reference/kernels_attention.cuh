// Attention over the KV cache (golden Kernels::attend), one CUDA block per
// (query token, query head): causal, local layers see the last `window`
// positions, query head h reads KV head h / (H / KV); the cache may belong
// to another layer (KV sharing). Rows are masked by their stored position
// (eviction keeps positions), found by binary search as model.cc does.
//
// NPU numerics (num::attend): q to BFP; scores q.k_t with the key rows' BFP
// cached at append time (num::dot_bfp_bfp, one thread a position); softmax
// in the lane-tree order on one warp; p to BFP over the attended positions;
// out_d = p . V[:, d] streamed per column (bfp_lane.h pv_column), one
// thread a column. Reference numerics: float64 throughout. An INT8 cache
// (numerics.kv_format = int8) has its own kernels: kernels_attention_int8.cuh.
#pragma once
#include "golden/numerics/sfu.h"
#include "gpu_reference/bfp_lane.h"
#include "gpu_reference/cuda_util.cuh"
#include "gpu_reference/dev_types.cuh"
#include "gpu_reference/kernels_gemv.cuh"

namespace n3::gpu {

constexpr int kAttnThreads = 256;

__device__ inline void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
__device__ inline void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

struct AttnArgs {
  const float* q = nullptr;  // [T, H, hd]
  KvDev kv;                  // the source layer's cache
  const int64_t* positions = nullptr;
  const int64_t* step = nullptr;  // [0] first position of the chunk, [1] cache row of its first token
  int T = 0, H = 0, KVH = 0, hd = 0;
  int window = 0;        // 0: global layer
  float* ctx = nullptr;  // [T, H * hd]
  QAct qctx;             // NPU: ctx quantised in place when hd % 32 == 0
  // NPU, 32-element blocks: scores [T, H, sld] of attention_scores_kernel
  // (row j of head h is the score of cache row lo + j); null: the group
  // kernel computes them itself.
  float* scores = nullptr;
  int sld = 0;
  // Whether the kernel just before appended this step's rows to kv (the
  // layer owns its cache): attention_scores_kernel loads those after the wait.
  bool appends = true;
  // With scores: the group kernel computes the V blocks it reads before the
  // wait (N3_CUDA_ATTN_PRE=0: after it, as without scores). gpu::attention
  // clears it where the launch reserves no room for them.
  bool pre_v = true;
};

// [lo, hi] of the cache rows query t attends to. Rows hold consecutive
// positions unless the host evicted some: then two loads give the answer;
// otherwise a binary search, as model.cc does.
__device__ inline void attn_range(const AttnArgs& a, int t, int* lo, int* hi) {
  const int64_t qpos = a.step[0] + t;
  const int rows = int(a.step[1]) + a.T;
  const int64_t first = a.window > 0 ? qpos - a.window + 1 : 0;
  const int64_t p0 = a.positions[0], pl = a.positions[rows - 1];
  if (pl - p0 == rows - 1) {
    const int64_t l = first - p0, h = qpos - p0;
    *lo = int(l < 0 ? 0 : l > rows ? rows : l);
    *hi = int(h < 0 ? -1 : h >= rows ? rows - 1 : h);
    return;
  }
  int l = 0, r = rows;  // first row with position >= first
  while (l < r) {
    const int m = (l + r) / 2;
    if (a.positions[m] < first)
      l = m + 1;
    else
      r = m;
  }
  *lo = l;
  r = rows;  // first row with position > qpos
  while (l < r) {
    const int m = (l + r) / 2;
    if (a.positions[m] <= qpos)
      l = m + 1;
    else
      r = m;
  }
  *hi = l - 1;
}

// Shared memory of the NPU kernel for at most nmax positions.
inline size_t attn_npu_smem(int nmax, int hd, int B) {
  const size_t nbn = ceil_div(nmax, B), nbd = ceil_div(hd, B);
  return 4 * (size_t(nmax) + nbn + nbd) + 2 * (nbn * B + nbd * B) + 16;
}

__global__ void __launch_bounds__(kAttnThreads) attention_npu_kernel(AttnArgs a, num::Formats f) {
  pdl_begin();
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int B = f.bfp_block, M = f.attn_mant_bits, hd = a.hd;
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1;
  const int nbd = ceil_div(hd, B), nbn = ceil_div(n, B);
  int16_t* mq = reinterpret_cast<int16_t*>(smem);  // mantissa arrays first: 16-byte aligned
  int16_t* mp = mq + nbd * B;
  float* scores = reinterpret_cast<float*>(mp + nbn * B);
  int32_t* ep = reinterpret_cast<int32_t*>(scores + n);
  int32_t* eq = ep + nbn;
  __shared__ float s_val;

  // q -> BFP over the head dimension.
  const float* q = a.q + (size_t(t) * a.H + h) * hd;
  for (int b = tid; b < nbd; b += blockDim.x)
    eq[b] = num::bfp_quantize_block(q + b * B, hd - b * B < B ? hd - b * B : B, B, M, mq + b * B);
  __syncthreads();
  const num::BfpView qv = bfp_view(mq, eq, hd, B);

  // Scores against the cached BFP key rows.
  const int kvh = h / (a.H / a.KVH);
  for (int j = tid; j < n; j += blockDim.x) {
    const size_t r = size_t(lo + j) * a.KVH + kvh;
    num::BfpView kv;
    kv.mant = a.kv.kmant + r * nbd * B;
    kv.exp = a.kv.kexp + r * nbd;
    kv.n = hd;
    kv.block = B;
    kv.nblocks = nbd;
    kv.e_max = a.kv.kemax[r];
    kv.poison = a.kv.kpois[r] != 0;
    scores[j] = num::dot_bfp_bfp(qv, kv, 1.0f, f.score);
  }
  __syncthreads();

  // Softmax (num::softmax): max, exp, sum on the lane tree.
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
  for (int j = tid; j < n; j += blockDim.x) scores[j] = num::round_to(f.score, scores[j] * rz);
  __syncthreads();

  // p -> BFP over positions (blocks start at lo), then p . V[:, d].
  for (int b = tid; b < nbn; b += blockDim.x)
    ep[b] = num::bfp_quantize_block(scores + b * B, n - b * B < B ? n - b * B : B, B, M, mp + b * B);
  __syncthreads();
  const num::BfpView pv = bfp_view(mp, ep, n, B);
  const int64_t stride = int64_t(a.KVH) * hd;
  const float* v = a.kv.v + lo * stride + kvh * hd;
  float* out = a.ctx + (size_t(t) * a.H + h) * hd;
  const bool fuse = a.qctx.lane_quantised() && hd % 32 == 0;
  for (int base = 0; base < hd; base += blockDim.x) {
    const int d = base + tid;
    float y = 0.0f;
    if (d < hd) y = B == 32 ? pv_column32(pv, v + d, n, stride, M, f.act) : pv_column(pv, v + d, n, stride, M, f.act);
    if (d < hd) out[d] = y;
    if (fuse && base + warp * 32 < hd) lane_quantise(a.qctx, t, h * hd + d, y);
  }
}

// What a lane of scores_lanes reads of its key row: block k's exponent and
// 32 mantissas, and the row's poison flag.
struct KeyLane {
  int32_t ek;
  int kp;
  int4 kv4[4];
};
// Lane tid's key block for the lane-group pass starting at position base.
__device__ inline KeyLane load_key_lane(const AttnArgs& a, int kvh, int lo, int base, int j0, int j1, int nbd) {
  const int tid = threadIdx.x, k = tid % nbd, j = base + tid / nbd;
  const bool live = j < j1;
  const size_t r = size_t(lo + (live ? j : j0)) * a.KVH + kvh;
  KeyLane kl;
  kl.ek = live ? a.kv.kexp[r * nbd + k] : num::kBfpZero;
  kl.kp = live ? a.kv.kpois[r] : 0;
  const int4* km = reinterpret_cast<const int4*>(a.kv.kmant + (r * nbd + k) * 32);
#pragma unroll
  for (int c = 0; c < 4; ++c) kl.kv4[c] = live ? km[c] : make_int4(0, 0, 0, 0);
  return kl;
}

// Scores of G query heads (BFP in shared memory: mantissas mq[hh * nbd * 32],
// exponents eq[hh * nbd], poison qpois[hh]) against the cached key rows
// lo + j, j in [j0, j1), of KV head kvh: num::dot_bfp_bfp bit for bit. The nbd
// (a power of two, at most 32) lanes of a lane group take a key row's nbd
// blocks (one 64-byte mantissa load each, shared by the G heads); e_top is
// their max (no order), the aligned block partials an integer sum (no
// order). Writes out[hh * ld + j - j0]. Every thread of the block calls it.
// pre: the lane's key block, already loaded (load_key_lane at base j0), when
// one pass covers [j0, j1).
template <int G>
__device__ inline void scores_lanes(const AttnArgs& a, const num::Formats& f, const int16_t* mq, const int32_t* eq,
                                    const int* qpois, int kvh, int lo, int j0, int j1, int nbd, float* out, int ld,
                                    const KeyLane* pre = nullptr) {
  const int tid = threadIdx.x, k = tid % nbd, per = blockDim.x / nbd;
  for (int base = j0; base < j1; base += per) {  // the same trip count on every lane
    const int j = base + tid / nbd;
    const bool live = j < j1;  // uniform over a lane group; groups never straddle a warp
    const KeyLane kl = pre ? *pre : load_key_lane(a, kvh, lo, base, j0, j1, nbd);
    const int32_t ek = kl.ek;
    const int kp = kl.kp;
    const int4(&kv4)[4] = kl.kv4;
#pragma unroll
    for (int hh = 0; hh < G; ++hh) {
      const int32_t e = eq[hh * nbd + k];
      const bool use = e != num::kBfpZero && ek != num::kBfpZero;
      const int32_t x = use ? e + ek : INT32_MIN;
      int32_t top = x;
      for (int off = 1; off < nbd; off <<= 1) top = max(top, __shfl_xor_sync(kFull, top, off));
      int64_t p = 0;
      if (use) {
        const int4* q4 = reinterpret_cast<const int4*>(mq + hh * nbd * 32 + k * 32);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int4 xq = q4[c], yk = kv4[c];
          const int xs[4] = {xq.x, xq.y, xq.z, xq.w}, ys[4] = {yk.x, yk.y, yk.z, yk.w};
#pragma unroll
          for (int h = 0; h < 4; ++h)
            p += int64_t(int32_t(int16_t(xs[h] & 0xffff)) * int16_t(ys[h] & 0xffff)) +
                 int64_t((xs[h] >> 16) * (ys[h] >> 16));
        }
        p = num::acc_align(p, x, top);
      }
      for (int off = 1; off < nbd; off <<= 1) p += __shfl_xor_sync(kFull, p, off);
      if (live && k == 0)
        out[hh * ld + j - j0] = (qpois[hh] || kp) ? num::nan_f()
                                : top == INT32_MIN ? num::acc_finish(0, 0, 1.0f, f.score)
                                                   : num::acc_finish(p, top, 1.0f, f.score);
    }
  }
}

// Whether scores_lanes takes this head size: whole 32-element blocks, a
// power-of-two count of them, at most kScoreMaxHd elements.
constexpr int kScoreMaxHd = 256;
inline __host__ __device__ bool attn_scores_lanes(int hd) {
  const int nbd = hd / 32;
  return hd % 32 == 0 && hd <= kScoreMaxHd && (nbd & (nbd - 1)) == 0;
}

// ---- NPU numerics, 32-element blocks: a KV group per block -----------------
//
// The G query heads that read one KV head share everything on the V side:
// the blocks of V's columns over the attended positions (they start at the
// same lo) and so their exponents and mantissas. One block (kGroupThreads)
// computes G heads for a slice of hdb columns (blockIdx.z; the scores and p
// are recomputed per slice, which is cheap): thread (d, position group pg)
// streams column d over the position blocks pg, pg + npg, ...; pass 1
// gathers each head's e_top and the column's poison (maxima and flags: no
// order), pass 2 the aligned block partials (an integer sum: no order); both
// are merged in shared memory and finished once per (head, d). Bit for bit
// num::attend.
constexpr int kGroupThreads = 512;
constexpr int kMaxGroup = 8;
constexpr int32_t kNoTop = INT32_MIN;

// After attention_scores_kernel, each thread of the 8-lane p.V path keeps
// the V blocks it will read (block exponent, 4 mantissas) for up to
// kPreSlots position blocks in shared memory, computed before the wait.
constexpr int kPreSlots = 8;
constexpr size_t kPreBytes = size_t(kPreSlots) * kGroupThreads * 12;
// Whether every context of up to nmax positions fits those slots, on the
// split path's 32-column slices (8 warps a set of position blocks: the
// kernel's nps).
constexpr int kPreSets = (kGroupThreads / 32) / (32 / 4);
constexpr int kPreMaxPositions = kPreSlots * kPreSets * 32;
inline bool attn_pre_fits(int nmax) { return nmax <= kPreMaxPositions; }

// Shared memory for G heads and at most nmax positions (pre: with the
// precomputed V blocks, after attention_scores_kernel).
inline size_t attn_group_smem(int G, int nmax, int hd, bool pre = false) {
  const size_t nbn = ceil_div(nmax, 32), nbd = ceil_div(hd, 32);
  return size_t(G) * (8 * size_t(hd) + 2 * 32 * (nbd + nbn) + 4 * (size_t(nmax) + nbn + nbd + hd)) + 4 * size_t(hd) +
         64 + (pre ? kPreBytes + 16 : 0);
}
// Columns per block: slices of 64 spread a head's V work over more SMs.
inline int attn_slice(int hd) { return hd % 64 == 0 ? 64 : hd; }

template <int G>
__global__ void __launch_bounds__(kGroupThreads) attention_group_kernel(AttnArgs a, num::Formats f) {
  const bool pre = a.scores != nullptr;  // scores from attention_scores_kernel
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = blockIdx.x, h0 = blockIdx.y * G, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nthr = blockDim.x, nwarps = nthr >> 5, hd = a.hd, M = f.attn_mant_bits;
  const int hdb = hd / gridDim.z, d0 = blockIdx.z * hdb;  // this block's columns [d0, d0 + hdb)
  // Before the wait (pdl_begin): the attended range (positions and step are
  // copied from the host before the forward's first kernel), and, after
  // attention_scores_kernel, the V blocks this block reads (computed into
  // shared memory, or their columns asked of L1; below): the rows were
  // appended by qkv_kernel, then two kernels back (complete: cuda_util.cuh,
  // pdl_begin). Without it qkv_kernel is the kernel just before, still
  // writing, and L1 is not coherent.
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1, nbd = ceil_div(hd, 32), nbn = ceil_div(n, 32);
  int64_t* acc_s = reinterpret_cast<int64_t*>(smem);            // [G][hdb]
  int16_t* mq = reinterpret_cast<int16_t*>(acc_s + G * hd);     // [G][nbd * 32]
  int16_t* mp = mq + G * nbd * 32;                              // [G][nbn * 32]
  float* scores = reinterpret_cast<float*>(mp + G * nbn * 32);  // [G][n]
  int32_t* ep = reinterpret_cast<int32_t*>(scores + G * n);     // [G][nbn]
  int32_t* eq = ep + G * nbn;                                   // [G][nbd]
  int32_t* etop = eq + G * nbd;                                 // [G][hdb]
  int32_t* cpois = etop + G * hd;                               // [hdb]
  __shared__ int s_ppois[G];

  // p . V[:, d], 8 lanes a column (below): lane (col, sub) holds positions
  // sub * 4 .. sub * 4 + 3 of each 32-position block; warp sets ps take the
  // position blocks ps, ps + nps, ...
  const int64_t stride = int64_t(a.KVH) * hd;
  const int kvh = h0 / (a.H / a.KVH);
  const int W = hdb >> 2;  // warps per set of position blocks
  const bool lanes8 = (hdb & 3) == 0 && W > 0 && W <= nwarps;
  const int nps = lanes8 ? nwarps / W : 1, ps = lanes8 ? warp / W : 0;
  const int col = lanes8 ? (warp % W) * 4 + (lane >> 3) : 0, sub = lane & 7;
  const float* v8 = a.kv.v + lo * stride + kvh * hd + d0 + col;
  auto load4 = [&](int k, float (&x)[4]) {
    int em = kLaneZero;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int pos = k * 32 + sub * 4 + j;
      x[j] = pos < n ? v8[pos * stride] : 0.0f;
      em = max(em, lane_exponent(x[j]));
    }
#pragma unroll
    for (int off = 1; off < 8; off <<= 1) em = max(em, __shfl_xor_sync(kFull, em, off));
    return block_exponent(em, M);
  };
  // Block k's exponent and this lane's 4 mantissas (0 for a zero or
  // poisoned block).
  auto vblock = [&](int k, int32_t(&m)[4]) {
    float x[4];
    const int32_t ev = load4(k, x);
    const bool ok = ev != num::kBfpZero && ev != num::kBfpPoison;
#pragma unroll
    for (int j = 0; j < 4; ++j) m[j] = ok ? lane_mantissa(x[j], ev, M) : 0;
    return ev;
  };
  // After the scores kernel the V rows are final (appended by qkv_kernel, two
  // kernels back: cuda_util.cuh, pdl_begin), and the V blocks do not depend
  // on p: their exponents and mantissas are computed before the wait when
  // they fit kPreSlots a thread (pre_e / pre_m, [slot][thread], after the
  // layout above); otherwise their columns are only asked of L1.
  const bool precomp = pre && a.pre_v && lanes8 && ceil_div(nbn, nps) <= kPreSlots;
  int32_t* pre_e = reinterpret_cast<int32_t*>((reinterpret_cast<uintptr_t>(cpois + hd) + 15) & ~uintptr_t(15));
  int2* pre_m = reinterpret_cast<int2*>(pre_e + kPreSlots * nthr);
  if (precomp) {
    if (ps < nps)
      for (int k = ps, kk = 0; k < nbn; k += nps, ++kk) {
        int32_t m[4];
        const int32_t ev = vblock(k, m);
        pre_e[kk * nthr + tid] = ev;
        pre_m[kk * nthr + tid] = make_int2(int((uint32_t(uint16_t(m[0])) | (uint32_t(uint16_t(m[1])) << 16))),
                                           int((uint32_t(uint16_t(m[2])) | (uint32_t(uint16_t(m[3])) << 16))));
      }
  } else if (pre) {
    const float* vb = a.kv.v + lo * stride + kvh * hd + d0;
    const int lines = ceil_div(hdb, 32);  // 128-byte lines of a row's columns
    for (int i = tid; i < n * lines; i += nthr) prefetch_l1(vb + (i / lines) * stride + (i % lines) * 32);
  }
  pdl_begin();

  for (int i = tid; i < G * hdb; i += nthr) {
    acc_s[i] = 0;
    etop[i] = kNoTop;
  }
  for (int i = tid; i < hdb; i += nthr) cpois[i] = 0;
  if (pre) {
    for (int idx = tid; idx < G * n; idx += nthr) {
      const int hh = idx / n, j = idx % n;
      scores[hh * n + j] = a.scores[(size_t(t) * a.H + h0 + hh) * a.sld + j];
    }
    __syncthreads();
  }
  // q -> BFP, a warp a block.
  for (int wb = warp; wb < (pre ? 0 : G * nbd); wb += nwarps) {
    const int hh = wb / nbd, k = wb % nbd, i = k * 32 + lane;
    const float v = i < hd ? a.q[(size_t(t) * a.H + h0 + hh) * hd + i] : 0.0f;
    warp_quantize32(v, M, mq + hh * nbd * 32 + k * 32, eq + hh * nbd + k);
  }
  __syncthreads();

  // Scores q_h . k_j against the cached BFP key rows (num::dot_bfp_bfp):
  // lane groups (scores_lanes) where the head size allows, else a thread a
  // (head, position).
  if (!pre && attn_scores_lanes(hd)) {
    if (tid < G) s_ppois[tid] = bfp_view(mq + tid * nbd * 32, eq + tid * nbd, hd, 32).poison ? 1 : 0;
    __syncthreads();
    scores_lanes<G>(a, f, mq, eq, s_ppois, kvh, lo, 0, n, nbd, scores, n);
  } else {
    for (int idx = tid; idx < (pre ? 0 : G * n); idx += nthr) {
      const int hh = idx / n, j = idx % n;
      const num::BfpView qv = bfp_view(mq + hh * nbd * 32, eq + hh * nbd, hd, 32);
      const size_t r = size_t(lo + j) * a.KVH + kvh;
      num::BfpView kv;
      kv.mant = a.kv.kmant + r * nbd * 32;
      kv.exp = a.kv.kexp + r * nbd;
      kv.n = hd;
      kv.block = 32;
      kv.nblocks = nbd;
      kv.e_max = a.kv.kemax[r];
      kv.poison = a.kv.kpois[r] != 0;
      scores[hh * n + j] = dot_bfp_bfp32(qv, kv, f.score);
    }
  }
  __syncthreads();

  // Softmax (num::softmax) of each head on one warp.
  for (int hh = warp; hh < G; hh += nwarps) {
    float* s = scores + hh * n;
    const float m = warp_tree_max(n, [s](int i) { return s[i]; });
    for (int i = lane; i < n; i += 32) s[i] = num::exp_sfu(s[i] - m);
    __syncwarp();
    const float r = num::recip(warp_tree_sum(n, [s](int i) { return s[i]; }));
    for (int i = lane; i < n; i += 32) s[i] = num::round_to(f.score, s[i] * r);
  }
  __syncthreads();
  // p -> BFP over the attended positions, a warp a block.
  for (int wb = warp; wb < G * nbn; wb += nwarps) {
    const int hh = wb / nbn, k = wb % nbn, i = k * 32 + lane;
    warp_quantize32(i < n ? scores[hh * n + i] : 0.0f, M, mp + hh * nbn * 32 + k * 32, ep + hh * nbn + k);
  }
  __syncthreads();
  if (tid < G) s_ppois[tid] = bfp_view(mp + tid * nbn * 32, ep + tid * nbn, n, 32).poison ? 1 : 0;

  if (lanes8) {
    // p . V[:, d], 8 lanes a column: the block's exponent is a max over the
    // 8 lanes and its partial an integer sum over them (shuffles), so a
    // block is 4 loads a lane instead of 32 on one thread.
    if (ps < nps) {  // warp-uniform, as are the loops below
      int top[G];
      bool any[G];
      for (int hh = 0; hh < G; ++hh) top[hh] = kNoTop, any[hh] = false;
      int pois = 0;
      for (int k = ps, kk = 0; k < nbn; k += nps, ++kk) {
        float x[4];
        const int32_t ev = precomp ? pre_e[kk * nthr + tid] : load4(k, x);
        if (ev == num::kBfpPoison) pois = 1;
        if (ev == num::kBfpPoison || ev == num::kBfpZero) continue;
        for (int hh = 0; hh < G; ++hh) {
          const int32_t e = ep[hh * nbn + k];
          if (e == num::kBfpZero) continue;
          if (!any[hh] || e + ev > top[hh]) top[hh] = e + ev;
          any[hh] = true;
        }
      }
      if (sub == 0) {
        for (int hh = 0; hh < G; ++hh)
          if (any[hh]) atomicMax(&etop[hh * hdb + col], top[hh]);
        if (pois) atomicOr(&cpois[col], 1);
      }
    }
    __syncthreads();
    if (ps < nps) {
      const bool cp = cpois[col] != 0;
      int64_t acc[G];
      int32_t tops[G];
      for (int hh = 0; hh < G; ++hh) acc[hh] = 0, tops[hh] = etop[hh * hdb + col];
      for (int k = ps, kk = 0; k < nbn; k += nps, ++kk) {
        bool use = false;
        for (int hh = 0; hh < G; ++hh) use = use || ep[hh * nbn + k] != num::kBfpZero;
        if (!use) continue;
        int32_t ev, m[4];
        if (precomp) {  // a block with !live adds nothing below, whatever m holds
          ev = pre_e[kk * nthr + tid];
          const int2 pm2 = pre_m[kk * nthr + tid];
          m[0] = int16_t(pm2.x & 0xffff), m[1] = int16_t(uint32_t(pm2.x) >> 16);
          m[2] = int16_t(pm2.y & 0xffff), m[3] = int16_t(uint32_t(pm2.y) >> 16);
        } else {
          ev = vblock(k, m);
        }
        const bool live = !cp && ev != num::kBfpZero && ev != num::kBfpPoison;
        for (int hh = 0; hh < G; ++hh) {
          const int32_t e = ep[hh * nbn + k];
          if (e == num::kBfpZero) continue;
          const int16_t* pm = mp + hh * nbn * 32 + k * 32 + sub * 4;
          int64_t p = 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) p += int64_t(pm[j]) * m[j];
#pragma unroll
          for (int off = 1; off < 8; off <<= 1) p += __shfl_xor_sync(kFull, p, off);
          if (live) acc[hh] += num::acc_align(p, e + ev, tops[hh]);
        }
      }
      if (sub == 0 && !cp)
        for (int hh = 0; hh < G; ++hh)
          if (acc[hh] != 0)
            atomicAdd(reinterpret_cast<unsigned long long*>(&acc_s[hh * hdb + col]),
                      static_cast<unsigned long long>(acc[hh]));
    }
    __syncthreads();
  } else {
  // p . V[:, d]: pass 1, each head's e_top and the column's poison.
  const int npg = nthr / hdb, dd = tid % hdb, pg = tid / hdb;
  const float* v = a.kv.v + lo * stride + kvh * hd + d0 + dd;
  float x[32];
  if (pg < npg) {
    int top[G];
    bool any[G];
    for (int hh = 0; hh < G; ++hh) top[hh] = kNoTop, any[hh] = false;
    int pois = 0;
    for (int k = pg; k < nbn; k += npg) {
      const int32_t ev = column_block32(v, k, num::block_count(n, k, 32), stride, M, x);
      if (ev == num::kBfpPoison) pois = 1;
      if (ev == num::kBfpPoison || ev == num::kBfpZero) continue;
      for (int hh = 0; hh < G; ++hh) {
        const int32_t e = ep[hh * nbn + k];
        if (e == num::kBfpZero) continue;
        if (!any[hh] || e + ev > top[hh]) top[hh] = e + ev;
        any[hh] = true;
      }
    }
    for (int hh = 0; hh < G; ++hh)
      if (any[hh]) atomicMax(&etop[hh * hdb + dd], top[hh]);
    if (pois) atomicOr(&cpois[dd], 1);
  }
  __syncthreads();
  // Pass 2: the aligned block partials.
  if (pg < npg && !cpois[dd]) {
    int64_t acc[G];
    int32_t tops[G];
    for (int hh = 0; hh < G; ++hh) acc[hh] = 0, tops[hh] = etop[hh * hdb + dd];
    for (int k = pg; k < nbn; k += npg) {
      bool use = false;
      for (int hh = 0; hh < G; ++hh) use = use || ep[hh * nbn + k] != num::kBfpZero;
      if (!use) continue;
      const int32_t ev = column_block32(v, k, num::block_count(n, k, 32), stride, M, x);
      if (ev == num::kBfpZero) continue;
      int32_t m[32];
#pragma unroll
      for (int j = 0; j < 32; ++j) m[j] = lane_mantissa(x[j], ev, M);
      for (int hh = 0; hh < G; ++hh) {
        const int32_t e = ep[hh * nbn + k];
        if (e == num::kBfpZero) continue;
        const int16_t* pm = mp + hh * nbn * 32 + k * 32;
        int64_t p = 0;
#pragma unroll
        for (int j = 0; j < 32; ++j) p += int64_t(pm[j]) * m[j];
        acc[hh] += num::acc_align(p, e + ev, tops[hh]);
      }
    }
    for (int hh = 0; hh < G; ++hh)
      if (acc[hh] != 0)
        atomicAdd(reinterpret_cast<unsigned long long*>(&acc_s[hh * hdb + dd]),
                  static_cast<unsigned long long>(acc[hh]));
  }
  __syncthreads();

  }
  // Finish once per (head, d).
  const bool fuse = a.qctx.lane_quantised() && hdb % 32 == 0;
  for (int base = 0; base < G * hdb; base += nthr) {
    const int idx = base + tid, hh = idx / hdb, c = d0 + idx % hdb;
    float y = 0.0f;
    if (idx < G * hdb) {
      const int32_t top = etop[idx];
      y = (s_ppois[hh] || cpois[idx % hdb]) ? num::nan_f()
          : top == kNoTop                   ? num::acc_finish(0, 0, 1.0f, f.act)
                                            : num::acc_finish(acc_s[idx], top, 1.0f, f.act);
      a.ctx[(size_t(t) * a.H + h0 + hh) * hd + c] = y;
    }
    if (fuse && base + warp * 32 < G * hdb) lane_quantise(a.qctx, t, (h0 + hh) * hd + c, y);
  }
}

// ---- NPU numerics, 32-element blocks: the scores over many CUDA blocks -----
//
// num::dot_bfp_bfp(q_h, k_j) for the G query heads of a KV group and the
// positions [z * kScorePos, (z + 1) * kScorePos) of the attended range: the
// nbd lanes of a lane group take the key row's nbd blocks (one 64-byte
// mantissa load each, shared by the G heads); e_top is their max (no
// order), the aligned block partials an integer sum (no order), finished
// once: the bits of dot_bfp_bfp32. Spreads over T x KVH x (nmax /
// kScorePos) blocks what the group kernel did on H / G blocks.
constexpr int kScoreThreads = 256;
constexpr int kScorePos = 32;
inline bool attn_scores_split(int hd) { return attn_scores_lanes(hd); }

template <int G>
__global__ void __launch_bounds__(kScoreThreads) attention_scores_kernel(AttnArgs a, num::Formats f) {
  const int t = blockIdx.x, h0 = blockIdx.y * G, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nwarps = blockDim.x >> 5, hd = a.hd, M = f.attn_mant_bits, nbd = hd >> 5;
  // Before the wait: the attended range (host-written), and the key blocks
  // of the final rows (below).
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1, j0 = blockIdx.z * kScorePos;
  const int kvh = h0 / (a.H / a.KVH);
  const int j1 = n - j0 < kScorePos ? n : j0 + kScorePos;
  // Each lane's key block (one pass: blockDim.x / nbd >= kScorePos rows),
  // loaded before the wait where the row is final: every row the kernel
  // before did not append (all of them on a layer that reads another
  // layer's cache; else the rows before step[1], this chunk's first). The
  // others are asked of L2 (coherent, so safe while they are being written)
  // and loaded after the wait.
  const int my_row = lo + j0 + tid / nbd;  // lanes past j1 load nothing: early too
  const bool early = j0 < n && (!a.appends || my_row < a.step[1] || j0 + tid / nbd >= j1);
  KeyLane kl;
  if (early) {
    kl = load_key_lane(a, kvh, lo, j0, j0, j1, nbd);
  } else if (j0 < n && tid % nbd == 0) {
    const size_t r = size_t(my_row) * a.KVH + kvh;
    for (int c = 0; c < ceil_div(nbd * 64, 128); ++c) prefetch_l2(a.kv.kmant + r * nbd * 32 + c * 64);
    prefetch_l2(a.kv.kexp + r * nbd);
  }
  pdl_begin();
  if (j0 >= n) return;
  if (!early) kl = load_key_lane(a, kvh, lo, j0, j0, j1, nbd);
  __shared__ __align__(16) int16_t mq[G * kScoreMaxHd];
  __shared__ int32_t eq[G * (kScoreMaxHd / 32)];
  __shared__ int s_qpois[G];
  for (int wb = warp; wb < G * nbd; wb += nwarps) {
    const int hh = wb / nbd, k = wb % nbd;
    const float v = a.q[(size_t(t) * a.H + h0 + hh) * hd + k * 32 + lane];
    warp_quantize32(v, M, mq + hh * nbd * 32 + k * 32, eq + hh * nbd + k);
  }
  __syncthreads();
  if (tid < G) {
    int po = 0;
    for (int k = 0; k < nbd; ++k) po |= eq[tid * nbd + k] == num::kBfpPoison;
    s_qpois[tid] = po;
  }
  __syncthreads();
  scores_lanes<G>(a, f, mq, eq, s_qpois, kvh, lo, j0, j1, nbd, a.scores + (size_t(t) * a.H + h0) * a.sld + j0, a.sld,
                  &kl);
}

__global__ void __launch_bounds__(kAttnThreads) attention_ref_kernel(AttnArgs a) {
  pdl_begin();
  extern __shared__ __align__(16) unsigned char smem[];
  double* s = reinterpret_cast<double*>(smem);
  __shared__ double s_val;
  const int t = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, hd = a.hd;
  int lo, hi;
  attn_range(a, t, &lo, &hi);
  const int n = hi - lo + 1;
  const int kvh = h / (a.H / a.KVH);
  const int64_t stride = int64_t(a.KVH) * hd;
  const float* q = a.q + (size_t(t) * a.H + h) * hd;
  const float* k = a.kv.k + kvh * hd;
  const float* v = a.kv.v + kvh * hd;
  for (int j = tid; j < n; j += blockDim.x) {
    const float* kj = k + (lo + j) * stride;
    double d = 0;
    for (int i = 0; i < hd; ++i) d += double(q[i]) * kj[i];
    s[j] = d;
  }
  __syncthreads();
  if (warp == 0) {
    double m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = ::fmax(m, s[j]);
    for (int off = 16; off >= 1; off >>= 1) m = ::fmax(m, __shfl_down_sync(kFull, m, off));
    if (lane == 0) s_val = m;
  }
  __syncthreads();
  const double mx = s_val;
  for (int j = tid; j < n; j += blockDim.x) s[j] = ::exp(s[j] - mx);
  __syncthreads();
  if (warp == 0) {
    double z = 0;
    for (int j = lane; j < n; j += 32) z += s[j];
    z = warp_sum_f64(z);
    if (lane == 0) s_val = z;
  }
  __syncthreads();
  const double z = s_val;
  for (int d = tid; d < hd; d += blockDim.x) {
    double acc = 0;
    for (int j = 0; j < n; ++j) acc += (s[j] / z) * v[(lo + j) * stride + d];
    a.ctx[(size_t(t) * a.H + h) * hd + d] = float(acc);
  }
}

// nmax: the most positions any query of the launch can attend to. f16 and
// bf16 caches (NPU) or float32 (reference); INT8 caches: attention_int8.
inline void attention(const AttnArgs& a, bool npu, const num::Formats& f, int nmax, size_t smem_limit, cudaStream_t s) {
  AttnArgs b = a;  // b.scores: null unless the split path runs
  if (npu) {
    const int group = a.H / a.KVH;
    if (f.bfp_block == 32) {
      // As many heads of the KV group per block as fit in shared memory.
      const int gs = group;
      const bool split = a.scores && attn_scores_split(a.hd) && (gs == 1 || gs == 2 || gs == 4 || gs == 8);
      // The V precompute's slots are reserved only where every context up to
      // nmax fits them (32-column slices: 8 warps a position-block set);
      // otherwise the kernel is told not to use them.
      b.pre_v = split && a.pre_v && attn_pre_fits(nmax);
      int G = 1;
      for (int g = kMaxGroup; g > 1; g /= 2)
        if (group % g == 0 && attn_group_smem(g, nmax, a.hd, b.pre_v) <= smem_limit) {
          G = g;
          break;
        }
      const size_t smem = attn_group_smem(G, nmax, a.hd, b.pre_v);
      int slice = attn_slice(a.hd);
      if (split) {
        // The scores over T x KVH x (nmax / kScorePos) blocks first, then the
        // softmax and p.V with 32-column slices (twice the blocks).
        const dim3 sg(a.T, a.KVH, ceil_div(nmax, kScorePos));
        switch (gs) {
          case 8:
            launch("attention_scores_kernel", attention_scores_kernel<8>, sg, kScoreThreads, 0, s, a, f);
            break;
          case 4:
            launch("attention_scores_kernel", attention_scores_kernel<4>, sg, kScoreThreads, 0, s, a, f);
            break;
          case 2:
            launch("attention_scores_kernel", attention_scores_kernel<2>, sg, kScoreThreads, 0, s, a, f);
            break;
          default:
            launch("attention_scores_kernel", attention_scores_kernel<1>, sg, kScoreThreads, 0, s, a, f);
        }
        slice = 32;
      } else {
        b.scores = nullptr;
        // Decode: 32-column slices, twice the blocks (each recomputes the
        // group's scores, in lane groups).
        if (a.T == 1 && attn_scores_lanes(a.hd)) slice = 32;
      }
      const dim3 grid(a.T, a.H / G, a.hd / slice);
      switch (G) {
        case 8:
          launch("attention_group_kernel", attention_group_kernel<8>, grid, kGroupThreads, smem, s, b, f);
          break;
        case 4:
          launch("attention_group_kernel", attention_group_kernel<4>, grid, kGroupThreads, smem, s, b, f);
          break;
        case 2:
          launch("attention_group_kernel", attention_group_kernel<2>, grid, kGroupThreads, smem, s, b, f);
          break;
        default:
          launch("attention_group_kernel", attention_group_kernel<1>, grid, kGroupThreads, smem, s, b, f);
      }
      return;
    }
    const size_t smem = attn_npu_smem(nmax, a.hd, f.bfp_block);
    launch("attention_npu_kernel", attention_npu_kernel, dim3(a.T, a.H), kAttnThreads, smem, s, a, f);
  } else {
    launch("attention_ref_kernel", attention_ref_kernel, dim3(a.T, a.H), kAttnThreads, size_t(nmax) * 8 + 16, s, a);
  }
}

// Raises the dynamic shared memory limit of the attention kernels (once) to
// what the device allows next to each kernel's static shared memory.
template <class K>
void allow_smem(K* kernel, size_t optin) {
  cudaFuncAttributes fa;
  N3_CUDA(cudaFuncGetAttributes(&fa, kernel));
  N3_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(optin - fa.sharedSizeBytes)));
}
inline void attention_init(size_t optin) {
  allow_smem(attention_group_kernel<1>, optin);
  allow_smem(attention_group_kernel<2>, optin);
  allow_smem(attention_group_kernel<4>, optin);
  allow_smem(attention_group_kernel<8>, optin);
  allow_smem(attention_npu_kernel, optin);
  allow_smem(attention_ref_kernel, optin);
}

}  // namespace n3::gpu
