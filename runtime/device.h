// The device API: one interface over every backend (golden, func, systemc,
// cuda). The host loop, the tests
// and the demo talk to a Device and never to a backend directly (VTA's
// driver.h idea). Every call that runs the model reports its timing.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "base/tensor.h"

namespace n3 {

struct DeviceOptions {
  std::string model;            // checkpoint dir, .n3w, or (timing-only backends) a model YAML
  std::string hw_path;          // hardware file
  std::string numerics = "npu"; // npu | reference
  // Compiled backends (func, systemc): materialise every intermediate tensor
  // for a Recorder, not only layers.N and logits (adds capture points, hence
  // synchronisation, so simulated timing differs slightly).
  bool dump_all = false;
};

// Logits exactly as the backend produced them: `dtype` names the format
// ("float32", ...); values are never converted behind the caller's back.
struct Logits {
  std::string dtype = "float32";
  Tensor values;  // [rows, V]
};

struct StepTiming {
  double wall_s = 0;
  int64_t sim_cycles = -1;  // -1: the backend does not simulate time
  double sim_seconds = 0;   // sim_cycles at the hardware's core clock
  int64_t tokens = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string backend() const = 0;
  virtual const ModelConfig& config() const = 0;
  virtual const HwConfig& hw() const = 0;

  virtual int open_sequence() = 0;
  virtual void close_sequence(int seq) = 0;
  // Prefill `ids` into a sequence; returns the logits of the last position.
  virtual Logits prefill(int seq, const std::vector<int32_t>& ids, Recorder* rec = nullptr) = 0;
  // One decode step for each sequence of a batch (ids[i] feeds seqs[i]);
  // returns [seqs.size(), V] logits. Sequences are independent.
  virtual Logits decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids,
                        Recorder* rec = nullptr) = 0;
  virtual int64_t position(int seq) const = 0;  // tokens seen so far
  virtual int64_t cached(int seq) const = 0;    // KV rows held
  virtual const StepTiming& last_timing() const = 0;

  int64_t kv_capacity() const;
  KvPolicy kv_policy() const;
  int64_t kv_sinks() const;
};

// open_device (host_driver/backends.h) picks a backend by name.

}  // namespace n3
