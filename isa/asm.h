// The assembler: readable ISA text to a Program. docs/isa.md, "Assembly
// language", is the user-facing grammar. Errors name file:line:column.
//
//   ; a comment
//   .isa 1
//   .region weights space=ddr role=weights base=0x0 size=0x100000
//   .desc w   dtype=int4 space=ddr base=0x0 rows=256 cols=256 row_stride=128 scale_mode=row scale_base=0x8000 scale_stride=4
//   .desc x   dtype=bf16 space=l2 base=0x0 rows=1 cols=256 row_stride=512
//   .const eps f32 1e-06
//   .tensor y desc=y at=done
//   loop:
//       gemv.mv dst=y src=x w=w signal=sfu
//       cvo.rmsnorm dst=y a=y b=- k=eps wait=gemv
//   done:
//       sys.halt
#pragma once
#include <string>

#include "base/error.h"
#include "isa/program.h"

namespace n3::isa {

struct AsmError : Error {
  AsmError(const std::string& file, int line, int col, const std::string& msg)
      : Error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + msg),
        line(line),
        col(col) {}
  int line, col;
};

struct AsmOptions {
  // Run verify_operands() on every instruction (operand slots exist, are well
  // formed and have accepted dtypes), branch targets, and .word values.
  // Off only to build programs that are meant to trap.
  bool verify = true;
};

// Throws AsmError at the first problem.
Program assemble(const std::string& text, const std::string& file, const AsmOptions& opt = {});

}  // namespace n3::isa
