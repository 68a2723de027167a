#include "golden/hw_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "base/error.h"
#include "base/file_util.h"

#ifndef N3_SOURCE_DIR
#define N3_SOURCE_DIR "."
#endif

namespace n3 {

namespace {

struct KeyDef {
  bool required;
  bool numeric;
  const char* what;
};

// The schema. Later parts (numerics formats, timing) add their keys here.
const std::map<std::string, KeyDef>& schema() {
  static const std::map<std::string, KeyDef> s = {
      {"clocks.core_mhz", {true, true, "engine clock"}},
      {"clocks.axi_mhz", {true, true, "AXI HP port clock"}},
      {"memory.l2_bytes", {true, true, "L2 scratchpad capacity"}},
      {"memory.l2_word_bits", {true, true, "L2 word width"}},
      {"memory.weight_fifos", {true, true, "number of weight FIFOs"}},
      {"memory.weight_fifo_bytes", {true, true, "capacity of one weight FIFO"}},
      {"memory.constant_cache_entries", {true, true, "descriptor/constant table entries"}},
      {"memory.ddr_bytes", {true, true, "host DDR capacity"}},
      {"memory.ddr_peak_gbps", {true, true, "DDR peak bandwidth, GB/s"}},
      {"memory.ddr_efficiency", {true, true, "sustained fraction of DDR peak"}},
      {"memory.hp_ports", {true, true, "AXI HP ports to DDR"}},
      {"memory.hp_port_bits", {true, true, "width of one HP port"}},
      {"compute.gemv_cores", {true, true, "GEMV cores"}},
      {"compute.gemv_macs_per_clk", {true, true, "MACs per clock per GEMV core"}},
      {"compute.gemm_rows", {true, true, "systolic array rows"}},
      {"compute.gemm_cols", {true, true, "systolic array columns"}},
      {"compute.sfu_elems_per_clk", {true, true, "SFU throughput"}},
      {"kv.cap_tokens", {true, true, "KV ring capacity in tokens"}},
      {"kv.policy", {false, false, "at the cap: error | evict (sliding eviction keeping sinks)"}},
      {"kv.sink_tokens", {false, true, "attention-sink tokens kept by evict"}},
      // Timing (docs/timing.md): optional here, required by the SystemC model and n3 estimate.
      {"timing.ddr_latency_ns", {false, true, "DDR read latency seen at an HP port, ns"}},
      {"timing.ddr_burst_bytes", {false, true, "AXI burst size; transfers round up to whole bursts"}},
      {"timing.cdc_sync_cycles", {false, true, "AXI-clock cycles of the port-to-core clock-domain crossing"}},
      {"timing.dma_hp_ports", {false, true, "HP ports a DMA or SFU DDR transfer stripes over"}},
      {"timing.l2_ports", {false, true, "L2 ports (one L2 word per core clock each)"}},
      {"timing.l2_port_words", {false, true, "L2 words one port moves per core clock (banks accessed in parallel)"}},
      {"timing.queue_depth", {false, true, "instructions per engine queue"}},
      {"timing.dispatch_cycles", {false, true, "core cycles to dispatch one engine instruction"}},
      {"timing.ctl_cycles", {false, true, "core cycles of one control instruction"}},
      {"timing.dma_setup_cycles", {false, true, "DMA descriptor setup, core cycles"}},
      {"timing.gemv_setup_cycles", {false, true, "GEMV setup (descriptor, BFP alignment of x), core cycles"}},
      {"timing.gemv_drain_cycles", {false, true, "GEMV pipeline drain (adder tree, normalise, write), core cycles"}},
      {"timing.gemm_setup_cycles", {false, true, "GEMM setup, core cycles"}},
      {"timing.gemm_macs_per_pe", {false, true, "MACs per processing element per clock"}},
      {"timing.sfu_setup_cycles", {false, true, "SFU setup, core cycles"}},
      {"timing.sfu_latency_cycles", {false, true, "SFU pipeline latency, core cycles"}},
      {"timing.wbuf_tiles", {false, true, "slots of the weight buffers the weight stream cycles through (2: double buffering)"}},
      {"timing.sfu_passes_softmax", {false, true, "SFU reads of a row for softmax"}},
      {"timing.sfu_passes_rmsnorm", {false, true, "SFU reads of a row for RMSNorm"}},
      {"timing.sfu_passes_gtopk", {false, true, "SFU reads of a row for the Gaussian top-k"}},
      {"timing.sfu_passes_magmatch", {false, true, "SFU reads of a row for magnitude matching"}},
      // NPU numerics (docs/numerics.md); absent keys take num::Formats' defaults.
      {"numerics.act_format", {false, false, "activations in L2: f32 | bf16 | f16"}},
      {"numerics.stream_format", {false, false, "residual streams in L2: f32 | bf16 | f16"}},
      {"numerics.kv_format", {false, false, "KV cache: f16 | bf16 | int8"}},
      {"numerics.score_format", {false, false, "attention scores: f32 | f16"}},
      {"numerics.logits_format", {false, false, "logits: f32 | bf16 | f16"}},
      {"numerics.bfp_block", {false, true, "BFP block size"}},
      {"numerics.act_mantissa_bits", {false, true, "BFP mantissa bits of GEMV activations"}},
      {"numerics.attn_mantissa_bits", {false, true, "BFP mantissa bits of attention operands"}},
      {"numerics.weight_scale", {false, false, "per_row | per_group | two_level"}},
      {"numerics.weight_group", {false, true, "inputs per weight scale group"}},
      {"numerics.block_scale_bits", {false, true, "two_level: bits of the integer block scales"}},
  };
  return s;
}

}  // namespace

double HwConfig::num(const std::string& key) const {
  auto it = params.find(key);
  require(it != params.end(), path + ": missing hardware parameter '" + key + "'");
  require(it->second.is_number, path + ": hardware parameter '" + key + "' is not a number");
  return it->second.number;
}

int64_t HwConfig::integer(const std::string& key) const {
  double v = num(key);
  require(std::floor(v) == v, path + ": hardware parameter '" + key + "' must be an integer");
  return static_cast<int64_t>(v);
}

const std::string& HwConfig::str(const std::string& key) const {
  auto it = params.find(key);
  require(it != params.end(), path + ": missing hardware parameter '" + key + "'");
  return it->second.text;
}

HwConfig parse_hw_config(const std::string& text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(where + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                ": malformed YAML: " + e.msg);
  }
  require(root.IsMap(), where + ": expected a mapping at the top level");
  HwConfig hw;
  hw.path = where;
  for (const auto& sec : root) {
    const std::string s = sec.first.as<std::string>();
    if (s == "name") {
      hw.name = sec.second.as<std::string>();
      continue;
    }
    if (s == "description") {
      hw.description = sec.second.as<std::string>();
      continue;
    }
    require(sec.second.IsMap(), where + ": section '" + s + "' must be a mapping");
    for (const auto& kv : sec.second) {
      const std::string key = s + "." + kv.first.as<std::string>();
      auto def = schema().find(key);
      require(def != schema().end(), where + ":" + std::to_string(kv.first.Mark().line + 1) +
                                         ": unknown hardware parameter '" + key + "'");
      const YAML::Node& n = kv.second;
      require(n.IsMap() && n["value"] && n["source"],
              where + ":" + std::to_string(n.Mark().line + 1) + ": '" + key +
                  "' must be {value: ..., source: \"where the value comes from\"}");
      HwParam p;
      p.text = n["value"].as<std::string>();
      p.source = n["source"].as<std::string>();
      require(!p.source.empty(), where + ": '" + key + "' has an empty source");
      try {
        size_t used = 0;
        p.number = std::stod(p.text, &used);
        p.is_number = used == p.text.size();
      } catch (...) {
        p.is_number = false;
      }
      require(!def->second.numeric || p.is_number,
              where + ":" + std::to_string(n.Mark().line + 1) + ": '" + key + "' must be a number (is '" +
                  p.text + "')");
      hw.params[key] = p;
    }
  }
  require(!hw.name.empty(), where + ": missing 'name'");
  for (const auto& [key, def] : schema())
    require(!def.required || hw.params.count(key), where + ": missing hardware parameter '" + key + "'");
  for (const auto& [key, p] : hw.params)
    require(!p.is_number || p.number >= 0, where + ": '" + key + "' must not be negative");
  return hw;
}

num::Formats numerics_formats(const HwConfig& hw) {
  num::Formats f;
  for (const auto& [key, p] : hw.params) {
    if (key.compare(0, 9, "numerics.") != 0) continue;
    const std::string err = num::set_formats_field(f, key.substr(9), p.text);
    require(err.empty(), hw.path + ": " + err);
  }
  const std::string problem = num::formats_problem(f);
  require(problem.empty(), hw.path + ": incompatible numerics formats: " + problem);
  return f;
}

HwConfig load_hw_config(const std::string& path) {
  require(file_exists(path), path + ": no such hardware file");
  return parse_hw_config(read_file_text(path), path);
}

std::string default_hw_path() {
  const std::string rel = "configs/hw/kv260.yaml";
  if (file_exists(rel)) return rel;
  return std::string(N3_SOURCE_DIR) + "/" + rel;
}

}  // namespace n3
