// The n3 ISA, as code: the generated encodings (isa_gen.h, from isa/isa.yaml)
// plus the checks every consumer shares. A word or record is either valid or
// rejected with the first problem found, named by field; the assembler,
// the disassembler, the program loader and the simulator's traps all use these.
#pragma once
#include <cstdint>
#include <string>

#include "isa/isa_gen.h"

namespace n3::isa {

// Why a word or record is not valid. The simulator's trap kinds of the same
// names come from these.
enum class Problem : uint8_t {
  None = 0,
  ReservedOpcode,  // opcode value not defined
  ReservedEnum,    // an enum field (sub-function included) holds an undefined value
  ReservedBits,    // reserved bits, a field the sub-function does not use, or an own-engine token bit
};
const char* problem_name(Problem p);

struct Check {
  Problem problem = Problem::None;
  std::string message;  // one line naming the field and value
  bool ok() const { return problem == Problem::None; }
};

// Raw bits of a field (records: pass the word the field lives in).
inline uint64_t field_raw(uint64_t word, const FieldDef& f) { return (word & f.mask()) >> f.lo; }
inline uint64_t field_put(uint64_t word, const FieldDef& f, uint64_t raw) {
  return (word & ~f.mask()) | ((raw << f.lo) & f.mask());
}
// Sign-extended value of an sint / offset field.
inline int64_t field_signed(uint64_t word, const FieldDef& f) {
  const int sh = 64 - f.width;
  return static_cast<int64_t>(field_raw(word, f) << sh) >> sh;
}

// The definition of w's opcode, or null when the opcode is reserved.
inline const OpcodeDef* def_of(uint64_t w) { return opcode_def(opcode_bits(w)); }
// The sub-function definition of w (opcodes without sub-functions have one,
// named ""), or null when the sub-function value is reserved.
const SubopDef* subop_of(const OpcodeDef& d, uint64_t w);
// Index into d.fields of the field called `name`, or -1.
int field_index(const OpcodeDef& d, const char* name);

// Full validation of an instruction word.
Check check_word(uint64_t w);
// Validation of table records: reserved bits and enum values only (what
// the values mean for an instruction is checked where they are used).
Check check_desc(const uint64_t* w);
Check check_const(uint64_t w);

// Mnemonic of a valid word: "gemv.mv", "memcpy", "sys.halt".
std::string mnemonic(const OpcodeDef& d, const SubopDef& s);

// Engine of an opcode.
inline Engine engine_of(const OpcodeDef& d) { return d.engine; }
std::string engine_mask_text(uint8_t mask);  // "dma|sfu", "-" when empty

// Float constants in text: the shortest decimal that reads back to the same
// float (finite), "inf", "-inf", "nan" (the canonical NaN only); false when
// the bits need the raw form.
bool float_text(uint32_t bits, std::string* out);
bool parse_float_text(const std::string& s, uint32_t* bits);

// Case-insensitive lookup of an enum value by name; false if unknown.
bool enum_value(EnumId id, const std::string& name, uint32_t* value);
// Lower-case name of a defined enum value, "" if reserved.
std::string enum_text(EnumId id, uint64_t value);

}  // namespace n3::isa
