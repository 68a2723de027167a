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

int64_t weight_row_bytes(const sim::View& w) {
  return std::max<int64_t>(w.row_bytes() + (w.scaled() ? w.scale_bytes() : 0), 1);
}

int64_t gemv_tile_bytes(int64_t buffer_bytes, int64_t row_bytes) {
  return row_bytes <= buffer_bytes ? buffer_bytes / row_bytes * row_bytes : buffer_bytes;
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
namespace {
int64_t sfu_passes(const Params& p, isa::CvoFunc f) {
  using F = isa::CvoFunc;
  switch (f) {
    case F::SOFTMAX: return p.timing.sfu_passes_softmax.value;
    case F::RMSNORM: return p.timing.sfu_passes_rmsnorm.value;
    case F::GTOPK: return p.timing.sfu_passes_gtopk.value;
    case F::MAGMATCH: return p.timing.sfu_passes_magmatch.value;
    default: return 1;
  }
}
}  // namespace

int64_t sfu_work(const Params& p, const sim::Issued& in) {
  const int64_t passes = sfu_passes(p, static_cast<isa::CvoFunc>(in.sub->value));
  const sim::View& a = in.op("a");
  const sim::View& y = in.op("dst");
  const int64_t n = std::max(a.present() ? a.numel() : 0, y.numel());
  return n * passes;
}

double sfu_latency_cycles(const Params& p, isa::CvoFunc f) {
  using F = isa::CvoFunc;
  const HwTiming& t = p.timing;
  switch (f) {
    case F::EXP: return double(t.sfu_latency_exp_cycles.value);
    case F::SQRT: case F::RSQRT: return double(t.sfu_latency_sqrt_cycles.value);
    case F::TANH: return double(t.sfu_latency_tanh_cycles.value);
    case F::GELU: return double(t.sfu_latency_gelu_cycles.value);
    case F::SIN: case F::COS: return double(t.sfu_latency_trig_cycles.value);
    case F::RSUM: case F::RMAX: case F::RSUMSQ: return double(t.sfu_latency_reduce_cycles.value);
    case F::RMS: return double(t.sfu_latency_rms_cycles.value);
    case F::SOFTCAP: return double(t.sfu_latency_softcap_cycles.value);
    case F::ROPE: return double(t.sfu_latency_rope_cycles.value);
    // The multi-pass row operators: per row, beyond its beats.
    case F::RMSNORM: return double(t.sfu_latency_rmsnorm_cycles.value);
    case F::SOFTMAX: return double(t.sfu_latency_softmax_cycles.value);
    case F::GTOPK: return double(t.sfu_latency_gtopk_cycles.value);
    case F::MAGMATCH: return double(t.sfu_latency_magmatch_cycles.value);
    default: return double(t.sfu_latency_cycles.value);  // one step of f32 arithmetic, then the rounding
  }
}

int64_t sfu_beats(const Params& p, const sim::Issued& in) {
  using F = isa::CvoFunc;
  const int64_t lanes = p.compute.sfu_elems_per_clk.value;
  const F f = static_cast<F>(in.sub->value);
  const sim::View& a = in.op("a");
  // A row reduction, ROPE and the multi-pass row operators start each row
  // (each pass over it) at a fresh beat (the RTL's accumulator lanes take
  // one row at a time; ROPE's element index is its row's).
  if ((f == F::RSUM || f == F::RMAX || f == F::RSUMSQ || f == F::RMS || f == F::ROPE) && a.present())
    return a.rows * ((a.cols + lanes - 1) / lanes);
  if (sfu_multipass(f) && a.present()) return sfu_passes(p, f) * a.rows * ((a.cols + lanes - 1) / lanes);
  return (sfu_work(p, in) + lanes - 1) / lanes;
}

bool sfu_multipass(isa::CvoFunc f) {
  using F = isa::CvoFunc;
  return f == F::RMSNORM || f == F::SOFTMAX || f == F::GTOPK || f == F::MAGMATCH;
}

double sfu_cycles(const Params& p, const sim::Issued& in) {
  const auto f = static_cast<isa::CvoFunc>(in.sub->value);
  const double head = double(p.timing.sfu_command_cycles.value) + double(sfu_beats(p, in));
  const sim::View& a = in.op("a");
  // The multi-pass row operators: the row's clocks beyond its beats each
  // row, the gap between rows (the RTL: each row's passes and scalar tails
  // one after the other, docs/rtl_sfu.md "SFU row operators").
  if (sfu_multipass(f) && a.present() && a.rows > 0)
    return head + double(a.rows) * sfu_latency_cycles(p, f) + double(a.rows - 1) * double(p.timing.sfu_row_gap_cycles.value);
  return head + sfu_latency_cycles(p, f);
}

int64_t blocker_clocks(int64_t len, int64_t per_beat, int64_t block) {
  if (block >= per_beat) return (len + per_beat - 1) / per_beat;
  int64_t n = 0;
  for (int64_t at = 0; at < len; at += per_beat) n += (std::min(per_beat, len - at) + block - 1) / block;
  return n;
}

namespace {

// Pipeline stages of the RTL engine that no hardware-file key sets
// (docs/rtl_gemv.md, "GEMV engine"): the activation blocker's register; the
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

int64_t gemm_array_clocks(int64_t T, int64_t tiles, int64_t rows, int64_t run_start) {
  // s: the clock a tile's first token enters; b: the clock its load starts
  // (after the previous load, into the bank the tile two before has left).
  // From the third tile on both advance max(T, rows) a tile (checked
  // against the whole recurrence in tests/systemc_timing_test.cc), so the
  // recurrence runs over the first few tiles only: an LM head has 2^18.
  const int64_t exact = std::min<int64_t>(tiles, 8);
  int64_t b1 = 0, s1 = 0, s2 = 0, s = run_start - T;
  for (int64_t i = 0; i < exact; ++i) {
    int64_t b = i == 0 ? 1 : b1 + rows;
    if (i >= 2) b = std::max(b, s2 + T);
    s = std::max(run_start, b + rows);
    if (i >= 1) s = std::max(s, s1 + T);
    b1 = b;
    s2 = s1;
    s1 = s;
  }
  s += (tiles - exact) * std::max(T, rows);
  return s + T - run_start;
}

std::vector<std::pair<double, int64_t>> gemm_row_blocks(const std::vector<std::pair<double, int64_t>>& rows,
                                                        int64_t cols) {
  std::vector<std::pair<double, int64_t>> b;
  const size_t n = size_t(std::max<int64_t>(cols, 1));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i % n == 0) b.push_back({rows[i].first, 0});
    b.back().first = std::max(b.back().first, rows[i].first);
    b.back().second += rows[i].second;
  }
  return b;
}

