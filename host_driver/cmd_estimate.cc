// n3 estimate --model MODEL.yaml [--hw H.yaml] [--context N]: an analytical
// decode-throughput estimate of a model on a design point, with the same
// formulas the SystemC model times instructions with (sim/systemc/timing.h,
// docs/timing.md):
//   bytes/token   = every INT4 matrix once (packed nibbles + one F32 row
//                   scale per row), the tied LM head (the whole embedding),
//                   float matrices and vectors, one embedding row and one
//                   per-layer-input row, and the KV window of every layer;
//   roofline      = min(DDR peak x efficiency, HP ports x width x AXI clock);
//   compute bound = GEMV MACs/token over gemv_cores x gemv_macs_per_clk x clock.
// The bytes and MACs are decode_traffic's (golden/decode_traffic.h, shared
// with the benches), the rates HwConfig's methods (golden/hw_config.h); the
// timing-only simulation of the compiled decode program (n3 sim --backend
// systemc --model M --timing-only) refines this with every instruction's
// overheads.
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "golden/decode_traffic.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "host_driver/cli_util.h"
#include "sim/systemc/timing.h"

namespace n3::cli {

int cmd_estimate(const Args& a) {
  po::options_description d("n3 estimate options");
  std::string model, hw;
  int64_t context = 1;
  d.add_options()("model", po::value(&model)->required(), "model YAML (or config.json / checkpoint directory)")(
      "hw", po::value(&hw)->default_value(default_hw_path()), "hardware file (clocks, memory, compute, timing)")(
      "context", po::value(&context)->default_value(1), "tokens in the KV cache when the token is decoded");
  po::variables_map vm;
  if (!parse_args("estimate", a, d, {}, vm, "n3 estimate --model MODEL.yaml [--hw H.yaml] [--context N]")) return kExitOk;
  require(context >= 1, "--context must be at least 1");
  const ModelConfig c = load_model_config(model);
  const HwConfig p = timing::load_params(load_hw_config(hw));
  const DecodeTraffic t = decode_traffic(c, p.numerics.formats, context);
  const double bytes = t.bytes();
  const double bw = p.ddr_roofline_bytes_per_s();
  const double roof = bw / bytes;
  const double mac_rate = double(p.gemv_macs_per_clk_total()) * p.clocks.core_mhz.value * 1e6;
  const double compute = mac_rate / t.macs;
  std::printf("model %s on %s, context %lld\n", c.name.c_str(), p.name.c_str(), static_cast<long long>(context));
  std::printf("bytes per decode token: %.0f (weights %.0f, KV %.0f)\n", bytes, t.weight_bytes, t.kv_bytes);
  std::printf("memory roofline: %.3f GB/s = min(DDR %.3f GB/s x %.3f, %lld HP ports x %lld B x %.0f MHz = %.3f GB/s)\n",
              bw / 1e9, p.memory.ddr_peak_gbps.value, p.memory.ddr_efficiency.value,
              static_cast<long long>(p.memory.hp_ports.value), static_cast<long long>(p.hp_port_bytes()),
              p.clocks.axi_mhz.value, p.hp_bytes_per_s(p.memory.hp_ports.value) / 1e9);
  std::printf("roofline tok/s: %.3f\n", roof);
  std::printf("GEMV MACs per token: %.0f at %.3f GMAC/s\n", t.macs, mac_rate / 1e9);
  std::printf("compute bound tok/s: %.3f\n", compute);
  std::printf("estimate tok/s: %.3f (%s-bound)\n", std::min(roof, compute), roof < compute ? "memory" : "compute");
  return kExitOk;
}

}  // namespace n3::cli
