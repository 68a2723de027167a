#include "rtl_bridge/rtl_units.h"

#include "base/error.h"
#include "rtl_bridge/decoder_unit.h"
#ifdef N3_HAVE_RTL_CTL
#include "rtl_bridge/ctl_unit.h"
#endif
#ifdef N3_HAVE_RTL_GEMV
#include "rtl_bridge/gemv_unit.h"
#endif
#ifdef N3_HAVE_RTL_GEMM
#include "rtl_bridge/gemm_unit.h"
#endif
#ifdef N3_HAVE_RTL_DMA
#include "rtl_bridge/dma_unit.h"
#endif
#ifdef N3_HAVE_RTL_SFU
#include "rtl_bridge/sfu_unit.h"
#endif

namespace n3::rtl {

void use_rtl_units(sc::RunOptions* o, const HwConfig& hw, const std::vector<std::string>& units, const std::string& vcd,
                   int64_t vcd_instructions) {
  for (const std::string& u : units) {
    const std::string wave = vcd.empty() ? "" : rtl_vcd_path(vcd, u, units.size());
    if (u == "decoder") {  // built with every RTL build (n3 cosim --unit decoder)
      use_rtl_decoder(o, hw, wave, vcd_instructions);
      continue;
    }
#ifdef N3_HAVE_RTL_CTL
    if (u == "ctl") {
      use_rtl_ctl(o, hw, wave, vcd_instructions);
      continue;
    }
#endif
#ifdef N3_HAVE_RTL_GEMV
    if (u == "gemv") {
      use_rtl_gemv(o, hw, wave, vcd_instructions);
      continue;
    }
#endif
#ifdef N3_HAVE_RTL_GEMM
    if (u == "gemm") {
      use_rtl_gemm(o, hw, wave, vcd_instructions);
      continue;
    }
#endif
#ifdef N3_HAVE_RTL_DMA
    if (u == "dma") {
      use_rtl_dma(o, hw, wave, vcd_instructions);
      continue;
    }
#endif
#ifdef N3_HAVE_RTL_SFU
    if (u == "sfu") {
      use_rtl_sfu(o, hw, wave, vcd_instructions);
      continue;
    }
#endif
    throw Error("--rtl " + u + ": this n3 was built without that RTL unit (docs/rtl.md)");
  }
}

void print_rtl_summaries(const std::vector<std::string>& units, double wall_s, std::FILE* out) {
  for (const std::string& u : units) {
    double cycles = 0;
    if (u == "decoder") {
      print_decoder_summary(decoder_rtl_stats(), out);
      cycles = double(decoder_rtl_stats().cycles);
    }
#ifdef N3_HAVE_RTL_CTL
    if (u == "ctl") {
      print_ctl_summary(ctl_rtl_stats(), out);
      cycles = double(ctl_rtl_stats().cycles);
    }
#endif
#ifdef N3_HAVE_RTL_GEMV
    if (u == "gemv") {
      print_gemv_comparison(gemv_rtl_records(), out);
      for (const GemvInsnRecord& g : gemv_rtl_records()) cycles += g.rtl_cycles;
    }
#endif
#ifdef N3_HAVE_RTL_GEMM
    if (u == "gemm") {
      print_gemm_comparison(gemm_rtl_records(), gemm_model_only(), out);
      for (const MacInsnRecord& g : gemm_rtl_records()) cycles += g.rtl_cycles;
    }
#endif
#ifdef N3_HAVE_RTL_DMA
    if (u == "dma") {
      print_dma_comparison(dma_rtl_records(), out);
      for (const DmaInsnRecord& d : dma_rtl_records()) cycles += d.rtl_cycles;
    }
#endif
#ifdef N3_HAVE_RTL_SFU
    if (u == "sfu") {
      print_sfu_comparison(sfu_rtl_records(), sfu_model_only(), out);
      for (const SfuInsnRecord& s : sfu_rtl_records()) cycles += s.rtl_cycles;
    }
#endif
    std::fprintf(out, "rtl %s: %.2f s wall, %.0f RTL cycles simulated (%.0f cycles per wall second)\n", u.c_str(),
                 wall_s, cycles, wall_s > 0 ? cycles / wall_s : 0.0);
  }
}

}  // namespace n3::rtl
