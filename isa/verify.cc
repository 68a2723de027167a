#include "isa/verify.h"

#include <cstdio>

namespace n3::isa {

int64_t data_bytes(Dtype t, int64_t cols) { return (cols * dtype_bits(t) + 7) / 8; }

int64_t scale_group(const DescRecord& d) { return d.scale_mode == ScaleMode::ROW ? d.cols : d.group; }

int64_t scale_record_bytes(const DescRecord& d) {
  switch (d.scale_mode) {
    case ScaleMode::NONE:
      return 0;
    case ScaleMode::ROW:
      return 4;
    case ScaleMode::GROUP:
      return d.group ? 4 * ((int64_t(d.cols) + d.group - 1) / d.group) : 0;
    case ScaleMode::TWO_LEVEL:
      return d.group ? 4 + (int64_t(d.cols) + d.group - 1) / d.group : 0;
  }
  return 0;
}

std::string dtype_text(Dtype t) { return enum_text(EnumId::Dtype, static_cast<uint64_t>(t)); }

std::string dtype_mask_text(uint32_t mask) {
  std::string s;
  for (uint32_t t = 0; t < 16; ++t)
    if ((mask >> t) & 1) s += (s.empty() ? "" : ", ") + enum_text(EnumId::Dtype, t);
  return s;
}

DescCheck desc_problem(const DescRecord& d) {
  auto invalid = [](const std::string& m) { return DescCheck{DescIssue::Invalid, m}; };
  auto misaligned = [](const std::string& m) { return DescCheck{DescIssue::Misaligned, m}; };
  if (d.rows == 0 || d.cols == 0)
    return invalid("empty extent (rows " + std::to_string(d.rows) + ", cols " + std::to_string(d.cols) + ")");
  const bool quant = d.dtype == Dtype::INT4 || d.dtype == Dtype::INT8;
  if (quant && d.scale_mode == ScaleMode::NONE) return invalid(dtype_text(d.dtype) + " data needs scales");
  if (!quant && d.scale_mode != ScaleMode::NONE)
    return invalid(dtype_text(d.dtype) + " data cannot have scales");
  if (d.scale_mode == ScaleMode::NONE && (d.scale_base || d.scale_stride || d.group))
    return invalid("scale_base, scale_stride and group must be 0 without scales");
  const bool grouped = d.scale_mode == ScaleMode::GROUP || d.scale_mode == ScaleMode::TWO_LEVEL;
  if (grouped && d.group == 0) return invalid("grouped scales need group > 0");
  if (!grouped && d.group) return invalid("group must be 0 unless scales are grouped");
  if (d.dyn_reg == 0 && d.dyn_dim != DynDim::ROWS) return invalid("dyn_dim set without dyn_reg");
  const int align = space_align(d.space);
  if (d.base % align)
    return misaligned("base 0x" + [&] {
      char b[24];
      std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(d.base));
      return std::string(b);
    }() + " is not " + std::to_string(align) + "-byte aligned (" + enum_text(EnumId::Space, uint64_t(d.space)) + ")");
  const int ebits = dtype_bits(d.dtype);
  const int ebytes = ebits >= 8 ? ebits / 8 : 1;
  if (d.row_stride % ebytes)
    return misaligned("row_stride " + std::to_string(d.row_stride) + " is not a multiple of the " +
                      std::to_string(ebytes) + "-byte element");
  const int64_t row_bytes = data_bytes(d.dtype, d.cols);
  if (d.rows > 1 && int64_t(d.row_stride) < row_bytes)
    return invalid("row_stride " + std::to_string(d.row_stride) + " is less than a row's " +
                   std::to_string(row_bytes) + " bytes: rows would overlap");
  if (quant) {
    if (d.scale_base % 4 || d.scale_stride % 4)
      return misaligned("scale_base and scale_stride must be multiples of 4 (F32 scales)");
    if (d.rows > 1 && int64_t(d.scale_stride) < scale_record_bytes(d))
      return invalid("scale_stride " + std::to_string(d.scale_stride) + " is less than a scale record's " +
                     std::to_string(scale_record_bytes(d)) + " bytes");
  }
  return {};
}

void verify_operands(const Program& p, uint32_t pc, std::vector<Diag>* out) {
  const uint64_t w = p.code[pc];
  const OpcodeDef* d = def_of(w);
  const SubopDef* s = d ? subop_of(*d, w) : nullptr;
  if (!d || !s) return;
  const std::string mn = mnemonic(*d, *s);
  for (int i = 0; i < s->n_operands; ++i) {
    const OperandDef& od = s->operands[i];
    const FieldDef& f = d->fields[od.field];
    const uint64_t slot = field_raw(w, f);
    const std::string who = mn + " " + f.name;
    if (f.type == FieldType::Desc) {
      if (slot == 0) {
        if (!od.optional) out->push_back({pc, who + ": a descriptor is required"});
        continue;
      }
      if (slot >= p.descs.size()) {
        out->push_back({pc, who + ": descriptor slot " + std::to_string(slot) + " is beyond the table (" +
                                std::to_string(p.descs.size()) + " entries)"});
        continue;
      }
      const Check c = check_desc(p.descs[slot].data());
      if (!c.ok()) {
        out->push_back({pc, who + ": slot " + std::to_string(slot) + ": " + c.message});
        continue;
      }
      const DescRecord r = decode_desc(p.descs[slot].data());
      const DescCheck dc = desc_problem(r);
      if (!dc.ok()) {
        out->push_back({pc, who + ": slot " + std::to_string(slot) + ": " + dc.message});
        continue;
      }
      if (!((od.dtypes >> static_cast<int>(r.dtype)) & 1))
        out->push_back({pc, who + ": dtype mismatch: " + dtype_text(r.dtype) + " is not " + od.dtype_class + " (" +
                                dtype_mask_text(od.dtypes) + ")"});
    } else if (f.type == FieldType::Const) {
      if (slot == 0) {
        if (!od.optional) out->push_back({pc, who + ": a constant is required"});
        continue;
      }
      if (slot >= p.consts.size()) {
        out->push_back({pc, who + ": constant slot " + std::to_string(slot) + " is beyond the table (" +
                                std::to_string(p.consts.size()) + " entries)"});
        continue;
      }
      const Check c = check_const(p.consts[slot]);
      if (!c.ok()) {
        out->push_back({pc, who + ": slot " + std::to_string(slot) + ": " + c.message});
        continue;
      }
      const Dtype t = decode_const(&p.consts[slot]).dtype;
      if (!((od.dtypes >> static_cast<int>(t)) & 1))
        out->push_back({pc, who + ": dtype mismatch: constant is " + dtype_text(t) + ", needs " + od.dtype_class});
    }
  }
}

std::vector<Diag> verify_program(const Program& p) {
  std::vector<Diag> out;
  for (uint32_t pc = 0; pc < p.code.size(); ++pc) {
    const Check c = check_word(p.code[pc]);
    if (!c.ok()) {
      out.push_back({pc, c.message});
      continue;
    }
    verify_operands(p, pc, &out);
    const uint64_t w = p.code[pc];
    if (opcode_bits(w) == static_cast<uint32_t>(Opcode::BR)) {
      const int64_t t = int64_t(pc) + decode_br(w).target;
      if (t < 0 || t > int64_t(p.code.size()))
        out.push_back({pc, "br: target " + std::to_string(t) + " is outside the program"});
    }
  }
  return out;
}

}  // namespace n3::isa
