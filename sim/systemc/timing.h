// The per-instruction cost model of the SystemC units over one design point
// (the hardware file's `timing.`, `clocks.`, `memory.` and `compute.` keys).
// docs/timing.md derives every formula. Pure C++: built with or without SystemC.
#pragma once
#include <cstdint>
#include <string>

#include "golden/hw_config.h"
#include "sim/func_sim.h"

namespace n3::timing {

// The timing model reads the hardware config itself (its typed members and
// derived methods, golden/hw_config.h); every timing key must be given.
using Params = HwConfig;
// `hw` once HwConfig::require_timing has passed: throws naming the hardware
// file and the first timing key it leaves out.
Params load_params(const HwConfig& hw);

// Bytes of a resolved view: data rows plus scale records.
int64_t view_bytes(const sim::View& v);
// Multiply-accumulates of a GEMV/GEMM instruction (mv: T*N*K; qk/pv: H*n*d).
int64_t insn_macs(const sim::Issued& in);
// SFU elements processed: passes over the row data times the elements
// produced (a fused row operator reads its row more than once).
int64_t sfu_work(const Params& p, const sim::Issued& in);

// Duration in ps of moving `bytes` over DDR through `ports` HP ports, not
// counting the latency: rounded up to whole bursts, at the sustained rate.
double ddr_occupancy_ps(const Params& p, int64_t bytes, int64_t ports);
// Fixed latency of one DDR transfer in ps: DDR latency plus the clock-domain
// crossing from the AXI clock into the core clock.
double ddr_latency_ps(const Params& p);
// ps for `bytes` over one L2 port (l2_port_words words per core clock).
double l2_ps(const Params& p, int64_t bytes);

}  // namespace n3::timing
