// Kernel trace of a CUDA run, for graph replays too: the driver loads this
// library into any CUDA program named in CUDA_INJECTION64_PATH, and CUPTI's
// activity records give every kernel's start and end on the GPU clock, one
// record per kernel node when a CUDA graph is replayed. ncu times kernels one
// at a time (no overlap between programmatic launches); this shows how much of
// the decode chain each kernel holds where it really runs. At exit it writes
// "start_ns <tab> end_ns <tab> name" lines, in record order, to $N3_TRACE_OUT
// (default kernel_trace.tsv); gpu_reference/scripts/graph_trace.py reads them.
//
//   CUDA_INJECTION64_PATH=build/libn3_kernel_trace.so N3_TRACE_OUT=t.tsv build/bench/cuda_decode_bench
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Kernel {
  uint64_t start, end;
  std::string name;
};
std::mutex g_mu;
std::vector<Kernel> g_kernels;
bool g_failed = false;

void fail(const char* what, CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  std::fprintf(stderr, "n3_kernel_trace: %s failed: %s\n", what, msg ? msg : "unknown CUPTI error");
  g_failed = true;
}

void CUPTIAPI buffer_requested(uint8_t** buf, size_t* size, size_t* max_records) {
  *buf = static_cast<uint8_t*>(std::aligned_alloc(8, size_t(8) << 20));
  *size = *buf ? size_t(8) << 20 : 0;  // no buffer: CUPTI drops records, which marks the trace incomplete
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mu);
  CUpti_Activity* rec = nullptr;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buf, valid, &rec);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the buffer's end
    if (r != CUPTI_SUCCESS) {
      fail("cuptiActivityGetNextRecord", r);
      break;
    }
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    g_kernels.push_back({k->start, k->end, k->name ? k->name : "?"});
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    std::fprintf(stderr, "n3_kernel_trace: %zu activity records dropped\n", dropped);
    g_failed = true;
  }
  std::free(buf);
}

void write_trace() {
  if (CUptiResult r = cuptiActivityFlushAll(1); r != CUPTI_SUCCESS) fail("cuptiActivityFlushAll", r);
  const char* path = std::getenv("N3_TRACE_OUT");
  const std::string out = path && *path ? path : "kernel_trace.tsv";
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_failed) {
    std::fprintf(stderr, "n3_kernel_trace: the trace is incomplete; %s not written\n", out.c_str());
    return;
  }
  FILE* f = std::fopen(out.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "n3_kernel_trace: cannot write %s\n", out.c_str());
    return;
  }
  for (const Kernel& k : g_kernels)
    std::fprintf(f, "%llu\t%llu\t%s\n", static_cast<unsigned long long>(k.start),
                 static_cast<unsigned long long>(k.end), k.name.c_str());
  const bool bad = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || bad) {  // no truncated trace left behind
    std::fprintf(stderr, "n3_kernel_trace: writing %s failed; removed\n", out.c_str());
    std::remove(out.c_str());
  }
}

}  // namespace

extern "C" int InitializeInjection(void) {
  if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
    fail("cuptiActivityEnable", r);
    return 0;
  }
  if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    fail("cuptiActivityRegisterCallbacks", r);
    return 0;
  }
  std::atexit(write_trace);
  return 1;
}
