// The disassembler: Program to canonical assembly text. Canonical text is
// what it prints; assembling it gives the same container byte for byte, and
// disassembling that gives the same text. Words that are not valid
// instructions print as `.word 0x...`, records that are not valid as raw=,
// so any loadable container disassembles and reassembles unchanged.
#pragma once
#include <cstdint>
#include <string>

#include "isa/program.h"

namespace n3::isa {

// One instruction, no label definitions: "gemv.mv dst=y src=x w=wq signal=sfu".
// `p` supplies names (null: slots print as #N, branch targets as offsets).
std::string disassemble_word(uint64_t w, const Program* p = nullptr, uint32_t pc = 0);

// The whole program: directives, then the code with labels.
std::string disassemble(const Program& p);

// The descriptor directive's field list (after the name), e.g.
// "dtype=bf16 space=l2 base=0x0 rows=1 cols=256 row_stride=512".
std::string desc_fields_text(const DescWords& w);

}  // namespace n3::isa
