#include "rtl_bridge/decoder_outputs.h"

#include <algorithm>
#include <cstdio>

#include "isa/isa.h"

namespace n3::rtl {

// out_problem carries n3_isa_pkg::problem_e, whose values isa/isagen/sv.py
// writes as isa::Problem's.
static_assert(int(isa::Problem::None) == 0 && int(isa::Problem::ReservedOpcode) == 1 &&
                  int(isa::Problem::ReservedEnum) == 2 && int(isa::Problem::ReservedBits) == 3,
              "isa::Problem changed: update problem_e in isa/isagen/sv.py");

namespace {
constexpr const char* kOutNames[] = {"insn",  "legal",       "problem", "engine", "opcode",
                                     "subop", "subop_valid", "wait",    "signal"};
bool signed_field(const isa::FieldDef& f) {
  return f.type == isa::FieldType::Sint || f.type == isa::FieldType::Offset;
}
}  // namespace

DecoderSlots decoder_slots() {
  DecoderSlots s;
  for (int i = 0; i < isa::kNumOpcodes; ++i) {
    const isa::OpcodeDef* d = isa::opcode_def_at(i);
    s.count = std::max(s.count, d->n_fields - isa::kNumHeaderFields);
    for (int f = isa::kNumHeaderFields; f < d->n_fields; ++f) s.bits = std::max(s.bits, d->fields[f].width);
  }
  return s;
}

std::string decoder_out_name(int k) {
  return k < kDecField0 ? kOutNames[k] : "field" + std::to_string(k - kDecField0);
}

std::vector<uint64_t> decoder_cpp_outputs(uint64_t w, int slots) {
  std::vector<uint64_t> o(size_t(kDecField0 + slots), 0);
  const isa::OpcodeDef* d = isa::def_of(w);
  const isa::Check c = isa::check_word(w);
  o[kDecInsn] = w;
  o[kDecLegal] = c.ok();
  o[kDecProblem] = static_cast<uint64_t>(c.problem);
  o[kDecOpcode] = isa::opcode_bits(w);
  o[kDecWait] = isa::wait_bits(w);
  o[kDecSignal] = isa::signal_bits(w);
  if (!d) return o;
  o[kDecEngine] = static_cast<uint64_t>(d->engine);
  o[kDecSubop] = d->subop_field >= 0 ? isa::field_raw(w, d->fields[d->subop_field]) : 0;
  o[kDecSubopValid] = isa::subop_of(*d, w) != nullptr;
  for (int f = isa::kNumHeaderFields; f < d->n_fields; ++f) {
    const isa::FieldDef& fd = d->fields[f];
    o[size_t(kDecField0 + f - isa::kNumHeaderFields)] =
        signed_field(fd) ? static_cast<uint64_t>(isa::field_signed(w, fd)) : isa::field_raw(w, fd);
  }
  return o;
}

std::string decoder_difference(uint64_t w, const std::vector<uint64_t>& rtl, const DecoderSlots& s) {
  const std::vector<uint64_t> cpp = decoder_cpp_outputs(w, s.count);
  const isa::OpcodeDef* d = isa::def_of(w);
  for (size_t k = 0; k < rtl.size() && k < cpp.size(); ++k) {
    uint64_t v = rtl[k];
    const int fi = isa::kNumHeaderFields + int(k) - kDecField0;
    const bool field = int(k) >= kDecField0 && d && fi < d->n_fields;
    if (field && signed_field(d->fields[fi]) && s.bits < 64 && ((v >> (s.bits - 1)) & 1)) v |= ~uint64_t(0) << s.bits;
    if (v == cpp[k]) continue;
    std::string what = decoder_out_name(int(k));
    if (field) what += std::string(" (") + d->fields[fi].name + ")";
    char b[160];
    std::snprintf(b, sizeof b, "%s rtl 0x%llx vs C++ 0x%llx", what.c_str(), static_cast<unsigned long long>(v),
                  static_cast<unsigned long long>(cpp[k]));
    return b;
  }
  return "";
}

}  // namespace n3::rtl
