// The instruction decoder's outputs (rtl/decoder/n3_decoder.sv) in one form
// for both places that compare the Verilated decoder with the C++ ISA
// (isa/isa.h): `n3 cosim --unit decoder` (cosim_decoder.cc) and the decode
// stage of `n3 sim --rtl decoder` (decoder_unit.cc). Every output is widened
// to 64 bits; the C++ side is derived from the ISA table, so the two
// comparisons cannot drift apart.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace n3::rtl {

// Compared outputs, by the name a mismatch line and N3_COSIM_DECODER_INJECT
// use: the port name without "out_"; field<k> is slot k (kDecField0 + k).
enum DecOut { kDecInsn, kDecLegal, kDecProblem, kDecEngine, kDecOpcode, kDecSubop, kDecSubopValid, kDecWait,
              kDecSignal, kDecField0 };

// The field slots' geometry, from the C++ table by the generator's rule
// (isa/isagen/sv.py, own_fields): the callers check it against the
// Verilated out_fields port.
struct DecoderSlots {
  int count = 0, bits = 0;
};
DecoderSlots decoder_slots();

std::string decoder_out_name(int k);

// The C++ decode of `w` as the RTL's outputs (field slots: sint / offset
// fields sign-extended, as isa::field_signed).
std::vector<uint64_t> decoder_cpp_outputs(uint64_t w, int slots);

// The first output where `rtl` (raw port values, kDecField0 + slots) differs
// from the C++ decode of `w`, as "engine rtl 0x2 vs C++ 0x3" (a field
// named: "field1 (rows) ..."); "" when all agree. A slot holding a sint /
// offset field is sign-extended from its width first.
std::string decoder_difference(uint64_t w, const std::vector<uint64_t>& rtl, const DecoderSlots& s);

}  // namespace n3::rtl