GemmCycles gemm_cycles(const Params& p, int64_t T, int64_t K, int64_t N, int act_bytes, int block) {
  const int64_t R = p.compute.gemm_rows.value, C = p.compute.gemm_cols.value;
  const int64_t kt = R * p.timing.gemm_macs_per_pe.value;  // K elements a tile
  const int64_t port = p.l2_word_bytes() * p.timing.l2_port_words.value;
  const int64_t per_beat = std::max<int64_t>(port / std::max(act_bytes, 1), 1);
  GemmCycles g;
  g.act = double(T * blocker_clocks(K, per_beat, std::max(block, 1)));
  g.setup = double(p.timing.gemm_setup_cycles.value);
  g.tiles = std::max<int64_t>((N + C - 1) / C, 1) * std::max<int64_t>((K + kt - 1) / kt, 1);
  g.compute = double(gemm_array_clocks(T, g.tiles, R, int64_t(g.act + g.setup)));
  g.drain = double(R + C);
  g.tile_work = double(R + T);
  return g;
}

GemmCycles gemm_cycles(const Params& p, const sim::Issued& in) {
  const sim::View &x = in.op("src"), &w = in.op("w");
  return gemm_cycles(p, x.rows, x.cols, w.rows, x.d.dtype == isa::Dtype::F32 ? 4 : 2, p.numerics.formats.bfp_block);
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

double cdc_latency_ps(const Params& p) { return double(p.timing.cdc_sync_cycles.value) * p.core_ps(); }

double ddr_latency_ps(const Params& p) { return p.timing.ddr_latency_ns.value * 1e3 + cdc_latency_ps(p); }

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

// Fitted to n3_dma_engine with a memory that answers the next clock, an
// instruction's clocks counted from its first command beat to its last
// completion beat inclusive (docs/rtl_dma.md). The engine's
// read-address generator requests a job's reads while earlier jobs run, so
// no job after the first waits for an AR. A one-element read phase (the
// f32 scale, TWO_LEVEL's block byte) takes 4 (arm, the beat, the element,
// the phase change); the INT8 quantiser's max|x| pass and scale write 9
// beyond the pass's chunks (the pass's arm and first beat, the scale's
// division, then the scale's own arm, s1, s2 and W); a fill reads nothing,
// so it saves the first beat of dma_job_cycles.
constexpr int64_t kScalePhaseCycles = 4, kQuantExtraCycles = 9, kReadTripCycles = 1;

}  // namespace

