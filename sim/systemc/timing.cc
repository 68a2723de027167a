#include "sim/systemc/timing.h"

#include <algorithm>
#include <cmath>

#include "base/tensor.h"
#include "golden/weight_names.h"
#include "isa/isa.h"

namespace n3::timing {

double Params::ddr_bytes_per_s(int64_t ports) const {
  return std::min(ddr_peak_gbps * 1e9 * ddr_efficiency, hp_bytes_per_s(ports));
}

Params load_params(const HwConfig& hw) {
  Params p;
  p.name = hw.name;
  p.core_mhz = hw.num("clocks.core_mhz");
  p.axi_mhz = hw.num("clocks.axi_mhz");
  p.ddr_peak_gbps = hw.num("memory.ddr_peak_gbps");
  p.ddr_efficiency = hw.num("memory.ddr_efficiency");
  p.hp_ports = hw.integer("memory.hp_ports");
  p.hp_port_bytes = hw.integer("memory.hp_port_bits") / 8;
  p.l2_port_bytes = hw.integer("memory.l2_word_bits") / 8;
  p.gemv_cores = hw.integer("compute.gemv_cores");
  p.gemv_macs_per_clk = hw.integer("compute.gemv_macs_per_clk");
  p.gemm_rows = hw.integer("compute.gemm_rows");
  p.gemm_cols = hw.integer("compute.gemm_cols");
  p.sfu_elems_per_clk = hw.num("compute.sfu_elems_per_clk");
  p.gemm_macs_per_pe = hw.integer("timing.gemm_macs_per_pe");
  p.wbuf_bytes = hw.integer("memory.weight_fifos") * hw.integer("memory.weight_fifo_bytes");
  p.wbuf_tiles = hw.integer("timing.wbuf_tiles");
  p.sfu_passes_softmax = hw.integer("timing.sfu_passes_softmax");
  p.sfu_passes_rmsnorm = hw.integer("timing.sfu_passes_rmsnorm");
  p.sfu_passes_gtopk = hw.integer("timing.sfu_passes_gtopk");
  p.sfu_passes_magmatch = hw.integer("timing.sfu_passes_magmatch");
  p.ddr_latency_ns = hw.num("timing.ddr_latency_ns");
  p.burst_bytes = hw.integer("timing.ddr_burst_bytes");
  p.cdc_sync_cycles = hw.integer("timing.cdc_sync_cycles");
  p.dma_hp_ports = hw.integer("timing.dma_hp_ports");
  p.l2_ports = hw.integer("timing.l2_ports");
  p.l2_port_words = hw.integer("timing.l2_port_words");
  p.queue_depth = hw.integer("timing.queue_depth");
  p.dispatch_cycles = hw.integer("timing.dispatch_cycles");
  p.ctl_cycles = hw.integer("timing.ctl_cycles");
  p.dma_setup_cycles = hw.integer("timing.dma_setup_cycles");
  p.gemv_setup_cycles = hw.integer("timing.gemv_setup_cycles");
  p.gemv_drain_cycles = hw.integer("timing.gemv_drain_cycles");
  p.gemm_setup_cycles = hw.integer("timing.gemm_setup_cycles");
  p.sfu_setup_cycles = hw.integer("timing.sfu_setup_cycles");
  p.sfu_latency_cycles = hw.integer("timing.sfu_latency_cycles");
  require(p.core_mhz > 0 && p.axi_mhz > 0, hw.path + ": clocks must be positive");
  require(p.burst_bytes > 0 && p.hp_ports > 0 && p.hp_port_bytes > 0 && p.l2_ports > 0 && p.l2_port_bytes > 0 && p.l2_port_words > 0,
          hw.path + ": burst size, HP ports and L2 ports must be positive");
  require(p.dma_hp_ports >= 1 && p.dma_hp_ports <= p.hp_ports, hw.path + ": timing.dma_hp_ports must be in [1, memory.hp_ports]");
  require(p.queue_depth >= 1, hw.path + ": timing.queue_depth must be at least 1");
  require(p.sfu_elems_per_clk > 0 && p.gemv_cores > 0 && p.gemv_macs_per_clk > 0, hw.path + ": engine rates must be positive");
  require(p.wbuf_tiles >= 2 && p.wbuf_bytes >= p.wbuf_tiles,
          hw.path + ": timing.wbuf_tiles must be at least 2 (single buffering is not modelled) and at most the weight "
                    "buffers' bytes");
  require(p.sfu_passes_softmax >= 1 && p.sfu_passes_rmsnorm >= 1 && p.sfu_passes_gtopk >= 1 && p.sfu_passes_magmatch >= 1,
          hw.path + ": timing.sfu_passes_* must be at least 1");
  require(p.gemm_rows > 0 && p.gemm_cols > 0 && p.gemm_macs_per_pe > 0,
          hw.path + ": compute.gemm_rows, compute.gemm_cols and timing.gemm_macs_per_pe must be positive");
  require(p.ddr_efficiency > 0 && p.ddr_efficiency <= 1, hw.path + ": memory.ddr_efficiency must be in (0, 1]");
  return p;
}

int64_t view_bytes(const sim::View& v) {
  if (!v.present()) return 0;
  return v.rows * (v.row_bytes() + (v.scaled() ? v.scale_bytes() : 0));
}

int64_t insn_macs(const sim::Issued& in) {
  const sim::View& y = in.op("dst");
  const sim::View& w = in.op("w");
  const sim::View& x = in.op("src");
  if (in.def->opcode == isa::Opcode::GEMM) return y.numel() * w.cols;
  switch (static_cast<isa::GemvMode>(in.sub->value)) {
    case isa::GemvMode::MV:
      return y.numel() * w.cols;
    case isa::GemvMode::QK:
      return y.numel() * x.cols;
    case isa::GemvMode::PV:
      return y.numel() * w.rows;
  }
  return 0;
}

// Passes of the SFU pipeline over a row: a plain element-wise function is one
// pass; a fused row operator re-reads its row for each reduction it needs
// (timing.sfu_passes_*, docs/timing.md).
int64_t sfu_work(const Params& p, const sim::Issued& in) {
  using F = isa::CvoFunc;
  int64_t passes = 1;
  switch (static_cast<F>(in.sub->value)) {
    case F::SOFTMAX: passes = p.sfu_passes_softmax; break;
    case F::RMSNORM: passes = p.sfu_passes_rmsnorm; break;
    case F::GTOPK: passes = p.sfu_passes_gtopk; break;
    case F::MAGMATCH: passes = p.sfu_passes_magmatch; break;
    default: break;
  }
  const sim::View& a = in.op("a");
  const sim::View& y = in.op("dst");
  const int64_t n = std::max(a.present() ? a.numel() : 0, y.numel());
  return n * passes;
}

double ddr_occupancy_ps(const Params& p, int64_t bytes, int64_t ports) {
  if (bytes <= 0) return 0;
  const int64_t bursts = (bytes + p.burst_bytes - 1) / p.burst_bytes;
  return double(bursts * p.burst_bytes) / p.ddr_bytes_per_s(ports) * 1e12;
}

double ddr_latency_ps(const Params& p) { return p.ddr_latency_ns * 1e3 + double(p.cdc_sync_cycles) * p.axi_ps(); }

double l2_ps(const Params& p, int64_t bytes) {
  const int64_t per_clk = p.l2_port_bytes * p.l2_port_words;
  return double((bytes + per_clk - 1) / per_clk) * p.core_ps();
}

DecodeTraffic decode_traffic(const ModelConfig& c, int64_t context, double kv_elem_bytes) {
  DecodeTraffic t;
  for (const WeightSpec& w : weight_specs(c)) {
    const double n = double(numel(w.shape));
    const double rows = w.shape.size() == 2 ? double(w.shape[0]) : 1.0;
    const double cols = w.shape.size() == 2 ? double(w.shape[1]) : n;
    if (w.kind == WeightKind::Vector) {
      t.weight_bytes += n * 4;
    } else if (w.kind == WeightKind::FloatMatrix) {
      t.weight_bytes += n * 4;
      t.macs += n;
    } else if (w.is_embedding) {
      t.weight_bytes += cols / 2 + 4;  // the looked-up row
      if (rows == c.vocab && cols == c.hidden) {  // tied LM head: every row
        t.weight_bytes += n / 2 + rows * 4;
        t.macs += n;
      }
    } else {
      t.weight_bytes += n / 2 + rows * 4;
      t.macs += n;
    }
  }
  for (int l = 0; l < c.layers; ++l) {
    const int64_t window = c.is_global(l) ? context : std::min<int64_t>(context, c.sliding_window);
    t.kv_bytes += 2.0 * double(window) * double(c.kv_dim()) * kv_elem_bytes;  // K and V
    t.macs += 2.0 * double(window) * double(c.q_dim());                      // q.k and p.v
  }
  return t;
}

}  // namespace n3::timing
