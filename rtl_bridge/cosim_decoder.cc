// `n3 cosim --unit decoder` (docs/rtl_decoder.md, "Instruction decoder"): the
// Verilated n3_decoder (rtl/decoder/) against the C++ ISA (isa/isa.h:
// check_word, def_of, subop_of, field_raw / field_signed), word by word.
//
// Vectors. The encoding classes come from the C++ table: for every opcode and
// sub-function a legal word, each reserved-bit region and each field the
// sub-function leaves unused set, each reserved value of each enum field, the
// own engine's wait and signal bit; each reserved sub-function value of each
// opcode; each reserved opcode. Vector i < (number of those variants) is
// variant i with random filler, so the first few hundred indices cover every
// class; later vectors mix variants again with random 64-bit words, random
// legal words and legal words with a few bits flipped (which combine
// problems and so check the precedence). Vector i depends only on
// vector_rng(seed, i).
//
// The bench streams the words through the RTL with valid / ready stalls on
// both sides. Segments of kSegment vectors alternate between streaming (no
// stall on either side: the throughput measurement) and random stalls (the
// back-pressure check); the harness reads every output on the clock edge it
// is transferred and compares it with the C++ decode of the word it expects
// next, so a lost, repeated or reordered word is a mismatch too.
#include <systemc>
#include <verilated.h>
#include <verilated_fst_c.h>
// Verilator's model of rtl/decoder/ (n3_rtl_models, in the build tree): a
// tool's output on the include path, as verilated.h, not a repository file.
#include <Vn3_decoder.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <type_traits>

#include "base/error.h"
#include "golden/hw_config.h"
#include "isa/isa.h"
#include "rtl_bridge/cosim.h"
#include "rtl_bridge/decoder_outputs.h"
#include "rtl_bridge/waveform.h"

