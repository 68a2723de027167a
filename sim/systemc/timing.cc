#include "sim/systemc/timing.h"

#include <algorithm>
#include <cmath>

#include "isa/isa.h"

namespace n3::timing {

Params load_params(const HwConfig& hw) {
  hw.require_timing();
  return hw;
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
    case F::SOFTMAX: passes = p.timing.sfu_passes_softmax.value; break;
    case F::RMSNORM: passes = p.timing.sfu_passes_rmsnorm.value; break;
    case F::GTOPK: passes = p.timing.sfu_passes_gtopk.value; break;
    case F::MAGMATCH: passes = p.timing.sfu_passes_magmatch.value; break;
    default: break;
  }
  const sim::View& a = in.op("a");
  const sim::View& y = in.op("dst");
  const int64_t n = std::max(a.present() ? a.numel() : 0, y.numel());
  return n * passes;
}

GemvCycles gemv_cycles(const Params& p, const GemvShape& s) {
  // Outputs dealt to the cores in turn; the engine finishes with its busiest core.
  const int64_t outs = std::max<int64_t>(s.vectors * s.outputs, 1), n = p.compute.gemv_cores.value;
  const int64_t busiest = outs / n + (outs % n ? 1 : 0);
  GemvCycles c;
  c.setup = double(p.timing.gemv_setup_cycles.value);
  c.compute = std::ceil(double(busiest * s.dot_len) / double(p.compute.gemv_macs_per_clk.value));
  c.drain = double(p.timing.gemv_drain_cycles.value);
  return c;
}

double gemv_compute_cycles(const Params& p, const GemvShape& s) { return gemv_cycles(p, s).total(); }

GemvShape gemv_shape(const sim::Issued& in) {
  const sim::View& y = in.op("dst");
  const sim::View& w = in.op("w");
  const sim::View& x = in.op("src");
  switch (static_cast<isa::GemvMode>(in.sub->value)) {
    case isa::GemvMode::MV:
      return {x.rows, y.cols, w.cols};
    case isa::GemvMode::QK:
      return {x.rows, y.cols, x.cols};
    case isa::GemvMode::PV:
      return {x.rows, y.cols, w.rows};
  }
  return {};
}

double mac_stream_end_ps(double start_ps, const std::vector<std::pair<double, int64_t>>& tiles, double compute_ps) {
  int64_t all = 0;
  for (const auto& t : tiles) all += t.second;
  double end = start_ps;
  for (const auto& [landed, bytes] : tiles)
    end = std::max(end, landed) + (all ? compute_ps * double(bytes) / double(all) : 0.0);
  return end;
}

double ddr_occupancy_ps(const Params& p, int64_t bytes, int64_t ports) {
  if (bytes <= 0) return 0;
  const int64_t bursts = (bytes + p.timing.ddr_burst_bytes.value - 1) / p.timing.ddr_burst_bytes.value;
  return double(bursts * p.timing.ddr_burst_bytes.value) / p.ddr_bytes_per_s(ports) * 1e12;
}

double ddr_latency_ps(const Params& p) {
  return p.timing.ddr_latency_ns.value * 1e3 + double(p.timing.cdc_sync_cycles.value) * p.axi_ps();
}

double l2_ps(const Params& p, int64_t bytes) {
  const int64_t per_clk = p.l2_word_bytes() * p.timing.l2_port_words.value;
  return double((bytes + per_clk - 1) / per_clk) * p.core_ps();
}

}  // namespace n3::timing
