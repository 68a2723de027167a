// `n3 cosim --unit fp`: the floating-point and BFP leaves of the GEMV engine
// (rtl_bridge/rtl/fp/, docs/rtl_fp.md "Floating-point and BFP leaves") against
// the numerics core, bit for bit. Vector i (cosim_fp_vectors.h, drawn from
// vector_rng(seed, i)) holds an input for every leaf; it is driven into the
// Verilated n3_fp_units (all leaves side by side), one SystemC time step
// lets the combinational outputs settle, and each leaf is compared with its
// C++ counterpart:
//   fp_acc_round  num::acc_finish            acc_align  num::acc_align
//   fp_mul        canon(a * b) (x86 SSE)     fp_add     canon(a + b)
//   fp_round_fmt  num::round_to              fp_to_f32  sim::read_row of a one-element view
//   bfp_quant     num::bfp_quantize_block (B = 32)
// Every leaf result that differs counts as a mismatch; the first (lowest
// vector index) is reported as one line with the inputs in hex. The
// environment variable N3_COSIM_FP_INJECT=<leaf> flips the lowest bit of
// that leaf's RTL output before the comparison, to show that a wrong result
// is caught (tests/rtl_fp_test.cc).

// Verilator's SystemC headers expect <systemc.h> (SystemC's names in the
// global namespace) and do not build warning-free with -Wextra: not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <Vn3_fp_units.h>
#include <systemc.h>
#include <verilated.h>
#include <verilated_fst_c.h>
#pragma GCC diagnostic pop

#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/error.h"
#include "golden/numerics/mac.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/cosim_fp_vectors.h"
#include "rtl_bridge/waveform.h"
#include "sim/view.h"

namespace n3::rtl {
namespace {

using namespace n3::rtl::fp;  // Vec, Leaf, kLeafName, kB, draw

struct Out {
  uint32_t ar_y = 0;
  int64_t al_y = 0;
  uint32_t mul_y = 0, add_y = 0, rf_y = 0, cv_y = 0;
  int16_t bq_exp = 0;
  std::array<int16_t, kB> bq_mant{};
};

// ---- the C++ side ----

// The simulator's read path for one stored element (sim::read_row of a
// one-element view of dtype f32 / bf16 / f16).
class ReadPath {
 public:
  ReadPath() : mem_(sim::Capacities{0, 64, 0}) {
    v_.slot = 1;
    v_.d.space = isa::Space::L2;
    v_.d.rows = 1;
    v_.d.cols = 1;
    v_.d.row_stride = 4;
    v_.rows = 1;
    v_.cols = 1;
  }
  uint32_t operator()(uint32_t bits, int fmt) {
    v_.d.dtype = fmt == 1 ? isa::Dtype::BF16 : fmt == 2 ? isa::Dtype::F16 : isa::Dtype::F32;
    mem_.space(isa::Space::L2).write(0, &bits, 4);  // little-endian: a 16-bit element is the low half
    float y = 0;
    sim::read_row(mem_, v_, 0, &y);
    return num::f2u(y);
  }

