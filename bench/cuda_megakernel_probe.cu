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
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/decode_bytes.h"
#include "golden/model_config.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CK(call) check((call), #call)

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
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
  if (blockIdx.x == 0 && threadIdx.x == 0) x[i + 1] = x[i] + 1;
}

// Microseconds a kernel of a graph of n dependent launches of `blocks` blocks.
double boundary_us(int n, int blocks, bool pdl, int reps) {
  unsigned* x;
  CK(cudaMalloc(&x, (n + 1) * sizeof(unsigned)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CK(cudaMemsetAsync(x, 0, sizeof(unsigned), s));
  for (int i = 0; i < n; ++i) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = a;
    cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, chain_kernel, x, i));
  }
  cudaGraph_t g;
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    CK(cudaEventRecord(e0, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r) t.push_back(ms * 1e3 / n);  // the first replay uploads the graph
  }
  unsigned last;
  CK(cudaMemcpy(&last, x + n, sizeof last, cudaMemcpyDeviceToHost));
  if (last != unsigned(n)) throw std::runtime_error("chain of kernels: counter " + std::to_string(last));
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(x));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  CK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), dim3(blocks), dim3(threads), p, smem, nullptr));
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  CK(cudaGetLastError());
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return ms;
}

double handoff_us(int blocks, int mode, int n, int reps) {
  Sync* sy;
  unsigned* seen;
  CK(cudaMalloc(&sy, sizeof(Sync)));
  CK(cudaMalloc(&seen, blocks * sizeof(unsigned)));
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    CK(cudaMemset(sy, 0, sizeof(Sync)));
    CK(cudaMemset(seen, 0, blocks * sizeof(unsigned)));
    const float ms = cooperative_ms(handoff_kernel, blocks, 256, 0, sy, n, mode, seen);
    std::vector<unsigned> h(blocks);
    CK(cudaMemcpy(h.data(), seen, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned v : h)
      if (v != unsigned(n)) throw std::runtime_error("handoff kernel: a block did not finish");
    if (r) t.push_back(ms * 1e3 / n);
  }
  CK(cudaFree(sy));
  CK(cudaFree(seen));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
  Seg* segs;
  Sync* sy;
  uint32_t* sink;
  CK(cudaMalloc(&segs, st.segs.size() * sizeof(Seg)));
  CK(cudaMemcpy(segs, st.segs.data(), st.segs.size() * sizeof(Seg), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&sy, sizeof(Sync)));
  CK(cudaMalloc(&sink, size_t(blocks) * threads * sizeof(uint32_t)));
  const int nseg = int(st.segs.size()), pf = prefetch ? 1 : 0;
  const uint32_t pre16 = uint32_t(smem / 16);
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    CK(cudaMemset(sy, 0, sizeof(Sync)));
    const float ms = cooperative_ms(step_kernel, blocks, threads, smem, w, (const Seg*)segs, nseg, pf, pre16, sy, sink);
    Sync h;
    CK(cudaMemcpy(&h, sy, sizeof h, cudaMemcpyDeviceToHost));
    if (h.done != unsigned(nseg) * blocks || h.flag != unsigned(nseg))
      throw std::runtime_error("step kernel: handoff counts " + std::to_string(h.done) + ", " + std::to_string(h.flag));
    if (r) t.push_back(ms * 1e3);
  }
  CK(cudaFree(segs));
  CK(cudaFree(sy));
  CK(cudaFree(sink));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
        throw std::runtime_error("usage: cuda_megakernel_probe [--model CONFIG.yaml] [--reps N]");
    }
    const n3::ModelConfig c = n3::load_model_config(model);
    int dev = 0, n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) throw std::runtime_error("no CUDA device");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    const int sms = prop.multiProcessorCount;
    const double spec = n3::bench::spec_hbm_bandwidth(prop.name), token_bytes = n3::bench::decode_bytes_per_token(c);
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
    CK(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t smem = size_t(max_smem) / 16 * 16;
    CK(cudaFuncSetAttribute(step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step_kernel, threads, smem));
    if (per_sm < 1) throw std::runtime_error("step kernel does not fit an SM");
    const Step probe = decode_step(c, 0);
    uint4* w;
    CK(cudaMalloc(&w, probe.bytes));
    CK(cudaMemset(w, 0x5a, probe.bytes));
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
    CK(cudaFree(w));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_megakernel_probe: %s\n", e.what());
    return 2;
  }
}
