#include "isa/dis.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

namespace n3::isa {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string slot_text(const Program* p, SymKind k, uint64_t slot) {
  if (slot == 0) return "-";
  if (p) {
    const std::string n = p->name_of(k, static_cast<uint32_t>(slot));
    if (!n.empty()) return n;
  }
  return "#" + std::to_string(slot);
}

std::string field_text(const FieldDef& f, uint64_t word, const Program* p, uint32_t pc) {
  const uint64_t raw = field_raw(word, f);
  switch (f.type) {
    case FieldType::Uint:
      return f.width >= 40 ? hex(raw) : std::to_string(raw);
    case FieldType::Sint:
      return std::to_string(field_signed(word, f));
    case FieldType::Offset: {
      const int64_t off = field_signed(word, f);
      const int64_t t = int64_t(pc) + off;
      if (p && t >= 0 && t <= int64_t(p->code.size())) {
        const std::string n = p->name_of(SymKind::Label, static_cast<uint32_t>(t));
        if (!n.empty()) return n;
      }
      return std::to_string(off);
    }
    case FieldType::Enum:
      return enum_text(f.enum_id, raw);
    case FieldType::Desc:
      return slot_text(p, SymKind::Desc, raw);
    case FieldType::Const:
      return slot_text(p, SymKind::Const, raw);
    case FieldType::Reg:
      return "r" + std::to_string(raw);
    case FieldType::Engines:
      return engine_mask_text(static_cast<uint8_t>(raw));
  }
  return "?";
}

// Descriptor fields always printed (the rest only when non-zero).
bool always_shown(const char* name) {
  for (const char* n : {"dtype", "space", "base", "rows", "cols", "row_stride"})
    if (!std::strcmp(n, name)) return true;
  return false;
}

std::string const_text(uint64_t w) {
  if (check_const(w).ok()) {
    const ConstRecord r = decode_const(&w);
    if (r.dtype == Dtype::INT32) return "i32 " + std::to_string(static_cast<int32_t>(r.value));
    std::string f;
    if (r.dtype == Dtype::F32 && float_text(r.value, &f)) return "f32 " + f;
  }
  return "raw=" + hex(w);
}

}  // namespace

std::string disassemble_word(uint64_t w, const Program* p, uint32_t pc) {
  if (!check_word(w).ok()) return ".word " + hex(w);
  const OpcodeDef& d = *def_of(w);
  const SubopDef& s = *subop_of(d, w);
  std::string out = mnemonic(d, s);
  for (int i = kNumHeaderFields; i < d.n_fields; ++i) {
    if (i == d.subop_field || !((s.used >> i) & 1)) continue;
    out += " " + std::string(d.fields[i].name) + "=" + field_text(d.fields[i], w, p, pc);
  }
  for (int i = 1; i < kNumHeaderFields; ++i)  // wait, signal: only when set
    if (field_raw(w, d.fields[i])) out += " " + std::string(d.fields[i].name) + "=" + field_text(d.fields[i], w, p, pc);
  return out;
}

std::string desc_fields_text(const DescWords& w) {
  if (!check_desc(w.data()).ok())
    return "raw=" + hex(w[0]) + ":" + hex(w[1]) + ":" + hex(w[2]) + ":" + hex(w[3]);
  // Where and what first (dtype, space, base, rows, cols, row_stride, always),
  // then the register, ring and scale fields that are set, in table order.
  std::string head, tail;
  for (const char* n : {"dtype", "space", "base", "rows", "cols", "row_stride"})
    for (int i = 0; i < kNumRecordFields_desc; ++i) {
      const FieldDef& f = kRecordFields_desc[i];
      if (!std::strcmp(f.name, n)) head += (head.empty() ? "" : " ") + std::string(n) + "=" + field_text(f, w[f.word], nullptr, 0);
    }
  for (int i = 0; i < kNumRecordFields_desc; ++i) {
    const FieldDef& f = kRecordFields_desc[i];
    if (always_shown(f.name) || !field_raw(w[f.word], f)) continue;
    tail += " " + std::string(f.name) + "=" + field_text(f, w[f.word], nullptr, 0);
  }
  return head + tail;
}

std::string disassemble(const Program& p) {
  std::string o;
  o += "; n3 program, ISA version " + std::to_string(kIsaVersion) + " (n3 dis)\n";
  o += ".isa " + std::to_string(kIsaVersion) + "\n";
  for (const Region& r : p.regions)
    o += ".region " + r.name + " space=" + enum_text(EnumId::Space, static_cast<uint64_t>(r.space)) +
         " role=" + region_role_name(r.role) + " base=" + hex(r.base) + " size=" + hex(r.size) + "\n";
  for (size_t s = 1; s < p.descs.size(); ++s) {
    const std::string n = p.name_of(SymKind::Desc, static_cast<uint32_t>(s));
    o += ".desc " + (n.empty() ? std::string("-") : n) + " " + desc_fields_text(p.descs[s]) + "\n";
  }
  for (size_t s = 1; s < p.consts.size(); ++s) {
    const std::string n = p.name_of(SymKind::Const, static_cast<uint32_t>(s));
    o += ".const " + (n.empty() ? std::string("-") : n) + " " + const_text(p.consts[s]) + "\n";
  }
  std::multimap<uint32_t, std::string> labels;
  for (const Symbol& s : p.symbols)
    if (s.kind == SymKind::Label) labels.emplace(s.index, s.name);
  for (const Symbol& s : p.symbols) {
    if (s.kind != SymKind::Tensor) continue;
    o += ".tensor " + s.name + " desc=" + slot_text(&p, SymKind::Desc, s.index);
    if (s.at >= 0) {
      const std::string n = p.name_of(SymKind::Label, static_cast<uint32_t>(s.at));
      o += " at=" + (n.empty() || n == "end" ? std::to_string(s.at) : n);  // "end" means -1
    }
    o += "\n";
  }
  for (uint32_t pc = 0; pc <= p.code.size(); ++pc) {
    auto [b, e] = labels.equal_range(pc);
    for (auto it = b; it != e; ++it) o += it->second + ":\n";
    if (pc < p.code.size()) o += "    " + disassemble_word(p.code[pc], &p, pc) + "\n";
  }
  return o;
}

}  // namespace n3::isa
