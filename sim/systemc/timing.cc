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

double sfu_cycles(const Params& p, const sim::Issued& in) {
  return std::ceil(double(sfu_work(p, in)) / p.compute.sfu_elems_per_clk.value) +
         double(p.timing.sfu_latency_cycles.value);
}

namespace {

// Clocks of the engine's BFP blocker over `len` elements arriving `per_beat`
// a clock: a beat is one clock unless it spans several blocks (one block a clock).
int64_t blocker_clocks(int64_t len, int64_t per_beat, int64_t block) {
  if (block >= per_beat) return (len + per_beat - 1) / per_beat;
  int64_t n = 0;
  for (int64_t at = 0; at < len; at += per_beat) n += (std::min(per_beat, len - at) + block - 1) / block;
  return n;
}

// Pipeline stages of the RTL engine that no hardware-file key sets
// (docs/rtl.md, "GEMV engine"): the activation blocker's register; the
// core's row blocker before a BFP weight row can be used;
// the float lane tree's finish (log2(32) adder levels and the rounding:
// numerics fixes the tree at 32 lanes), which also bounds a pass from below.
constexpr int64_t kActBlockerStage = 1, kBfpRowStages = 1, kTreeFinish = 6, kRowHandoff = 1;

}  // namespace

GemvCycles gemv_cycles(const Params& p, const GemvShape& s) {
  using Path = GemvShape::Path;
  const int64_t L = p.compute.gemv_macs_per_clk.value, C = p.compute.gemv_cores.value;
  const int64_t port = p.l2_word_bytes() * p.timing.l2_port_words.value;  // activation bytes a clock
  const int64_t per_beat = std::max<int64_t>(port / std::max<int64_t>(s.act_bytes, 1), 1);
  const int64_t B = std::max<int64_t>(s.block, 1);
  const bool tree = s.path == Path::Group || s.path == Path::Float;
  GemvCycles c;
  c.setup = double(p.timing.gemv_setup_cycles.value);
  // Activations in: f32 value scales first (pv over INT8), then every vector,
  // quantised to BFP block by block as it arrives (float weights keep f32).
  if (s.path == Path::Float) {
    c.act = double(s.vectors * ((s.len + per_beat - 1) / per_beat));
  } else {
    c.setup += double(kActBlockerStage);
    c.act = double((s.scale_words * 4 + port - 1) / port + s.vectors * blocker_clocks(s.len, per_beat, B));
  }
  // One pass = one row against one vector: LANES elements of one block a
  // clock (float rows: LANES elements a clock).
  int64_t pass = 0;
  if (s.path == Path::Float)
    pass = (s.len + L - 1) / L;
  else
    for (int64_t at = 0; at < s.len; at += B) pass += (std::min(B, s.len - at) + L - 1) / L;
  const int64_t passes = (s.rows + C - 1) / C * s.per_row;
  // A landed row is handed to its core at the next clock, enters it one beat
  // (LANES elements) a clock, then a register. A float K or V row (BFP path)
  // instead streams through the core's row blocker once it has landed and
  // the activations are in, and the drain counts that stream (and its
  // handoff) already: nothing more from its landing. (Measured on E2B's qk
  // over a K cache in DDR: counting the stream twice put the model 6 to 8
  // clocks above the RTL, up to 3.4 %.)
  c.land_to_mac = s.path == Path::Bfp ? 0.0 : double((s.len + L - 1) / L + kRowHandoff);
  c.row_work = double(tree ? pass + (s.per_row - 1) * std::max(pass, kTreeFinish) : s.per_row * pass);
  if (tree) {
    c.compute = double(pass + (passes - 1) * std::max(pass, kTreeFinish));
    c.drain = double(kTreeFinish);
  } else {
    c.compute = double(passes * pass);
    c.drain = double(p.timing.gemv_drain_cycles.value);
    // A float K or V row passes the core's blocker before its first MAC.
    if (s.path == Path::Bfp) c.drain += double(blocker_clocks(s.len, L, B) + kBfpRowStages);
  }
  return c;
}

double gemv_compute_cycles(const Params& p, const GemvShape& s) { return gemv_cycles(p, s).total(); }

GemvShape gemv_shape(isa::GemvMode mode, const sim::View& y, const sim::View& x, const sim::View& w, int block) {
  GemvShape s;
  s.block = block;
  s.act_bytes = x.d.dtype == isa::Dtype::F32 ? 4 : 2;
  const bool i8 = w.d.dtype == isa::Dtype::INT8;
  switch (mode) {
    case isa::GemvMode::MV:
      s.vectors = s.per_row = x.rows;
      s.rows = w.rows;
      s.len = w.cols;
      s.path = i8                                          ? GemvShape::Path::Int
               : w.d.dtype != isa::Dtype::INT4             ? GemvShape::Path::Float
               : w.d.scale_mode == isa::ScaleMode::GROUP   ? GemvShape::Path::Group
                                                           : GemvShape::Path::Int;
      break;
    case isa::GemvMode::QK:
    case isa::GemvMode::PV: {
      const bool qk = mode == isa::GemvMode::QK;
      const int64_t d = qk ? x.cols : y.cols, G = d > 0 ? std::max<int64_t>(w.cols / d, 1) : 1;
      s.vectors = x.rows;
      s.per_row = std::max<int64_t>(x.rows / G, 1);
      s.len = qk ? d : w.rows;
      s.rows = qk ? w.rows * G : G * d;
      s.path = i8 ? GemvShape::Path::Int : GemvShape::Path::Bfp;
      if (!qk && i8) s.scale_words = G * w.rows;
      break;
    }
  }
  return s;
}

