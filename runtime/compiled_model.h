// The compiled model: Gemma 3n compiled to ISA programs (compiler/) for one
// hardware file, with the DDR image it runs on (sim/). One API for everything
// that plans, compiles or runs the compiled form: `n3 compile` (plan, programs,
// image), `n3 sim --model`, the func and systemc devices and the benches.
//
// It owns the memory plan, the programs (compiled on first use for each chunk
// length), the DDR image (weights, KV rings) and one sequence's KV state; a
// device with several sequences swaps that state in and out (save_kv /
// load_kv). A forward writes the run-time inputs, runs the program on the
// runner (the functional simulator, or the SystemC timing model), reads the
// logits in the hardware's logits format and records the captured tensors
// under the golden model's names (golden/dump_ops.h). docs/runtime.md.
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
#include "runtime/schedule.h"
#include "sim/func_sim.h"
#include "sim/memory.h"

namespace n3 {

// hw_limits and sim_capacities (the compiler's and the simulator's view of
// the hardware file) are declared in runtime/schedule.h, which plans with them.

struct CompiledOptions {
  int max_chunk = 0;            // largest prefill chunk; 0: the best modelled (choose_chunk, runtime/schedule.h)
  int64_t resident_bytes = -1;  // L2 for resident weights at most (-1: what the programs leave free; 0: none)
  bool dump_all = false;        // capture every intermediate tensor, not only layers.N and logits
  // kv.policy evict: with max_chunk 0 the chunk is also at most kv.cap_tokens -
  // sliding_window + 1, so the sliding rings keep window + chunk - 1 rows.
  bool evict = false;
};

// One sequence's KV state, as saved by save_kv: the next position, the rows
// held in the global rings, and the bytes of every ring.
struct KvState {
  int64_t pos = 0, rows = 0;
  std::vector<uint8_t> rings;
};

class CompiledModel {
 public:
  // Runs one compiled program on a simulator whose memory holds the image
  // and the inputs; returns the simulated time in ps (negative: the runner
  // simulates no time). `label` says what the run is: "preload", "prefill"
  // or "decode". Without a runner, the functional simulator's run().
  using Runner = std::function<double(sim::FuncSim&, const comp::Compiled&, const std::string& label)>;

  // With weights: the image holds them, forward computes.
  CompiledModel(std::shared_ptr<const WeightSource> w, const HwConfig& hw, const CompiledOptions& o);
  // Shapes only: the plan and programs without weights (n3 compile from a
  // model YAML); forward runs timing-only (SimOptions::effects = false: no
  // logits or captures, but every instruction's operands, hence its timing,
  // are those of the full run).
  CompiledModel(const ModelConfig& cfg, const HwConfig& hw, const CompiledOptions& o);
  ~CompiledModel();
  void set_runner(Runner r) { runner_ = std::move(r); }
  bool timing_only() const { return !w_; }
  const WeightSource* weights() const { return w_.get(); }
  const ModelConfig& config() const { return cfg_; }
  const num::Formats& formats() const { return f_; }
  const comp::HwLimits& limits() const { return hw_; }
  const HwConfig& hw_config() const { return hwc_; }
  const comp::Layout& layout() const { return lay_; }
  int max_chunk() const { return lay_.max_chunk; }
  // The largest chunk whose program fits L2 (larger ones spill activations to DDR).
  int largest_chunk_in_l2() const { return fit_; }
  // How the largest chunk was chosen (given, or the modelled candidates).
  const ChunkChoice& chunk_choice() const { return choice_; }
  // The program set, largest first (comp::chunk_sizes).
  const std::vector<int>& chunk_sizes() const { return sizes_; }
  const comp::Compiled& program(int T);
  // The program that copies the L2-resident weights in; null when none are resident.
  const comp::Compiled* preload();
  // DDR bytes [0, weights_end): the weights and constants in their places.
  std::string weight_image() const;

  // One forward over ids (any count: chunks of max_chunk, the tail as the
  // greedy cover of the program set) at the current position; returns [T, V]
  // logits widened to float32 from the hardware's logits format.
  Tensor forward(const std::vector<int32_t>& ids, Phase ph, Recorder* rec);
  // Simulated time of the last forward (all its programs), ps; negative: none.
  double last_sim_ps() const { return last_sim_ps_; }
  // Simulated time of the preload program (run once, before the first
  // forward); negative: not run or no simulated time.
  double load_sim_ps() const { return load_sim_ps_; }

  // The sequence in the image: next position and rows held in the global rings.
  int64_t position() const { return pos_; }
  int64_t rows() const { return rows_; }
  // A fresh sequence: position 0, no rows, rings zeroed.
  void reset();
  // Timing-only runs may start at any position (no KV contents to keep
  // consistent): a decode step at context N without prefilling N tokens.
  void seek(int64_t pos);
  void save_kv(KvState* s) const;
  void load_kv(const KvState& s);
  // kv.policy evict: keeps the first `sinks` and the last `recent` rows of
  // every global ring, compacted to rows 0 .. sinks + recent - 1, as the
  // golden model's Sequence::evict does. Sliding rings are indexed by
  // position and keep every position their window reads as long as
  // evict_supported() holds.
  void evict(int64_t sinks, int64_t recent);
  // "" when evicting with `sinks` sink rows gives the golden model's results
  // on this plan, else why not: a sliding layer must never lose a row inside
  // its window, so kv.cap_tokens >= sliding_window + sinks + max_chunk - 1.
  std::string evict_problem(int64_t sinks) const;

 private:
  void plan(const HwConfig& hw, const CompiledOptions& o);
  sim::SimOptions sim_options() const;
  double run(sim::FuncSim& s, const comp::Compiled& c, const std::string& label);
  Tensor forward_program(const std::vector<int32_t>& ids, Phase ph, Recorder* rec);
  Tensor read_logits(const sim::SpaceMemory& ddr, int64_t T) const;
  std::shared_ptr<const WeightSource> w_;
  ModelConfig cfg_;
  num::Formats f_;
  comp::HwLimits hw_;
  HwConfig hwc_;
  comp::Layout lay_;
  int fit_ = 1;
  ChunkChoice choice_;
  std::vector<int> sizes_;
  bool dump_all_ = false;
  std::unique_ptr<sim::Memory> mem_;
  std::map<int, comp::Compiled> progs_;
  std::unique_ptr<comp::Compiled> preload_;
  bool preloaded_ = false;
  int64_t pos_ = 0, rows_ = 0;
  Runner runner_;
  double last_sim_ps_ = -1;
  double load_sim_ps_ = -1;
};

}  // namespace n3
