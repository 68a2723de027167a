// The compiler's schedules measured against the hardware (issue 23, items 1
// and 4; docs/compiler.md "Chunk selection" and "Schedule report").
//
// ProgramWork: what one compiled program does, counted from its resolved
// instructions (the functional core steps it with no effects, so register-set
// extents such as attention windows are those of a real run), and each
// resource's time at the hardware file's peak rate. The largest is the
// program's bound: no schedule of this program can beat it.
//
// choose_chunk: the prefill chunk when none is given. Every candidate (the
// largest chunk whose activations fit L2, and the powers of two above it,
// whose activations spill to DDR) is compiled and counted; the modelled time
// of a candidate is its instructions' own times one after another (the
// compiler's schedules overlap little: its SFU and MAC engines mostly take
// turns, issue 23), and the smallest candidate within 1 % of the best
// modelled tok/s wins. Deterministic, and it changes no numerics: chunking
// changes the schedule only (every chunk is bit-exact to golden).
//
// ScheduleReport: one program's bound beside its simulated time on the
// SystemC model (timing-only), and the longest idle gaps of the unit that
// binds, each with what the instruction after it waited for.
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "compiler/lower.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "sim/memory.h"

namespace n3 {

// The compiler's view of the hardware file: capacities and the KV cap.
comp::HwLimits hw_limits(const HwConfig& hw);
// The simulator's memories for the hardware file.
sim::Capacities sim_capacities(const HwConfig& hw);

struct ProgramWork {
  int tokens = 0;
  int64_t pos0 = 0;              // the position the program ran at
  double sfu_work = 0;           // SFU element passes (timing::sfu_work)
  double gemv_macs = 0, gemm_macs = 0;
  double ddr_bytes = 0;          // every DDR operand: weights, spilled activations, KV rows, inputs, logits
  double weight_bytes = 0;       // of ddr_bytes: the matrix operands of gemv / gemm (weights, K/V windows)
  // Each resource's work at its peak rate, s: sfu_work / (sfu_elems_per_clk x
  // clock), MACs / the engine's MACs per clock x clock, DDR bytes / the
  // memory roofline (min of DDR x efficiency and the HP ports).
  double sfu_s = 0, gemv_s = 0, gemm_s = 0, ddr_s = 0;
  // The instructions' own times at peak rates, one after another (no two
  // units overlapping): each the larger of its unit's clocks and its DDR
  // bytes over the roofline, plus one DDR latency where it touches DDR.
  double serial_s = 0;
  // The same times on their units as the program's tokens allow: each
  // instruction starts when its unit's previous one is done and the tokens
  // it waits for are signalled (the overlap of lanes, docs/compiler.md);
  // optimistic where units share DDR bandwidth, which the bound covers.
  double overlap_s = 0;
  // What the chunk choice ranks by: the larger of overlap_s and the bound
  // (serial_s where overlap_s was not counted).
  double modelled_s() const { return overlap_s > 0 ? std::max(overlap_s, bound_s()) : serial_s; }
  std::vector<std::pair<std::string, double>> resources() const;  // SFU, GEMV, GEMM, DDR
  std::string binding() const;                                     // the longest of them
  double bound_s() const;
};

// Counts program `c` (of `tokens` tokens) of layout `lay` run at position pos0 (the input region
// as the host writes it; no weights needed). Throws where the hardware file
// lacks the timing keys (HwConfig::require_timing).
ProgramWork program_work(const comp::Compiled& c, const comp::Layout& lay, const HwConfig& hw, int tokens,
                         int64_t pos0 = 0);

struct ChunkCandidate {
  int chunk = 0;
  int lanes = 0;             // the row lanes its program was compiled with (0: comp::default_lanes)
  uint64_t spill_bytes = 0;  // activations in DDR
  ProgramWork work;          // the chunk's program at position 0
  std::string skipped;       // why it is not a candidate (DDR image too large, ...); "" evaluated
  double modelled_tok_s() const { return work.modelled_s() > 0 ? chunk / work.modelled_s() : 0; }
  double bound_tok_s() const { return work.bound_s() > 0 ? chunk / work.bound_s() : 0; }
};

struct ChunkChoice {
  int chunk = 0;       // the chosen largest chunk
  int fit = 0;         // the largest whose activations fit L2
  int lanes = 0;       // the chosen chunk's row lanes (0: comp::default_lanes)
  std::string why;     // one line: the rule, or why it fell back to `fit`
  std::vector<ChunkCandidate> candidates;  // ascending
};

// A larger chunk must model this much faster than a smaller one to win
// (it costs DDR: the logits and spill regions and the sliding rings grow).
constexpr double kChunkGain = 0.01;
// Rows each of three lanes needs before the chunk choice tries three
// (comp::default_lanes gives two from 16 tokens).
constexpr int kMinLaneRows = 32;

// `fit`: comp::largest_chunk; `cap`: no candidate above it (kv.policy evict
// bounds the chunk). Falls back to `fit` (why says so) where the hardware
// file has no timing keys.
ChunkChoice choose_chunk(const ModelConfig& cfg, const HwConfig& hw, int fit, int cap = 256);
// The rule alone, over evaluated candidates (ascending): the smallest whose
// modelled tok/s is within kChunkGain of the best.
int best_chunk(const std::vector<ChunkCandidate>& cands);
std::string chunk_choice_text(const ChunkChoice& c);
nlohmann::ordered_json chunk_choice_json(const ChunkChoice& c);

struct IdleGap {
  double start_s = 0, len_s = 0;
  std::string next;       // the instruction after the gap: "pc N mnemonic (section)"
  std::string waits_for;  // the token it waited for: "SFU pc M cvo.gelu (layers.3.FFN)", or why none
};

struct ScheduleReport {
  std::string program;   // "decode", "prefill_64"
  ProgramWork work;
  double sim_s = -1;     // the SystemC model, timing-only (-1: not simulated: no SystemC in this build)
  std::string unit;      // the engine whose gaps are listed (the binding one; DDR: the matrix engine streaming it)
  double unit_busy_s = 0;
  std::vector<IdleGap> gaps;  // longest first
  // The unit's idle time summed by what it waited for (engine, mnemonic,
  // section without its layer number; "dispatch"; "end of program"), largest first.
  std::vector<std::pair<std::string, double>> idle_by_cause;
  double achieved() const { return sim_s > 0 ? work.bound_s() / sim_s : 0; }
};

// Program T of the compiled set, at position 0; `simulate`: also on the
// SystemC model (where built), with its binding unit's `top` longest gaps.
ScheduleReport schedule_report(const comp::Compiled& c, const comp::Layout& lay, const HwConfig& hw, int tokens,
                               bool simulate, int top = 5);
std::string schedule_report_text(const ScheduleReport& r);
nlohmann::ordered_json schedule_report_json(const ScheduleReport& r);

}  // namespace n3
