// The timing parameters of one design point (the hardware file's `timing.`,
// `clocks.`, `memory.` and `compute.` keys) and the per-instruction cost
// model shared by the SystemC units and `n3 estimate`, so the analytical
// estimate and the simulated cycles use the same formulas. docs/timing.md
// derives every formula. Pure C++: built with or without SystemC.
#pragma once
#include <cstdint>
#include <string>

#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "sim/func_sim.h"

namespace n3::timing {

struct Params {
  std::string name;
  double core_mhz = 0, axi_mhz = 0;
  // DDR and the AXI HP ports
  double ddr_peak_gbps = 0, ddr_efficiency = 0, ddr_latency_ns = 0;
  int64_t burst_bytes = 0, hp_ports = 0, hp_port_bytes = 0, cdc_sync_cycles = 0, dma_hp_ports = 0;
  // L2
  int64_t l2_ports = 0, l2_port_bytes = 0, l2_port_words = 0;
  // engines
  int64_t gemv_cores = 0, gemv_macs_per_clk = 0, gemm_rows = 0, gemm_cols = 0, gemm_macs_per_pe = 0;
  double sfu_elems_per_clk = 0;
  int64_t wbuf_bytes = 0;  // weight FIFOs in all
  int64_t wbuf_tiles = 0;  // slots the weight stream cycles through (2: double buffering)
  // SFU passes over a row for the fused row operators (an element-wise function is one).
  int64_t sfu_passes_softmax = 0, sfu_passes_rmsnorm = 0, sfu_passes_gtopk = 0, sfu_passes_magmatch = 0;
  int64_t queue_depth = 0, dispatch_cycles = 0, ctl_cycles = 0;
  int64_t dma_setup_cycles = 0, gemv_setup_cycles = 0, gemv_drain_cycles = 0, gemm_setup_cycles = 0,
          sfu_setup_cycles = 0, sfu_latency_cycles = 0;

  double core_ps() const { return 1e6 / core_mhz; }  // one core clock, ps
  double axi_ps() const { return 1e6 / axi_mhz; }
  // Sustained DDR bandwidth through `ports` HP ports, bytes/s: the memory roofline
  // min(DDR peak x efficiency, ports x port width x AXI clock).
  double ddr_bytes_per_s(int64_t ports) const;
  double hp_bytes_per_s(int64_t ports) const { return double(ports) * double(hp_port_bytes) * axi_mhz * 1e6; }
  int64_t gemv_macs_per_clk_total() const { return gemv_cores * gemv_macs_per_clk; }
  int64_t weight_tile_bytes() const { return wbuf_bytes / wbuf_tiles; }
};

// Reads the keys; throws naming the hardware file and the first missing key.
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

// The analytical decode traffic of `n3 estimate`: bytes one decode token
// streams (every INT4 matrix once: packed nibbles plus one F32 row scale per
// row; the tied LM head, i.e. the whole embedding; float matrices and
// vectors; one embedding row and one per-layer-input row) and its K/V window
// at `context`, and the GEMV MACs. The roofline tok/s is
// ddr_bytes_per_s(hp_ports) / (weight_bytes + kv_bytes).
struct DecodeTraffic {
  double weight_bytes = 0, kv_bytes = 0, macs = 0;
};
DecodeTraffic decode_traffic(const ModelConfig& c, int64_t context, double kv_elem_bytes);

}  // namespace n3::timing