 private:
  sim::Memory mem_;
  sim::View v_;
};

Out expect(const Vec& v, ReadPath& read) {
  Out o;
  o.ar_y = num::f2u(num::acc_finish(v.ar_acc, v.ar_e_top, num::u2f(v.ar_scale), static_cast<num::Fmt>(v.ar_fmt)));
  o.al_y = num::acc_align(v.al_p, v.al_x, v.al_e_top);
  o.mul_y = num::f2u(num::canon(num::u2f(v.mul_a) * num::u2f(v.mul_b)));
  o.add_y = num::f2u(num::canon(num::u2f(v.add_a) + num::u2f(v.add_b)));
  o.rf_y = num::f2u(num::round_to(static_cast<num::Fmt>(v.rf_fmt), num::u2f(v.rf_x)));
  o.cv_y = read(v.cv_bits, v.cv_fmt);
  float x[kB];
  for (int i = 0; i < kB; ++i) x[i] = num::u2f(v.bq_x[static_cast<size_t>(i)]);
  int16_t mant[kB];
  o.bq_exp = static_cast<int16_t>(num::bfp_quantize_block(x, v.bq_cnt, kB, v.bq_mbits, mant));
  for (int i = 0; i < kB; ++i) o.bq_mant[static_cast<size_t>(i)] = mant[i];
  return o;
}

bool same(Leaf l, const Out& a, const Out& b) {
  switch (l) {
    case kAccRound:
      return a.ar_y == b.ar_y;
    case kAccAlign:
      return a.al_y == b.al_y;
    case kMul:
      return a.mul_y == b.mul_y;
    case kAdd:
      return a.add_y == b.add_y;
    case kRoundFmt:
      return a.rf_y == b.rf_y;
    case kToF32:
      return a.cv_y == b.cv_y;
    default:
      return a.bq_exp == b.bq_exp && a.bq_mant == b.bq_mant;
  }
}

std::string hex(uint64_t v, int digits) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%0*" PRIx64, digits, v);
  return b;
}

std::string inputs_of(Leaf l, const Vec& v) {
  switch (l) {
    case kAccRound:
      return "acc=" + hex(static_cast<uint64_t>(v.ar_acc), 16) + " e_top=" + std::to_string(v.ar_e_top) + " (" +
             hex(static_cast<uint16_t>(v.ar_e_top), 4) + ") scale=" + hex(v.ar_scale, 8) +
             " fmt=" + std::to_string(v.ar_fmt);
    case kAccAlign:
      return "p=" + hex(static_cast<uint64_t>(v.al_p), 16) + " x=" + std::to_string(v.al_x) +
             " e_top=" + std::to_string(v.al_e_top);
    case kMul:
      return "a=" + hex(v.mul_a, 8) + " b=" + hex(v.mul_b, 8);
    case kAdd:
      return "a=" + hex(v.add_a, 8) + " b=" + hex(v.add_b, 8);
    case kRoundFmt:
      return "x=" + hex(v.rf_x, 8) + " fmt=" + std::to_string(v.rf_fmt);
    case kToF32:
      return "bits=" + hex(v.cv_bits, 8) + " fmt=" + std::to_string(v.cv_fmt);
    default: {
      std::string s = "cnt=" + std::to_string(v.bq_cnt) + " mbits=" + std::to_string(v.bq_mbits) + " x=[";
      for (int i = 0; i < kB; ++i) s += (i ? "," : "") + hex(v.bq_x[static_cast<size_t>(i)], 8).substr(2);
      return s + "]";
    }
  }
}

std::string outputs_of(Leaf l, const Out& o) {
  switch (l) {
    case kAccRound:
      return hex(o.ar_y, 8);
    case kAccAlign:
      return hex(static_cast<uint64_t>(o.al_y), 16);
    case kMul:
      return hex(o.mul_y, 8);
    case kAdd:
      return hex(o.add_y, 8);
    case kRoundFmt:
      return hex(o.rf_y, 8);
    case kToF32:
      return hex(o.cv_y, 8);
    default: {
      std::string s = "exp_q=" + std::to_string(o.bq_exp) + " mant=[";
      for (int i = 0; i < kB; ++i)
        s += (i ? "," : "") + hex(static_cast<uint16_t>(o.bq_mant[static_cast<size_t>(i)]), 4).substr(2);
      return s + "]";
    }
  }
}

// ---- the RTL side ----

// n3_fp_units with a signal on every port. SystemC allows one elaboration
// per process: `n3 cosim` runs one unit and exits.
struct Bench {
  sc_core::sc_signal<uint64_t> ar_acc{"ar_acc"}, al_p{"al_p"}, al_y{"al_y"};
  sc_core::sc_signal<uint32_t> ar_e_top{"ar_e_top"}, ar_scale{"ar_scale"}, ar_fmt{"ar_fmt"}, ar_y{"ar_y"};
  sc_core::sc_signal<uint32_t> al_x{"al_x"}, al_e_top{"al_e_top"};
  sc_core::sc_signal<uint32_t> mul_a{"mul_a"}, mul_b{"mul_b"}, mul_y{"mul_y"};
  sc_core::sc_signal<uint32_t> add_a{"add_a"}, add_b{"add_b"}, add_y{"add_y"};
  sc_core::sc_signal<uint32_t> rf_x{"rf_x"}, rf_fmt{"rf_fmt"}, rf_y{"rf_y"};
  sc_core::sc_signal<uint32_t> cv_bits{"cv_bits"}, cv_fmt{"cv_fmt"}, cv_y{"cv_y"};
  sc_core::sc_signal<sc_dt::sc_bv<kB * 32>> bq_x{"bq_x"};
  sc_core::sc_signal<uint32_t> bq_cnt{"bq_cnt"}, bq_mbits{"bq_mbits"}, bq_exp_q{"bq_exp_q"};
  sc_core::sc_signal<sc_dt::sc_bv<kB * 16>> bq_mant{"bq_mant"};
  Vn3_fp_units top{"n3_fp_units"};

