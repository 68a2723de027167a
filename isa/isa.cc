#include "isa/isa.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace n3::isa {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool enum_allowed(const FieldDef& f, uint64_t raw) { return raw < 64 && ((f.allowed >> raw) & 1); }

// Checks every enum field of a record (fields in `n` defs over words w[]).
Check check_record(const char* what, const FieldDef* defs, int n, const uint64_t* w, int words,
                   const uint64_t* reserved) {
  for (int k = 0; k < words; ++k)
    if (w[k] & reserved[k])
      return {Problem::ReservedBits, std::string(what) + ": reserved bits set in word " + std::to_string(k) + " (" +
                                         hex(w[k] & reserved[k]) + ")"};
  for (int i = 0; i < n; ++i) {
    const FieldDef& f = defs[i];
    if (f.type != FieldType::Enum) continue;
    const uint64_t raw = field_raw(w[f.word], f);
    if (!enum_allowed(f, raw))
      return {Problem::ReservedEnum, std::string(what) + ": field " + f.name + " = " + std::to_string(raw) +
                                         " is a reserved " + enum_def(f.enum_id).name + " value"};
  }
  return {};
}

}  // namespace

const char* problem_name(Problem p) {
  switch (p) {
    case Problem::None:
      return "none";
    case Problem::ReservedOpcode:
      return "reserved opcode";
    case Problem::ReservedEnum:
      return "reserved enum value";
    case Problem::ReservedBits:
      return "non-zero reserved bits";
  }
  return "?";
}

const SubopDef* subop_of(const OpcodeDef& d, uint64_t w) {
  if (d.subop_field < 0) return &d.subops[0];
  const uint64_t v = field_raw(w, d.fields[d.subop_field]);
  for (int i = 0; i < d.n_subops; ++i)
    if (d.subops[i].value == v) return &d.subops[i];
  return nullptr;
}

int field_index(const OpcodeDef& d, const char* name) {
  for (int i = 0; i < d.n_fields; ++i)
    if (!std::strcmp(d.fields[i].name, name)) return i;
  return -1;
}

Check check_word(uint64_t w) {
  const OpcodeDef* d = def_of(w);
  if (!d) return {Problem::ReservedOpcode, "opcode " + std::to_string(opcode_bits(w)) + " is reserved"};
  const std::string op = d->name;
  if (w & d->reserved_mask)
    return {Problem::ReservedBits, op + ": reserved bits set (" + hex(w & d->reserved_mask) + ")"};
  const SubopDef* s = subop_of(*d, w);
  if (!s) {
    const FieldDef& f = d->fields[d->subop_field];
    return {Problem::ReservedEnum, op + ": " + f.name + " = " + std::to_string(field_raw(w, f)) + " is reserved"};
  }
  for (int i = 0; i < d->n_fields; ++i) {
    const FieldDef& f = d->fields[i];
    const uint64_t raw = field_raw(w, f);
    if (!((s->used >> i) & 1)) {
      if (raw != 0)
        return {Problem::ReservedBits, mnemonic(*d, *s) + ": field " + f.name + " is not used and must be 0 (is " +
                                           std::to_string(raw) + ")"};
      continue;
    }
    if (f.type == FieldType::Enum && i != d->subop_field && f.enum_id != EnumId::Opcode && !enum_allowed(f, raw))
      return {Problem::ReservedEnum, mnemonic(*d, *s) + ": " + f.name + " = " + std::to_string(raw) +
                                         " is a reserved " + enum_def(f.enum_id).name + " value"};
  }
  const uint8_t own = static_cast<uint8_t>(1u << static_cast<int>(d->engine));
  if (wait_bits(w) & own)
    return {Problem::ReservedBits, mnemonic(*d, *s) + ": wait bit " + name_of(d->engine) +
                                       " names the instruction's own engine (reserved)"};
  if (signal_bits(w) & own)
    return {Problem::ReservedBits, mnemonic(*d, *s) + ": signal bit " + name_of(d->engine) +
                                       " names the instruction's own engine (reserved)"};
  return {};
}

Check check_desc(const uint64_t* w) {
  const uint64_t rsv[] = {kDesc_reserved_mask0, kDesc_reserved_mask1, kDesc_reserved_mask2, kDesc_reserved_mask3};
  return check_record("descriptor", kRecordFields_desc, kNumRecordFields_desc, w, kDescWords, rsv);
}

Check check_const(uint64_t w) {
  const uint64_t rsv[] = {kConst_reserved_mask0};
  return check_record("constant", kRecordFields_const, kNumRecordFields_const, &w, kConstWords, rsv);
}

std::string mnemonic(const OpcodeDef& d, const SubopDef& s) {
  std::string m = lower(d.name);
  if (*s.name) m += "." + lower(s.name);
  return m;
}

std::string engine_mask_text(uint8_t mask) {
  if (!mask) return "-";
  std::string s;
  for (int e = 0; e < kNumEngines; ++e)
    if ((mask >> e) & 1) {
      if (!s.empty()) s += "|";
      s += lower(name_of(static_cast<Engine>(e)));
    }
  for (int e = kNumEngines; e < 8; ++e)
    if ((mask >> e) & 1) s += (s.empty() ? "" : "|") + std::string("?") + std::to_string(e);
  return s;
}

bool float_text(uint32_t bits, std::string* out) {
  float f;
  std::memcpy(&f, &bits, 4);
  if (std::isnan(f)) {
    if (bits != 0x7fc00000u) return false;
    *out = "nan";
    return true;
  }
  if (std::isinf(f)) {
    *out = f < 0 ? "-inf" : "inf";
    return true;
  }
  for (int prec = 1; prec <= 9; ++prec) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", prec, static_cast<double>(f));
    uint32_t back;
    if (parse_float_text(b, &back) && back == bits) {
      *out = b;
      return true;
    }
  }
  return false;  // unreachable: 9 digits always round-trip a float
}

bool parse_float_text(const std::string& s, uint32_t* bits) {
  float f;
  if (s == "nan") {
    *bits = 0x7fc00000u;
    return true;
  }
  if (s == "inf" || s == "+inf") f = INFINITY;
  else if (s == "-inf") f = -INFINITY;
  else {
    if (s.empty()) return false;
    for (char c : s)
      if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        return false;
    char* end = nullptr;
    errno = 0;
    f = std::strtof(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    if (std::isinf(f)) return false;  // out of range for float32
  }
  std::memcpy(bits, &f, 4);
  return true;
}

bool enum_value(EnumId id, const std::string& name, uint32_t* value) {
  const EnumDef& e = enum_def(id);
  for (int i = 0; i < e.count; ++i)
    if (!strcasecmp(e.values[i].name, name.c_str())) {
      *value = e.values[i].value;
      return true;
    }
  return false;
}

std::string enum_text(EnumId id, uint64_t value) {
  const EnumDef& e = enum_def(id);
  for (int i = 0; i < e.count; ++i)
    if (e.values[i].value == value) return lower(e.values[i].name);
  return "";
}

}  // namespace n3::isa
