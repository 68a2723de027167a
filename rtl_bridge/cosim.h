// `n3 cosim`: an RTL unit against its C++ counterpart, vector by vector
// (docs/rtl.md). The decoder is compared with the C++ ISA checks and field
// extraction (isa/isa.h), the GEMV engine with the numerics core
// (golden/numerics/mac.h). Vectors are numbered 0..vectors-1 over the whole
// regression and vector i depends only on (seed, i) (vector_rng), so a run
// split into shards (`--shard i/n`: the vectors with index % n == i), e.g. a
// Slurm or LSF array job, checks exactly the vectors of the unsplit run; the
// shards' JSON reports merge with `n3 cosim --merge`.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace n3::rtl {

struct CosimOptions {
  std::string unit;           // "decoder", "gemv", "gemm", "dma", "sfu", "sfu-count", "fp", "ctl" or "cdc"
  int64_t vectors = 10000;    // over all shards
  uint64_t seed = 1;
  int shard = 0, shards = 1;  // this process runs the vectors i with i % shards == shard
  std::string vcd;            // waveform file of the run ("" none)
  std::string hw;             // hardware file (the GEMV engine's formats, lanes, clocks)
};

// Cycles of one shape class: the RTL's measured cycles against the SystemC
// model's formula for the same job (docs/rtl.md, "Calibration").
struct ShapeCycles {
  int64_t count = 0;
  double rtl_cycles = 0;    // summed over the vectors of the class
  double model_cycles = 0;  // summed likewise
  double worst_rel = 0;     // largest |rtl - model| / rtl of one vector
  void add(double rtl, double model) {  // one vector (or segment) of the class
    ++count;
    rtl_cycles += rtl;
    model_cycles += model;
    if (rtl > 0) worst_rel = std::max(worst_rel, std::abs(rtl - model) / rtl);
  }
};

struct CosimReport {
  std::string unit;
  std::string design;   // the hardware file: "<name> (<XXH64 of its text>)"; shards must agree
  uint64_t seed = 0;
  int64_t vectors = 0;  // of the whole regression
  int shard = 0, shards = 1;
  bool merged = false;     // the merge of every shard (merge_reports)
  int64_t run = 0;         // vectors this report covers
  int64_t mismatches = 0;
  std::string first_mismatch;             // one line: vector index, what differs ("" none)
  int64_t first_mismatch_index = -1;
  std::map<std::string, int64_t> classes; // vectors per class (encoding class, adversarial kind, ...)
  std::map<std::string, ShapeCycles> cycles;  // per shape (gemv)
  double wall_s = 0;
  double rtl_cycles = 0;  // simulated RTL cycles, all vectors
};

// The random source of vector i: independent of the shard that runs it.
std::mt19937_64 vector_rng(uint64_t seed, int64_t index);
// The vectors of this shard, in order.
std::vector<int64_t> shard_indices(const CosimOptions& o);

// Runs one shard of one unit; progress and the summary (classes, the cycle
// table, mismatches) go to `log`. Throws n3::Error on bad options.
CosimReport run_cosim(const CosimOptions& o, std::ostream& log);
// The units, implemented in cosim_<unit>.cc.
CosimReport cosim_decoder(const CosimOptions& o, std::ostream& log);
CosimReport cosim_gemv(const CosimOptions& o, std::ostream& log);
// The GEMM engine (rtl/gemm/) against the functional simulator's gemm.mv,
// one instruction per vector, and its cycles against the model's formula.
CosimReport cosim_gemm(const CosimOptions& o, std::ostream& log);
// The DMA engine (rtl/dma/) against the functional simulator's MEMCPY /
// MEMSET (sim/exec_dma.cc), one instruction per vector.
CosimReport cosim_dma(const CosimOptions& o, std::ostream& log);
// The SFU (rtl/sfu/) against the numerics core, one element per vector (a
// row for the row reductions and row operators).
CosimReport cosim_sfu(const CosimOptions& o, std::ostream& log);
// The SFU's 1/n of a row (rtl/sfu/n3_sfu_inv_count.sv) against
// num::inv_count; vector i is the row length i + 1.
CosimReport cosim_sfu_count(const CosimOptions& o, std::ostream& log);
// The GEMV engine's floating-point and BFP leaves (rtl/fp/) against the
// numerics core; `mismatches` counts leaf results that differ.
CosimReport cosim_fp(const CosimOptions& o, std::ostream& log);
// The HP-port-to-core clock-domain crossing (rtl/cdc/n3_cdc_fifo.sv, two
// clocks) against a C++ queue, one stream a vector, and its measured
// latency and throughput against the model's timing.cdc_sync_cycles.
CosimReport cosim_cdc(const CosimOptions& o, std::ostream& log);

// The control engine's execute stage (rtl/ctl/) against sim/ctl_exec.cc's
// ctl_step, one control instruction (or a dependent pair) per vector.
CosimReport cosim_ctl(const CosimOptions& o, std::ostream& log);

// JSON report of a shard, and the merge of several shards of one run
// (refuses reports of different runs, a missing or repeated shard).
std::string report_json(const CosimReport& r);
CosimReport report_from_json(const std::string& text, const std::string& where);
CosimReport merge_reports(const std::vector<CosimReport>& shards);
void print_summary(const CosimReport& r, std::ostream& out);

}  // namespace n3::rtl
