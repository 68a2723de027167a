// The hardware file: capacities, clocks, KV policy, numerics formats and
// timing of one NPU design point, parsed once into typed members. Every
// value carries the source of its value (`{value: 400, source: "pccx v002
// docs"}`), so a designer can tell measured numbers from assumptions.
// One schema table in hw_config.cc declares each key (member, required,
// range, description); it drives parsing, validation, the error messages and
// emit_hw_yaml. Quantities derived from several keys (the DDR roofline,
// weight-buffer and tile bytes, ...) are methods here and nowhere else.
// docs/timing.md describes the keys.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "golden/numerics/formats_config.h"

namespace n3 {

// What happens when a sequence would exceed the KV ring (kv.cap_tokens):
// "error" refuses the step; "evict" drops the oldest rows but keeps the first
// kv.sink_tokens (attention sinks), StreamingLLM-style.
enum class KvPolicy : uint8_t { Error = 0, Evict = 1 };
const char* kv_policy_name(KvPolicy p);

// Where a value comes from. `given` is false for an optional key the file
// leaves out: the member then keeps its default and the source stays empty.
struct HwOrigin {
  std::string source;
  bool given = false;
};

template <class T>
struct HwValue : HwOrigin {
  T value{};
  HwValue() = default;
  HwValue(T v) : value(v) {}  // the default of an optional key
};

struct HwClocks {
  HwValue<double> core_mhz, axi_mhz;
};

struct HwMemory {
  HwValue<int64_t> l2_bytes, l2_word_bits, weight_fifos, weight_fifo_bytes, constant_cache_entries, ddr_bytes;
  HwValue<double> ddr_peak_gbps, ddr_efficiency;
  HwValue<int64_t> hp_ports, hp_port_bits;
};

struct HwCompute {
  HwValue<int64_t> gemv_cores, gemv_macs_per_clk, gemm_rows, gemm_cols;
  HwValue<double> sfu_elems_per_clk;
};

struct HwKv {
  HwValue<int64_t> cap_tokens;
  HwValue<KvPolicy> policy{KvPolicy::Error};
  HwValue<int64_t> sink_tokens{0};
};

// Optional in the file; the SystemC model and `n3 estimate` require them
// (HwConfig::require_timing).
struct HwTiming {
  HwValue<double> ddr_latency_ns;
  HwValue<int64_t> ddr_burst_bytes, cdc_sync_cycles, dma_hp_ports, l2_ports, l2_port_words, queue_depth,
      dispatch_cycles, ctl_cycles, dma_setup_cycles, dma_job_cycles, dma_lanes, gemv_setup_cycles, gemv_drain_cycles, gemm_setup_cycles,
      gemm_macs_per_pe, sfu_setup_cycles, sfu_latency_cycles;
  HwValue<int64_t> wbuf_tiles{2};  // double buffering unless said
  // Weight-buffer slots the GEMV's weight stream may fill for its next
  // queued instruction before that instruction's tokens (0: no prefetch).
  HwValue<int64_t> wbuf_prefetch_tiles{0};
  HwValue<int64_t> sfu_passes_softmax, sfu_passes_rmsnorm, sfu_passes_gtopk, sfu_passes_magmatch;
  // The SFU's command transfer, and its pipeline depth per function class
  // (sfu_latency_cycles: one step of f32 arithmetic then the rounding;
  // timing::sfu_latency_cycles says which function is which class).
  HwValue<int64_t> sfu_command_cycles, sfu_latency_exp_cycles, sfu_latency_sqrt_cycles, sfu_latency_tanh_cycles,
      sfu_latency_gelu_cycles, sfu_latency_trig_cycles, sfu_latency_reduce_cycles, sfu_latency_rms_cycles,
      sfu_latency_softcap_cycles, sfu_latency_rope_cycles;
  // The row operators that re-read their rows (timing::sfu_cycles): per row,
  // the clocks beyond its beats from its first beat in to its last result
  // out; between rows, the clocks from one row's last result to the next's
  // first beat.
  HwValue<int64_t> sfu_latency_rmsnorm_cycles, sfu_latency_softmax_cycles, sfu_latency_gtopk_cycles,
      sfu_latency_magmatch_cycles, sfu_row_gap_cycles;
};

// Energy of one operation or one byte moved (optional, all or none): what
// `n3 estimate` multiplies the timing model's counts by for energy per token
// (docs/estimating.md, "Energy per token"). Each value names its published
// figure and how it was scaled, or says "assumption".
struct HwEnergy {
  HwValue<double> ddr_pj_per_byte, l2_pj_per_byte, mac_pj, sfu_pj_per_elem, static_mw;
};

// What a design point costs, in the unit the file's sources state (the
// shipped files: mm^2 of 45 nm-equivalent area), per unit of each resource
// a sweep varies (optional, all or none): `n3 estimate --target-tok-s`
// names the cheapest sweep point that reaches a target under it.
struct HwCost {
  HwValue<double> gemv_mac, gemm_mac, sfu_lane, hp_port_bit, ddr_gbps, l2_mib;
};

// The values are num::Formats (absent keys keep its defaults); the origins
// say where each came from.
struct HwNumerics {
  num::Formats formats;
  HwOrigin act_format, stream_format, kv_format, score_format, logits_format, bfp_block, act_mantissa_bits,
      attn_mantissa_bits, weight_scale, weight_group, block_scale_bits;
};

struct HwConfig {
  std::string name, description, path;
  HwClocks clocks;
  HwMemory memory;
  HwCompute compute;
  HwKv kv;
  HwTiming timing;
  HwNumerics numerics;
  HwEnergy energy;
  HwCost cost;

