// The figures of `n3 estimate` (docs/estimating.md): the hand calculation
// (decode_traffic's bytes and MACs over the hardware file's rates) and the
// compiled programs run timing-only on the SystemC model (no weights): one
// decode token per context, a prompt's prefill, a whole request; per phase
// the roofline of every resource beside the simulated time, the binding one,
// the units' busy and stall shares that explain the gap; per-layer and
// per-operator time of the decode token.
// One design point per process (sc::run_npu elaborates once): a sweep runs
// each point in a process of its own (estimate_sweep.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "host_driver/estimate_energy.h"
#include "runtime/schedule.h"

namespace n3::cli {

struct EstimateRequest {
  std::vector<int64_t> contexts{1};  // tokens in the KV cache when a decode token runs
  int64_t prompt = 128;              // prefill tokens (0: no prefill, no request figures)
  int64_t new_tokens = 128;          // tokens a request generates after its prompt
};

// The hand calculation of one decode token at `context` (n3 estimate's
// original lines; docs/timing.md "n3 estimate").
struct HandCalc {
  int64_t context = 1;
  double weight_bytes = 0, kv_bytes = 0, macs = 0;
  double roofline_bytes_per_s = 0, mac_per_s = 0;
  double bytes() const { return weight_bytes + kv_bytes; }
  double roofline_tok_s() const { return roofline_bytes_per_s / bytes(); }
  double compute_tok_s() const { return mac_per_s / macs; }
};
HandCalc hand_calc(const ModelConfig& c, const HwConfig& hw, int64_t context);

// One resource's share of a phase: the time its work takes at its peak rate
// (the roofline) and, where the model times it, how long it was busy.
struct ResourceUse {
  std::string name;  // "DDR bandwidth", "HP ports", "GEMV compute", "GEMM compute", "SFU", "L2 ports", "dispatch"
  double roof_s = 0;  // work / peak rate
  double busy = -1;   // busy fraction of the phase in the simulation (-1: not a timed resource)
};

// One simulated phase (a decode token at a context, or the prompt's prefill).
struct PhaseEstimate {
  std::string name;  // "decode", "prefill"
  int64_t context = 0, tokens = 0;
  double sim_s = 0;
  uint64_t ddr_bytes = 0;
  uint64_t l2_bytes = 0, macs = 0, sfu_work = 0;  // the timing model's counts (both engines' MACs, SFU element passes)
  Energy energy;                                  // per token; Estimate::has_energy says whether it is given
  std::vector<ResourceUse> resources;                   // in the order above
  std::vector<std::pair<std::string, double>> stalls;  // "GEMV ddr" -> fraction of the phase, largest first
  // The busiest engine (not CTL): the one feeding the binding resource, whose
  // stalls say why that resource idles (a waiting SFU or DMA explains nothing).
  std::string lead_unit;
  double lead_busy = 0;
  double tok_s() const { return double(tokens) / sim_s; }
  const ResourceUse& bound() const;  // the resource with the longest roofline time
  double roofline_tok_s() const { return double(tokens) / bound().roof_s; }
};

struct Estimate {
  std::string model, hw;
  EstimateRequest req;
  std::vector<HandCalc> hand;         // per context
  bool simulated = false;             // false: the hand calculation alone (not_simulated says why)
  std::string not_simulated;          // why not: no SystemC in this build, or what the compiler does not lower
  bool has_energy = false;            // the hardware file gives energies (and the phases were simulated)
  bool has_cost = false;              // the hardware file states a cost section
  std::vector<std::pair<std::string, double>> cost;  // HwConfig::cost_parts
  std::string formats;                // num::formats_to_string of the hardware file's numerics
  std::vector<AccuracyFigure> accuracy;  // measured for exactly these formats (empty: not measured)
  std::vector<PhaseEstimate> decode;  // per context
  PhaseEstimate prefill;              // prompt > 0
  std::vector<int> prefill_chunks;    // program sizes covering the prompt, in order
  int max_chunk = 0;
  double preload_s = 0;               // one-time copy of L2-resident weights (at load, not per request)
  double ttft_s = 0, request_s = 0;   // prompt > 0
  double request_decode_s[2] = {0, 0};  // decode token at prompt + 1 and prompt + new - 1
  // Decode token at the first context: busy time per layer and per operator (all units), top first.
  std::vector<std::pair<std::string, double>> layers, ops;
  double busy_total_s = 0;             // the engines' (not CTL's) busy time the layers sum to
  uint64_t ddr_used = 0, ddr_capacity = 0;  // the compiled image's footprint vs memory.ddr_bytes
  // On-chip L2: the programs' activation high-water (the largest over the
  // program set, spilled as compiled) and the resident weights above it, vs memory.l2_bytes.
  uint64_t l2_activations = 0, l2_resident = 0, l2_capacity = 0;
  size_t l2_resident_weights = 0;  // how many weights are resident
  // The compiler's schedules against the hardware (issue 23): how the chunk
  // was chosen, and the prefill's bound from work no schedule can avoid (the
  // largest of the SFU element passes over the SFU rate, each engine's MACs
  // over its MAC rate, the weights streamed once over the memory roofline).
  ChunkChoice chunk_choice;
  std::vector<std::pair<std::string, double>> prefill_floor;  // (part, s) for the whole prompt
  double prefill_floor_s() const;
  std::vector<ScheduleReport> schedule;  // the prompt's largest program, then the decode program (position 0)
};

// The positions the request reaches (every context, the prompt's prefill and
// its last decode step at prompt + new - 1) against the KV ring
// (kv.cap_tokens) and the model's max_position_embeddings: checked before
// anything is simulated (the runtime would refuse only mid-run). Throws
// n3::Error (one line) naming the option, its value and the cap.
void check_request(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req);

// The hand calculation alone (simulated false, not_simulated empty): what a
// sweep's header is made from, the same columns a simulated point has.
Estimate hand_estimate(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req);

// A design point the compiler cannot lower (L2 too small for one token's
// activations, a DDR image larger than memory.ddr_bytes) is not an error: the
// hand calculation, simulated false and the compiler's reason in not_simulated
// (so a sweep keeps its other points, docs/estimating.md).
Estimate run_estimate(const ModelConfig& c, const HwConfig& hw, const EstimateRequest& req);

}  // namespace n3::cli
