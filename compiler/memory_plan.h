// The memory plan of a compiled Gemma 3n, as data: where each weight tensor
// and constant lives in DDR, the KV rings, the run-time input, logits and
// spill regions, and the weights held in L2 (docs/compiler.md, "Memory
// plan"). compiler/layout.h makes a plan; the lowering (compiler/lower.h)
// and the residency planner read it. These types sit below both so that the
// planner can size the spill region through the lowering without the two
// including each other.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace n3::comp {

// One tensor placed in DDR.
struct Placed {
  std::string name;
  int64_t rows = 0, cols = 0;
  bool int4 = false;       // INT4 data + one F32 scale per row; otherwise F32
  uint64_t base = 0;       // data
  uint64_t scale_base = 0; // INT4 only
  // Stored as `blocks` blocks of rows / blocks rows, each starting 16-byte
  // aligned (data and scales), so a block is a descriptor of its own (the
  // per-layer input projection: one block per layer, any P).
  int64_t blocks = 1;
  uint64_t block_stride = 0, scale_block_stride = 0;
  uint64_t row_bytes() const { return int4 ? uint64_t((cols + 1) / 2) : uint64_t(cols) * 4; }
};

struct Ring {
  uint64_t k = 0, v = 0;  // bases of the K and V rings, [rows, kv_dim] each
  // INT8 caches: each row's scale record, one F32 per KV head (0: no scales).
  uint64_t k_scale = 0, v_scale = 0;
  int64_t rows = 0;       // ring capacity in positions
};

struct HwLimits {
  uint64_t ddr = 0, l2 = 0, wbuf = 0;
  int64_t kv_cap = 8192;
  // Bytes the memory roofline moves in one DDR latency: what a small read
  // costs beyond its size (the residency planner's weighting; 0: size only).
  uint64_t ddr_latency_bytes = 0;
  // The hardware file these come from, for messages ("" when made in code).
  std::string source;
};

// A weight held in L2 for the whole run (compiler/residency.h): a byte-exact
// copy of its DDR image (data blocks, then scales), loaded once by the
// preload program and only read by the forward programs.
struct Resident {
  std::string name;
  uint64_t l2_base = 0, l2_scale_base = 0;  // scale_base: INT4 only
  uint64_t data_bytes = 0, scale_bytes = 0;
  int uses = 0;         // reads per decode token
  double score = 0;     // DDR bytes saved per token per L2 byte
};

struct Layout {
  std::map<std::string, Placed> tensors;  // by HF name
  std::map<std::string, Placed> consts;   // compiler constants (RoPE inverse frequencies)
  std::vector<Ring> rings;                // per layer; rows == 0 for KV-shared layers
  uint64_t weights_end = 0;
  uint64_t input = 0, input_bytes = 0;    // pos0, row0, positions[T], ids[T] (int32)
  uint64_t logits = 0, logits_bytes = 0;  // F32 [max_chunk, V]
  uint64_t spill = 0, spill_bytes = 0;    // activations of a chunk too large for L2
  uint64_t ddr_end = 0;                   // DDR footprint
  int max_chunk = 1;
  // L2 from l2_resident_base up holds resident weights (none: == the L2 size);
  // activations of every program stay below it.
  uint64_t l2_resident_base = 0;
  std::vector<Resident> resident;         // in priority order

  const Placed& at(const std::string& name) const;
  const Resident* resident_of(const std::string& name) const;
};

// The name of the RoPE inverse-frequency constant for one theta (Layout::consts).
std::string rope_table_name(double theta);

}  // namespace n3::comp
