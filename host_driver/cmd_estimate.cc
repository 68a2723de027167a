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
// The formulas live in sim/systemc/timing.cc (timing::decode_traffic), shared
// with bench/systemc_e4b_timing.cc; the timing-only simulation of the
// compiled decode program (n3 sim --backend systemc --model M --timing-only)
// refines this with every instruction's overheads.
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "golden/hw_config.h"
#include "golden/model_config.h"
#include "base/tensor.h"
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
  const HwConfig hwc = load_hw_config(hw);
  const timing::Params p = timing::load_params(hwc);
  const num::Formats f = numerics_formats(hwc);
  const double kv_bytes = f.kv == num::KvFmt::INT8 ? 1.0 : 2.0;
  const timing::DecodeTraffic t = timing::decode_traffic(c, context, kv_bytes);
  const double bytes = t.weight_bytes + t.kv_bytes;
  const double bw = p.ddr_bytes_per_s(p.hp_ports);
  const double roof = bw / bytes;
  const double mac_rate = double(p.gemv_macs_per_clk_total()) * p.core_mhz * 1e6;
  const double compute = mac_rate / t.macs;
  std::printf("model %s on %s, context %lld\n", c.name.c_str(), p.name.c_str(), static_cast<long long>(context));
  std::printf("bytes per decode token: %.0f (weights %.0f, KV %.0f)\n", bytes, t.weight_bytes, t.kv_bytes);
  std::printf("memory roofline: %.3f GB/s = min(DDR %.3f GB/s x %.3f, %lld HP ports x %lld B x %.0f MHz = %.3f GB/s)\n",
              bw / 1e9, p.ddr_peak_gbps, p.ddr_efficiency, static_cast<long long>(p.hp_ports),
              static_cast<long long>(p.hp_port_bytes), p.axi_mhz, p.hp_bytes_per_s(p.hp_ports) / 1e9);
  std::printf("roofline tok/s: %.3f\n", roof);
  std::printf("GEMV MACs per token: %.0f at %.3f GMAC/s\n", t.macs, mac_rate / 1e9);
  std::printf("compute bound tok/s: %.3f\n", compute);
  std::printf("estimate tok/s: %.3f (%s-bound)\n", std::min(roof, compute), roof < compute ? "memory" : "compute");
  return kExitOk;
}

}  // namespace n3::cli
