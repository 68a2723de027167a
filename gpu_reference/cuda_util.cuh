// CUDA plumbing shared by the kernels: error checks that throw n3::Error,
// an owning device buffer, and warp reductions. The float reductions follow
// the numerics core's lane tree (golden/numerics/reduce.h): lane j folds
// elements j, j+32, ... in order, then __shfl_down by 16, 8, 4, 2, 1 is
// exactly the core's tree, so a warp gives the core's bits at full speed.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "golden/numerics/reduce.h"

namespace n3::gpu {

inline void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw Error(std::string("CUDA: ") + cudaGetErrorString(e) + " in " + what + " (" + file + ":" +
                std::to_string(line) + ")");
}
#define N3_CUDA(call) ::n3::gpu::check_cuda((call), #call, __FILE__, __LINE__)

// An owning, uninitialised device array of T.
template <class T>
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(size_t n) { resize(n); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DevBuf() {
    if (p_) cudaFree(p_);
  }
  // Reallocates (contents lost) when n exceeds the current size.
  void resize(size_t n) {
    if (n <= n_ && p_) return;
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
    N3_CUDA(cudaMalloc(&p_, (n ? n : 1) * sizeof(T)));
#ifdef N3_CUDA_TIMING_SKIP
    // Kernels left out by timing_skip would leave their outputs unwritten:
    // zeros keep every later kernel on its ordinary (finite) path.
    N3_CUDA(cudaMemset(p_, 0, (n ? n : 1) * sizeof(T)));
#endif
    n_ = n;
  }
  void upload(const T* src, size_t n, size_t at = 0) {
    N3_CUDA(cudaMemcpy(p_ + at, src, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Programmatic dependent launch (Hopper): every kernel is launched allowed to
// start while its predecessor in the stream finishes, and begins with
// pdl_begin(): wait until the predecessor grid has completed and its writes
// are visible (griddepcontrol.wait), then let the successor launch. Before
// the wait a kernel reads only what no running kernel writes: weights, the
// step and positions (copied from the host before the forward's first
// kernel), and activations written two or more kernels back, complete
// because each kernel lets its successor launch only after its own wait
// (attention's final key rows and V blocks); it writes nothing. Data from
// the side stream (altup_coefs_kernel) is read after the wait. Prefetches
// follow the same rule into L1, which is not coherent; into L2, which is,
// they may name lines the kernel just before is still writing (attention's
// newest key row). So the stream order is kept; what is gained is the launch latency
// of the next kernel and that work, hidden behind this one (hundreds of
// small kernels per decode token). N3_CUDA_PDL=0 turns it off.
__device__ inline void pdl_begin() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

inline bool pdl_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("N3_CUDA_PDL");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

// Per-launch timing for N3_CUDA_PROFILE runs (cuda_decode_bench): when
// `on`, every launch is bracketed by two CUDA events; the caller reads the
// marks after synchronising (and they cost the overlap of PDL).
struct LaunchProfile {
  bool on = false;
  std::vector<cudaEvent_t> pool;
  std::vector<std::pair<const char*, int>> marks;  // kernel name, first event index
  int used = 0;
  cudaEvent_t next() {
    if (used == int(pool.size())) {
      cudaEvent_t e;
      check_cuda(cudaEventCreate(&e), "cudaEventCreate", __FILE__, __LINE__);
      pool.push_back(e);
    }
    return pool[used++];
  }
};
inline LaunchProfile& launch_profile() {
  static LaunchProfile p;
  return p;
}

#ifdef N3_CUDA_TIMING_SKIP
// Timing builds only (cmake -DN3_CUDA_TIMING_SKIP=ON, docs/gpu.md): with
// N3_CUDA_SKIP=gemv the INT4 GEMV launches are left out, with
// N3_CUDA_SKIP=other every other launch, so that a decode step's time splits
// into what each part costs on the chain by itself. The results are wrong,
// which is why an ordinary build has no such switch.
inline bool timing_skip(const char* name) {
  static const std::string mode = std::getenv("N3_CUDA_SKIP") ? std::getenv("N3_CUDA_SKIP") : "";
  if (mode.empty()) return false;
  if (mode != "gemv" && mode != "other") throw Error("N3_CUDA_SKIP must be gemv or other");
  static const bool said = std::fprintf(stderr, "n3: timing build, N3_CUDA_SKIP=%s: those launches are left out, the results are wrong\n", mode.c_str()) > 0;
  (void)said;
  const bool gemv = std::strncmp(name, "gemv", 4) == 0;
  return mode == "gemv" ? gemv : !gemv;
}
#endif

// Launches kernel k (checking the launch); pdl: with programmatic stream
// serialization.
template <class... Exp, class... Act>
void launch_as(bool pdl, const char* name, void (*k)(Exp...), dim3 grid, dim3 block, size_t smem, cudaStream_t s,
               Act&&... args) {
#ifdef N3_CUDA_TIMING_SKIP
  if (timing_skip(name)) return;
#endif
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  LaunchProfile& prof = launch_profile();
  if (prof.on) {
    prof.marks.push_back({name, prof.used});
    check_cuda(cudaEventRecord(prof.next(), s), "cudaEventRecord", __FILE__, __LINE__);
  }
  check_cuda(cudaLaunchKernelEx(&cfg, k, std::forward<Act>(args)...), name, __FILE__, __LINE__);
  if (prof.on) check_cuda(cudaEventRecord(prof.next(), s), "cudaEventRecord", __FILE__, __LINE__);
}
// The decode chain's launches: programmatic unless N3_CUDA_PDL=0.
template <class... Exp, class... Act>
void launch(const char* name, void (*k)(Exp...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, Act&&... args) {
  launch_as(pdl_enabled(), name, k, grid, block, smem, s, std::forward<Act>(args)...);
}

constexpr unsigned kFull = 0xffffffffu;

// Lane-tree sum of get(0..n) over one warp (reduce.h's order); every lane
// gets the result. Each lane's terms are fetched 16 at a time before they
// are added (in element order): the chain of adds is inherent to the order,
// the memory latency is not.
constexpr int kBatch = 16;

template <class Get>
__device__ inline float warp_tree_sum(int n, Get get) {
  const int lane = threadIdx.x & 31;
  float a = 0.0f;
  int i = lane;
  for (; i + 32 * (kBatch - 1) < n; i += 32 * kBatch) {
    float v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = get(i + 32 * u);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) a = a + v[u];
  }
  for (; i < n; i += 32) a = a + get(i);
  for (int off = 16; off >= 1; off >>= 1) a = a + __shfl_down_sync(kFull, a, off);
  return num::canon(__shfl_sync(kFull, a, 0));
}

template <class Get>
__device__ inline float warp_tree_max(int n, Get get) {
  const int lane = threadIdx.x & 31;
  float a = num::inf_f(true);
  int i = lane;
  for (; i + 32 * (kBatch - 1) < n; i += 32 * kBatch) {
    float v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = get(i + 32 * u);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) a = num::nmax(a, v[u]);
  }
  for (; i < n; i += 32) a = num::nmax(a, get(i));
  for (int off = 16; off >= 1; off >>= 1) a = num::nmax(a, __shfl_down_sync(kFull, a, off));
  return num::canon(__shfl_sync(kFull, a, 0));
}

// Double-precision sum over a warp (reference numerics; any order), every lane gets it.
template <class Get>
__device__ inline double warp_dsum(int n, Get get) {
  const int lane = threadIdx.x & 31;
  double a = 0.0;
  int i = lane;
  for (; i + 32 * (kBatch - 1) < n; i += 32 * kBatch) {
    double v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = get(i + 32 * u);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) a += v[u];
  }
  for (; i < n; i += 32) a += get(i);
  for (int off = 16; off >= 1; off >>= 1) a += __shfl_down_sync(kFull, a, off);
  return __shfl_sync(kFull, a, 0);
}

// Integer sum (order-free) to lane 0.
__device__ inline int64_t warp_sum_i64(int64_t v) {
  for (int off = 16; off >= 1; off >>= 1) v += __shfl_down_sync(kFull, v, off);
  return v;
}

__device__ inline double warp_sum_f64(double v) {
  for (int off = 16; off >= 1; off >>= 1) v += __shfl_down_sync(kFull, v, off);
  return v;
}

__host__ __device__ inline int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace n3::gpu