  Bench() {
    top.ar_acc(ar_acc);
    top.ar_e_top(ar_e_top);
    top.ar_scale(ar_scale);
    top.ar_fmt(ar_fmt);
    top.ar_y(ar_y);
    top.al_p(al_p);
    top.al_x(al_x);
    top.al_e_top(al_e_top);
    top.al_y(al_y);
    top.mul_a(mul_a);
    top.mul_b(mul_b);
    top.mul_y(mul_y);
    top.add_a(add_a);
    top.add_b(add_b);
    top.add_y(add_y);
    top.rf_x(rf_x);
    top.rf_fmt(rf_fmt);
    top.rf_y(rf_y);
    top.cv_bits(cv_bits);
    top.cv_fmt(cv_fmt);
    top.cv_y(cv_y);
    top.bq_x(bq_x);
    top.bq_cnt(bq_cnt);
    top.bq_mbits(bq_mbits);
    top.bq_exp_q(bq_exp_q);
    top.bq_mant(bq_mant);
  }

  // Drives one vector, lets the combinational logic settle, reads the outputs.
  Out run(const Vec& v) {
    ar_acc.write(static_cast<uint64_t>(v.ar_acc));
    ar_e_top.write(static_cast<uint16_t>(v.ar_e_top));
    ar_scale.write(v.ar_scale);
    ar_fmt.write(static_cast<uint32_t>(v.ar_fmt));
    al_p.write(static_cast<uint64_t>(v.al_p));
    al_x.write(static_cast<uint16_t>(v.al_x));
    al_e_top.write(static_cast<uint16_t>(v.al_e_top));
    mul_a.write(v.mul_a);
    mul_b.write(v.mul_b);
    add_a.write(v.add_a);
    add_b.write(v.add_b);
    rf_x.write(v.rf_x);
    rf_fmt.write(static_cast<uint32_t>(v.rf_fmt));
    cv_bits.write(v.cv_bits);
    cv_fmt.write(static_cast<uint32_t>(v.cv_fmt));
    sc_dt::sc_bv<kB * 32> x;
    for (int i = 0; i < kB; ++i) x.set_word(i, v.bq_x[static_cast<size_t>(i)]);
    bq_x.write(x);
    bq_cnt.write(static_cast<uint32_t>(v.bq_cnt));
    bq_mbits.write(static_cast<uint32_t>(v.bq_mbits));
    sc_core::sc_start(1, sc_core::SC_NS);
    Out o;
    o.ar_y = ar_y.read();
    o.al_y = static_cast<int64_t>(al_y.read());
    o.mul_y = mul_y.read();
    o.add_y = add_y.read();
    o.rf_y = rf_y.read();
    o.cv_y = cv_y.read();
    o.bq_exp = static_cast<int16_t>(bq_exp_q.read() & 0xffffu);
    const sc_dt::sc_bv<kB* 16>& m = bq_mant.read();
    for (int i = 0; i < kB; ++i)
      o.bq_mant[static_cast<size_t>(i)] = static_cast<int16_t>((m.get_word(i / 2) >> (16 * (i % 2))) & 0xffffu);
    return o;
  }
};

// N3_COSIM_FP_INJECT=<leaf>: flip the lowest bit of that leaf's RTL output.
int inject_leaf() {
  const char* e = std::getenv("N3_COSIM_FP_INJECT");
  if (!e || !*e) return -1;
  std::string names;
  for (int l = 0; l < kLeaves; ++l) {
    if (kLeafName[l] == std::string(e)) return l;
    names += std::string(l ? ", " : "") + kLeafName[l];
  }
  throw Error("N3_COSIM_FP_INJECT must name a leaf of the fp unit (" + names + "), is '" + e + "'");
}

void flip(int leaf, Out& o) {
  switch (leaf) {
    case kAccRound:
      o.ar_y ^= 1;
      break;
    case kAccAlign:
      o.al_y ^= 1;
      break;
    case kMul:
      o.mul_y ^= 1;
      break;
    case kAdd:
      o.add_y ^= 1;
      break;
    case kRoundFmt:
      o.rf_y ^= 1;
      break;
    case kToF32:
      o.cv_y ^= 1;
      break;
    case kBfpQuant:
      o.bq_exp = static_cast<int16_t>(o.bq_exp ^ 1);
      break;
    default:
      break;
  }
}

}  // namespace

