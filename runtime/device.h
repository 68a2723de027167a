// The device API: one interface over every backend (golden, func, systemc,
// cuda). The host loop, `n3 golden`, `n3 sim`, the tests and the demo talk
// to a Device and never to a backend directly (VTA's driver.h idea).
//
// What is common to every backend lives here, once: argument checks, the KV
// policy at the cap (`error`, or `evict` keeping the first kv.sink_tokens
// rows), batching a decode over several sequences, the logits' format and
// the timing of each call. A backend supplies only a forward over one
// sequence, its eviction of cache rows, and its sequence bookkeeping
// (docs/runtime.md).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/tensor.h"
#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"

namespace n3 {

struct DeviceOptions {
  std::string model;            // checkpoint dir, .n3w, or (timing-only) a model YAML
  std::string hw_path;          // hardware file
  std::string numerics = "npu"; // npu | reference
  // Compiled backends (func, systemc): materialise every intermediate tensor
  // for a Recorder, not only layers.N and logits (adds capture points, hence
  // synchronisation, so simulated timing differs slightly).
  bool dump_all = false;
  // Compiled backends: the largest prefill chunk (0: the largest that fits
  // L2), L2 bytes for resident weights (-1: what the programs leave free; 0:
  // none), and timing-only runs (no weights, no arithmetic; systemc only).
  int max_chunk = 0;
  int64_t resident_bytes = -1;
  bool timing_only = false;
};

// Logits exactly as the backend produced them: `dtype` names the format
// ("float32", "bfloat16", "float16": the hardware file's
// numerics.logits_format under NPU numerics); `values` holds them widened to
// float32, which is exact for each of these formats.
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
  const HwConfig& hw() const { return hw_; }
  // The numerics the device computes in: "npu" or "reference".
  const std::string& numerics() const { return numerics_; }

  virtual int open_sequence() = 0;
  virtual void close_sequence(int seq) = 0;
  // Prefill `ids` into a sequence; returns the logits of the last position.
  // A recorder that wants logits gets every prompt row's (as `n3 golden`
  // dumps them).
  Logits prefill(int seq, const std::vector<int32_t>& ids, Recorder* rec = nullptr);
  // One decode step for each sequence of a batch (ids[i] feeds seqs[i]);
  // returns [seqs.size(), V] logits. Sequences are independent.
  Logits decode(const std::vector<int>& seqs, const std::vector<int32_t>& ids, Recorder* rec = nullptr);
  virtual int64_t position(int seq) const = 0;  // tokens seen so far
  // Throws (one line) when n more tokens at seq's next position would go past
  // the model's max_position_embeddings: RoPE and the rings are sized for it.
  void check_positions(int seq, int64_t n, const char* what) const;
  virtual int64_t cached(int seq) const = 0;    // KV rows held
  const StepTiming& last_timing() const { return timing_; }

  int64_t kv_capacity() const;
  KvPolicy kv_policy() const;
  int64_t kv_sinks() const;

 protected:
  // Reads the hardware file and checks its KV policy (once, here, for every backend).
  Device(const DeviceOptions& opt);
  // Runs ids at the sequence's next positions, appending their K/V; returns
  // [T, V] logits (the last row only when last_only). The sequence exists
  // and the cache has room (the base class checked both).
  virtual Tensor forward(int seq, const std::vector<int32_t>& ids, Phase ph, Recorder* rec, bool last_only) = 0;
  // Keeps the first `sinks` and the last `recent` cache rows of a sequence.
  virtual void evict(int seq, int64_t sinks, int64_t recent) = 0;
  // True when `seq` is open (for the argument checks).
  virtual bool has_sequence(int seq) const = 0;
  // Simulated time of the last forward in ps; negative: no simulated time.
  virtual double last_sim_ps() const { return -1; }

  HwConfig hw_;

 private:
  void check_ids(const std::vector<int32_t>& ids, const char* what) const;
  // Applies the KV policy before `n` new rows are stored in `seq`.
  void make_room(int seq, int64_t n);
  // Records the timing of a call begun at t0 (sim_ps < 0: no simulated time).
  void finish(std::chrono::steady_clock::time_point t0, int64_t tokens, double sim_ps);
  std::string numerics_;
  StepTiming timing_;
};

// Runs a prompt through sequence `seq` as `n3 golden` and `n3 sim` do:
// prefill in chunks of `chunk` ids (0: the whole prompt at once), then one
// decode step per id of `feed`, calling on_step(i) after step i. Returns the
// wall seconds of the prefill and of the decode steps.
struct PromptTimes {
  double prefill_s = 0, decode_s = 0;
};
PromptTimes run_prompt(Device& dev, int seq, const std::vector<int32_t>& ids, size_t chunk,
                       const std::vector<int32_t>& feed, Recorder* rec,
                       const std::function<void(size_t)>& on_step = nullptr);

// Names a dump's run in its manifest: backend, numerics, model, hardware
// file and, under NPU numerics, the full format set of the hardware file.
void set_run_meta(DumpCollector& rec, const Device& dev, const std::string& model);

// The logits format a device returns under `numerics` on hardware `hw`
// ("float32" | "bfloat16" | "float16").
std::string logits_dtype(const HwConfig& hw, const std::string& numerics);

}  // namespace n3
