// `n3 cosim --unit gemv`: the RTL GEMV engine against the functional
// simulator's GEMV (sim/exec_gemv.cc, through the numerics core), one job per
// vector (rtl_bridge/gemv_vectors.h), every output compared bit for bit, and
// the engine's cycles against the SystemC model's formula.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iomanip>
#include <sstream>

#include <systemc>

#include "base/error.h"
#include "rtl_bridge/cosim.h"
#include "sim/systemc/npu.h"
#include "rtl_bridge/gemv_rtl.h"
#include "rtl_bridge/gemv_vectors.h"
#include "sim/func_sim.h"

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

// A weight feed with random landing delays: each call waits whole clocks
// while a coin with probability `p` comes up, then the rows are there.
class StallFeed : public WeightFeed {
 public:
  StallFeed(double p, uint64_t seed, sc_core::sc_time clk) : p_(p), rng_(seed), clk_(clk) {}
  void wait_rows(int64_t end) override {
    std::uniform_real_distribution<double> coin(0, 1);
    while (p_ > 0 && coin(rng_) < p_) sc_core::wait(clk_);
    if (end <= landed_) bad_ = "wait_rows(" + std::to_string(end) + ") after " + std::to_string(landed_);
    landed_ = end;
  }
  void consumed_rows(int64_t end) override {
    if (end > landed_ || end <= consumed_)
      bad_ = "consumed_rows(" + std::to_string(end) + ") with " + std::to_string(landed_) + " landed, " +
             std::to_string(consumed_) + " consumed";
    consumed_ = end;
  }
  int64_t landed_ = 0, consumed_ = 0;
  std::string bad_;

 private:
  double p_;
  std::mt19937_64 rng_;
  sc_core::sc_time clk_;
};

struct Harness : sc_core::sc_module {
  SC_HAS_PROCESS(Harness);
  Harness(sc_core::sc_module_name n, const CosimOptions& o, const HwConfig& hw, std::ostream& log, CosimReport& rep)
      : sc_module(n), o_(o), hw_(hw), params_(timing::load_params(hw)), log_(log), rep_(rep), rtl_("gemv", hw, o.vcd) {
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
    const GemvVector g = make_gemv_vector(o_.seed, index, hw_);
    sim::SimOptions so;
    so.formats = g.formats;
    so.caps = {uint64_t(1) << 32, uint64_t(1) << 28, uint64_t(1) << 24};
    isa::Program prog;
    prog.code = {0};
    sim::FuncSim m(prog, so);
    for (const GemvVector::Bytes& b : g.image) m.memory().space(b.space).write(b.addr, b.data.data(), b.data.size());
    sim::Issued in;
    in.def = isa::opcode_def(static_cast<uint32_t>(isa::Opcode::GEMV));
    in.sub = &in.def->subops[static_cast<int>(g.mode)];
    in.word = isa::field_put(0, in.def->fields[in.def->subop_field], static_cast<uint64_t>(g.mode));
    in.views[static_cast<size_t>(isa::field_index(*in.def, "dst"))] = g.dst;
    in.views[static_cast<size_t>(isa::field_index(*in.def, "src"))] = g.src;
    in.views[static_cast<size_t>(isa::field_index(*in.def, "w"))] = g.w;

    // The RTL first (it reads the operands), then the functional core writes dst.
    rtl_.set_formats(g.formats);
    rtl_.set_stalls(g.stall_act, g.stall_w, g.stall_r, uint64_t(index) * 0x9e3779b97f4a7c15ull + o_.seed);
    StallFeed feed(g.stall_feed, uint64_t(index) ^ 0x5bd1e995u, sc_core::sc_time(1e6 / hw_.clocks.core_mhz.value, sc_core::SC_PS));
    const GemvRun run = rtl_.run(in, m.memory(), feed);
    sim::exec_gemv(m, in);

    ++rep_.run;
    ++rep_.classes[g.cls];
    ++rep_.classes[g.kind];
    std::vector<float> want(static_cast<size_t>(g.dst.numel()));
    for (int64_t r = 0; r < g.dst.rows; ++r) sim::read_row(m.memory(), g.dst, r, want.data() + r * g.dst.cols);
    std::vector<float> got = run.out;
    static const bool inject = [] {
      const char* e = std::getenv("N3_COSIM_GEMV_INJECT");
      return e && std::string(e) == "1";
    }();
    if (inject && !got.empty()) {
      const uint32_t u = bits_of(got[0]) ^ 1u;
      std::memcpy(&got[0], &u, 4);
    }
    std::string bad;
    if (!feed.bad_.empty()) bad = "weight feed protocol: " + feed.bad_;
    else if (feed.consumed_ != g.w.rows) bad = "the engine released " + std::to_string(feed.consumed_) + " of " +
                                               std::to_string(g.w.rows) + " w rows";
    for (size_t k = 0; bad.empty() && k < want.size(); ++k)
      if (bits_of(got[k]) != bits_of(want[k]))
        bad = "output " + std::to_string(k) + " (dst[" + std::to_string(int64_t(k) / g.dst.cols) + ", " +
              std::to_string(int64_t(k) % g.dst.cols) + "]): rtl " + hex32(bits_of(got[k])) + " expected " +
              hex32(bits_of(want[k]));
    // Without stalls the engine must keep to its documented cycle formula.
    if (bad.empty() && !g.shape_key.empty() && run.cycles != run.formula_cycles)
      bad = "cycles " + std::to_string(run.cycles) + " differ from the engine's formula " + std::to_string(run.formula_cycles);
    if (!bad.empty()) {
      ++rep_.mismatches;
      if (rep_.first_mismatch_index < 0 || index < rep_.first_mismatch_index) {
        rep_.first_mismatch_index = index;
        std::ostringstream s;
        s << "vector " << index << " (" << g.kind << ", class " << g.cls << ", vectors " << g.shape.vectors << ", rows "
          << g.shape.rows << ", len " << g.shape.len << ", bfp_block " << g.formats.bfp_block << "): " << bad;
        rep_.first_mismatch = s.str();
      }
    }
    static const bool verbose = std::getenv("N3_COSIM_GEMV_VERBOSE") != nullptr;
    if (verbose)
      log_ << "vector " << index << " " << g.kind << " class " << g.cls << " vectors " << g.shape.vectors << " rows "
           << g.shape.rows << " len " << g.shape.len << " block " << g.formats.bfp_block << " rtl "
           << run.cycles << " formula " << run.formula_cycles << " model " << timing::gemv_compute_cycles(params_, g.shape)
           << (g.shape_key.empty() ? " (stalls)" : "") << (bad.empty() ? "" : " MISMATCH") << "\n";
    if (!g.shape_key.empty()) {
      rep_.cycles[g.shape_key].add(double(run.cycles), timing::gemv_compute_cycles(params_, g.shape));
    }
    if (rep_.run % 100000 == 0) log_ << "cosim gemv: " << rep_.run << " vectors, " << rep_.mismatches << " mismatches\n";
  }

  const CosimOptions& o_;
  const HwConfig& hw_;
  timing::Params params_;
  std::ostream& log_;
  CosimReport& rep_;
  GemvRtl rtl_;
  std::exception_ptr error_;
};

}  // namespace

CosimReport cosim_gemv(const CosimOptions& o, std::ostream& log) {
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