namespace n3::rtl {
namespace {

using isa::FieldDef;
using isa::OpcodeDef;
using isa::SubopDef;
using Rng = std::mt19937_64;

// ---- the encoding classes ----------------------------------------------------

enum class Kind : uint8_t {
  Legal,
  ReservedBits,
  ReservedEnum,
  OwnWait,
  OwnSignal,
  ReservedSubop,
  Combined,
  ReservedOpcode
};

struct Variant {
  std::string cls;  // the class counted in the report: "gemv.mv/reserved_bits"
  Kind kind = Kind::Legal;
  const OpcodeDef* d = nullptr;
  const SubopDef* s = nullptr;
  uint64_t mask = 0;   // ReservedBits: the bits of the region or unused field
  int field = -1;      // ReservedEnum: index into d->fields (ReservedSubop: the sub-function field)
  uint64_t value = 0;  // ReservedEnum / ReservedSubop: the reserved value; ReservedOpcode: the opcode
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

uint64_t field_values(const FieldDef& f) { return uint64_t(1) << f.width; }  // enum fields: at most 6 bits
bool allowed(const FieldDef& f, uint64_t v) { return (f.allowed >> v) & 1; }

// Every variant of every class, in table order (opcodes, sub-functions, kinds).
std::vector<Variant> make_variants() {
  std::vector<Variant> out;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const OpcodeDef* d = isa::opcode_def_at(i);
    for (int si = 0; si < d->n_subops; ++si) {
      const SubopDef* s = &d->subops[si];
      const std::string mn = isa::mnemonic(*d, *s);
      out.push_back({mn + "/legal", Kind::Legal, d, s});
      // Each maximal run of reserved bits is one region.
      for (uint64_t m = d->reserved_mask; m;) {
        const uint64_t low = m & (~m + 1);
        uint64_t run = 0;
        for (uint64_t b = low; b && (m & b); b <<= 1) run |= b;
        out.push_back({mn + "/reserved_bits", Kind::ReservedBits, d, s, run});
        m &= ~run;
      }
      for (int f = isa::kNumHeaderFields; f < d->n_fields; ++f) {
        const FieldDef& fd = d->fields[f];
        if (!((s->used >> f) & 1)) {
          out.push_back({mn + "/reserved_bits", Kind::ReservedBits, d, s, fd.mask()});
        } else if (fd.type == isa::FieldType::Enum && f != d->subop_field) {
          for (uint64_t v = 0; v < field_values(fd); ++v)
            if (!allowed(fd, v)) out.push_back({mn + "/reserved_enum", Kind::ReservedEnum, d, s, 0, f, v});
        }
      }
      out.push_back({mn + "/own_engine", Kind::OwnWait, d, s});
      out.push_back({mn + "/own_engine", Kind::OwnSignal, d, s});
    }
    if (d->subop_field >= 0) {
      const FieldDef& sf = d->fields[d->subop_field];
      for (uint64_t v = 0; v < field_values(sf); ++v)
        if (!isa::subop_of(*d, isa::field_put(0, sf, v)))
          out.push_back({lower(d->name) + "/reserved_subop", Kind::ReservedSubop, d, nullptr, 0, d->subop_field, v});
    }
    out.push_back({lower(d->name) + "/combined", Kind::Combined, d});
  }
  for (uint32_t op = 0; op < (1u << isa::kHdr_opcode_width); ++op)
    if (!isa::opcode_def(op)) out.push_back({"reserved_opcode", Kind::ReservedOpcode, nullptr, nullptr, 0, -1, op});
  return out;
}

// A random value for a field: often an extreme (0, all ones, the sign bit),
// which is where extraction and sign extension go wrong.
uint64_t random_raw(const FieldDef& f, Rng& rng) {
  const uint64_t all = f.mask() >> f.lo;
  switch (rng() % 8) {
    case 0:
      return 0;
    case 1:
      return all;
    case 2:
      return uint64_t(1) << (f.width - 1);
    default:
      return rng() & all;
  }
}

uint8_t own_bit(const OpcodeDef& d) { return static_cast<uint8_t>(1u << static_cast<int>(d.engine)); }

// A random valid word of sub-function s: every used field random (enums among
// their defined values), unused fields and reserved bits zero, tokens for the
// other engines only.
uint64_t random_legal(const OpcodeDef& d, const SubopDef& s, Rng& rng) {
  uint64_t w = uint64_t(isa::opcode_bits(uint64_t(d.opcode) << isa::kHdr_opcode_lo)) << isa::kHdr_opcode_lo;
  w |= (uint64_t(rng() & 31 & ~own_bit(d)) << isa::kHdr_wait_lo) & isa::kHdr_wait_mask;
  w |= (uint64_t(rng() & 31 & ~own_bit(d)) << isa::kHdr_signal_lo) & isa::kHdr_signal_mask;
  for (int f = isa::kNumHeaderFields; f < d.n_fields; ++f) {
    const FieldDef& fd = d.fields[f];
    if (!((s.used >> f) & 1)) continue;
    uint64_t v;
    if (f == d.subop_field) {
      v = s.value;
    } else if (fd.type == isa::FieldType::Enum) {
      do v = rng() % field_values(fd);
      while (!allowed(fd, v));
    } else {
      v = random_raw(fd, rng);
    }
    w = isa::field_put(w, fd, v);
  }
  return w;
}

uint64_t random_legal_any(Rng& rng) {
  const OpcodeDef* d = isa::opcode_def_at(int(rng() % isa::kNumOpcodes));
  return random_legal(*d, d->subops[rng() % uint64_t(d->n_subops)], rng);
}

// Some bits of mask, at least one.
uint64_t some_bits(uint64_t mask, Rng& rng) {
  std::vector<int> bits;
  for (int b = 0; b < 64; ++b)
    if ((mask >> b) & 1) bits.push_back(b);
  return (rng() & mask) | (uint64_t(1) << bits[rng() % bits.size()]);
}

// Several problems in one word, which only check_word's precedence tells
// apart: a legal word of a random sub-function with at least two of
// reserved bits, a reserved sub-function value, an unused field set, a
// reserved enum value and an own-engine token bit (where the opcode has them).
uint64_t combined(const OpcodeDef& d, Rng& rng) {
  const SubopDef& s = d.subops[rng() % uint64_t(d.n_subops)];
  uint64_t w = random_legal(d, s, rng);
  std::vector<uint64_t> extra;  // bits to set, each one problem
  std::vector<int> enum_field;
  if (d.reserved_mask) extra.push_back(some_bits(d.reserved_mask, rng));
  for (int f = isa::kNumHeaderFields; f < d.n_fields; ++f) {
    const FieldDef& fd = d.fields[f];
    if (!((s.used >> f) & 1))
      extra.push_back(some_bits(fd.mask(), rng));
    else if (fd.type == isa::FieldType::Enum)
      enum_field.push_back(f);
  }
  extra.push_back(uint64_t(own_bit(d)) << (rng() % 2 ? isa::kHdr_wait_lo : isa::kHdr_signal_lo));
  size_t applied = 0;
  for (int tries = 0; applied < 2 && tries < 8; ++tries)
    for (uint64_t e : extra)
      if (rng() % 2) w |= e, ++applied;
  // Enum fields (the sub-function's included) get a reserved value half the time.
  for (int f : enum_field) {
    const FieldDef& fd = d.fields[f];
    if (rng() % 2) continue;
    std::vector<uint64_t> bad;
    for (uint64_t v = 0; v < field_values(fd); ++v)
      if (!allowed(fd, v)) bad.push_back(v);
    if (!bad.empty()) w = isa::field_put(w, fd, bad[rng() % bad.size()]);
  }
  return w;
}

uint64_t variant_word(const Variant& v, Rng& rng) {
  switch (v.kind) {
    case Kind::Legal:
      return random_legal(*v.d, *v.s, rng);
    case Kind::ReservedBits:
      return random_legal(*v.d, *v.s, rng) | some_bits(v.mask, rng);
    case Kind::ReservedEnum:
      return isa::field_put(random_legal(*v.d, *v.s, rng), v.d->fields[v.field], v.value);
    case Kind::OwnWait:
      return random_legal(*v.d, *v.s, rng) | (uint64_t(own_bit(*v.d)) << isa::kHdr_wait_lo);
    case Kind::OwnSignal:
      return random_legal(*v.d, *v.s, rng) | (uint64_t(own_bit(*v.d)) << isa::kHdr_signal_lo);
    case Kind::ReservedSubop: {
      const SubopDef& s = v.d->subops[rng() % uint64_t(v.d->n_subops)];
      return isa::field_put(random_legal(*v.d, s, rng), v.d->fields[v.field], v.value);
    }
    case Kind::Combined:
      return combined(*v.d, rng);
    case Kind::ReservedOpcode:
      return (rng() & ~isa::kHdr_opcode_mask) | (v.value << isa::kHdr_opcode_lo);
  }
  return 0;
}

// Vector i of the run: its word and class.
uint64_t make_vector(const std::vector<Variant>& vars, uint64_t seed, int64_t i, const std::string** cls) {
  static const std::string kWord = "random/word", kLegal = "random/legal", kMutated = "random/mutated";
  Rng rng = vector_rng(seed, i);
  const int64_t n = int64_t(vars.size());
  if (i < n) {
    *cls = &vars[size_t(i)].cls;
    return variant_word(vars[size_t(i)], rng);
  }
  switch (rng() % 4) {
    case 0: {
      const Variant& v = vars[rng() % vars.size()];
      *cls = &v.cls;
      return variant_word(v, rng);
    }
    case 1:
      *cls = &kWord;
      return rng();
    case 2:
      *cls = &kLegal;
      return random_legal_any(rng);
    default: {
      *cls = &kMutated;
      uint64_t w = random_legal_any(rng);
      for (int k = 1 + int(rng() % 4); k > 0; --k) w ^= uint64_t(1) << (rng() % 64);
      return w;
    }
  }
}

// ---- the C++ decode, in the RTL's output form (decoder_outputs.h) -----------

using Slots = DecoderSlots;
constexpr int kField0 = kDecField0;
std::string out_name(int k) { return decoder_out_name(k); }

// ---- the bench -----------------------------------------------------------------

template <class Port>
using SignalOf = sc_core::sc_signal<typename std::remove_reference_t<Port>::data_type>;
using FieldsBv = std::remove_reference_t<decltype(std::declval<Vn3_decoder&>().out_fields)>::data_type;
template <int W>
constexpr int bv_width(const sc_dt::sc_bv<W>*) {
  return W;
}
constexpr int kFieldsPortBits = bv_width(static_cast<const FieldsBv*>(nullptr));

constexpr int64_t kSegment = 256;     // vectors per streaming / stalled segment
constexpr int64_t kWatchdog = 10000;  // cycles without an output while words are in flight: a hang
constexpr int kResetCycles = 2;

struct InFlight {
  int64_t index;  // vector index of the run
  uint64_t word;
  const std::string* cls;
  int64_t pos;       // position in this shard's list
  int64_t in_cycle;  // the edge it was accepted on
};

class Bench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Bench);
  Bench(sc_core::sc_module_name n, const CosimOptions& o, double period_ps, int64_t dispatch_cycles,
        const std::vector<Variant>& vars, const std::vector<int64_t>& indices, Slots slots, int inject, CosimReport& r)
      : sc_core::sc_module(n),
        clk("clk", sc_core::sc_time(period_ps, sc_core::SC_PS), 0.5, sc_core::sc_time(period_ps / 2, sc_core::SC_PS)),
        rst_n("rst_n", false),
        dut("dut"),
        o_(o),
        dispatch_cycles_(dispatch_cycles),
        vars_(vars),
        idx_(indices),
        slots_(slots),
        inject_(inject),
        r_(r),
        stall_rng_(vector_rng(o.seed, -1 - int64_t(o.shard))) {
    dut.clk(clk);
    dut.rst_n(rst_n);
    dut.in_valid(in_valid);
    dut.in_ready(in_ready);
    dut.in_insn(in_insn);
    dut.out_valid(out_valid);
    dut.out_ready(out_ready);
    dut.out_insn(out_insn);
    dut.out_legal(out_legal);
    dut.out_problem(out_problem);
    dut.out_engine(out_engine);
    dut.out_opcode(out_opcode);
    dut.out_subop(out_subop);
    dut.out_subop_valid(out_subop_valid);
    dut.out_wait(out_wait);
    dut.out_signal(out_signal);
    dut.out_fields(out_fields);
    SC_METHOD(tick);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  sc_core::sc_clock clk;
  sc_core::sc_signal<bool> rst_n;
  SignalOf<decltype(Vn3_decoder::in_valid)> in_valid;
  SignalOf<decltype(Vn3_decoder::in_ready)> in_ready;
  SignalOf<decltype(Vn3_decoder::in_insn)> in_insn;
  SignalOf<decltype(Vn3_decoder::out_valid)> out_valid;
  SignalOf<decltype(Vn3_decoder::out_ready)> out_ready;
  SignalOf<decltype(Vn3_decoder::out_insn)> out_insn;
  SignalOf<decltype(Vn3_decoder::out_legal)> out_legal;
  SignalOf<decltype(Vn3_decoder::out_problem)> out_problem;
  SignalOf<decltype(Vn3_decoder::out_engine)> out_engine;
  SignalOf<decltype(Vn3_decoder::out_opcode)> out_opcode;
  SignalOf<decltype(Vn3_decoder::out_subop)> out_subop;
  SignalOf<decltype(Vn3_decoder::out_subop_valid)> out_subop_valid;
  SignalOf<decltype(Vn3_decoder::out_wait)> out_wait;
  SignalOf<decltype(Vn3_decoder::out_signal)> out_signal;
  SignalOf<decltype(Vn3_decoder::out_fields)> out_fields;
  Vn3_decoder dut;

  // Set once every word came out (or the run hung): the caller stops then.
  bool done() const { return done_; }
  int64_t cycles() const { return cycle_; }
  int64_t remaining() const { return int64_t(idx_.size()) - received_; }
  int64_t latency_min() const { return lat_min_; }
  int64_t latency_max() const { return lat_max_; }

 private:
  // One rising edge: everything read here is the value before the edge (the
  // model's new outputs become visible a delta later), so a transfer is
  // exactly valid && ready as read; what is written applies to the next edge.
  void tick() {
    if (done_) return;
    ++cycle_;
    if (cycle_ <= kResetCycles) {
      rst_n.write(cycle_ < kResetCycles ? false : true);
      return;
    }
    if (out_valid.read() && out_ready.read()) take_output();
    if (in_valid.read() && in_ready.read()) {
      inflight_.push_back(offered_);
      inflight_.back().in_cycle = cycle_;
      ++next_;
    }
    if (received_ == int64_t(idx_.size())) {
      done_ = true;
      return;
    }
    if (cycle_ - last_progress_ > kWatchdog) {
      const InFlight* f = inflight_.empty() ? nullptr : &inflight_.front();
      const int64_t at = f ? f->index : idx_[size_t(std::min<int64_t>(next_, int64_t(idx_.size()) - 1))];
      mismatch(at, f ? f->word : 0, f ? f->cls : nullptr,
               "no output for " + std::to_string(kWatchdog) + " cycles with " + std::to_string(inflight_.size()) +
                   " words in flight (hang)");
      done_ = true;
      return;
    }
    drive();
  }

  bool streaming(int64_t pos) const { return (pos / kSegment) % 2 == 0; }

  void drive() {
    const int64_t n = int64_t(idx_.size());
    // A word offered and not taken stays offered (valid must not drop).
    const bool holding = in_valid.read() && !in_ready.read();
    bool offer = holding;
    bool ready;
    if (next_ >= n) {
      ready = true;  // drain
    } else if (streaming(next_)) {
      offer = true;
      ready = true;
    } else if (streaming_in_flight()) {
      // Let the streaming segment leave at full rate before the stalls start,
      // so its measured cycles are its own.
      ready = true;
    } else {
      offer = offer || stall_rng_() % 10 < 7;
      ready = stall_rng_() % 10 < 7;
    }
    if (offer && !holding) {
      offered_ = {idx_[size_t(next_)], 0, nullptr, next_, 0};
      offered_.word = make_vector(vars_, o_.seed, offered_.index, &offered_.cls);
      ++r_.classes[*offered_.cls];
      in_insn.write(offered_.word);
    }
    in_valid.write(offer);
    out_ready.write(ready);
  }

  bool streaming_in_flight() const {
    return std::any_of(inflight_.begin(), inflight_.end(), [&](const InFlight& f) { return streaming(f.pos); });
  }

  std::vector<uint64_t> rtl_outputs() const {
    std::vector<uint64_t> o(size_t(kField0 + slots_.count), 0);
    o[kDecInsn] = out_insn.read();
    o[kDecLegal] = out_legal.read();
    o[kDecProblem] = out_problem.read();
    o[kDecEngine] = out_engine.read();
    o[kDecOpcode] = out_opcode.read();
    o[kDecSubop] = out_subop.read();
    o[kDecSubopValid] = out_subop_valid.read();
    o[kDecWait] = out_wait.read();
    o[kDecSignal] = out_signal.read();
    const FieldsBv& f = out_fields.read();
    for (int k = 0; k < slots_.count; ++k)
      o[size_t(kField0 + k)] = f.range(slots_.bits * k + slots_.bits - 1, slots_.bits * k).to_uint64();
    if (inject_ >= 0) o[size_t(inject_)] ^= 1;
    return o;
  }

  void take_output() {
    last_progress_ = cycle_;
    if (inflight_.empty()) {
      mismatch(idx_[size_t(std::min<int64_t>(next_, int64_t(idx_.size()) - 1))], out_insn.read(), nullptr,
               "an output with no word in flight");
      return;
    }
    const InFlight f = inflight_.front();
    inflight_.pop_front();
    ++received_;
    ++r_.run;
    const std::string diff = decoder_difference(f.word, rtl_outputs(), slots_);
    if (!diff.empty()) mismatch(f.index, f.word, f.cls, diff);
    if (streaming(f.pos)) measure(f);
  }

  // Streaming segments: the cycles from the segment's first output to its
  // last, against the SystemC model's dispatch cost; and the latency.
  void measure(const InFlight& f) {
    const int64_t seg = f.pos / kSegment;
    if (seg != seg_) {
      seg_ = seg;
      seg_first_ = cycle_;
      seg_count_ = 0;
    }
    ++seg_count_;
    lat_min_ = std::min(lat_min_, cycle_ - f.in_cycle);
    lat_max_ = std::max(lat_max_, cycle_ - f.in_cycle);
    const int64_t seg_size = std::min<int64_t>(kSegment, int64_t(idx_.size()) - seg * kSegment);
    if (seg_count_ == seg_size) {
      // A segment of seg_count_ words counts as that many vectors.
      ShapeCycles& s = r_.cycles["decode"];
      s.add(double(cycle_ - seg_first_ + 1), double(seg_count_ * dispatch_cycles_));
      s.count += seg_count_ - 1;
    }
  }

  void mismatch(int64_t index, uint64_t word, const std::string* cls, const std::string& what) {
    ++r_.mismatches;
    if (r_.first_mismatch_index >= 0 && index > r_.first_mismatch_index) return;
    char b[64];
    std::snprintf(b, sizeof b, "vector %lld word 0x%016llx", static_cast<long long>(index),
                  static_cast<unsigned long long>(word));
    r_.first_mismatch_index = index;
    r_.first_mismatch = std::string(b) + (cls ? " (" + *cls + ")" : "") + ": " + what;
  }

  const CosimOptions& o_;
  int64_t dispatch_cycles_;
  const std::vector<Variant>& vars_;
  const std::vector<int64_t>& idx_;
  Slots slots_;
  int inject_;
  CosimReport& r_;
  Rng stall_rng_;
  std::deque<InFlight> inflight_;
  InFlight offered_{};
  int64_t cycle_ = 0, next_ = 0, received_ = 0, last_progress_ = 0;
  int64_t seg_ = -1, seg_first_ = 0, seg_count_ = 0;
  int64_t lat_min_ = INT64_MAX, lat_max_ = 0;
  bool done_ = false;
};

}  // namespace

