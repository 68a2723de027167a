// Static checks of a program against its own tables: every operand names a
// descriptor or constant that exists, is well formed and has a dtype the
// instruction accepts (isa.yaml's operand dtype classes). The assembler runs
// them on what it builds; the simulator runs the same descriptor checks at
// dispatch, where registers give the run-time extents.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "isa/program.h"

namespace n3::isa {

enum class DescIssue : uint8_t { None, Misaligned, Invalid };
struct DescCheck {
  DescIssue issue = DescIssue::None;
  std::string message;
  bool ok() const { return issue == DescIssue::None; }
};

// Bytes of the data of `cols` elements of dtype t (INT4: two per byte, rounded up).
int64_t data_bytes(Dtype t, int64_t cols);
// Bytes of one scale record of a descriptor (0 for scale_mode NONE).
int64_t scale_record_bytes(const DescRecord& d);
// Columns per scale group: `group`, or cols for ROW scales.
int64_t scale_group(const DescRecord& d);

// Structural rules of a descriptor (docs/isa.md, "Descriptors"): non-zero
// extents, scales exactly for INT4 / INT8, fields only where meaningful,
// aligned base, stride and scales, rows that do not overlap.
DescCheck desc_problem(const DescRecord& d);

struct Diag {
  uint32_t pc;
  std::string message;
};

// Checks one instruction's operands against the tables; appends problems.
void verify_operands(const Program& p, uint32_t pc, std::vector<Diag>* out);
// Every instruction: valid encoding, then operands; labels and tensors in range.
std::vector<Diag> verify_program(const Program& p);

// "f32", "bf16", ... (lower case, as the assembler spells it).
std::string dtype_text(Dtype t);
std::string dtype_mask_text(uint32_t mask);

}  // namespace n3::isa
