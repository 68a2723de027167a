// The weight residency planner (docs/compiler.md, "Weight residency"). Every
// weight streams from DDR through the weight buffers unless the plan holds
// it in L2: the L2 the compiled programs' activations leave free (the largest
// of the decode and largest-prefill high-water marks) is filled with weights
// in priority order, and a preload program copies them there once when the
// model is loaded. Priority is the DDR time a resident copy saves per decode
// token per L2 byte: uses x (latency bytes + size) / size, so small weights
// read by every token (norm vectors, router and AltUp coefficients) come
// first, ties broken by size then name (deterministic).
#pragma once
#include <cstdint>

#include "compiler/layout.h"
#include "compiler/lower.h"

namespace n3::comp {

struct ResidencyOptions {
  int64_t max_bytes = -1;  // -1: every free L2 byte; 0: nothing resident
};

// Fills lay.resident and lay.l2_resident_base (lay from plan_layout).
void plan_residency(Layout& lay, const ModelConfig& cfg, const num::Formats& f, const HwLimits& hw,
                    const ResidencyOptions& opt = {});

// The program that copies the resident weights from DDR into L2 (DMA only);
// run once after the DDR image is loaded, before any forward program.
Compiled compile_preload(const Layout& lay, const HwLimits& hw);

// DDR bytes the resident weights save per decode token.
uint64_t resident_bytes(const Layout& lay);

}  // namespace n3::comp