CosimReport cosim_decoder(const CosimOptions& o, std::ostream& log) {
  const HwConfig hw = load_hw_config(o.hw);
  require(hw.timing.dispatch_cycles.given,
          o.hw + ": the decoder's cosim compares with timing.dispatch_cycles, which the file leaves out");
  const Slots slots = decoder_slots();
  require(slots.count * slots.bits == kFieldsPortBits,
          "n3 cosim: the Verilated decoder's out_fields has " + std::to_string(kFieldsPortBits) +
              " bits, the C++ table " + std::to_string(slots.count) + " x " + std::to_string(slots.bits) +
              ": rebuild (isa.yaml changed?)");
  int inject = -1;
  if (const char* e = std::getenv("N3_COSIM_DECODER_INJECT"); e && *e) {
    std::string names;
    for (int k = 0; k < kField0 + slots.count; ++k) {
      if (out_name(k) == e) inject = k;
      names += (k ? ", " : "") + out_name(k);
    }
    require(inject >= 0, std::string("N3_COSIM_DECODER_INJECT=") + e + " names no decoder output (" + names + ")");
    log << "decoder: N3_COSIM_DECODER_INJECT: flipping bit 0 of the RTL's " << e << " before comparing\n";
  }

  const std::vector<Variant> vars = make_variants();
  const std::vector<int64_t> idx = shard_indices(o);
  CosimReport r;
  // One elaboration per process (SystemC cannot elaborate twice): n3 cosim
  // runs one unit, and the tests run it as a subprocess.
  Waveform wave(o.vcd);  // before the model: it turns Verilator's tracing on
  Bench bench("decoder_bench", o, hw.core_ps(), hw.timing.dispatch_cycles.value, vars, idx, slots, inject, r);
  if (!o.vcd.empty()) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: the trace needs the model's signals
    wave.open([&](VerilatedFstC* f) { bench.dut.trace(f, 99); });
  }
  log << "decoder: " << idx.size() << " vectors, " << vars.size() << " class variants first (indices 0.."
      << vars.size() - 1 << "), streaming and stalled segments of " << kSegment << "\n";
  // Run in slices until every word is back (no sc_stop: its report would
  // print to stdout, where the summary goes). A word needs at least a clock,
  // so a slice of as many clocks as words remain never runs past the end by
  // more than one clock (which would only pad the waveform).
  while (!bench.done())
    sc_core::sc_start(sc_core::sc_time(hw.core_ps() * double(std::max<int64_t>(bench.remaining(), 1)), sc_core::SC_PS));
  wave.close();
  r.rtl_cycles = double(bench.cycles());
  const ShapeCycles& s = r.cycles["decode"];
  char b[256];
  std::snprintf(b, sizeof b,
                "decoder: %lld cycles for %lld words (%.3f per cycle with stalls); streaming: %.3f words per cycle, "
                "latency %lld..%lld cycles\n",
                static_cast<long long>(bench.cycles()), static_cast<long long>(r.run),
                double(r.run) / double(std::max<int64_t>(bench.cycles(), 1)),
                s.rtl_cycles > 0 ? double(s.count) / s.rtl_cycles : 0.0, static_cast<long long>(bench.latency_min()),
                static_cast<long long>(bench.latency_max()));
  log << b;
  return r;
}

}  // namespace n3::rtl
