// The `func` backend: Gemma 3n compiled to ISA programs (compiler/) and run
// on the functional simulator (sim/). FuncModel is the host side: it owns the
// DDR image (weights, KV rings), selects the program for each chunk length,
// writes the run-time inputs, runs, and records the captured tensors under
// the golden model's names (golden/dump_ops.h).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/layout.h"
#include "compiler/lower.h"
#include "golden/dump.h"
#include "golden/hw_config.h"
#include "golden/weights.h"
#include "runtime/device.h"
#include "sim/func_sim.h"
#include "sim/memory.h"

namespace n3 {

comp::HwLimits hw_limits(const HwConfig& hw);

class FuncModel {
 public:
  // Runs one compiled program on a simulator whose memory holds the image
  // and the inputs; returns the simulated time in ps (negative: the backend
  // simulates no time). The default is the functional simulator's run().
  using Runner = std::function<double(sim::FuncSim&, const comp::Compiled&)>;

  // max_chunk 0: the largest chunk that fits L2.
  // resident_bytes: L2 for resident weights at most (-1: all the programs leave free; 0: none).
  FuncModel(std::shared_ptr<const WeightSource> w, const HwConfig& hw, int max_chunk, bool dump_all,
            int64_t resident_bytes = -1);
  // Timing-only: shapes and the memory plan without weights; the engines skip
  // their arithmetic (SimOptions::effects = false), so logits and captures
  // are not computed, but every instruction's operands, hence its timing, are
  // those of the full run.
  FuncModel(const ModelConfig& cfg, const HwConfig& hw, int max_chunk, int64_t resident_bytes = -1);
  ~FuncModel();
  void set_runner(Runner r) { runner_ = std::move(r); }
  bool timing_only() const { return !w_; }
  const ModelConfig& config() const { return cfg_; }
  int max_chunk() const { return lay_.max_chunk; }
  // One forward over ids at the current position (T <= max_chunk); returns
  // [T, V] logits. It runs only the fixed program set (comp::chunk_sizes):
  // T not in it runs as the greedy cover (3 at max 5: programs 2 and 1).
  Tensor forward(const std::vector<int32_t>& ids, Phase ph, Recorder* rec);
  const std::vector<int>& chunk_sizes() const { return sizes_; }
  int64_t position() const { return pos_; }
  void reset() { pos_ = 0; }
  // Timing-only runs may start at any position (no KV contents to keep
  // consistent): a decode step at context N without prefilling N tokens.
  void seek(int64_t pos);
  const comp::Compiled& program(int T);
  double last_sim_ps() const { return last_sim_ps_; }
  // The weights the plan keeps in L2, and the simulated time of the preload
  // program that copied them there (run once, before the first forward;
  // negative: not run yet or no simulated time).
  const comp::Layout& layout() const { return lay_; }
  double load_sim_ps() const { return load_sim_ps_; }

 private:
  void plan(int max_chunk, int64_t resident_bytes);
  sim::SimOptions sim_options() const;
  Tensor forward_program(const std::vector<int32_t>& ids, Phase ph, Recorder* rec);
  std::vector<int> sizes_;
  std::shared_ptr<const WeightSource> w_;
  ModelConfig cfg_;
  num::Formats f_;
  comp::HwLimits hw_;
  comp::Layout lay_;
  bool dump_all_;
  std::unique_ptr<sim::Memory> mem_;
  std::map<int, comp::Compiled> progs_;
  int64_t pos_ = 0;
  Runner runner_;
  double last_sim_ps_ = -1;
  std::unique_ptr<comp::Compiled> preload_;
  double load_sim_ps_ = -1;
};

std::unique_ptr<Device> make_func_device(const DeviceOptions& opt);
// The compiled model behind the Device API on the runner a backend supplies
// (`systemc`: the SystemC timing model); last_timing() carries its simulated time.
std::unique_ptr<Device> make_compiled_device(const DeviceOptions& opt, const std::string& backend,
                                             FuncModel::Runner runner);

}  // namespace n3
