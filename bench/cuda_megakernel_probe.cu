// What a persistent ("mega") decode kernel could reach on this GPU, measured
// without the model, so that the decision to build one rests on figures.
//
//   build-cuda/bench/cuda_megakernel_probe [--model configs/models/gemma3n-e4b.yaml] [--reps N]
//
// The CUDA path's decode is a chain of ~15 kernels a layer (docs/gpu.md): the
// INT4 GEMVs stream the weights, and between them per-token kernels run
// one-warp chains of order-fixed float arithmetic that the numerics fix. The
// tracer shows the per-token kernels holding ~60 % of the step. A persistent
// kernel would replace each kernel boundary by an in-kernel handoff and could
// load the next GEMV's weights while a per-token chain runs. This program
// measures the three things that decide what that is worth:
//
//  1. the cost of a kernel boundary as the decode graph pays it (a CUDA graph
//     of dependent kernels with programmatic dependent launch, as
//     cuda_util.cuh's launch/pdl_begin);
//  2. the cost of the in-kernel replacements: a grid-wide barrier, and a
//     handoff round (every block -> one block -> every block: GEMV -> per-token
//     chain -> GEMV), in a cooperative kernel of one block an SM;
//  3. a skeleton decode step in one cooperative kernel: the model's real
//     GEMV byte stream in layer order (from its config: per-row INT4 + scale
//     bytes, matrices that read the same vector in one segment), each segment
//     behind a per-token phase of one block that spins for a chosen time,
//     with and without loading each block's share of the next segment into
//     shared memory (cp.async) while it runs, for several per-token budgets
//     per layer. The "GEMV" only folds the loaded words (no dp4a): an upper
//     bound for the real kernel, which the tracer puts at 1.9-2.2 TB/s.
//
// Every figure is a median over --reps launches. Checks (the chain's
// counter, every block's handoff count) make a broken run exit non-zero.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/decode_bytes.h"
#include "base/error.h"
#include "golden/model_config.h"
#include "gpu_reference/cuda_util.cuh"

