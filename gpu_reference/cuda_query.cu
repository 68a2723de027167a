// The device queries of model_cuda.h: whether this build can run here, the
// device's name, and its copy bandwidth (what the benches compare against).
#include <cstdio>
#include <string>

#include "gpu_reference/cuda_util.cuh"
#include "gpu_reference/model_cuda.h"

namespace n3::gpu {

std::string cuda_problem() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
  }
  if (n == 0) return "no CUDA device on this machine";
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "cannot query CUDA device 0";
  if (p.major < 9)
    return std::string("this build targets sm_90 (H100/H200); device 0 is ") + p.name + " (sm_" +
           std::to_string(p.major) + std::to_string(p.minor) + ")";
  return "";
}

std::string cuda_device_name() {
  cudaDeviceProp p;
  N3_CUDA(cudaGetDeviceProperties(&p, 0));
  char buf[64];
  std::snprintf(buf, sizeof buf, " (sm_%d%d, %.1f GiB)", p.major, p.minor, p.totalGlobalMem / 1073741824.0);
  return p.name + std::string(buf);
}

double copy_bandwidth(size_t bytes) {
  DevBuf<uint8_t> a(bytes), b(bytes);
  N3_CUDA(cudaMemset(a.get(), 1, bytes));
  cudaEvent_t e0, e1;
  N3_CUDA(cudaEventCreate(&e0));
  N3_CUDA(cudaEventCreate(&e1));
  N3_CUDA(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice));  // warm
  const int reps = 10;
  N3_CUDA(cudaEventRecord(e0));
  for (int i = 0; i < reps; ++i) N3_CUDA(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice));
  N3_CUDA(cudaEventRecord(e1));
  N3_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  N3_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return 2.0 * double(bytes) * reps / (ms * 1e-3);
}

}  // namespace n3::gpu
