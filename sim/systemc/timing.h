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
// Bytes of one row of a weight view with its scale record (at least 1).
int64_t weight_row_bytes(const sim::View& w);
// The bytes of one GEMV weight-stream tile: as many whole rows as fit in a
// buffer of `buffer_bytes` (the engine takes rows whole); a row longer than
// a buffer is cut at buffer edges.
int64_t gemv_tile_bytes(int64_t buffer_bytes, int64_t row_bytes);
// Multiply-accumulates of a GEMV/GEMM instruction (mv: T*N*K; qk/pv: H*n*d).
int64_t insn_macs(const sim::Issued& in);
// SFU elements processed: passes over the row data times the elements
// produced (a fused row operator reads its row more than once).
int64_t sfu_work(const Params& p, const sim::Issued& in);
// The SFU's pipeline depth for function f (timing.sfu_latency_*_cycles,
// measured from the RTL SFU where it has the function: docs/rtl.md).
double sfu_latency_cycles(const Params& p, isa::CvoFunc f);
// RMSNORM, SOFTMAX, GTOPK, MAGMATCH: the row operators that re-read their rows.
bool sfu_multipass(isa::CvoFunc f);
// The SFU's input beats for one CVO: ceil(sfu_work / sfu_elems_per_clk); a
// row reduction and ROPE start every row at a fresh beat: rows x ceil(cols /
// lanes); a multi-pass row operator every pass over a row: passes x that.
int64_t sfu_beats(const Params& p, const sim::Issued& in);
// The SFU's clocks for one CVO after its setup (SfuUnit::model's compute
// term): sfu_command_cycles + sfu_beats + sfu_latency_cycles(f) (a
// multi-pass row operator: + rows x its latency + (rows - 1) x
// sfu_row_gap_cycles), the RTL's
// command transfer to its last result on `--rtl sfu` (docs/rtl.md, "The
// SFU bridge").
double sfu_cycles(const Params& p, const sim::Issued& in);

// The shape of one GEMV instruction as the GEMV engine runs it
// (docs/timing.md "GEMV", docs/rtl_gemv.md "GEMV engine"): `vectors` activation
// vectors of `len` elements of `act_bytes` bytes stream in (after
// `scale_words` f32 value scales for pv over an INT8 cache); `rows` weight
// rows are dealt to the cores in turn, each row serving `per_row` vectors
// with dot products of `len` elements in BFP blocks of `block`.
//   mv: vectors T, rows N, per_row T, len K
//   qk: vectors H, rows n x G, per_row H / G, len d
//   pv: vectors H, rows G x d, per_row H / G, len n
struct GemvShape {
  enum class Path {
    Int,    // INT4 (row, two_level) or INT8 weights / keys / values: integer block sums, one rounding
    Group,  // INT4 with per-group f32 scales: integer block sums, the 32-lane float tree finishes
    Float,  // float weights: f32 products, the 32-lane float tree (activations stay f32)
    Bfp,    // float K or V: each row is BFP-quantised in the core, then integer block sums
  };
  Path path = Path::Int;
  int64_t vectors = 1, rows = 1, per_row = 1, len = 1, act_bytes = 2, block = 32, scale_words = 0;
};
// Core clock cycles of one GEMV instruction with every operand on chip and
// no stall, in the engine's phases: setup (command and pipeline stages),
// activation load (one L2 port's width per clock), the busiest core's MAC
// passes, drain. The formula MacUnit times instructions with, fitted to the
// RTL engine (docs/rtl.md "Calibration").
struct GemvCycles {
  double setup = 0, act = 0, compute = 0, drain = 0;
  double land_to_mac = 0;  // from a weight row's landing to its first MAC (its beats into a core)
  double row_work = 0;     // one row's passes on its core: the last row to land needs them all after it
  double total() const { return setup + act + compute + drain; }
};
GemvCycles gemv_cycles(const Params& p, const GemvShape& s);
double gemv_compute_cycles(const Params& p, const GemvShape& s);
// The shape of a GEMV instruction (gemv.mv / qk / pv) from its operands, or
// of the instruction itself; `block` is numerics.bfp_block.
GemvShape gemv_shape(isa::GemvMode mode, const sim::View& dst, const sim::View& src, const sim::View& w, int block);
GemvShape gemv_shape(const sim::Issued& in, int block);
// When a MAC engine finishes computing on a weight stream: it starts once
// the activations are in (`start_ps`) and takes each tile when the tile has
// landed and the previous one is done, spending compute_ps * tile bytes /
// all bytes on it. `tiles`: (landed ps, bytes) in stream order; a tile's
// data reach the MACs land_to_mac_ps after it landed, and the last row's
// own work (row_work_ps, on one core) follows its arrival whole.
double mac_stream_end_ps(double start_ps, const std::vector<std::pair<double, int64_t>>& tiles, double compute_ps,
                         double land_to_mac_ps = 0, double row_work_ps = 0);