namespace {

using n3::Error;
using n3::gpu::DevBuf;

// Median of `reps` runs of once() (which returns a time), after one
// unmeasured run (graph upload, first-touch of the buffers).
template <class F>
double median_of(int reps, F once) {
  once();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(once());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Milliseconds of what enqueue() puts on stream s, by CUDA events.
template <class F>
float elapsed_ms(cudaStream_t s, F enqueue) {
  cudaEvent_t e0, e1;
  N3_CUDA(cudaEventCreate(&e0));
  N3_CUDA(cudaEventCreate(&e1));
  N3_CUDA(cudaEventRecord(e0, s));
  enqueue();
  N3_CUDA(cudaEventRecord(e1, s));
  N3_CUDA(cudaEventSynchronize(e1));
  N3_CUDA(cudaGetLastError());
  float ms;
  N3_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  N3_CUDA(cudaEventDestroy(e0));
  N3_CUDA(cudaEventDestroy(e1));
  return ms;
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void add_release(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void spin_ns(uint32_t ns) {
  if (!ns) return;
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}
// Thread 0 waits until *p >= target; the block follows.
__device__ __forceinline__ void block_wait(const unsigned* p, unsigned target) {
  if (threadIdx.x == 0)
    while (ld_acquire(p) < target) {
    }
  __syncthreads();
}
// Monotonic grid barrier: the k-th barrier (from 1) waits for k * gridDim.x arrivals.
__device__ __forceinline__ void grid_barrier(unsigned* count, unsigned k) {
  __syncthreads();
  if (threadIdx.x == 0) add_release(count, 1);
  block_wait(count, k * gridDim.x);
}

// ---- 1. kernel boundaries in a graph ---------------------------------------

// As the decode chain's kernels: wait for the predecessor, let the successor
// launch, then one dependent read-modify-write (a value the previous kernel wrote).
__global__ void chain_kernel(unsigned* x, int i) {
  n3::gpu::pdl_begin();
  if (blockIdx.x == 0 && threadIdx.x == 0) x[i + 1] = x[i] + 1;
}

// Microseconds a kernel of a graph of n dependent launches of `blocks` blocks,
// launched as the decode chain's (cuda_util.cuh's launch_as).
double boundary_us(int n, int blocks, bool pdl, int reps) {
  DevBuf<unsigned> x(n + 1);
  cudaStream_t s;
  N3_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  N3_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  N3_CUDA(cudaMemsetAsync(x.get(), 0, sizeof(unsigned), s));
  for (int i = 0; i < n; ++i) n3::gpu::launch_as(pdl, "chain_kernel", chain_kernel, blocks, 256, 0, s, x.get(), i);
  cudaGraph_t g;
  N3_CUDA(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  N3_CUDA(cudaGraphInstantiate(&ge, g, 0));
  const double us = median_of(reps, [&] { return elapsed_ms(s, [&] { N3_CUDA(cudaGraphLaunch(ge, s)); }) * 1e3 / n; });
  unsigned last;
  N3_CUDA(cudaMemcpy(&last, x.get() + n, sizeof last, cudaMemcpyDeviceToHost));
  if (last != unsigned(n)) throw Error("chain of kernels: counter " + std::to_string(last));
  N3_CUDA(cudaGraphExecDestroy(ge));
  N3_CUDA(cudaGraphDestroy(g));
  N3_CUDA(cudaStreamDestroy(s));
  return us;
}

// ---- 2. in-kernel barriers and handoffs ------------------------------------

// Each counter on its own 128-byte line, so that polling one does not
// contend with atomics on another.
struct Sync {
  alignas(128) unsigned bar;
  alignas(128) unsigned done;
  alignas(128) unsigned flag;
};

// mode 0: n grid barriers; mode 1: n handoff rounds (every block signals
// `done`, block 0 waits for all, then raises `flag`, which every block waits for).
__global__ void handoff_kernel(Sync* sy, int n, int mode, unsigned* seen) {
  for (int k = 1; k <= n; ++k) {
    if (mode == 0) {
      grid_barrier(&sy->bar, k);
    } else {
      __syncthreads();
      if (threadIdx.x == 0) add_release(&sy->done, 1);
      if (blockIdx.x == 0) {
        block_wait(&sy->done, k * gridDim.x);
        if (threadIdx.x == 0) st_release(&sy->flag, k);
      }
      block_wait(&sy->flag, k);
    }
  }
  if (threadIdx.x == 0) seen[blockIdx.x] = n;
}

template <class K, class... A>
float cooperative_ms(K kernel, int blocks, int threads, size_t smem, A... args) {
  void* p[] = {&args...};
  return elapsed_ms(nullptr, [&] {
    N3_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), dim3(blocks), dim3(threads), p, smem, nullptr));
  });
}

double handoff_us(int blocks, int mode, int n, int reps) {
  DevBuf<Sync> sy(1);
  DevBuf<unsigned> seen(blocks);
  return median_of(reps, [&] {
    N3_CUDA(cudaMemset(sy.get(), 0, sizeof(Sync)));
    N3_CUDA(cudaMemset(seen.get(), 0, blocks * sizeof(unsigned)));
    const float ms = cooperative_ms(handoff_kernel, blocks, 256, 0, sy.get(), n, mode, seen.get());
    std::vector<unsigned> h(blocks);
    N3_CUDA(cudaMemcpy(h.data(), seen.get(), blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned v : h)
      if (v != unsigned(n)) throw Error("handoff kernel: a block did not finish");
    return ms * 1e3 / n;
  });
}

// ---- 3. a skeleton decode step ---------------------------------------------

struct Seg {
  uint64_t off, n16;   // in 16-byte words
  uint32_t tau_ns;     // the per-token phase before it (block 0)
  uint32_t barriers;   // grid barriers after that phase (multi-block attention phases)
};

__device__ __forceinline__ uint64_t umin64(uint64_t a, uint64_t b) { return a < b ? a : b; }

__device__ __forceinline__ void cp_async16(void* smem, const void* g) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(g) : "memory");
}

// One decode step: for each segment, block 0 waits until every block has
// finished the previous segment, spins tau_ns (the per-token chain), raises
// the flag; every block then streams its share of the segment. With
// `prefetch`, a block first issues cp.async loads of up to `pre16` words of
// its share into shared memory, so they arrive while it waits.
__global__ void __launch_bounds__(1024, 1)
    step_kernel(const uint4* w, const Seg* segs, int nseg, int prefetch, uint32_t pre16, Sync* sy, uint32_t* sink) {
  extern __shared__ uint4 buf[];
  const unsigned G = gridDim.x, b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
  uint32_t acc = 0;
  unsigned bars = 0;
  for (int s = 0; s < nseg; ++s) {
    const Seg sg = segs[s];
    const uint64_t per = (sg.n16 + G - 1) / G, lo = umin64(sg.n16, b * per), hi = umin64(sg.n16, lo + per);
    const uint64_t npre = prefetch ? umin64(hi - lo, pre16) : 0;
    const uint4* base = w + sg.off;
    for (uint64_t i = tid; i < npre; i += nt) cp_async16(buf + i, base + lo + i);
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (b == 0) {
      block_wait(&sy->done, s * G);
      if (tid == 0) {
        spin_ns(sg.tau_ns);
        st_release(&sy->flag, s + 1);
      }
    }
    block_wait(&sy->flag, s + 1);
    for (uint32_t k = 0; k < sg.barriers; ++k) grid_barrier(&sy->bar, ++bars);
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    for (uint64_t i = tid; i < npre; i += nt) {
      const uint4 v = buf[i];
      acc += v.x ^ v.y ^ v.z ^ v.w;
    }
    uint64_t i = lo + npre + tid;
    for (; i + 3 * nt < hi; i += 4 * nt) {
      const uint4 a = __ldcs(base + i), c = __ldcs(base + i + nt), d = __ldcs(base + i + 2 * nt),
                  e = __ldcs(base + i + 3 * nt);
      acc += (a.x ^ a.y ^ a.z ^ a.w) + (c.x ^ c.y ^ c.z ^ c.w) + (d.x ^ d.y ^ d.z ^ d.w) + (e.x ^ e.y ^ e.z ^ e.w);
    }
    for (; i < hi; i += nt) {
      const uint4 a = __ldcs(base + i);
      acc += a.x ^ a.y ^ a.z ^ a.w;
    }
    __syncthreads();  // the shared buffer is reused by the next segment's prefetch
    if (tid == 0) add_release(&sy->done, 1);
  }
  sink[b * nt + tid] = acc;
}

struct Step {
  std::vector<Seg> segs;
  uint64_t bytes = 0;
  int per_layer_phases = 0;
};

// The decode GEMV stream of a model, in the CUDA path's launch order
// (model_cuda.cu): per-row INT4 bytes + a float scale per row; matrices that
// read the same vector form one segment. Per layer 6 segments, each behind a
// per-token phase (predict; qkv + attention, which a persistent kernel would
// run over several blocks: 2 grid barriers; post_attention; mlp_act;
// post_mlp; per_layer_gate), `layer_ns` split evenly over them.
Step decode_step(const n3::ModelConfig& c, uint32_t layer_ns) {
  Step st;
  auto rows = [](int64_t r, int64_t cols) { return uint64_t(r) * uint64_t((cols + 1) / 2 + 4); };
  auto seg = [&](uint64_t bytes, uint32_t tau, uint32_t bars) {
    const uint64_t n16 = (bytes + 15) / 16;
    st.segs.push_back({st.bytes / 16, n16, tau, bars});
    st.bytes += n16 * 16;
  };
  const int64_t D = c.hidden, P = c.pl_dim, S = c.altup_streams;
  seg(rows(int64_t(c.layers) * P, D) + rows((S - 1) * D, D), 0, 0);  // per-layer-input projection + AltUp projections
  const uint32_t tau = layer_ns / 6;
  for (int l = 0; l < c.layers; ++l) {
    const int64_t F = c.ffn[l], kv = c.owns_kv(l) ? 2 * c.kv_dim() : 0;
    seg(rows(c.q_dim() + kv + c.laurel_rank, D), tau, 0);      // q, k, v, LAuReL left
    seg(rows(D, c.q_dim()) + rows(D, c.laurel_rank), tau, 2);  // o, LAuReL right (after attention)
    seg(rows(2 * F, D), tau, 0);                               // gate, up
    seg(rows(D, F), tau, 0);                                   // down
    seg(rows(P, D), tau, 0);                                   // per-layer gate
    seg(rows(D, P), tau, 0);                                   // per-layer projection
  }
  seg(rows((S - 1) * D, D) + rows(c.vocab, D), 0, 0);  // AltUp unembed + tied LM head
  st.per_layer_phases = 6;
  return st;
}

double step_us(const uint4* w, const Step& st, int blocks, int threads, bool prefetch, size_t smem, int reps) {
  DevBuf<Seg> segs(st.segs.size());
  segs.upload(st.segs.data(), st.segs.size());
  DevBuf<Sync> sy(1);
  DevBuf<uint32_t> sink(size_t(blocks) * threads);
  const int nseg = int(st.segs.size()), pf = prefetch ? 1 : 0;
  const uint32_t pre16 = uint32_t(smem / 16);
  return median_of(reps, [&] {
    N3_CUDA(cudaMemset(sy.get(), 0, sizeof(Sync)));
    const float ms = cooperative_ms(step_kernel, blocks, threads, smem, w, (const Seg*)segs.get(), nseg, pf, pre16,
                                    sy.get(), sink.get());
    Sync h;
    N3_CUDA(cudaMemcpy(&h, sy.get(), sizeof h, cudaMemcpyDeviceToHost));
    if (h.done != unsigned(nseg) * blocks || h.flag != unsigned(nseg))
      throw Error("step kernel: handoff counts " + std::to_string(h.done) + ", " + std::to_string(h.flag));
    return ms * 1e3;
  });
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string model = std::string(N3_SOURCE_DIR) + "/configs/models/gemma3n-e4b.yaml";
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--model" && i + 1 < argc)
        model = argv[++i];
      else if (a == "--reps" && i + 1 < argc)
        reps = std::max(1, std::atoi(argv[++i]));
      else
        throw Error("usage: cuda_megakernel_probe [--model CONFIG.yaml] [--reps N]");
    }
    const n3::ModelConfig c = n3::load_model_config(model);
    int dev = 0, n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) throw Error("no CUDA device");
    cudaDeviceProp prop;
    N3_CUDA(cudaGetDeviceProperties(&prop, dev));
    const int sms = prop.multiProcessorCount;
    const double spec = n3::bench::spec_hbm_bandwidth(prop.name), token_bytes = n3::bench::decode_weight_bytes(c);
    std::printf("device: %s, %d SMs\n", prop.name, sms);

    std::printf("\n1. kernel boundary in a CUDA graph (us a kernel, 2000 dependent kernels, 256 threads):\n");
    for (int blocks : {8, sms})
      std::printf("   %3d blocks: %.2f with programmatic dependent launch, %.2f without\n", blocks,
                  boundary_us(2000, blocks, true, reps), boundary_us(2000, blocks, false, reps));

    std::printf("\n2. in one cooperative kernel, %d blocks of 256 threads (us each, 20000 in a launch):\n", sms);
    std::printf("   grid barrier: %.2f\n", handoff_us(sms, 0, 20000, reps));
    std::printf("   handoff round (all blocks -> block 0 -> all blocks): %.2f\n", handoff_us(sms, 1, 20000, reps));

    const int threads = 1024;
    int max_smem = 0;
    N3_CUDA(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t smem = size_t(max_smem) / 16 * 16;
    N3_CUDA(cudaFuncSetAttribute(step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
    int per_sm = 0;
    N3_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step_kernel, threads, smem));
    if (per_sm < 1) throw Error("step kernel does not fit an SM");
    const Step probe = decode_step(c, 0);
    DevBuf<uint4> weights(probe.bytes / 16);
    N3_CUDA(cudaMemset(weights.get(), 0x5a, probe.bytes));
    const uint4* w = weights.get();
    std::printf("\n3. skeleton decode step of %s: %.3f GB of GEMV weights in %zu segments (%d a layer),\n"
                "   one cooperative kernel of %d blocks x %d threads, %zu KB of shared memory a block;\n"
                "   per-token us = the per-token phases' time a layer (one block spinning, split over the\n"
                "   %d phases); chain only = the same handoffs and spins with no bytes; prefetch = a block's\n"
                "   share of the next segment (up to its shared memory) loaded with cp.async while the phase runs. %% of spec = tok/s x %.3f GB (all a decode token\n"
                "   reads, as cuda_decode_bench) / the spec HBM bandwidth, %.2f TB/s.\n",
                c.name.c_str(), probe.bytes / 1e9, probe.segs.size(), probe.per_layer_phases, sms, threads,
                smem / 1024, probe.per_layer_phases, token_bytes / 1e9, spec / 1e12);
    // The whole stream in one segment: the bandwidth this kernel reaches with no handoff at all.
    Step flat;
    flat.segs.push_back({0, probe.bytes / 16, 0, 0});
    flat.bytes = probe.bytes;
    const double flat_us = step_us(w, flat, sms, threads, false, smem, reps);
    std::printf("   no handoffs (one segment): %.1f us, %.2f TB/s\n", flat_us, probe.bytes / flat_us / 1e6);
    std::printf("   %-12s %12s | %-30s | %-30s\n", "per-token us", "chain only", "streamed, no prefetch",
                "streamed, prefetch");
    std::printf("   %-12s %12s | %10s %8s %10s | %10s %8s %10s\n", "a layer", "step us", "step us", "tok/s",
                "% of spec", "step us", "tok/s", "% of spec");
    for (uint32_t budget_us : {0u, 10u, 20u, 30u, 40u, 50u, 60u}) {
      const Step st = decode_step(c, budget_us * 1000);
      Step chain = st;  // the same handoffs with nothing to stream
      for (Seg& g : chain.segs) g.n16 = 0;
      std::printf("   %-12u %12.1f", budget_us, step_us(w, chain, sms, threads, false, smem, reps));
      for (bool pf : {false, true}) {
        const double us = step_us(w, st, sms, threads, pf, smem, reps), tok_s = 1e6 / us;
        std::printf(" | %10.1f %8.1f %9.1f%%", us, tok_s, spec > 0 ? 100.0 * tok_s * token_bytes / spec : 0.0);
      }
      std::printf("\n");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_megakernel_probe: %s\n", e.what());
    return 2;
  }
}