  double core_ps() const { return 1e6 / clocks.core_mhz.value; }  // one core clock, ps
  double axi_ps() const { return 1e6 / clocks.axi_mhz.value; }
  int64_t hp_port_bytes() const { return memory.hp_port_bits.value / 8; }
  int64_t l2_word_bytes() const { return memory.l2_word_bits.value / 8; }
  // DDR peak x efficiency, bytes/s: what the DDR channel sustains alone.
  double ddr_sustained_bytes_per_s() const;
  // `ports` HP ports at the AXI clock, bytes/s.
  double hp_bytes_per_s(int64_t ports) const;
  // The memory roofline through `ports` HP ports, bytes/s:
  // min(DDR peak x efficiency, ports x port width x AXI clock).
  double ddr_bytes_per_s(int64_t ports) const;
  // The roofline through every HP port (what a weight stream sees).
  double ddr_roofline_bytes_per_s() const { return ddr_bytes_per_s(memory.hp_ports.value); }
  // One DDR latency at the roofline, in bytes (0 without timing.ddr_latency_ns).
  uint64_t ddr_latency_bytes() const;
  int64_t weight_buffer_bytes() const { return memory.weight_fifos.value * memory.weight_fifo_bytes.value; }
  // One of the timing.wbuf_tiles slots the weight stream cycles through.
  int64_t weight_tile_bytes() const { return weight_buffer_bytes() / timing.wbuf_tiles.value; }
  int64_t gemv_macs_per_clk_total() const { return compute.gemv_cores.value * compute.gemv_macs_per_clk.value; }
  int64_t gemm_macs_per_clk_total() const {
    return compute.gemm_rows.value * compute.gemm_cols.value * timing.gemm_macs_per_pe.value;
  }
  // The energy (cost) section is given: every key of it (the loader refuses part of one).
  bool has_energy() const { return energy.ddr_pj_per_byte.given; }
  bool has_cost() const { return cost.gemv_mac.given; }
  // The design point's cost by resource (the cost section's rates times the
  // amounts the other keys give), in the schema's order; every rate 0 without
  // a cost section (has_cost() says which).
  std::vector<std::pair<std::string, double>> cost_parts() const;
  // Throws naming the file and the first timing key it leaves out.
  void require_timing() const;
};

// One command-line override of a hardware key (`n3 estimate --set
// compute.gemv_cores=8`, or one point of a --sweep): `flag` is how the
// messages cite it ("--set", "--sweep").
struct HwOverride {
  std::string key, value, flag;
  std::string text() const { return flag + " " + key + "=" + value; }
};
// Splits "key=value"; throws one line naming `flag` and the text when the
// form is wrong or the key is not in the schema (the value is checked where
// the file's values are, by parse_hw_config).
HwOverride parse_hw_override(const std::string& text, const std::string& flag);

// Parses and validates: unknown keys, {value, source} form, types,
// integrality, ranges and cross-key rules, "file:line: ..." messages.
// `overrides` replace (or add) keys in the parsed YAML before the typed load,
// so they pass the same type, range and cross-key checks as the file's
// values; their messages cite the override ("--set key=value: ...") and their
// source is the override's text.
HwConfig load_hw_config(const std::string& path, const std::vector<HwOverride>& overrides = {});
HwConfig parse_hw_config(const std::string& text, const std::string& where,
                         const std::vector<HwOverride>& overrides = {});
// The hardware file of `hw`: every key given, in the schema's order, with
// its source and, as a comment, the schema's description.
std::string emit_hw_yaml(const HwConfig& hw);

// One row of the schema, for listings (tests, docs): the key, its
// description, `hw`'s value as the file writes it and where it came from
// (`origin` points into `hw`).
struct HwKeyInfo {
  std::string key, what, value;
  bool required;
  const HwOrigin* origin;
};
std::vector<HwKeyInfo> hw_keys(const HwConfig& hw);

// configs/hw/kv260.yaml, found relative to the working directory or the source tree.
std::string default_hw_path();

}  // namespace n3
