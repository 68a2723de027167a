// Lowering of the golden model's graph (golden/model.cc, in its order) to an
// ISA program for one forward pass over T tokens (decode: T = 1; prefill: one
// chunk). Positions, token ids and KV ring offsets are run-time inputs read
// from the DDR input region; the program is the same for every step.
// docs/compiler.md describes the lowering and shows one layer's listing.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/emit.h"
#include "compiler/memory_plan.h"
#include "golden/model_config.h"
#include "golden/numerics/formats_config.h"
#include "isa/program.h"

namespace n3::comp {

struct CompileOptions {
  int tokens = 1;         // T
  bool decode = false;    // names dumped tensors for the decode phase (host side); same code
  bool chain = false;     // serialise engine hand-overs instead of dependency tokens
  // Row ranges of a chunk whose operators are emitted interleaved, so that one
  // range's SFU work overlaps another's matrix products (docs/compiler.md,
  // "Overlap across units"); 0: default_lanes(tokens, chain), 1: none.
  int lanes = 0;
  // Steps a lane may run ahead of the next (Emitter::set_lane_skew): with
  // one, a lane's row operators run while the next lane's products do.
  int lane_skew = 1;
};

// The lanes a T-token program gets by default: 2 from 16 tokens (each lane
// re-streams every matrix, which a chunk of 16 or more amortises), else 1.
int default_lanes(int tokens, bool chain = false);

struct Compiled {
  std::string text;       // assembly (what `n3 compile` writes next to the binary)
  isa::Program program;
  uint64_t l2_high_water = 0;
  std::vector<std::pair<uint64_t, uint64_t>> l2_allocs;  // the L2 buffers: (base, bytes)
  std::vector<std::vector<Emitter::Access>> accesses;    // per instruction (sys.halt: none)
  int instructions = 0;
  std::map<std::string, int> weight_uses;                // weight name -> instructions reading it
  std::vector<std::pair<uint64_t, uint64_t>> resident;   // read-only L2 ranges: (base, bytes)
  uint64_t spill_bytes = 0;                              // activations placed in DDR (Layout::spill)
  std::vector<std::string> spilled;                      // their buffer names
};

Compiled compile_forward(const ModelConfig& cfg, const Layout& lay, const num::Formats& f, const HwLimits& hw,
                         const CompileOptions& opt);

// The verifier every compiled program passes (compile_forward throws on a
// problem): the ISA's operand and dtype checks (isa::verify_program); L2
// buffers disjoint and inside L2; every static L2 view inside one buffer;
// DDR views inside DDR; and the schedule: consecutive instructions of
// different engines that touch the same bytes (one writing) ordered by the
// tokens (replayed first-in first-out), every signal matched by a wait.
std::vector<std::string> verify_compiled(const Compiled& c, const HwLimits& hw);

// L2 bytes a T-token program needs (the allocator's high-water mark); with
// `spill`, after its largest buffers moved to DDR where all would not fit.
uint64_t l2_bytes_for(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int tokens,
                      bool spill = false);
// DDR bytes of the activations a T-token program spills (0 when it fits L2).
uint64_t spill_bytes_for(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int tokens);
// Largest T whose program fits L2 (at least 1; error when even T = 1 does not fit).
int largest_chunk(const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw, int cap = 256);

// The token counts the compiler makes programs for, largest first: the
// largest chunk and every power of two below it, down to 1 (the decode
// program). The host covers any prompt with these alone: chunks of the
// largest, then the tail greedily (13 at max 5: 5 + 5 + 2 + 1), as MLLM's
// multi-graph selection does.
std::vector<int> chunk_sizes(int max_chunk);
// The program sizes (from chunk_sizes) covering n tokens, in order.
std::vector<int> cover(int n, const std::vector<int>& sizes);

}  // namespace n3::comp
