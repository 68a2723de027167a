#include "rtl_bridge/sfu_unit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "golden/numerics/ops.h"
#include "isa/verify.h"
#include "rtl_bridge/compare_histogram.h"
#include "rtl_bridge/sfu_rtl.h"
#include "rtl_bridge/sfu_vectors.h"
#include "sim/systemc/engines.h"

namespace n3::rtl {

std::vector<SfuInsnRecord>& sfu_rtl_records() {
  static std::vector<SfuInsnRecord>* r = new std::vector<SfuInsnRecord>;  // lives to exit, like the model
  return *r;
}

std::map<std::string, int64_t>& sfu_model_only() {
  static std::map<std::string, int64_t>* m = new std::map<std::string, int64_t>;
  return *m;
}

namespace {

using isa::CvoFunc;

std::string view_text(const sim::View& v) {
  return "[" + std::to_string(v.rows) + "," + std::to_string(v.cols) + "] " + isa::dtype_text(v.d.dtype);
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Whether the RTL has the function: the list `n3 cosim --unit sfu` checks
// (one list, so the bridge never runs a function the cosim does not cover).
bool on_rtl(CvoFunc f) { return std::find(kSfuFuncs, kSfuFuncs + kNumSfuFuncs, f) != kSfuFuncs + kNumSfuFuncs; }

class RtlSfuUnit : public sc::SfuUnit {
 public:
  RtlSfuUnit(sc_core::sc_module_name n, sc::Context& c, const HwConfig& hw, const std::string& vcd,
             int64_t vcd_instructions)
      : sc::SfuUnit(n, c), rtl_("rtl", hw, vcd), shadow_(*this, 4, "rtl sfu") {
    rtl_.waveform().stop_after(vcd_instructions);
  }

 protected:
  void before_exec(const sim::Issued& in) override {
    if (!on_rtl(func(in))) return;
    // What the unit reads, and dst as it was (MAC adds to it).
    for (const char* f : {"a", "b", "dst"}) shadow_.load(c_.sim->memory(), in.op(f), in.pc);
  }

  Timed model(const sim::Issued& in) override {
    const CvoFunc f = func(in);
    if (!on_rtl(f)) {
      // Not in the RTL yet: the model's timing, the functional core's bits.
      ++sfu_model_only()[sfu_func_name(f)];
      return sc::SfuUnit::model(in);
    }
    const timing::Params& p = c_.p;
    const double now = c_.now_ps(), clk = p.core_ps();
    c_.sfu_work += static_cast<uint64_t>(timing::sfu_work(p, in));
    // The operands' traffic, booked as SfuUnit::model books it.
    const double setup = double(p.timing.sfu_setup_cycles.value) * clk;
    const int64_t ports = p.timing.dma_hp_ports.value;
    double mem_end = now;
    for (const char* op : {"a", "b"}) mem_end = std::max(mem_end, move(in.op(op), false, now + setup, ports));
    mem_end = std::max(mem_end, move(in.op("dst"), true, now + setup, ports));

    std::vector<SfuElem> elems;
    std::vector<int64_t> rows;
    operands(in, f, &elems, &rows);
    const sim::View& y = in.op("dst");
    // The command's k: the instruction's constant (SCALE / ADDK / MAXK's,
    // RMSNORM's eps, GTOPK's mult, SOFTCAP's cap, MAGMATCH's floor), or for
    // ROPE a's cols d, the descriptor's extent as the control decodes it
    // (the unit needs d/2 before a row ends: rtl/sfu/n3_sfu.sv). Nothing
    // derived: the 1/n of RMS and the row operators the unit forms from
    // its own count of each row's elements.
    const sim::View& a = in.op("a");
    const uint32_t k = sfu_reads_k(f) || f == CvoFunc::RMSNORM || f == CvoFunc::GTOPK || f == CvoFunc::SOFTCAP ||
                               f == CvoFunc::MAGMATCH
                           ? bits_of(in.kf32())
                       : f == CvoFunc::ROPE ? static_cast<uint32_t>(a.cols)
                                            : 0u;
    c_.wait_until(now + setup);
    const double t0 = c_.now_ps();
    std::vector<uint32_t> out;
    rtl_.run(f, k, y.fmt(), elems, out, rows, f == CvoFunc::RMSNORM && in.op("b").present());
    rtl_.waveform().instruction_done();
    // The driver samples the unit at falling edges: the last result was
    // out at the rising edge half a clock before (as the GEMV bridge counts).
    const double rtl_end = c_.now_ps() - 0.5 * clk;
    require(int64_t(out.size()) == y.numel(), "rtl sfu: " + std::to_string(out.size()) + " results for dst " +
                                                  view_text(y));

    // The results (already in dst's format) into the shadow's dst, checked
    // against the functional core's, then through the debug transport.
    std::vector<float> row(static_cast<size_t>(y.cols));
    for (int64_t r = 0; r < y.rows; ++r) {
      for (int64_t c = 0; c < y.cols; ++c) row[size_t(c)] = float_of(out[size_t(r * y.cols + c)]);
      sim::write_row(shadow_.memory(), y, r, row.data());
    }
    inject(y);
    compare(in);
    shadow_.store(y, in.pc);

    SfuInsnRecord rec;
    rec.pc = in.pc;
    rec.dyn = in.dyn;
    rec.func = sfu_func_name(f);
    rec.what = rec.func + " " + view_text(in.op("a")) + " -> " + view_text(y);
    rec.rtl_cycles = (rtl_end - t0) / clk;
    rec.model_cycles = timing::sfu_cycles(p, in);
    rec.results = y.numel();
    sfu_rtl_records().push_back(rec);
    static const bool trace = std::getenv("N3_RTL_SFU_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "rtl sfu: #%llu pc %u %s: rtl %.2f, model %.2f (work %lld)\n",
                   static_cast<unsigned long long>(rec.dyn), rec.pc, rec.what.c_str(), rec.rtl_cycles,
                   rec.model_cycles, static_cast<long long>(timing::sfu_work(p, in)));
    return {std::max(rtl_end, mem_end), setup + (rtl_end - t0)};
  }

 private:
  static CvoFunc func(const sim::Issued& in) { return static_cast<CvoFunc>(in.sub->value); }

  // The elements the unit takes, from the shadow: element-wise functions
  // one per dst element, a and b broadcast to dst's shape (the functional
  // core has trapped on shapes that do not broadcast); a reduction a's rows.
  void operands(const sim::Issued& in, CvoFunc f, std::vector<SfuElem>* elems, std::vector<int64_t>* rows) {
    const sim::View &y = in.op("dst"), &a = in.op("a"), &b = in.op("b");
    auto load = [&](const sim::View& v) {
      std::vector<float> x(static_cast<size_t>(v.present() ? v.numel() : 0));
      for (int64_t r = 0; v.present() && r < v.rows; ++r) sim::read_row(shadow_.memory(), v, r, x.data() + r * v.cols);
      return x;
    };
    const std::vector<float> xa = load(a);
    if (sfu_is_reduction(f)) {
      for (float x : xa) elems->push_back({bits_of(x), 0, 0});
      rows->assign(size_t(a.rows), a.cols);
      return;
    }
    if (sfu_is_rowop(f)) {
      // a's rows (the functional core has trapped on shapes exec_sfu refuses);
      // b: RMSNORM's weight ([1, cols] or a's shape), MAGMATCH's target
      // ([rows, 1] or [1, 1]), ROPE's angles [T, d/2] (a row of angles for
      // each of its H = a.rows / T heads) with the pair's other element.
      const std::vector<float> xb = load(b);
      const int64_t half = a.cols / 2, heads = f == CvoFunc::ROPE ? a.rows / b.rows : 1;
      elems->reserve(size_t(a.numel()));
      for (int64_t r = 0; r < a.rows; ++r)
        for (int64_t c = 0; c < a.cols; ++c) {
          SfuElem e;
          e.a = bits_of(xa[size_t(r * a.cols + c)]);
          if (f == CvoFunc::ROPE) {
            e.b = bits_of(xa[size_t(r * a.cols + (c + half) % a.cols)]);
            e.c = bits_of(xb[size_t((r / heads) * b.cols + c % half)]);
          } else if (f == CvoFunc::RMSNORM && b.present()) {
            e.b = bits_of(xb[size_t((b.rows == 1 ? 0 : r) * b.cols + c)]);
          } else if (f == CvoFunc::MAGMATCH) {
            e.b = bits_of(xb[size_t(b.rows == 1 ? 0 : r)]);
          }
          elems->push_back(e);
        }
      // SOFTCAP is element-wise; the others stream rows.
      if (f != CvoFunc::SOFTCAP) rows->assign(size_t(a.rows), a.cols);
      return;
    }
    const bool two = sfu_reads_b(f);
    const std::vector<float> xb = two ? load(b) : std::vector<float>();
    const std::vector<float> xc = f == CvoFunc::MAC ? load(y) : std::vector<float>();
    auto at = [](const std::vector<float>& x, const sim::View& v, int64_t r, int64_t c) {
      return x[size_t((v.rows == 1 ? 0 : r) * v.cols + (v.cols == 1 ? 0 : c))];
    };
    elems->reserve(size_t(y.numel()));
    for (int64_t r = 0; r < y.rows; ++r)
      for (int64_t c = 0; c < y.cols; ++c) {
        SfuElem e;
        e.a = bits_of(two ? at(xa, a, r, c) : xa[size_t(r * a.cols + c)]);
        if (two) e.b = bits_of(at(xb, b, r, c));
        if (f == CvoFunc::MAC) e.c = bits_of(xc[size_t(r * y.cols + c)]);
        elems->push_back(e);
      }
  }

  // N3_RTL_SFU_INJECT=k flips the lowest bit of dst's first byte after the
  // k-th CVO (from 0) the RTL runs in this process, so a test can show that
  // a difference is caught and reported.
  void inject(const sim::View& y) {
    static const char* k = std::getenv("N3_RTL_SFU_INJECT");
    if (!k || !y.present() || int64_t(sfu_rtl_records().size()) != std::atoll(k)) return;
    sim::SpaceMemory& m = shadow_.memory().space(y.d.space);
    uint8_t v;
    m.read(y.row_addr(0), &v, 1);
    v ^= 1u;
    m.write(y.row_addr(0), &v, 1);
  }

  // dst's bytes, row by row, against the functional core's.
  void compare(const sim::Issued& in) {
    const sim::View& y = in.op("dst");
    const sim::Memory& ref = c_.sim->memory();
    std::vector<uint8_t> got(size_t(y.row_bytes())), want(size_t(y.row_bytes()));
    for (int64_t r = 0; r < y.rows; ++r) {
      sim::read_row_bytes(shadow_.memory(), y, r, got.data());
      sim::read_row_bytes(ref, y, r, want.data());
      const auto d = std::mismatch(got.begin(), got.end(), want.begin());
      if (d.first == got.end()) continue;
      const int64_t byte = d.first - got.begin(), c = byte * 8 / isa::dtype_bits(y.d.dtype);
      std::string name = c_.sim->program().name_of(isa::SymKind::Desc, y.slot);
      if (name.empty()) name = "desc " + std::to_string(y.slot);
      char buf[200];
      std::snprintf(buf, sizeof buf, "element [%lld, %lld] (byte %lld of the row): rtl 0x%02x, functional 0x%02x",
                    static_cast<long long>(r), static_cast<long long>(c), static_cast<long long>(byte), *d.first,
                    *d.second);
      throw SfuMismatch("rtl sfu: instruction " + std::to_string(in.pc) + " (" + isa::mnemonic(*in.def, *in.sub) +
                        ", dynamic #" + std::to_string(in.dyn) + "), dst '" + name + "' " + view_text(y) + ", " + buf);
    }
  }

  SfuRtl rtl_;
  Shadow shadow_;
};

}  // namespace

void use_rtl_sfu(sc::RunOptions* o, const HwConfig& hw, const std::string& vcd, int64_t vcd_instructions) {
  const HwConfig h = hw;
  o->sfu_unit.make = [h, vcd, vcd_instructions](sc_core::sc_module_name n,
                                                sc::Context& c) -> std::unique_ptr<sc::SfuUnit> {
    return std::make_unique<RtlSfuUnit>(n, c, h, vcd, vcd_instructions);
  };
  o->sfu_unit.name = "rtl";
}

void print_sfu_comparison(const std::vector<SfuInsnRecord>& recs, const std::map<std::string, int64_t>& model_only,
                          std::FILE* out) {
  std::map<std::string, int64_t> on;
  for (const SfuInsnRecord& r : recs) ++on[r.func];
  std::string list;
  for (const auto& [f, n] : on) list += (list.empty() ? "" : ", ") + f + " " + std::to_string(n);
  int64_t left = 0;
  std::string off;
  for (const auto& [f, n] : model_only) {
    left += n;
    off += (off.empty() ? "" : ", ") + f + " " + std::to_string(n);
  }
  if (recs.empty()) {
    std::fprintf(out, "rtl sfu: no CVO instructions ran on the RTL\n");
  } else {
    CompareHistogram hist({0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5}, CompareHistogram::Labels::Short);
    double rtl = 0, model = 0, worst = -1;
    int64_t within = 0, results = 0, slower = 0;
    const SfuInsnRecord* w = nullptr;
    for (const SfuInsnRecord& r : recs) {
      const double e = hist.add(r.rtl_cycles, r.model_cycles);
      within += e <= 0.02;
      slower += r.rtl_cycles > r.model_cycles + 1e-6;  // (the RTL's clocks come from ps: float noise)
      rtl += r.rtl_cycles;
      model += r.model_cycles;
      results += r.results;
      if (e > worst) worst = e, w = &r;
    }
    std::fprintf(out, "rtl sfu: %zu instructions on the RTL, compared bit for bit (%lld dst elements): %s\n",
                 recs.size(), static_cast<long long>(results), list.c_str());
    std::fprintf(out, "rtl sfu: RTL %.0f cycles, model %.0f cycles (%+.3f%%; the unit's clocks after its setup)\n", rtl,
                 model, rtl > 0 ? 100.0 * (model - rtl) / rtl : 0.0);
    std::fprintf(out, "rtl sfu: per-instruction |model - rtl| / rtl:\n");
    hist.print(out);
    std::fprintf(out, "rtl sfu: %lld within 2%%, %lld beyond; RTL slower than the model on %lld\n",
                 static_cast<long long>(within), static_cast<long long>(int64_t(recs.size()) - within),
                 static_cast<long long>(slower));
    std::fprintf(out, "rtl sfu: worst %.3f%%: instruction %u (%s, dynamic #%llu): rtl %.1f, model %.1f cycles\n",
                 100.0 * worst, w->pc, w->what.c_str(), static_cast<unsigned long long>(w->dyn), w->rtl_cycles,
                 w->model_cycles);
  }
  if (left)
    std::fprintf(out, "rtl sfu: %lld instructions NOT on the RTL (functions it lacks; timed by the model, results the "
                      "functional core's, unchecked): %s\n",
                 static_cast<long long>(left), off.c_str());
  else
    std::fprintf(out, "rtl sfu: every CVO instruction ran on the RTL\n");
}

}  // namespace n3::rtl
