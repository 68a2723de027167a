// `n3 cosim --unit dma`: the RTL DMA engine against the functional
// simulator's MEMCPY / MEMSET (sim/exec_dma.cc, through the numerics core),
// one instruction per vector (rtl_bridge/dma_vectors.h). Both run on the
// same memory image; every byte of every region the vector laid out (src,
// its scale records, dst and its records, with their padding) is compared,
// so a wrong value, a stray write or a missing one is a mismatch. Vectors
// without stalls feed the cycle table: RTL cycles against the SystemC
// model's DMA engine formula (timing::dma_cycles, DmaUnit's compute bound).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include <systemc>

#include "base/error.h"
#include "rtl_bridge/cosim.h"
#include "sim/systemc/npu.h"
#include "rtl_bridge/dma_rtl.h"
#include "rtl_bridge/dma_unit.h"
#include "rtl_bridge/dma_unit.h"
#include "rtl_bridge/dma_vectors.h"
#include "sim/func_sim.h"
#include "sim/systemc/timing.h"

namespace n3::rtl {

// The SystemC model's DMA duration for one instruction on an idle machine
// (sim/systemc/engines.cc DmaUnit::model): setup, then the src read and the
// dst write side by side, each a DDR transfer (latency + occupancy through
// dma_hp_ports HP ports) or an L2 port transfer, and no less than the
// engine's own clocks (timing::dma_cycles). In core clocks.
double dma_model_cycles(const timing::Params& p, const sim::Issued& in, const timing::DmaStream& r,
                        const timing::DmaStream& w) {
  const timing::DmaReadDelay rd = timing::dma_read_delay_cycles(p, in, r);
  return timing::dma_cycles(p, in) + rd.total + timing::dma_write_delay_cycles(p, in, rd, w);
}

timing::DmaStream dma_idle_stream(const timing::Params& p, const sim::View* v) {
  timing::DmaStream s;
  const int64_t bytes = v ? timing::view_bytes(*v) : 0;
  if (!bytes) return s;
  s.on = true;
  if (v->d.space == isa::Space::DDR) {
    s.latency_ps = timing::ddr_latency_ps(p);
    s.occupancy_ps = timing::ddr_occupancy_ps(p, bytes, p.timing.dma_hp_ports.value);
  } else {
    s.occupancy_ps = timing::l2_ps(p, bytes);
  }
  return s;
}

double dma_memory_cycles(const timing::Params& p, const sim::Issued& in, const sim::View* src, const sim::View& dst) {
  return dma_model_cycles(p, in, dma_idle_stream(p, src), dma_idle_stream(p, &dst));
}

namespace {

// Cycle-table row of a vector: the conversion family (copy, copy of scaled
// rows, float / int32 / int4 / int8 -> float, float -> int8, memset),
// whether DDR is on either side, and a size bucket.
std::string shape_key(const DmaVector& g) {
  const int64_t n = g.dst.numel();
  const bool ddr = g.dst.d.space == isa::Space::DDR || (!g.memset && g.src.d.space == isa::Space::DDR);
  auto fam = [](const sim::View& v) {
    const isa::Dtype t = v.d.dtype;
    return v.is_float() ? "float" : t == isa::Dtype::INT32 ? "int32" : t == isa::Dtype::INT4 ? "int4" : "int8";
  };
  std::string f;
  if (g.memset) f = "memset";
  else if (g.src.d.dtype == g.dst.d.dtype) f = g.src.scaled() ? "copy.scaled" : "copy";
  else f = std::string(fam(g.src)) + "->" + fam(g.dst);
  return f + (ddr ? " ddr" : " l2") + (n <= 64 ? " n<=64" : n <= 1024 ? " n<=1k" : " n>1k");
}

struct Harness : sc_core::sc_module {
  SC_HAS_PROCESS(Harness);
  Harness(sc_core::sc_module_name n, const CosimOptions& o, const HwConfig& hw, std::ostream& log, CosimReport& rep)
      : sc_module(n), o_(o), params_(timing::load_params(hw)), log_(log), rep_(rep), rtl_("dma", hw, o.vcd) {
    SC_THREAD(main);
  }

  void main() {
    try {
      for (int64_t i : shard_indices(o_)) one(i);
    } catch (...) {
      error_ = std::current_exception();
    }
    sc_core::sc_stop();
  }

