// The per-instruction cost model of the SystemC units over one design point
// (the hardware file's `timing.`, `clocks.`, `memory.` and `compute.` keys).
// docs/timing.md derives every formula. Pure C++: built with or without SystemC.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// The shape of one GEMV instruction as the engine sees it: `vectors`
// activation vectors (mv: tokens T; qk/pv: query heads H), `outputs` results
// per vector (mv: rows N; qk: positions n; pv: head dim d) and `dot_len`
// elements per dot product (mv: K; qk: d; pv: n).
struct GemvShape {
  int64_t vectors = 1, outputs = 1, dot_len = 1;
};
// Core clock cycles of one GEMV instruction with every operand already on
// chip (no memory waits): setup, the busiest core's MACs, drain; the formula
// MacUnit times instructions with (docs/timing.md), and the one the RTL
// engine is calibrated against (docs/rtl.md, "Calibration").
struct GemvCycles {
  double setup = 0, compute = 0, drain = 0;
  double total() const { return setup + compute + drain; }
};
GemvCycles gemv_cycles(const Params& p, const GemvShape& s);
double gemv_compute_cycles(const Params& p, const GemvShape& s);
// The shape of a GEMV instruction (gemv.mv / qk / pv).
GemvShape gemv_shape(const sim::Issued& in);
// When a MAC engine finishes computing on a weight stream: it starts once
// the activations are in (`start_ps`) and takes each tile when the tile has
// landed and the previous one is done, spending compute_ps * tile bytes /
// all bytes on it. `tiles`: (landed ps, bytes) in stream order.
double mac_stream_end_ps(double start_ps, const std::vector<std::pair<double, int64_t>>& tiles, double compute_ps);

// Duration in ps of moving `bytes` over DDR through `ports` HP ports, not
// counting the latency: rounded up to whole bursts, at the sustained rate.
double ddr_occupancy_ps(const Params& p, int64_t bytes, int64_t ports);
// Fixed latency of one DDR transfer in ps: DDR latency plus the clock-domain
// crossing from the AXI clock into the core clock.
double ddr_latency_ps(const Params& p);
// ps for `bytes` over one L2 port (l2_port_words words per core clock).
double l2_ps(const Params& p, int64_t bytes);

}  // namespace n3::timing