namespace {

// A job's chunks (n3_dma_engine's chunk datapath, docs/rtl.md).
struct JobShape {
  int64_t bb, nb, sew, des, n, eps, chunk, k, last, soff, doff;
  bool straddle;  // the first chunk needs the second src beat
  bool tail;      // the last chunk fills one dst beat and starts another
};

JobShape job_shape(const Params& p, const DmaJob& j) {
  JobShape s;
  s.bb = dma_bus_bytes(p);
  s.nb = 2 * s.bb;
  const int64_t lanes = p.timing.dma_lanes.value, dew = elem_nibbles(j.ddt), epd = s.nb / dew;
  s.sew = elem_nibbles(j.sdt);
  s.des = dew / 2;
  s.n = j.n;
  s.eps = s.nb / s.sew;  // src / dst (epd) elements per beat
  s.soff = int64_t(j.saddr % uint64_t(s.bb)) * 2 + (j.snib ? 1 : 0);  // first src nibble in its beat
  s.doff = int64_t(j.daddr % uint64_t(s.bb));                         // first dst byte in its beat
  s.chunk = j.kind == DmaJob::Fill ? epd : j.sdt == j.ddt ? s.eps : std::min({lanes, s.eps, epd});
  s.k = (s.n + s.chunk - 1) / s.chunk;
  s.last = s.n - (s.k - 1) * s.chunk;
  s.straddle = j.kind != DmaJob::Fill && s.soff + std::min(s.chunk, s.n) * s.sew > s.nb;
  s.tail = (s.doff + (s.n - s.last) * s.des) % s.bb + s.last * s.des > s.bb;
  return s;
}

}  // namespace

double dma_job_cycles(const Params& p, const DmaJob& j) {
  const JobShape s = job_shape(p, j);
  // A pass over the src in chunks of `c`: a chunk a clock, one more when the
  // first chunk needs the second beat (chunks leave the window only whole).
  auto pass = [&](int64_t c) { return (s.n + c - 1) / c + ((s.soff + std::min(c, s.n) * s.sew > s.nb) ? 1 : 0); };
  double c = double(p.timing.dma_job_cycles.value) + double(s.k + (s.straddle ? 1 : 0)) + (s.tail ? 1 : 0);
  if (j.kind == DmaJob::Fill) c -= double(kReadTripCycles);
  if (j.kind == DmaJob::Copy && j.sdt != j.ddt && (j.sdt == isa::Dtype::INT4 || j.sdt == isa::Dtype::INT8))
    c += double(kScalePhaseCycles) * (j.smode == isa::ScaleMode::TWO_LEVEL ? 2 : 1);
  if (j.kind == DmaJob::Quant) c += double(kQuantExtraCycles + pass(std::min(p.timing.dma_lanes.value, s.eps)));
  return c;
}