  void one(int64_t index) {
    const DmaVector g = make_dma_vector(o_.seed, index);
    sim::SimOptions so;
    so.caps = {uint64_t(1) << 32, uint64_t(1) << 24, uint64_t(1) << 24};
    isa::Program prog;
    prog.code = {0};
    sim::FuncSim ref(prog, so), hw(prog, so);
    for (const DmaVector::Bytes& b : g.image) {
      ref.memory().space(b.space).write(b.addr, b.data.data(), b.data.size());
      hw.memory().space(b.space).write(b.addr, b.data.data(), b.data.size());
    }
    sim::Issued in;
    in.def = isa::opcode_def(static_cast<uint32_t>(g.memset ? isa::Opcode::MEMSET : isa::Opcode::MEMCPY));
    in.sub = &in.def->subops[0];
    in.views[static_cast<size_t>(isa::field_index(*in.def, "dst"))] = g.dst;
    if (!g.memset) in.views[static_cast<size_t>(isa::field_index(*in.def, "src"))] = g.src;
    in.konst = g.konst;
    in.konst_type = g.konst_type;

    rtl_.set_stalls(g.stall, uint64_t(index) * 0x9e3779b97f4a7c15ull + o_.seed);
    const DmaRun run = rtl_.run(in, hw.memory());
    sim::exec_dma(ref, in);

    ++rep_.run;
    ++rep_.classes[g.cls];
    ++rep_.classes[g.conv];
    static const bool inject = [] {
      const char* e = std::getenv("N3_COSIM_DMA_INJECT");
      return e && std::string(e) == "1";
    }();
    std::string bad;
    if (run.error_response) bad = "the engine reported an error response";
    for (const DmaVector::Bytes& b : g.image) {
      if (!bad.empty()) break;
      std::vector<uint8_t> got(b.data.size()), want(b.data.size());
      hw.memory().space(b.space).read(b.addr, got.data(), got.size());
      ref.memory().space(b.space).read(b.addr, want.data(), want.size());
      // The injected fault: the first byte the instruction writes, one bit flipped.
      if (inject && b.space == g.dst.d.space && b.addr == g.dst.d.base) got[g.dst.row_addr(0) - b.addr] ^= 1;
      for (size_t k = 0; k < got.size(); ++k)
        if (got[k] != want[k]) {
          char line[160];
          std::snprintf(line, sizeof line, "%s byte 0x%llx: rtl 0x%02x expected 0x%02x (before 0x%02x)",
                        isa::enum_text(isa::EnumId::Space, uint64_t(b.space)).c_str(),
                        static_cast<unsigned long long>(b.addr + k), got[k], want[k], b.data[k]);
          bad = line;
          break;
        }
    }
    if (!bad.empty()) {
      ++rep_.mismatches;
      if (rep_.first_mismatch_index < 0 || index < rep_.first_mismatch_index) {
        rep_.first_mismatch_index = index;
        std::ostringstream s;
        s << "vector " << index << " (" << g.conv << ", class " << g.cls << ", dst [" << g.dst.rows << ", "
          << g.dst.cols << "]";
        if (!g.memset) s << ", src [" << g.src.rows << ", " << g.src.cols << "]";
        s << "): " << bad;
        rep_.first_mismatch = s.str();
      }
    }
    // The engine's clocks by the model's formula (DmaUnit's compute bound):
    // with this memory, the RTL must take exactly these.
    const double formula = timing::dma_cycles(params_, in);
    const double memory = dma_memory_cycles(params_, in, g.memset ? nullptr : &g.src, g.dst);
    static const bool verbose = std::getenv("N3_COSIM_DMA_VERBOSE") != nullptr;
    if (verbose)
      log_ << "vector " << index << " " << g.conv << " class " << g.cls << " elements " << g.dst.numel() << " jobs "
           << run.jobs << " r " << run.first_r << " " << run.last_r << " w " << run.first_w << " b " << run.last_b << " rtl " << run.cycles << " formula " << formula << " memory " << memory << (g.stall > 0 ? " (stalls)" : "")
           << (bad.empty() ? "" : " MISMATCH") << "\n";
    if (g.stall == 0) {
      rep_.cycles[shape_key(g)].add(double(run.cycles), formula);
    }
    if (rep_.run % 100000 == 0) log_ << "cosim dma: " << rep_.run << " vectors, " << rep_.mismatches << " mismatches\n";
  }

  const CosimOptions& o_;
  timing::Params params_;
  std::ostream& log_;
  CosimReport& rep_;
  DmaRtl rtl_;
  std::exception_ptr error_;
};

}  // namespace

CosimReport cosim_dma(const CosimOptions& o, std::ostream& log) {
  const HwConfig hw = load_hw_config(o.hw);
  CosimReport rep;
  sc::quiet_reports();
  Harness h("cosim", o, hw, log, rep);
  sc_core::sc_start();
  if (h.error_) std::rethrow_exception(h.error_);
  rep.rtl_cycles = double(h.rtl_.total_cycles());
  return rep;
}

}  // namespace n3::rtl