// Core clock cycles of one gemm.mv (src [T, K] x w [N, K]^T) on the
// weight-stationary array (docs/rtl_gemm.md "Cycles", the RTL's own
// formula: rtl_bridge/gemm_rtl.cc uses this) with every stream ready:
// the activation stream (one L2 port's width a clock, BFP blocks as
// GEMV's), gemm_setup_cycles, the array's clocks from its start until the
// last tile's last token has entered, then the rows + cols skew out.
// The array holds two weight tiles (rows x rows*macs_per_pe weights x cols)
// and loads a tile in `rows` clocks, so with T < rows it is bound by its
// weight loads, and a ragged tile costs a whole one.
struct GemmCycles {
  double act = 0, setup = 0, compute = 0, drain = 0;
  double tile_work = 0;  // the last weight tile's own clocks (its load, its T tokens): follow its arrival
  int64_t tiles = 0;
  double total() const { return act + setup + compute + drain; }
};
GemmCycles gemm_cycles(const Params& p, int64_t T, int64_t K, int64_t N, int act_bytes, int block);
GemmCycles gemm_cycles(const Params& p, const sim::Issued& in);
// The array part: `tiles` weight tiles of `rows` load clocks each through
// two banks, T tokens a tile, the array free to start at clock `run_start`
// (the loader starts at clock 1, so the first two tiles preload while the
// activations stream); clocks from run_start to the last tile's last token.
int64_t gemm_array_clocks(int64_t T, int64_t tiles, int64_t rows, int64_t run_start);
// Weight rows landing one by one (rows_landing), as the GEMM array takes
// them: a tile needs all `cols` weight rows of its column block (its first
// weight beat spans them), so each block of `cols` rows lands with its last.
std::vector<std::pair<double, int64_t>> gemm_row_blocks(const std::vector<std::pair<double, int64_t>>& rows,
                                                        int64_t cols);
// Clocks of the GEMV/GEMM engines' BFP blocker over `len` elements arriving
// `per_beat` a clock: a beat is one clock unless it spans several blocks.
int64_t blocker_clocks(int64_t len, int64_t per_beat, int64_t block);
// Times on the engine's clock: `t` rounded up to a whole number of clocks
// after `origin_ps` (a row that lands between two edges is taken at the next).
double on_clock(double t, double origin_ps, double clk_ps);
// `rows` rows of `bytes` in all arriving evenly over one transfer from
// `start_ps` to `end_ps` (an on-chip weight operand read over an L2 port),
// as mac_stream_end_ps's tiles: row r has landed at start + (end - start) (r + 1) / rows.
std::vector<std::pair<double, int64_t>> rows_landing(int64_t rows, double start_ps, double end_ps, int64_t bytes);

