// Host time of one sampling step over a Gemma 3n vocabulary (262 400
// logits): what `n3 run` and the decode benchmarks pay per token on the
// host after the backend returns the logits. Greedy (the CUDA decode
// benchmark's and the demo's mode) and the pccx preset (temperature, top-k,
// top-p, repetition penalty).
#include <benchmark/benchmark.h>

#include <vector>

#include "base/rng.h"
#include "host_driver/sampler.h"

namespace {

constexpr int kVocab = 262400;

std::vector<float> logits() {
  std::vector<float> l(kVocab);
  const n3::CounterRng rng{7};
  for (int i = 0; i < kVocab; ++i) l[size_t(i)] = 4.0f * rng.normal(uint64_t(i));
  return l;
}

void run(benchmark::State& state, n3::host::SamplerConfig sc) {
  const std::vector<float> l = logits();
  sc.max_new = 1 << 30;
  n3::host::Sampler s(sc, {1, 2, 3});
  for (auto _ : state) benchmark::DoNotOptimize(s.next(l.data(), kVocab));
  state.SetItemsProcessed(int64_t(state.iterations()) * kVocab);  // logits/s
}

void BM_SamplerGreedy(benchmark::State& state) { run(state, n3::host::SamplerConfig{}); }
BENCHMARK(BM_SamplerGreedy)->Unit(benchmark::kMicrosecond);

void BM_SamplerArgmaxFloat(benchmark::State& state) {
  const std::vector<float> l = logits();
  for (auto _ : state) benchmark::DoNotOptimize(n3::host::sampling::argmax(l.data(), kVocab));
  state.SetItemsProcessed(int64_t(state.iterations()) * kVocab);
}
BENCHMARK(BM_SamplerArgmaxFloat)->Unit(benchmark::kMicrosecond);

void BM_SamplerPccxPreset(benchmark::State& state) {
  n3::host::SamplerConfig sc = n3::host::pccx_preset();
  sc.temperature = 0.65f;  // its E4B chat driver's
  run(state, sc);
}
BENCHMARK(BM_SamplerPccxPreset)->Unit(benchmark::kMicrosecond);

// A flat distribution (logits with standard deviation 1): the top-p nucleus
// is most of the vocabulary, the worst case of the prefix sort.
void BM_SamplerTopPFlat(benchmark::State& state) {
  std::vector<float> l = logits();
  for (float& v : l) v *= 0.25f;
  n3::host::SamplerConfig sc;
  sc.temperature = 1.0f;
  sc.top_p = 0.9f;
  sc.max_new = 1 << 30;
  n3::host::Sampler s(sc, {});
  for (auto _ : state) benchmark::DoNotOptimize(s.next(l.data(), kVocab));
  state.SetItemsProcessed(int64_t(state.iterations()) * kVocab);
}
BENCHMARK(BM_SamplerTopPFlat)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
