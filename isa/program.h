// An ISA program and its binary container (.n3p): header, instruction words,
// descriptor table, constant table, symbol table and memory map.
//
// Container format 1, all integers little-endian, every section 8-byte aligned:
//   header (64 bytes)
//     0  magic "N3PROG\0\0"          8  u32 format version (1)
//    12  u32 ISA version            16  u32 instructions
//    20  u32 descriptors (slot 0 included)  24  u32 constants (slot 0 included)
//    28  u32 symbols                32  u32 regions
//    36  u32 string table bytes (a multiple of 8)
//    40  u32 CRC-32 (IEEE) of every byte after the header
//    44  20 reserved bytes, zero
//   instructions   u64 each
//   descriptors    4 x u64 each (isa.yaml records.desc)
//   constants      u64 each (isa.yaml records.const)
//   symbols        16 bytes: u32 name offset, u8 kind, 3 zero bytes, u32 index, i32 at
//   regions        32 bytes: u32 name offset, u8 space, u8 role, u16 zero, u64 base,
//                  u64 size, u64 zero
//   string table   NUL-terminated names, zero-padded to a multiple of 8
// docs/isa.md, "Program container", is the user-facing description.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/isa.h"

namespace n3::isa {

constexpr uint32_t kProgramFormatVersion = 1;
constexpr size_t kProgramHeaderBytes = 64;

enum class SymKind : uint8_t {
  Desc = 1,    // index = descriptor slot
  Const = 2,   // index = constant slot
  Label = 3,   // index = instruction index (may equal the program length)
  Tensor = 4,  // a tensor to dump: index = descriptor slot, at = instruction after
               // whose completion it is captured (-1: when the program ends)
};
const char* sym_kind_name(SymKind k);

struct Symbol {
  SymKind kind = SymKind::Desc;
  std::string name;
  uint32_t index = 0;
  int32_t at = -1;
  bool operator==(const Symbol& o) const {
    return kind == o.kind && name == o.name && index == o.index && at == o.at;
  }
};

enum class RegionRole : uint8_t { Input = 0, Output = 1, Weights = 2, Kv = 3, Scratch = 4 };
const char* region_role_name(RegionRole r);
bool parse_region_role(const std::string& s, RegionRole* r);

// The memory map: what the program expects where (documentation for users
// and a check for the simulator: every region must fit its space).
struct Region {
  std::string name;
  Space space = Space::DDR;
  RegionRole role = RegionRole::Input;
  uint64_t base = 0, size = 0;
  bool operator==(const Region& o) const {
    return name == o.name && space == o.space && role == o.role && base == o.base && size == o.size;
  }
};

using DescWords = std::array<uint64_t, kDescWords>;

struct Program {
  std::vector<uint64_t> code;
  std::vector<DescWords> descs{DescWords{}};  // slot 0: the null descriptor
  std::vector<uint64_t> consts{0};            // slot 0: the null constant
  std::vector<Symbol> symbols;                // canonical order: see canonicalise()
  std::vector<Region> regions;

  // Name of a slot / label, "" when the symbol table has none.
  std::string name_of(SymKind k, uint32_t index) const;
  const Symbol* find(SymKind k, const std::string& name) const;
  // Sorts symbols into the container's canonical order: descriptors by slot,
  // constants by slot, labels by index, tensors in the order given.
  void canonicalise();
  bool operator==(const Program& o) const {
    return code == o.code && descs == o.descs && consts == o.consts && symbols == o.symbols &&
           regions == o.regions;
  }
};

// Names are identifiers: [A-Za-z_][A-Za-z0-9_.]* (tensor names may hold dots:
// "layers.3.attn.q"), at most 255 characters.
bool valid_symbol_name(const std::string& s);

std::vector<uint8_t> serialize(const Program& p);
// Parses and checks a container: structure, sizes, CRC, string table, symbol
// and region references. Instruction words and table entries are not judged
// here (the simulator traps on them where they are used). Throws n3::Error
// naming `what` and the problem. `check_crc` false skips the checksum (the
// fuzzers, which would otherwise stop at it on nearly every input).
Program parse_program(const uint8_t* data, size_t size, const std::string& what, bool check_crc = true);

uint32_t crc32(const uint8_t* data, size_t n);

}  // namespace n3::isa