DmaBeats dma_job_beats(const Params& p, const DmaJob& j) {
  const uint64_t bb = uint64_t(dma_bus_bytes(p));
  auto beats = [&](uint64_t first, uint64_t last) { return int64_t(last / bb - first / bb + 1); };
  DmaBeats b;
  if (j.kind == DmaJob::Copy && j.sdt != j.ddt && (j.sdt == isa::Dtype::INT4 || j.sdt == isa::Dtype::INT8)) {
    b.read += beats(j.scaddr, j.scaddr + 3);
    if (j.smode == isa::ScaleMode::TWO_LEVEL) b.read += 1;
  }
  if (j.kind != DmaJob::Fill) {
    const uint64_t last_nibble = j.saddr * 2 + (j.snib ? 1 : 0) + uint64_t(j.n) * uint64_t(elem_nibbles(j.sdt)) - 1;
    b.data = beats(j.saddr, last_nibble / 2);
    b.read += b.data * (j.kind == DmaJob::Quant ? 2 : 1);
  }
  b.write = beats(j.daddr, j.daddr + uint64_t(j.n) * uint64_t(elem_nibbles(j.ddt) / 2) - 1);
  if (j.kind == DmaJob::Quant) b.write += beats(j.qaddr, j.qaddr + 3);
  return b;
}

double dma_cycles(const Params& p, const sim::Issued& in) {
  double c = double(p.timing.dma_setup_cycles.value);
  for (const DmaJob& j : dma_jobs(in)) c += dma_job_cycles(p, j);
  return c;
}

namespace {

// Where the engine's stall-free schedule meets the memory (clocks from the
// first command transfer, 0; measured on n3_dma_engine, docs/rtl_dma.md):
// the first AR goes at 3 (the walk registers the command, its first job
// enters the queue, the generator loads the run) and its first beat is
// taken at 4; a copy's first W beat goes at 8
// when one chunk fills it (the beat, s1, s2, the packed beat, W; a clock
// per further chunk it needs, a scale phase its 4, the quantiser its
// max|x| pass and 3 more, a fill one clock less); after the last read beat
// at least 6 clocks follow (its chunk, s1, s2, W, the response, the
// completion), after the last write response 2 (the completion, counted).
// The memory answers a request made at an edge from the next falling edge.
constexpr double kFirstAr = 3, kFirstBeat = 4, kFirstW = 8, kAfterLastBeat = 6, kAfterLastB = 2, kAsk = 0.5;

bool dequantises(const DmaJob& j) {
  return j.kind == DmaJob::Copy && j.sdt != j.ddt && (j.sdt == isa::Dtype::INT4 || j.sdt == isa::Dtype::INT8);
}

// The first clock edge at or after `c` clocks (a hair of slack for ps sums).
double edge(double c) { return std::ceil(c - 1e-6); }

// The stall-free clock of the first W beat: the first job's first dst beat
// goes once its chunks have filled it (or the run has ended).
double dma_first_w_cycles(const Params& p, const std::vector<DmaJob>& jobs) {
  if (jobs.empty()) return kFirstW;
  const DmaJob& j = jobs.front();
  const JobShape s = job_shape(p, j);
  const int64_t fill = (s.bb - s.doff + s.chunk * s.des - 1) / (s.chunk * s.des);  // chunks to the first full beat
  double c = kFirstW + double(std::min(s.k, fill) - 1) + (s.straddle ? 1 : 0);
  if (j.kind == DmaJob::Fill) c -= double(kReadTripCycles);
  if (dequantises(j)) c += double(kScalePhaseCycles) * (j.smode == isa::ScaleMode::TWO_LEVEL ? 2 : 1);
  if (j.kind == DmaJob::Quant) {
    const int64_t chunk = std::min(p.timing.dma_lanes.value, s.eps);
    c += double((s.n + chunk - 1) / chunk + 3);
  }
  return c;
}

// Stall-free clocks from the last read beat to the end: the last reading
// job's chunks in that beat and its pipeline (kAfterLastBeat, one more for a
// last chunk over two dst beats), then any fill jobs after it.
double dma_after_last_beat_cycles(const Params& p, const std::vector<DmaJob>& jobs) {
  double after = 0;
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
    const JobShape s = job_shape(p, *it);
    if (it->kind == DmaJob::Fill) {
      after += dma_job_cycles(p, *it);
      continue;
    }
    // Elements of the run in its last src beat; the chunks holding them.
    const int64_t in_last = std::min(s.n * s.sew, (s.soff + s.n * s.sew - 1) % s.nb + 1) / s.sew;
    const int64_t chunks = in_last <= s.last ? 1 : 1 + (in_last - s.last + s.chunk - 1) / s.chunk;
    return after + kAfterLastBeat + double(chunks - 1) + (s.tail ? 1 : 0);
  }
  return after;
}

}  // namespace

