// The host sampling loop over any Device, as `n3 run` drives it: each prompt
// is prefilled as its own sequence, then every step samples one id per
// sequence still generating and feeds them to the device as one decode
// batch, so each sequence gives the ids it gives alone. The tests drive the
// same loop (tests/host_loop.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host_driver/sampler.h"
#include "runtime/device.h"

namespace n3::host {

struct Generation {
  std::vector<std::vector<int32_t>> ids;  // generated ids, one list per prompt
  double prefill_s = 0, decode_s = 0;     // the device's wall time
  double sample_s = 0;                    // host sampling, not in the device's time
  int64_t decoded = 0;                    // decode tokens the device ran
  bool simulated = false;                 // the device simulates time:
  int64_t sim_cycles = 0;                 //   of the decode steps
  double sim_s = 0;
  bool stopped = false;                   // some sequence ended on a stop id
  std::vector<std::string> dtypes;        // Logits::dtype of every device call
};

// `on_token(i, id)` is called as each id of prompt i is sampled.
Generation generate(Device& dev, const std::vector<std::vector<int32_t>>& prompts, const SamplerConfig& sc,
                    Recorder* rec, const std::function<void(size_t, int)>& on_token = nullptr);

}  // namespace n3::host