// One job of the DMA engine (rtl_bridge/rtl/dma/n3_dma_core.sv's command
// port, as the engine's walk n3_dma_walk.sv cuts it): a run of elements contiguous in src and in dst, one INT8 scale
// group, or a constant fill. Addresses are the engine's: {space, byte address}.
struct DmaJob {
  enum Kind : uint32_t { Copy = 0, Quant = 1, Fill = 2 };  // n3_dma_pkg JK_*
  Kind kind = Copy;
  isa::Dtype sdt = isa::Dtype::F32, ddt = isa::Dtype::F32;
  isa::ScaleMode smode = isa::ScaleMode::NONE;
  uint32_t n = 0;  // elements
  uint64_t saddr = 0, scaddr = 0, bkaddr = 0, daddr = 0, qaddr = 0;  // engine addresses (space in bits 47:40)
  bool snib = false;
  uint32_t konst = 0;
};
// The DMA engine's bus: one beat spans the HP ports a DMA stripes over
// (hp_port_bits x dma_hp_ports / 8 bytes), so a same-dtype copy can keep them all busy.
inline int64_t dma_bus_bytes(const Params& p) {
  return p.memory.hp_port_bits.value * p.timing.dma_hp_ports.value / 8;
}
inline uint64_t dma_engine_addr(isa::Space s, uint64_t a) { return uint64_t(s) << 40 | a; }
// The jobs the DMA engine runs for MEMCPY / MEMSET `in` (resolved views):
// runs cut along the rows of both descriptors and the src scale groups
// (sim/systemc/dma_jobs.cc). Throws n3::Error (one line) for an instruction
// the functional simulator traps on.
std::vector<DmaJob> dma_jobs(const sim::Issued& in);
// Core clocks of one job on the DMA engine with a memory that answers the
// next clock and never stalls (docs/rtl_dma.md, fitted to the RTL):
// dma_job_cycles, plus per data pass ceil(n / chunk) chunks (chunk: a beat of
// src for same-dtype copies, a beat of dst for fills, else min(dma_lanes, a
// beat of src, a beat of dst)), one more where the first chunk straddles two
// src beats and one where the last leaves two dst beats; plus the scale reads
// of a dequantising copy and the INT8 quantiser's max|x| pass and scale write.
double dma_job_cycles(const Params& p, const DmaJob& j);
// Beats of the engine's bus (dma_bus_bytes) a job reads and writes: each run
// (the f32 scale, TWO_LEVEL's block byte, the quantiser's two passes over
// its group, the data; the data written, the quantiser's scale) covers the
// beats its bytes touch, as the engine's bursts do.
struct DmaBeats {
  int64_t read = 0, write = 0;
  int64_t data = 0;  // of `read`: one pass over the data run
};
DmaBeats dma_job_beats(const Params& p, const DmaJob& j);
// The DMA engine's clocks for a whole MEMCPY / MEMSET with no memory wait:
// dma_setup_cycles + the sum of its jobs' dma_job_cycles. DmaUnit's compute
// bound; the cosim asserts the RTL takes exactly this.
double dma_cycles(const Params& p, const sim::Issued& in);

// The DMA engine against a memory with latency and a finite rate
// (docs/timing.md "DMA"). An instruction's reads are one stream and its
// writes another, each one transfer on the memory units (src / dst view).
// The engine asks for its reads kDmaFirstAr clocks after the instruction
// starts (its first AR) and starts its writes at its first W beat; each
// stream is answered `queue_ps` after it asked (other traffic), then moves
// in `occupancy_ps`, its data `latency_ps` after they moved (DDR latency and
// clock-domain crossing; an L2 port: none), a burst's share of the beats in
// its share of the occupancy.
struct DmaStream {
  bool on = false;
  double queue_ps = 0, occupancy_ps = 0, latency_ps = 0;
};
// The clocks the reads add to the engine's own (dma_cycles): `first`, the
// first burst's lateness against the clock the engine would take it
// stall-free (it shifts the whole schedule); `first_w`, the shift of the
// first W beat (the first data beat's lateness, after a dequantising copy's
// scale reads); `total`, the latest of those and the last beat's lateness
// against its stall-free clock (a stream slower than the engine).
struct DmaReadDelay {
  double first = 0, first_w = 0, total = 0;
};
DmaReadDelay dma_read_delay_cycles(const Params& p, const sim::Issued& in, const DmaStream& r);
// Clocks from an instruction's start to when the engine asks for its reads
// (its first AR) and for its writes (its first W beat: stall-free, shifted
// by rd.first_w); the memory takes a request from the falling
// edge after it.
double dma_read_ask_cycles();
double dma_write_ask_cycles(const Params& p, const sim::Issued& in, const DmaReadDelay& rd);
// The clocks the writes add beyond the reads' delay: the last write
// response's lateness against its stall-free clock shifted by rd.total.
double dma_write_delay_cycles(const Params& p, const sim::Issued& in, const DmaReadDelay& rd, const DmaStream& w);

// Duration in ps of moving `bytes` over DDR through `ports` HP ports, not
// counting the latency: rounded up to whole bursts, at the sustained rate.
double ddr_occupancy_ps(const Params& p, int64_t bytes, int64_t ports);
// Fixed latency of one DDR transfer in ps: DDR latency plus the clock-domain
// crossing from the AXI clock into the core clock.
double ddr_latency_ps(const Params& p);
// The HP-port-to-core clock-domain crossing: timing.cdc_sync_cycles core
// clocks, the worst case over the clocks' phase of n3_cdc_fifo's latency
// from the port-side write edge to the word visible at the core (`n3 cosim
// --unit cdc`, docs/rtl_cdc.md "Clock-domain crossing"). The synchroniser flops
// are clocked by the reading (core) side, so the latency is a count of core
// clocks whatever the port clock is.
double cdc_latency_ps(const Params& p);
// ps for `bytes` over one L2 port (l2_port_words words per core clock).
double l2_ps(const Params& p, int64_t bytes);

}  // namespace n3::timing