CosimReport cosim_fp(const CosimOptions& o, std::ostream& log) {
  static bool elaborated = false;
  require(!elaborated, "n3 cosim --unit fp: SystemC elaborates once per process (run one unit per n3 cosim)");
  elaborated = true;
  const int inject = inject_leaf();
  Waveform wave(o.vcd);  // before the model: it turns Verilator's tracing on
  auto bench = std::make_unique<Bench>();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  wave.open([&](VerilatedFstC* f) { bench->top.trace(f, 99); });

  CosimReport r;
  ReadPath read;
  const std::vector<int64_t> idx = shard_indices(o);
  log << "cosim fp: " << idx.size() << " vectors (shard " << o.shard << "/" << o.shards << ", seed " << o.seed << ")"
      << (inject >= 0 ? std::string(", injecting a wrong bit into ") + kLeafName[inject] : std::string()) << "\n";
  const size_t step = idx.size() >= 200000 ? idx.size() / 10 : 0;
  for (size_t n = 0; n < idx.size(); ++n) {
    const int64_t i = idx[n];
    std::mt19937_64 rng = vector_rng(o.seed, i);
    const Vec v = draw(rng);
    Out got = bench->run(v);
    if (inject >= 0) flip(inject, got);
    const Out want = expect(v, read);
    for (int l = 0; l < kLeaves; ++l) {
      const Leaf leaf = static_cast<Leaf>(l);
      ++r.classes[std::string(kLeafName[l]) + "." + v.cls[static_cast<size_t>(l)]];
      if (same(leaf, got, want)) continue;
      if (r.mismatches++ == 0) {
        r.first_mismatch_index = i;
        r.first_mismatch = "vector " + std::to_string(i) + ": " + kLeafName[l] + " (" + v.cls[static_cast<size_t>(l)] +
                           "): " + inputs_of(leaf, v) + ": rtl " + outputs_of(leaf, got) + ", expected " +
                           outputs_of(leaf, want);
        log << "cosim fp: first mismatch: " << r.first_mismatch << "\n";
      }
    }
    ++r.run;
    if (step && (n + 1) % step == 0)
      log << "cosim fp: " << (n + 1) << "/" << idx.size() << " vectors, " << r.mismatches << " mismatches\n";
  }
  wave.close();
  bench->top.final();
  return r;
}

}  // namespace n3::rtl
