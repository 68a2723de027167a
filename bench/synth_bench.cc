// Throughput of the weights path: XXH64 (the .n3w checksums, verified at
// every open), the INT4 quantiser (n3 convert), n3 synth and open_n3w on a
// mid-size model. Bytes/s are reported per benchmark.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "golden/n3w_file.h"
#include "golden/quantize.h"
#include "base/rng.h"
#include "golden/synth.h"

namespace {

void BM_Xxh64(benchmark::State& state) {
  std::vector<uint8_t> buf(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(n3::mix64(i));
  for (auto _ : state) benchmark::DoNotOptimize(n3::xxh64(buf.data(), buf.size()));
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Xxh64)->Arg(64 << 10)->Arg(16 << 20);

void BM_QuantizeRow(benchmark::State& state) {
  const int64_t cols = state.range(0), group = state.range(1);
  std::vector<float> w(static_cast<size_t>(cols));
  const n3::CounterRng rng{1};
  for (int64_t i = 0; i < cols; ++i) w[size_t(i)] = rng.normal(uint64_t(i));
  std::vector<uint8_t> packed(size_t(n3::int4_row_bytes(cols)));
  std::vector<float> scales(static_cast<size_t>(cols));
  for (auto _ : state) {
    n3::quantize_row_int4(w.data(), cols, group, packed.data(), scales.data());
    benchmark::DoNotOptimize(packed.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * cols);  // weights/s
  state.SetBytesProcessed(int64_t(state.iterations()) * cols * 4);  // float32 input
}
BENCHMARK(BM_QuantizeRow)->Args({2048, 0})->Args({16384, 0})->Args({2048, 32});

std::string mid_yaml() { return std::string(N3_SOURCE_DIR) + "/configs/models/mid.yaml"; }
std::string bench_file() { return "/tmp/n3-synth-bench-" + std::to_string(::getpid()) + ".n3w"; }

void BM_SynthMid(benchmark::State& state) {
  const n3::ModelConfig c = n3::load_model_config(mid_yaml());
  const std::string path = bench_file();
  uint64_t bytes = 0;
  for (auto _ : state) bytes = n3::synth_n3w(c, 1, path, {});
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
  std::remove(path.c_str());
}
BENCHMARK(BM_SynthMid)->Unit(benchmark::kMillisecond);

void BM_OpenN3wMid(benchmark::State& state) {
  const std::string path = bench_file();
  const uint64_t bytes = n3::synth_n3w(n3::load_model_config(mid_yaml()), 1, path, {});
  for (auto _ : state) benchmark::DoNotOptimize(n3::open_n3w(path));
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
  std::remove(path.c_str());
}
BENCHMARK(BM_OpenN3wMid)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