double dma_read_ask_cycles() { return kFirstAr + kAsk; }

double dma_write_ask_cycles(const Params& p, const sim::Issued& in, const DmaReadDelay& rd) {
  return dma_first_w_cycles(p, dma_jobs(in)) + rd.first_w + kAsk;
}

DmaReadDelay dma_read_delay_cycles(const Params& p, const sim::Issued& in, const DmaStream& r) {
  DmaReadDelay d;
  if (!r.on) return d;
  const std::vector<DmaJob> jobs = dma_jobs(in);
  int64_t total = 0;
  for (const DmaJob& j : jobs) total += dma_job_beats(p, j).read;
  if (total <= 0) return d;
  // The first burst: the first run's beats (a scale: one), at most a burst;
  // the last: the last job's data run's last burst.
  // A burst is at most `burst` beats and never crosses a 4 KB boundary (the
  // RTL core's burst_beats): a run that starts just below a boundary has a
  // short first burst, and its last burst is what is left after the cuts.
  // (A [1,64] f32 row across a boundary: 1 beat, then 3; counted as one
  // burst of 4, the model put its first data 7 clocks late.)
  const int64_t bb = dma_bus_bytes(p), burst = std::max<int64_t>(p.timing.ddr_burst_bytes.value / bb, 1);
  const auto burst_at = [&](uint64_t beat_addr, int64_t left) {
    const int64_t to4k = (4096 - int64_t(beat_addr & 4095)) / bb;
    return std::min({burst, std::max<int64_t>(to4k, 1), left});
  };
  const auto run_start = [&](const DmaJob& j) { return j.saddr / uint64_t(bb) * uint64_t(bb); };
  const DmaJob& a = jobs.front();
  const DmaJob& z = jobs.back();
  const int64_t a_data = std::max<int64_t>(dma_job_beats(p, a).data, 1);
  const int64_t first = dequantises(a) ? 1 : std::min(burst_at(run_start(a), a_data), dma_job_beats(p, a).read);
  // A dequantising copy's data follow its scale reads (a beat each).
  const int64_t phases = dequantises(a) ? (a.smode == isa::ScaleMode::TWO_LEVEL ? 2 : 1) : 0;
  const int64_t data_first = phases + burst_at(run_start(a), a_data);
  int64_t last = 1;
  {
    uint64_t at_beat = run_start(z);
    for (int64_t left = std::max<int64_t>(dma_job_beats(p, z).data, 1); left > 0;) {
      last = burst_at(at_beat, left);
      left -= last;
      at_beat += uint64_t(last * bb);
    }
  }
  const double clk = p.core_ps(), te = dma_cycles(p, in);
  const double at = kFirstAr + kAsk + (r.queue_ps + r.latency_ps) / clk;
  d.first = std::max(0.0, edge(at + r.occupancy_ps * double(first) / double(total) / clk) - kFirstBeat);
  // The first W beat waits for the first data beat (after the scale phases).
  d.first_w = std::max(d.first, edge(at + r.occupancy_ps * double(std::min(data_first, total)) / double(total) / clk) -
                                    (kFirstBeat + double(kScalePhaseCycles * phases)));
  // The last burst's beats follow its data a beat a clock.
  const double d_last =
      edge(at + r.occupancy_ps / clk) + double(last - 1) - (te - 1 - dma_after_last_beat_cycles(p, jobs));
  d.total = std::max({d.first, d.first_w, d_last});
  return d;
}

double dma_write_delay_cycles(const Params& p, const sim::Issued& in, const DmaReadDelay& rd, const DmaStream& w) {
  if (!w.on) return 0;
  // The stream begins at the first W beat, its last response comes once it
  // has moved plus the latency; stall-free it comes kAfterLastB before the
  // end, which the reads moved by rd.total.
  const double clk = p.core_ps(), te = dma_cycles(p, in);
  const double b = edge(dma_write_ask_cycles(p, in, rd) + (w.queue_ps + w.occupancy_ps + w.latency_ps) / clk);
  return std::max(0.0, b - (te - kAfterLastB + rd.total));
}

}  // namespace n3::timing
