// Golden-model decode throughput on an E4B-sized synthetic model, next to this
// machine's memory-bandwidth roofline for the bytes one decode token streams.
//
//   build/bench/golden_decode_bench [--benchmark_min_time=...]
//   N3_BENCH_MODEL=path.n3w  reuse a model file (default: synthesise
//   configs/models/gemma3n-e4b.yaml into $TMPDIR/n3-bench-e4b.n3w once)
//
// Prints: synth time (when it made the file), measured read bandwidth (GB/s),
// bytes streamed per decode token, the roofline tok/s = bandwidth / bytes,
// and the golden model's decode tok/s (counter "tok_per_s").
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "bench/decode_bytes.h"
#include "base/file_util.h"
#include "golden/model.h"
#include "golden/model_config.h"
#include "golden/synth.h"
#include "golden/weight_names.h"
#include "golden/weights.h"

namespace {

std::string model_path() {
  if (const char* p = std::getenv("N3_BENCH_MODEL")) return p;
  const std::string path = (std::filesystem::temp_directory_path() / "n3-bench-e4b.n3w").string();
  if (!n3::file_exists(path)) {
    n3::ModelConfig c = n3::load_model_config(std::string(N3_SOURCE_DIR) + "/configs/models/gemma3n-e4b.yaml");
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t bytes = n3::synth_n3w(c, 1, path, {});
    std::fprintf(stderr, "synthesised %s: %.2f GB in %.1f s\n", path.c_str(), bytes / 1e9,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return path;
}

// Sustained read bandwidth of this machine, 2 threads, over a 1 GiB buffer.
double read_bandwidth_gbps() {
  const size_t n = (size_t(1) << 30) / 8;
  std::vector<uint64_t> buf(n, 1);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    uint64_t sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (size_t i = 0; i < n; ++i) sum += buf[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(sum);
    best = std::max(best, n * 8.0 / s / 1e9);
  }
  return best;
}

void BM_GoldenDecodeE4B(benchmark::State& state) {
  auto w = std::shared_ptr<const n3::WeightSource>(n3::open_weights(model_path()));
  n3::GoldenModel gm(w, n3::make_reference_kernels());
  const n3::ModelConfig& c = gm.config();
  const double gbps = read_bandwidth_gbps(), bytes = n3::bench::decode_weight_bytes(c);
  n3::Sequence seq = gm.new_sequence();
  gm.forward(seq, {2, 1000, 5000, 7, 42, 99, 1234, 8}, n3::Phase::Prefill, nullptr, true);  // 8-token prefill
  int32_t id = 17;
  int64_t tokens = 0;
  for (auto _ : state) {
    n3::Tensor l = gm.forward(seq, {id}, n3::Phase::Decode, nullptr, true);
    id = int32_t(std::max_element(l.data.begin(), l.data.end()) - l.data.begin());
    ++tokens;
  }
  state.counters["tok_per_s"] = benchmark::Counter(double(tokens), benchmark::Counter::kIsRate);
  state.counters["bytes_per_token_GB"] = bytes / 1e9;
  state.counters["mem_bw_GBps"] = gbps;
  state.counters["roofline_tok_per_s"] = gbps * 1e9 / bytes;
  std::fprintf(stderr, "E4B golden decode: %.2f GB streamed per token; this machine reads %.1f GB/s -> roofline "
                       "%.2f tok/s\n", bytes / 1e9, gbps, gbps * 1e9 / bytes);
}
BENCHMARK(BM_GoldenDecodeE4B)->Unit(benchmark::kSecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