GemvShape gemv_shape(const sim::Issued& in, int block) {
  return gemv_shape(static_cast<isa::GemvMode>(in.sub->value), in.op("dst"), in.op("src"), in.op("w"), block);
}

double on_clock(double t, double origin_ps, double clk_ps) {
  if (t <= origin_ps) return t;
  // A hair of slack: picosecond sums land a rounding error past an edge.
  return origin_ps + std::ceil((t - origin_ps) / clk_ps - 1e-6) * clk_ps;
}

std::vector<std::pair<double, int64_t>> rows_landing(int64_t rows, double start_ps, double end_ps, int64_t bytes) {
  std::vector<std::pair<double, int64_t>> t;
  rows = std::max<int64_t>(rows, 1);
  for (int64_t r = 0; r < rows; ++r)
    t.push_back({start_ps + (end_ps - start_ps) * double(r + 1) / double(rows), bytes * (r + 1) / rows - bytes * r / rows});
  return t;
}

double mac_stream_end_ps(double start_ps, const std::vector<std::pair<double, int64_t>>& tiles, double compute_ps,
                         double land_to_mac_ps, double row_work_ps) {
  int64_t all = 0;
  for (const auto& t : tiles) all += t.second;
  double end = start_ps;
  for (const auto& [landed, bytes] : tiles)
    end = std::max(end, landed + land_to_mac_ps) + (all ? compute_ps * double(bytes) / double(all) : 0.0);
  if (!tiles.empty()) end = std::max(end, tiles.back().first + land_to_mac_ps + row_work_ps);
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

namespace n3::timing {

namespace {

// Element width in nibbles (n3_dma_pkg elem_nibbles).
int64_t elem_nibbles(isa::Dtype t) {
  switch (t) {
    case isa::Dtype::INT4: return 1;
    case isa::Dtype::INT8: return 2;
    case isa::Dtype::BF16:
    case isa::Dtype::F16: return 4;
    default: return 8;
  }
}

// Fitted to n3_dma_engine with a memory that answers the next clock, every
// job's clocks counted from its command beat to its completion beat
// inclusive (docs/rtl.md "DMA engine"). A one-element read phase (the f32
// scale, TWO_LEVEL's block byte) takes 5 (arm, AR, the beat, the element,
// the phase change); the INT8 quantiser's max|x| pass and scale write 10
// beyond the pass's chunks (the pass's read round trip and arm, the scale's
// division, then the scale's own s1, s2, W and write response); a fill
// reads nothing, so it saves the read round trip (AR and the first beat) of
// dma_job_cycles.
constexpr int64_t kScalePhaseCycles = 5, kQuantExtraCycles = 10, kReadTripCycles = 2;

}  // namespace

double dma_job_cycles(const Params& p, const DmaJob& j) {
  const int64_t bb = dma_bus_bytes(p), nb = 2 * bb, lanes = p.timing.dma_lanes.value;
  const int64_t sew = elem_nibbles(j.sdt), dew = elem_nibbles(j.ddt), des = dew / 2, n = j.n;
  const int64_t eps = nb / sew, epd = nb / dew;  // src / dst elements per beat
  const bool same = j.sdt == j.ddt;
  const int64_t soff = int64_t(j.saddr % uint64_t(bb)) * 2 + (j.snib ? 1 : 0);  // first src nibble in its beat
  const int64_t doff = int64_t(j.daddr % uint64_t(bb));                         // first dst byte in its beat
  // A pass over the src in chunks of `c`: a chunk a clock, one more when the
  // first chunk needs the second beat (chunks leave the window only whole).
  auto pass = [&](int64_t c, bool reads) {
    const int64_t k = (n + c - 1) / c;
    return k + ((reads && soff + std::min(c, n) * sew > nb) ? 1 : 0);
  };
  const int64_t chunk = j.kind == DmaJob::Fill ? epd : same ? eps : std::min({lanes, eps, epd});
  const int64_t k = (n + chunk - 1) / chunk, last = n - (k - 1) * chunk;
  // The last chunk fills one beat and starts another: W takes the two in two clocks.
  const bool tail = (doff + (n - last) * des) % bb + last * des > bb;
  double c = double(p.timing.dma_job_cycles.value) + double(pass(chunk, j.kind != DmaJob::Fill)) + (tail ? 1 : 0);
  if (j.kind == DmaJob::Fill) c -= double(kReadTripCycles);
  if (j.kind == DmaJob::Copy && !same && (j.sdt == isa::Dtype::INT4 || j.sdt == isa::Dtype::INT8))
    c += double(kScalePhaseCycles) * (j.smode == isa::ScaleMode::TWO_LEVEL ? 2 : 1);
  if (j.kind == DmaJob::Quant)
    c += double(kQuantExtraCycles + pass(std::min(lanes, eps), true));
  return c;
}

double dma_cycles(const Params& p, const sim::Issued& in) {
  double c = double(p.timing.dma_setup_cycles.value);
  for (const DmaJob& j : dma_jobs(in)) c += dma_job_cycles(p, j);
  return c;
}

}  // namespace n3::timing
