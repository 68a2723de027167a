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

// An error message with every '...'-quoted token longer than 40 characters
// cut to its first 32 and its length: a million-digit immediate must not be
// echoed whole into a one-line error.
inline std::string clip_quoted(const std::string& msg) {
  std::string out;
  size_t i = 0;
  while (i < msg.size()) {
    const size_t a = msg.find('\'', i);
    const size_t b = a == std::string::npos ? a : msg.find('\'', a + 1);
    if (b == std::string::npos) break;
    out += msg.substr(i, a + 1 - i);
    const size_t n = b - a - 1;
    out += n > 40 ? msg.substr(a + 1, 32) + "... (" + std::to_string(n) + " characters)" : msg.substr(a + 1, n);
    out += '\'';
    i = b + 1;
  }
  return out + msg.substr(i);
}

struct AsmError : Error {
  AsmError(const std::string& file, int line, int col, const std::string& msg)
      : Error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + clip_quoted(msg)),
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
