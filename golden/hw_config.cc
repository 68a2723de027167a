#include "golden/hw_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <variant>

#include "base/error.h"
#include "base/file_util.h"

#ifndef N3_SOURCE_DIR
#define N3_SOURCE_DIR "."
#endif

namespace n3 {

const char* kv_policy_name(KvPolicy p) { return p == KvPolicy::Evict ? "evict" : "error"; }

namespace {

// The enumerated values a key may take, by the member's type: the names
// come from their owners (num:: for the formats), listed in enum order;
// `count` is the number of enumerators (a new format adds one here).
template <class E>
struct Choice;
template <>
struct Choice<KvPolicy> {
  static constexpr int count = 2;
  static const char* name(KvPolicy p) { return kv_policy_name(p); }
};
template <>
struct Choice<num::Fmt> {
  static constexpr int count = 3;
  static const char* name(num::Fmt f) { return num::fmt_name(f); }
};
template <>
struct Choice<num::KvFmt> {
  static constexpr int count = 3;
  static const char* name(num::KvFmt f) { return num::kv_fmt_name(f); }
};
template <>
struct Choice<num::WScale> {
  static constexpr int count = 3;
  static const char* name(num::WScale w) { return num::wscale_name(w); }
};

// The range a numeric key must lie in, with the words of its message.
// Rate: a clock (MHz) or bandwidth (GB/s) within physical reason, so the
// figures derived from it (seconds, tok/s, shares) stay finite and printable:
// 1e-300 GB/s made n3 estimate print inf and -nan%.
enum class Rule { NonNegative, Positive, Fraction, Bits, AtLeast2, Rate };

bool in_range(Rule r, double v) {
  switch (r) {
    case Rule::NonNegative: return v >= 0;
    case Rule::Positive: return v > 0;
    case Rule::Fraction: return v >= 1e-3 && v <= 1;  // (1e-300 of the peak: the same inf as a 1e-300 GB/s peak)
    case Rule::Bits: return v > 0 && std::fmod(v, 8) == 0;
    case Rule::AtLeast2: return v >= 2;
    case Rule::Rate: return v >= 1e-3 && v <= 1e6;
  }
  return false;
}

const char* rule_text(Rule r) {
  switch (r) {
    case Rule::NonNegative: return "must not be negative";
    case Rule::Positive: return "must be positive";
    case Rule::Fraction: return "must be in [0.001, 1]";
    case Rule::Bits: return "must be a positive multiple of 8";
    case Rule::AtLeast2: return "must be at least 2 (single buffering is not modelled)";
    case Rule::Rate: return "must be in [0.001, 1e6]";
  }
  return "";
}

// A key's member, type-erased: its origin and a pointer to its value.
using Slot = std::variant<double*, int64_t*, int*, KvPolicy*, num::Fmt*, num::KvFmt*, num::WScale*>;
struct Field {
  HwOrigin* origin;
  Slot value;
};
template <class T>
Field at(HwValue<T>& v) {
  return {&v, &v.value};
}

struct Key {
  const char* key;  // section.key
  bool required;
  Rule rule;  // numeric keys; enumerated ones ignore it
  const char* what;
  Field (*member)(HwConfig&);
};

constexpr bool kRequired = true, kOptional = false;
constexpr Rule kNonNeg = Rule::NonNegative, kPos = Rule::Positive;

// The schema: every key of the hardware file, once, in the order emit_hw_yaml writes them.
const std::vector<Key>& schema() {
  static const std::vector<Key> s = {
      {"clocks.core_mhz", kRequired, Rule::Rate, "engine clock", [](HwConfig& h) { return at(h.clocks.core_mhz); }},
      {"clocks.axi_mhz", kRequired, Rule::Rate, "AXI HP port clock", [](HwConfig& h) { return at(h.clocks.axi_mhz); }},
      {"memory.l2_bytes", kRequired, kPos, "L2 scratchpad capacity", [](HwConfig& h) { return at(h.memory.l2_bytes); }},
      {"memory.l2_word_bits", kRequired, Rule::Bits, "L2 word width",
       [](HwConfig& h) { return at(h.memory.l2_word_bits); }},
      {"memory.weight_fifos", kRequired, kPos, "number of weight FIFOs",
       [](HwConfig& h) { return at(h.memory.weight_fifos); }},
      {"memory.weight_fifo_bytes", kRequired, kPos, "capacity of one weight FIFO",
       [](HwConfig& h) { return at(h.memory.weight_fifo_bytes); }},
      {"memory.constant_cache_entries", kRequired, kPos, "descriptor/constant table entries",
       [](HwConfig& h) { return at(h.memory.constant_cache_entries); }},
      {"memory.ddr_bytes", kRequired, kPos, "host DDR capacity", [](HwConfig& h) { return at(h.memory.ddr_bytes); }},
      {"memory.ddr_peak_gbps", kRequired, Rule::Rate, "DDR peak bandwidth, GB/s",
       [](HwConfig& h) { return at(h.memory.ddr_peak_gbps); }},
      {"memory.ddr_efficiency", kRequired, Rule::Fraction, "sustained fraction of DDR peak",
       [](HwConfig& h) { return at(h.memory.ddr_efficiency); }},
      {"memory.hp_ports", kRequired, kPos, "AXI HP ports to DDR", [](HwConfig& h) { return at(h.memory.hp_ports); }},
      {"memory.hp_port_bits", kRequired, Rule::Bits, "width of one HP port",
       [](HwConfig& h) { return at(h.memory.hp_port_bits); }},
      {"compute.gemv_cores", kRequired, kPos, "GEMV cores", [](HwConfig& h) { return at(h.compute.gemv_cores); }},
      {"compute.gemv_macs_per_clk", kRequired, kPos, "MACs per clock per GEMV core",
       [](HwConfig& h) { return at(h.compute.gemv_macs_per_clk); }},
      {"compute.gemm_rows", kRequired, kPos, "systolic array rows",
       [](HwConfig& h) { return at(h.compute.gemm_rows); }},
      {"compute.gemm_cols", kRequired, kPos, "systolic array columns",
       [](HwConfig& h) { return at(h.compute.gemm_cols); }},
      {"compute.sfu_elems_per_clk", kRequired, kPos, "SFU throughput",
       [](HwConfig& h) { return at(h.compute.sfu_elems_per_clk); }},
      {"kv.cap_tokens", kRequired, kPos, "KV ring capacity in tokens", [](HwConfig& h) { return at(h.kv.cap_tokens); }},
      {"kv.policy", kOptional, kNonNeg, "at the cap: error | evict (sliding eviction keeping sinks)",
       [](HwConfig& h) { return at(h.kv.policy); }},
      {"kv.sink_tokens", kOptional, kNonNeg, "attention-sink tokens kept by evict (fewer than kv.cap_tokens)",
       [](HwConfig& h) { return at(h.kv.sink_tokens); }},
      // NPU numerics (docs/numerics.md); absent keys take num::Formats' defaults.
      {"numerics.act_format", kOptional, kNonNeg, "activations in L2: f32 | bf16 | f16",
       [](HwConfig& h) { return Field{&h.numerics.act_format, &h.numerics.formats.act}; }},
      {"numerics.stream_format", kOptional, kNonNeg, "residual streams in L2: f32 | bf16 | f16",
       [](HwConfig& h) { return Field{&h.numerics.stream_format, &h.numerics.formats.stream}; }},
      {"numerics.kv_format", kOptional, kNonNeg, "KV cache: f16 | bf16 | int8",
       [](HwConfig& h) { return Field{&h.numerics.kv_format, &h.numerics.formats.kv}; }},
      {"numerics.score_format", kOptional, kNonNeg, "attention scores: f32 | f16",
       [](HwConfig& h) { return Field{&h.numerics.score_format, &h.numerics.formats.score}; }},
      {"numerics.logits_format", kOptional, kNonNeg, "logits: f32 | bf16 | f16",
       [](HwConfig& h) { return Field{&h.numerics.logits_format, &h.numerics.formats.logits}; }},
      {"numerics.bfp_block", kOptional, kNonNeg, "BFP block size",
       [](HwConfig& h) { return Field{&h.numerics.bfp_block, &h.numerics.formats.bfp_block}; }},
      {"numerics.act_mantissa_bits", kOptional, kNonNeg, "BFP mantissa bits of GEMV activations",
       [](HwConfig& h) { return Field{&h.numerics.act_mantissa_bits, &h.numerics.formats.act_mant_bits}; }},
      {"numerics.attn_mantissa_bits", kOptional, kNonNeg, "BFP mantissa bits of attention operands",
       [](HwConfig& h) { return Field{&h.numerics.attn_mantissa_bits, &h.numerics.formats.attn_mant_bits}; }},
      {"numerics.weight_scale", kOptional, kNonNeg, "per_row | per_group | two_level",
       [](HwConfig& h) { return Field{&h.numerics.weight_scale, &h.numerics.formats.weight_scale}; }},
      {"numerics.weight_group", kOptional, kNonNeg, "inputs per weight scale group",
       [](HwConfig& h) { return Field{&h.numerics.weight_group, &h.numerics.formats.weight_group}; }},
      {"numerics.block_scale_bits", kOptional, kNonNeg, "two_level: bits of the integer block scales",
       [](HwConfig& h) { return Field{&h.numerics.block_scale_bits, &h.numerics.formats.block_scale_bits}; }},
      // Timing (docs/timing.md): optional here, required by the SystemC model and n3 estimate.
      {"timing.ddr_latency_ns", kOptional, kNonNeg, "DDR read latency seen at an HP port, ns",
       [](HwConfig& h) { return at(h.timing.ddr_latency_ns); }},
      {"timing.ddr_burst_bytes", kOptional, kPos, "AXI burst size; transfers round up to whole bursts",
       [](HwConfig& h) { return at(h.timing.ddr_burst_bytes); }},
      {"timing.cdc_sync_cycles", kOptional, kNonNeg, "core-clock cycles of the port-to-core clock-domain crossing (worst case over the clocks' phase)",
       [](HwConfig& h) { return at(h.timing.cdc_sync_cycles); }},
      {"timing.dma_hp_ports", kOptional, kPos,
       "HP ports a DMA or SFU DDR transfer stripes over (at most memory.hp_ports)",
       [](HwConfig& h) { return at(h.timing.dma_hp_ports); }},
      {"timing.l2_ports", kOptional, kPos, "L2 ports (one L2 word per core clock each)",
       [](HwConfig& h) { return at(h.timing.l2_ports); }},
      {"timing.l2_port_words", kOptional, kPos, "L2 words one port moves per core clock (banks accessed in parallel)",
       [](HwConfig& h) { return at(h.timing.l2_port_words); }},
      {"timing.queue_depth", kOptional, kPos, "instructions per engine queue",
       [](HwConfig& h) { return at(h.timing.queue_depth); }},
      {"timing.dispatch_cycles", kOptional, kNonNeg, "core cycles to dispatch one engine instruction",
       [](HwConfig& h) { return at(h.timing.dispatch_cycles); }},
      {"timing.ctl_cycles", kOptional, kNonNeg, "core cycles of one control instruction",
       [](HwConfig& h) { return at(h.timing.ctl_cycles); }},
      {"timing.dma_setup_cycles", kOptional, kNonNeg, "DMA descriptor setup, core cycles",
       [](HwConfig& h) { return at(h.timing.dma_setup_cycles); }},
      {"timing.dma_job_cycles", kOptional, kNonNeg,
       "DMA fixed clocks per engine job (a run contiguous in src and dst, or a scale group), core cycles",
       [](HwConfig& h) { return at(h.timing.dma_job_cycles); }},
      {"timing.dma_lanes", kOptional, kPos, "DMA conversion lanes: elements converted per clock",
       [](HwConfig& h) { return at(h.timing.dma_lanes); }},
      {"timing.gemv_setup_cycles", kOptional, kNonNeg, "GEMV setup (descriptor, BFP alignment of x), core cycles",
       [](HwConfig& h) { return at(h.timing.gemv_setup_cycles); }},
      {"timing.gemv_drain_cycles", kOptional, kNonNeg,
       "GEMV pipeline drain (adder tree, normalise, write), core cycles",
       [](HwConfig& h) { return at(h.timing.gemv_drain_cycles); }},
      {"timing.gemm_setup_cycles", kOptional, kNonNeg, "GEMM setup, core cycles",
       [](HwConfig& h) { return at(h.timing.gemm_setup_cycles); }},
      {"timing.gemm_macs_per_pe", kOptional, kPos, "MACs per processing element per clock",
       [](HwConfig& h) { return at(h.timing.gemm_macs_per_pe); }},
      {"timing.sfu_setup_cycles", kOptional, kNonNeg, "SFU setup, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_setup_cycles); }},
      {"timing.sfu_command_cycles", kOptional, kNonNeg, "SFU command transfer before the first element, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_command_cycles); }},
      {"timing.sfu_latency_cycles", kOptional, kNonNeg,
       "SFU pipeline depth of the one-step functions (RELU, RECIP, SCALE, ADDK, MAXK, ADD, SUB, MUL, MAX, MAC), core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_cycles); }},
      {"timing.sfu_latency_exp_cycles", kOptional, kNonNeg, "SFU pipeline depth of EXP, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_exp_cycles); }},
      {"timing.sfu_latency_sqrt_cycles", kOptional, kNonNeg, "SFU pipeline depth of SQRT and RSQRT, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_sqrt_cycles); }},
      {"timing.sfu_latency_tanh_cycles", kOptional, kNonNeg, "SFU pipeline depth of TANH, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_tanh_cycles); }},
      {"timing.sfu_latency_gelu_cycles", kOptional, kNonNeg, "SFU pipeline depth of GELU, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_gelu_cycles); }},
      {"timing.sfu_latency_trig_cycles", kOptional, kNonNeg, "SFU pipeline depth of SIN and COS, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_trig_cycles); }},
      {"timing.sfu_latency_reduce_cycles", kOptional, kNonNeg,
       "SFU clocks from a row's last beat in to its RSUM / RMAX / RSUMSQ result out, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_reduce_cycles); }},
      {"timing.sfu_latency_rms_cycles", kOptional, kNonNeg,
       "SFU clocks from a row's last beat in to its RMS result out, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_rms_cycles); }},
      {"timing.sfu_latency_softcap_cycles", kOptional, kNonNeg, "SFU pipeline depth of SOFTCAP, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_softcap_cycles); }},
      {"timing.sfu_latency_rope_cycles", kOptional, kNonNeg, "SFU pipeline depth of ROPE, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_rope_cycles); }},
      {"timing.sfu_latency_rmsnorm_cycles", kOptional, kNonNeg,
       "SFU clocks of an RMSNORM row beyond its beats (first beat in to last result out), core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_rmsnorm_cycles); }},
      {"timing.sfu_latency_softmax_cycles", kOptional, kNonNeg,
       "SFU clocks of a SOFTMAX row beyond its beats (first beat in to last result out), core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_softmax_cycles); }},
      {"timing.sfu_latency_gtopk_cycles", kOptional, kNonNeg,
       "SFU clocks of a GTOPK row beyond its beats (first beat in to last result out), core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_gtopk_cycles); }},
      {"timing.sfu_latency_magmatch_cycles", kOptional, kNonNeg,
       "SFU clocks of a MAGMATCH row beyond its beats (first beat in to last result out), core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_latency_magmatch_cycles); }},
      {"timing.sfu_row_gap_cycles", kOptional, kNonNeg,
       "SFU clocks from a multi-pass row operator's row's last result to the next row's first beat, core cycles",
       [](HwConfig& h) { return at(h.timing.sfu_row_gap_cycles); }},
      {"timing.wbuf_tiles", kOptional, Rule::AtLeast2,
       "slots of the weight buffers the weight stream cycles through (default 2: double buffering; at most the "
       "weight buffers' bytes)",
       [](HwConfig& h) { return at(h.timing.wbuf_tiles); }},
      {"timing.wbuf_prefetch_tiles", kOptional, kNonNeg,
       "weight-buffer slots the GEMV's weight stream may fill with its next queued instruction's read-only weights "
       "before that instruction's tokens (default 0: no prefetch; at most timing.wbuf_tiles)",
       [](HwConfig& h) { return at(h.timing.wbuf_prefetch_tiles); }},
      {"timing.sfu_passes_softmax", kOptional, kPos, "SFU reads of a row for softmax",
       [](HwConfig& h) { return at(h.timing.sfu_passes_softmax); }},
      {"timing.sfu_passes_rmsnorm", kOptional, kPos, "SFU reads of a row for RMSNorm",
       [](HwConfig& h) { return at(h.timing.sfu_passes_rmsnorm); }},
      {"timing.sfu_passes_gtopk", kOptional, kPos, "SFU reads of a row for the Gaussian top-k",
       [](HwConfig& h) { return at(h.timing.sfu_passes_gtopk); }},
      {"timing.sfu_passes_magmatch", kOptional, kPos, "SFU reads of a row for magnitude matching",
       [](HwConfig& h) { return at(h.timing.sfu_passes_magmatch); }},
      // Energy (docs/estimating.md, "Energy per token"): optional, all or none.
      {"energy.ddr_pj_per_byte", kOptional, kNonNeg, "DDR energy per byte moved (device, PHY, controller), pJ",
       [](HwConfig& h) { return at(h.energy.ddr_pj_per_byte); }},
      {"energy.l2_pj_per_byte", kOptional, kNonNeg, "L2 SRAM energy per byte read or written, pJ",
       [](HwConfig& h) { return at(h.energy.l2_pj_per_byte); }},
      {"energy.mac_pj", kOptional, kNonNeg, "energy of one GEMV or GEMM multiply-accumulate, pJ",
       [](HwConfig& h) { return at(h.energy.mac_pj); }},
      {"energy.sfu_pj_per_elem", kOptional, kNonNeg, "SFU energy per element pass, pJ",
       [](HwConfig& h) { return at(h.energy.sfu_pj_per_elem); }},
      {"energy.static_mw", kOptional, kNonNeg, "static (leakage and idle) power while a phase runs, mW",
       [](HwConfig& h) { return at(h.energy.static_mw); }},
      // Cost (docs/estimating.md, "--target-tok-s"): optional, all or none; the unit is the sources'.
      {"cost.gemv_mac", kOptional, kNonNeg, "cost of one GEMV MAC per clock (gemv_cores x gemv_macs_per_clk of them)",
       [](HwConfig& h) { return at(h.cost.gemv_mac); }},
      {"cost.gemm_mac", kOptional, kNonNeg,
       "cost of one GEMM MAC per clock (gemm_rows x gemm_cols x timing.gemm_macs_per_pe of them)",
       [](HwConfig& h) { return at(h.cost.gemm_mac); }},
      {"cost.sfu_lane", kOptional, kNonNeg, "cost of one SFU element per clock (compute.sfu_elems_per_clk of them)",
       [](HwConfig& h) { return at(h.cost.sfu_lane); }},
      {"cost.hp_port_bit", kOptional, kNonNeg, "cost of one bit of HP port width (hp_ports x hp_port_bits of them)",
       [](HwConfig& h) { return at(h.cost.hp_port_bit); }},
      {"cost.ddr_gbps", kOptional, kNonNeg, "cost of one GB/s of DDR peak bandwidth",
       [](HwConfig& h) { return at(h.cost.ddr_gbps); }},
      {"cost.l2_mib", kOptional, kNonNeg, "cost of one MiB of L2", [](HwConfig& h) { return at(h.cost.l2_mib); }},
  };
  return s;
}

const Key* find_key(const std::string& key) {
  static const std::map<std::string, const Key*> index = [] {
    std::map<std::string, const Key*> m;
    for (const Key& k : schema()) m[k.key] = &k;
    return m;
  }();
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second;
}

// Field of a const config, for reading (the accessors are written once, for the mutable form).
Field read_field(const Key& k, const HwConfig& hw) { return k.member(const_cast<HwConfig&>(hw)); }

// The value's text as the file would write it: integers in full, reals in
// the shortest form that reads back to the same double.
std::string value_text(const Slot& s) {
  return std::visit(
      [](auto* v) -> std::string {
        using T = std::remove_pointer_t<decltype(v)>;
        if constexpr (std::is_same_v<T, double>) {
          char buf[64];
          const auto r = std::to_chars(buf, buf + sizeof buf, *v);
          return std::string(buf, r.ptr);
        } else if constexpr (std::is_integral_v<T>) {
          return std::to_string(*v);
        } else {
          return Choice<T>::name(*v);
        }
      },
      s);
}

// Sets the slot from the file's text; returns "" or what is wrong ("must be ... (is 'x')").
std::string set_value(const Slot& s, const std::string& text, Rule rule) {
  return std::visit(
      [&](auto* v) -> std::string {
        using T = std::remove_pointer_t<decltype(v)>;
        const std::string is = " (is '" + text + "')";
        if constexpr (std::is_arithmetic_v<T>) {
          double x = 0;
          size_t used = 0;
          try {
            x = std::stod(text, &used);
          } catch (...) {
            used = 0;
          }
          if (used == 0 || used != text.size() || !std::isfinite(x)) return "must be a number" + is;
          if (std::is_integral_v<T>) {
            if (std::floor(x) != x) return "must be an integer" + is;
            if (std::fabs(x) >= double(std::numeric_limits<T>::max())) return "is out of range" + is;
          }
          if (!in_range(rule, x)) return rule_text(rule) + is;
          *v = static_cast<T>(x);
          return "";
        } else {
          std::string names;
          for (int i = 0; i < Choice<T>::count; ++i) {
            const char* n = Choice<T>::name(static_cast<T>(i));
            if (text == n) {
              *v = static_cast<T>(i);
              return "";
            }
            names += (i ? ", " : "") + std::string(n);
          }
          return "must be one of " + names + is;
        }
      },
      s);
}

int line_of(const YAML::Node& n) { return n.Mark().line + 1; }

// Rules between keys, checked once every key is read; `cited` holds each
// key's message prefix ("file:line: " or "--set key=value: ").
void check_across(const HwConfig& hw, const std::map<std::string, std::string>& cited) {
  // A rule between keys blames the first of them a command-line override
  // set (the key a user just changed, "--set key=value: "), else the first
  // key's line in the file.
  auto where = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys)
      if (auto it = cited.find(k); it != cited.end() && it->second.rfind("--", 0) == 0) return it->second;
    auto it = cited.find(*keys.begin());
    return it == cited.end() ? hw.path + ": " : it->second;
  };
  require(hw.kv.sink_tokens.value < hw.kv.cap_tokens.value,
          where({"kv.sink_tokens", "kv.cap_tokens"}) + "kv.sink_tokens = " + std::to_string(hw.kv.sink_tokens.value) +
              " must be less than kv.cap_tokens = " + std::to_string(hw.kv.cap_tokens.value));
  require(!hw.timing.dma_hp_ports.given || hw.timing.dma_hp_ports.value <= hw.memory.hp_ports.value,
          where({"timing.dma_hp_ports", "memory.hp_ports"}) + "timing.dma_hp_ports = " +
              std::to_string(hw.timing.dma_hp_ports.value) + " must be in [1, memory.hp_ports = " +
              std::to_string(hw.memory.hp_ports.value) + "]");
  require(!hw.timing.wbuf_tiles.given || hw.timing.wbuf_tiles.value <= hw.weight_buffer_bytes(),
          where({"timing.wbuf_tiles", "memory.weight_fifos", "memory.weight_fifo_bytes"}) +
              "timing.wbuf_tiles must be at most the weight buffers' bytes (" +
              std::to_string(hw.weight_buffer_bytes()) + ")");
  require(hw.timing.wbuf_prefetch_tiles.value <= hw.timing.wbuf_tiles.value,
          where({"timing.wbuf_prefetch_tiles", "timing.wbuf_tiles"}) +
              "timing.wbuf_prefetch_tiles must be at most timing.wbuf_tiles (" +
              std::to_string(hw.timing.wbuf_tiles.value) + ")");
  // The ISA places L2 buffers at 16-byte (L2 word) aligned bases, counted
  // down from the top of L2: a size off that grid broke the compiler with a
  // "descriptor base not aligned" no other command saw (golden and run took
  // the file).
  require(hw.memory.l2_bytes.value % 16 == 0,
          where({"memory.l2_bytes"}) + "'memory.l2_bytes' must be a multiple of 16 (the ISA's 16-byte L2 word; is " +
              std::to_string(hw.memory.l2_bytes.value) + ")");
  // A section priced in part would give a total that looks whole: all of its keys or none.
  for (const char* sec : {"energy.", "cost."}) {
    std::string given, missing;
    for (const Key& k : schema()) {
      if (std::string(k.key).rfind(sec, 0) != 0) continue;
      std::string& first = read_field(k, hw).origin->given ? given : missing;  // the first of each, in schema order
      if (first.empty()) first = k.key;
    }
    require(given.empty() || missing.empty(),
            where({given.c_str()}) + given + " is given without " + missing + " (the " +
                std::string(sec).substr(0, std::strlen(sec) - 1) + " section takes all of its keys or none)");
  }
  // Each cost is finite but a product of two large ones need not be (1e300
  // per MAC x 128 MACs is inf): a total the target search could not compare.
  if (hw.cost.gemv_mac.given) {
    double total = 0;
    for (const auto& [part, v] : hw.cost_parts()) {
      total += v;
      require(std::isfinite(v) && std::isfinite(total),
              where({"cost.gemv_mac"}) + "the cost of the " + part + " overflows a double: the cost section's figures are out of scale");
    }
  }
  const std::string problem = num::formats_problem(hw.numerics.formats);
  require(problem.empty(), hw.path + ": incompatible numerics formats: " + problem);
}

}  // namespace

double HwConfig::ddr_sustained_bytes_per_s() const {
  return memory.ddr_peak_gbps.value * 1e9 * memory.ddr_efficiency.value;
}

double HwConfig::hp_bytes_per_s(int64_t ports) const {
  return double(ports) * double(hp_port_bytes()) * clocks.axi_mhz.value * 1e6;
}

double HwConfig::ddr_bytes_per_s(int64_t ports) const {
  return std::min(ddr_sustained_bytes_per_s(), hp_bytes_per_s(ports));
}

uint64_t HwConfig::ddr_latency_bytes() const {
  if (!timing.ddr_latency_ns.given) return 0;
  return uint64_t(std::llround(timing.ddr_latency_ns.value * ddr_roofline_bytes_per_s() * 1e-9));
}

std::vector<std::pair<std::string, double>> HwConfig::cost_parts() const {
  return {{"GEMV MACs", cost.gemv_mac.value * double(gemv_macs_per_clk_total())},
          {"GEMM MACs", cost.gemm_mac.value * double(gemm_macs_per_clk_total())},
          {"SFU lanes", cost.sfu_lane.value * compute.sfu_elems_per_clk.value},
          {"HP ports", cost.hp_port_bit.value * double(memory.hp_ports.value * memory.hp_port_bits.value)},
          {"DDR bandwidth", cost.ddr_gbps.value * memory.ddr_peak_gbps.value},
          {"L2", cost.l2_mib.value * double(memory.l2_bytes.value) / double(1 << 20)}};
}

void HwConfig::require_timing() const {
  for (const Key& k : schema())
    if (std::string(k.key).rfind("timing.", 0) == 0)
      require(read_field(k, *this).origin->given, path + ": missing hardware parameter '" + k.key + "'");
}

HwConfig parse_hw_config(const std::string& text, const std::string& where, const std::vector<HwOverride>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(where + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                ": malformed YAML: " + e.msg);
  }
  require(root.IsMap(), where + ": expected a mapping at the top level");
  // Overrides go into the YAML itself, so one typed load checks them and the file alike.
  std::map<std::string, std::string> override_at;  // key -> "--set key=value: "
  for (const HwOverride& o : overrides) {
    const HwOverride checked = parse_hw_override(o.key + "=" + o.value, o.flag);
    require(override_at.emplace(o.key, o.text() + ": ").second, o.text() + ": '" + o.key + "' is overridden twice");
    const size_t dot = checked.key.find('.');
    YAML::Node entry(YAML::NodeType::Map);
    entry["value"] = o.value;
    entry["source"] = o.text();
    YAML::Node sec = root[checked.key.substr(0, dot)];
    require(!sec || sec.IsMap(), o.text() + ": section '" + checked.key.substr(0, dot) + "' of " + where +
                                     " is not a mapping");
    root[checked.key.substr(0, dot)][checked.key.substr(dot + 1)] = entry;
  }
  HwConfig hw;
  hw.path = where;
  std::map<std::string, std::string> cited;
  // A key that is a sequence or mapping (`[a]: 1`, `? {a: 1}`) has no text:
  // yaml-cpp's conversion would throw its own exception past the CLI's
  // one-line error (found by fuzz_hw_yaml).
  auto key_text = [&](const YAML::Node& k) {
    require(k.IsScalar(), where + ":" + std::to_string(line_of(k)) + ": a key must be a plain name");
    return k.as<std::string>();
  };
  // Every top-level entry once: yaml-cpp keeps a repeated `memory:` as a
  // second mapping, whose keys the per-key check would take as new.
  std::set<std::string> named;
  for (const auto& sec : root) {
    const std::string s = key_text(sec.first);
    const std::string at_sec = where + ":" + std::to_string(line_of(sec.first)) + ": ";
    const bool scalar = s == "name" || s == "description";
    require(named.insert(s).second, at_sec + (scalar ? "'" + s + "'" : "section '" + s + "'") + " is given twice");
    if (scalar) {
      require(sec.second.IsScalar(), at_sec + "'" + s + "' must be a string");
      (s == "name" ? hw.name : hw.description) = sec.second.as<std::string>();
      continue;
    }
    require(sec.second.IsMap(), at_sec + "section '" + s + "' must be a mapping");
    for (const auto& kv : sec.second) {
      const std::string key = s + "." + key_text(kv.first);
      const Key* def = find_key(key);
      require(def != nullptr, where + ":" + std::to_string(line_of(kv.first)) + ": unknown hardware parameter '" +
                                  key + "'");
      const YAML::Node& n = kv.second;
      const auto ov = override_at.find(key);
      const std::string at = ov != override_at.end() ? ov->second : where + ":" + std::to_string(line_of(n)) + ": ";
      require(n.IsMap() && n["value"] && n["source"] && n["value"].IsScalar() && n["source"].IsScalar(),
              at + "'" + key + "' must be {value: ..., source: \"where the value comes from\"}");
      // Only value and source, each once: yaml-cpp keeps a repeated key (its
      // lookup answers the first) and an unknown one (units: "GB/s") would
      // look meaningful while nothing reads it.
      std::set<std::string> fields;
      for (const auto& e : n) {
        const std::string fk = key_text(e.first);
        const std::string at_f = ov != override_at.end() ? at : where + ":" + std::to_string(line_of(e.first)) + ": ";
        require(fk == "value" || fk == "source",
                at_f + "'" + key + "' has an unknown field '" + fk + "' (a parameter holds value and source only)");
        require(fields.insert(fk).second, at_f + "'" + key + "' gives its " + fk + " twice");
      }
      const Field f = def->member(hw);
      require(!f.origin->given, at + "'" + key + "' is given twice");
      f.origin->source = n["source"].as<std::string>();
      require(!f.origin->source.empty(), at + "'" + key + "' has an empty source");
      // A quoted number ("1835008") is a string in YAML: refused for numeric
      // keys, so a file means what its reader sees (enum names may be quoted).
      const bool numeric = std::holds_alternative<double*>(f.value) || std::holds_alternative<int64_t*>(f.value) ||
                           std::holds_alternative<int*>(f.value);
      require(!numeric || n["value"].Tag() != "!",
              at + "'" + key + "' must be a number, not a quoted string (is \"" + n["value"].as<std::string>() + "\")");
      const std::string bad = set_value(f.value, n["value"].as<std::string>(), def->rule);
      require(bad.empty(), at + "'" + key + "' " + bad);
      f.origin->given = true;
      cited[key] = at;
    }
  }
  require(!hw.name.empty(), where + ": missing 'name'");
  for (const Key& k : schema())
    require(!k.required || k.member(hw).origin->given, where + ": missing hardware parameter '" + k.key + "'");
  check_across(hw, cited);
  return hw;
}

HwOverride parse_hw_override(const std::string& text, const std::string& flag) {
  const size_t eq = text.find('=');
  require(eq != std::string::npos && eq > 0 && eq + 1 < text.size(),
          flag + " " + text + ": expected key=value (e.g. compute.gemv_cores=8)");
  HwOverride o{text.substr(0, eq), text.substr(eq + 1), flag};
  require(find_key(o.key) != nullptr, o.text() + ": unknown hardware parameter '" + o.key + "'");
  return o;
}

std::string emit_hw_yaml(const HwConfig& hw) {
  auto quoted = [](const std::string& s) {
    YAML::Emitter e;
    e << YAML::DoubleQuoted << s;
    return std::string(e.c_str());
  };
  std::string out = "name: " + quoted(hw.name) + "\n";
  if (!hw.description.empty()) out += "description: " + quoted(hw.description) + "\n";
  std::string section;
  for (const Key& k : schema()) {
    const Field f = read_field(k, hw);
    if (!f.origin->given) continue;
    const std::string key = k.key;
    const size_t dot = key.find('.');
    if (key.substr(0, dot) != section) {
      section = key.substr(0, dot);
      out += section + ":\n";
    }
    out += "  " + key.substr(dot + 1) + ": {value: " + value_text(f.value) + ", source: " + quoted(f.origin->source) +
           "}  # " + k.what + "\n";
  }
  return out;
}

std::vector<HwKeyInfo> hw_keys(const HwConfig& hw) {
  std::vector<HwKeyInfo> v;
  for (const Key& k : schema()) {
    const Field f = read_field(k, hw);
    v.push_back({k.key, k.what, value_text(f.value), k.required, f.origin});
  }
  return v;
}

HwConfig load_hw_config(const std::string& path, const std::vector<HwOverride>& overrides) {
  require(file_exists(path), path + ": no such hardware file");
  return parse_hw_config(read_file_text(path), path, overrides);
}

std::string default_hw_path() {
  const std::string rel = "configs/hw/kv260.yaml";
  if (file_exists(rel)) return rel;
  return std::string(N3_SOURCE_DIR) + "/" + rel;
}

}  // namespace n3
