#include "host_driver/generate.h"

#include <chrono>

namespace n3::host {

Generation generate(Device& dev, const std::vector<std::vector<int32_t>>& prompts, const SamplerConfig& sc,
                    Recorder* rec, const std::function<void(size_t, int)>& on_token) {
  const int V = dev.config().vocab;
  const size_t n = prompts.size();
  Generation g;
  g.ids.resize(n);
  std::vector<Sampler> samplers;
  std::vector<int> seqs;
  std::vector<std::vector<float>> last(n);  // each sequence's latest logits row
  for (size_t i = 0; i < n; ++i) {
    samplers.emplace_back(sc, std::vector<int>(prompts[i].begin(), prompts[i].end()));
    seqs.push_back(dev.open_sequence());
    const Logits lg = dev.prefill(seqs[i], prompts[i], rec);
    last[i].assign(lg.values.row(0), lg.values.row(0) + V);
    g.prefill_s += dev.last_timing().wall_s;
    g.dtypes.push_back(lg.dtype);
  }
  for (;;) {
    std::vector<int> step_seqs;
    std::vector<int32_t> step_ids;
    std::vector<size_t> which;
    for (size_t i = 0; i < n; ++i) {
      if (samplers[i].done()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      const int id = samplers[i].next(last[i].data(), V);
      g.sample_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      g.ids[i].push_back(id);
      if (on_token) on_token(i, id);
      if (samplers[i].done()) continue;
      step_seqs.push_back(seqs[i]);
      step_ids.push_back(id);
      which.push_back(i);
    }
    if (step_seqs.empty()) break;
    const Logits lg = dev.decode(step_seqs, step_ids, rec);
    g.dtypes.push_back(lg.dtype);
    for (size_t k = 0; k < which.size(); ++k)
      last[which[k]].assign(lg.values.row(int64_t(k)), lg.values.row(int64_t(k)) + V);
    const StepTiming& t = dev.last_timing();
    g.decode_s += t.wall_s;
    g.decoded += int64_t(step_seqs.size());
    if (t.sim_cycles >= 0) {
      g.simulated = true;
      g.sim_cycles += t.sim_cycles;
      g.sim_s += t.sim_seconds;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    g.stopped = g.stopped || samplers[i].stopped();
    dev.close_sequence(seqs[i]);
  }
  return g;
}

}  // namespace n3::host
