// `n3 cosim --unit gemm`: the RTL GEMM engine (rtl/gemm/) against the
// functional simulator's gemm.mv (sim/exec_gemv.cc, through the numerics
// core), one instruction per vector (the GEMV generator's MV jobs with
// GemmDraw: T and N ragged around the array), every output compared bit
// for bit, and the engine's cycles against the SystemC model's GEMM formula
// (timing::gemm_cycles, as MacUnit::model charges it) with the weights on chip.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>

#include <systemc>

#include "base/error.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/gemm_rtl.h"
#include "rtl_bridge/gemv_vectors.h"
#include "sim/func_sim.h"
#include "sim/systemc/timing.h"
#include "sim/systemc/npu.h"

namespace n3::rtl {

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::string hex32(uint32_t u) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", u);
  return b;
}

struct Harness : sc_core::sc_module {
  SC_HAS_PROCESS(Harness);
  Harness(sc_core::sc_module_name n, const CosimOptions& o, const HwConfig& hw, std::ostream& log, CosimReport& rep)
      : sc_module(n), o_(o), hw_(hw), log_(log), rep_(rep), rtl_("gemm", hw, o.vcd) {
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

  // The SystemC model's GEMM cycles (MacUnit::model, weights on chip:
  // timing::gemm_cycles) less its activation stream, on the hardware file
  // the RTL was built as (gemm_rtl_array() is checked against it).
  double model_cycles(int64_t T, int64_t K, int64_t N, int act_bytes, int block) const {
    const timing::GemmCycles m = timing::gemm_cycles(hw_, T, K, N, act_bytes, block);
    return m.total() - m.act;
  }

  void one(int64_t index) {
    const GemmArray arr = gemm_rtl_array();
    const GemmDraw draw{arr.rows, arr.cols, arr.macs_per_pe};
    const GemvVector g = make_gemv_vector(o_.seed, index, hw_, &draw);
    sim::SimOptions so;
    so.formats = g.formats;
    so.caps = {uint64_t(1) << 32, uint64_t(1) << 28, uint64_t(1) << 24};
    isa::Program prog;
    prog.code = {0};
    sim::FuncSim m(prog, so);
    for (const GemvVector::Bytes& b : g.image) m.memory().space(b.space).write(b.addr, b.data.data(), b.data.size());
    sim::Issued in;
    in.def = isa::opcode_def(static_cast<uint32_t>(isa::Opcode::GEMM));
    in.sub = &in.def->subops[static_cast<int>(isa::GemvMode::MV)];
    in.word = isa::field_put(0, in.def->fields[in.def->subop_field], static_cast<uint64_t>(isa::GemvMode::MV));
    in.views[static_cast<size_t>(isa::field_index(*in.def, "dst"))] = g.dst;
    in.views[static_cast<size_t>(isa::field_index(*in.def, "src"))] = g.src;
    in.views[static_cast<size_t>(isa::field_index(*in.def, "w"))] = g.w;

    // The RTL first (it reads the operands), then the functional core writes dst.
    rtl_.set_formats(g.formats);
    const bool stalls = g.shape_key.empty();
    rtl_.set_stalls(g.stall_act, g.stall_w, g.stall_r, uint64_t(index) * 0x9e3779b97f4a7c15ull + o_.seed);
    const GemmRun run = rtl_.run(in, m.memory());
    sim::exec_gemv(m, in);

    const int64_t T = g.src.rows, K = g.src.cols, N = g.w.rows;
    ++rep_.run;
    ++rep_.classes[g.cls];
    ++rep_.classes[g.kind];
    std::vector<float> want(static_cast<size_t>(g.dst.numel()));
    for (int64_t r = 0; r < g.dst.rows; ++r) sim::read_row(m.memory(), g.dst, r, want.data() + r * g.dst.cols);
    std::vector<float> got = run.out;
    static const bool inject = [] {
      const char* e = std::getenv("N3_COSIM_GEMM_INJECT");
      return e && std::string(e) == "1";
    }();
    if (inject && !got.empty()) {
      const uint32_t u = bits_of(got[0]) ^ 1u;
      std::memcpy(&got[0], &u, 4);
    }
    std::string bad;
    for (size_t k = 0; bad.empty() && k < want.size(); ++k)
      if (bits_of(got[k]) != bits_of(want[k]))
        bad = "output " + std::to_string(k) + " (dst[" + std::to_string(int64_t(k) / N) + ", " +
              std::to_string(int64_t(k) % N) + "]): rtl " + hex32(bits_of(got[k])) + " expected " + hex32(bits_of(want[k]));
    // Without stalls the engine must keep to its documented cycle formula.
    if (bad.empty() && !stalls && run.cycles != run.formula_cycles)
      bad = "cycles " + std::to_string(run.cycles) + " differ from the engine's formula " + std::to_string(run.formula_cycles);
    if (!bad.empty()) {
      ++rep_.mismatches;
      if (rep_.first_mismatch_index < 0 || index < rep_.first_mismatch_index) {
        rep_.first_mismatch_index = index;
        std::ostringstream s;
        s << "vector " << index << " (" << g.kind << ", class " << g.cls << ", T " << T << ", K " << K << ", N " << N
          << ", bfp_block " << g.formats.bfp_block << "): " << bad;
        rep_.first_mismatch = s.str();
      }
    }
    const double model = model_cycles(T, K, N, g.src.d.dtype == isa::Dtype::F32 ? 4 : 2, g.formats.bfp_block);
    static const bool verbose = std::getenv("N3_COSIM_GEMM_VERBOSE") != nullptr;
    if (verbose)
      log_ << "vector " << index << " " << g.kind << " class " << g.cls << " T " << T << " K " << K << " N " << N
           << " block " << g.formats.bfp_block << " rtl " << run.cycles << " (array " << run.cycles - run.act_cycles << ") formula " << run.formula_cycles << " model "
           << model << (stalls ? " (stalls)" : "") << (bad.empty() ? "" : " MISMATCH") << "\n";
    if (!stalls) {
      // Shape classes of the cycle table: against the array (a tile's T
      // tokens cover its ROWS-clock weight load or not; whole or ragged tiles).
      std::string key = g.shape_key;
      if (g.cls != "large") {
        const bool whole = N % arr.cols == 0 && K % (arr.rows * arr.macs_per_pe) == 0;
        key = std::string(T > arr.rows ? "T>rows" : "T<=rows") + (whole ? " whole tiles" : " ragged");
      }
      // The model's formula is the array's part: the activations' L2 read
      // is modelled apart (MacUnit::model: the MACs start once src is in).
      rep_.cycles[key].add(double(run.cycles - run.act_cycles), model);
    }
    if (rep_.run % 100000 == 0) log_ << "cosim gemm: " << rep_.run << " vectors, " << rep_.mismatches << " mismatches\n";
  }

  const CosimOptions& o_;
  const HwConfig& hw_;
  std::ostream& log_;
  CosimReport& rep_;
  GemmRtl rtl_;
  std::exception_ptr error_;
};

}  // namespace

CosimReport cosim_gemm(const CosimOptions& o, std::ostream& log) {
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
