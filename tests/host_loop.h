// The host loop of `n3 run` (host_driver/generate.h) for the suites: one
// prompt, a fixed sampler, every step recorded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace n3::test {

struct Generated {
  std::vector<int32_t> ids;
  std::string dump;                // dump directory of the whole run ("" when not asked for)
  std::vector<std::string> dtypes;  // Logits::dtype of every call, prefill first
};

// Greedy unless `sampled` (temperature 3, top-k 40, seed 7: the random
// synthetic models' greedy output repeats one id, a seeded sample does not,
// and it is the same on every backend only if every logit is). With a
// dump_dir, every tensor of the run (all ops when dump_all) is written there.
Generated host_loop(Device& dev, const std::vector<int32_t>& prompt, int new_tokens, bool sampled,
                    const std::string& dump_dir = "", bool dump_all = true);

}  // namespace n3::test
