#include "isa/program.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "base/error.h"

namespace n3::isa {

namespace {

constexpr char kMagic[8] = {'N', '3', 'P', 'R', 'O', 'G', 0, 0};
constexpr size_t kSymBytes = 16, kRegionBytes = 32;

void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(std::vector<uint8_t>& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

int kind_rank(SymKind k) { return static_cast<int>(k); }

}  // namespace

const char* sym_kind_name(SymKind k) {
  switch (k) {
    case SymKind::Desc:
      return "desc";
    case SymKind::Const:
      return "const";
    case SymKind::Label:
      return "label";
    case SymKind::Tensor:
      return "tensor";
  }
  return "?";
}

const char* region_role_name(RegionRole r) {
  switch (r) {
    case RegionRole::Input:
      return "input";
    case RegionRole::Output:
      return "output";
    case RegionRole::Weights:
      return "weights";
    case RegionRole::Kv:
      return "kv";
    case RegionRole::Scratch:
      return "scratch";
  }
  return "?";
}

bool parse_region_role(const std::string& s, RegionRole* r) {
  for (int i = 0; i <= static_cast<int>(RegionRole::Scratch); ++i)
    if (s == region_role_name(static_cast<RegionRole>(i))) {
      *r = static_cast<RegionRole>(i);
      return true;
    }
  return false;
}

bool valid_symbol_name(const std::string& s) {
  if (s.empty() || s.size() > 255) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!(alpha(c) || (c >= '0' && c <= '9') || c == '.')) return false;
  return true;
}

std::string Program::name_of(SymKind k, uint32_t index) const {
  for (const Symbol& s : symbols)
    if (s.kind == k && s.index == index) return s.name;
  return "";
}

const Symbol* Program::find(SymKind k, const std::string& name) const {
  for (const Symbol& s : symbols)
    if (s.kind == k && s.name == name) return &s;
  return nullptr;
}

void Program::canonicalise() {
  std::stable_sort(symbols.begin(), symbols.end(), [](const Symbol& a, const Symbol& b) {
    if (a.kind != b.kind) return kind_rank(a.kind) < kind_rank(b.kind);
    if (a.kind == SymKind::Tensor) return false;  // keep the order given
    return a.index < b.index;
  });
}

uint32_t crc32(const uint8_t* data, size_t n) {
  static uint32_t table[256];
  static bool init = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return true;
  }();
  (void)init;
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

std::vector<uint8_t> serialize(const Program& p) {
  std::vector<uint8_t> strtab;
  auto add_name = [&](const std::string& s) {
    const uint32_t off = static_cast<uint32_t>(strtab.size());
    strtab.insert(strtab.end(), s.begin(), s.end());
    strtab.push_back(0);
    return off;
  };
  std::vector<uint32_t> sym_off, reg_off;
  for (const Symbol& s : p.symbols) sym_off.push_back(add_name(s.name));
  for (const Region& r : p.regions) reg_off.push_back(add_name(r.name));
  while (strtab.size() % 8) strtab.push_back(0);

  std::vector<uint8_t> body;
  for (uint64_t w : p.code) put64(body, w);
  for (const DescWords& d : p.descs)
    for (uint64_t w : d) put64(body, w);
  for (uint64_t c : p.consts) put64(body, c);
  for (size_t i = 0; i < p.symbols.size(); ++i) {
    const Symbol& s = p.symbols[i];
    put32(body, sym_off[i]);
    body.push_back(static_cast<uint8_t>(s.kind));
    body.insert(body.end(), 3, 0);
    put32(body, s.index);
    put32(body, static_cast<uint32_t>(s.at));
  }
  for (size_t i = 0; i < p.regions.size(); ++i) {
    const Region& r = p.regions[i];
    put32(body, reg_off[i]);
    body.push_back(static_cast<uint8_t>(r.space));
    body.push_back(static_cast<uint8_t>(r.role));
    body.insert(body.end(), 2, 0);
    put64(body, r.base);
    put64(body, r.size);
    put64(body, 0);
  }
  body.insert(body.end(), strtab.begin(), strtab.end());

  std::vector<uint8_t> out(kMagic, kMagic + 8);
  put32(out, kProgramFormatVersion);
  put32(out, kIsaVersion);
  put32(out, static_cast<uint32_t>(p.code.size()));
  put32(out, static_cast<uint32_t>(p.descs.size()));
  put32(out, static_cast<uint32_t>(p.consts.size()));
  put32(out, static_cast<uint32_t>(p.symbols.size()));
  put32(out, static_cast<uint32_t>(p.regions.size()));
  put32(out, static_cast<uint32_t>(strtab.size()));
  put32(out, crc32(body.data(), body.size()));
  out.resize(kProgramHeaderBytes, 0);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Program parse_program(const uint8_t* data, size_t size, const std::string& what, bool check_crc) {
  auto bad = [&](const std::string& m) { return Error(what + ": " + m); };
  if (size < kProgramHeaderBytes) throw bad("too short for an n3 program (" + std::to_string(size) + " bytes)");
  if (std::memcmp(data, kMagic, 8) != 0) throw bad("not an n3 program (bad magic; assemble it with 'n3 asm')");
  const uint32_t fmt = get32(data + 8), isa_ver = get32(data + 12);
  if (fmt != kProgramFormatVersion)
    throw bad("container format " + std::to_string(fmt) + ", this n3 reads format " +
              std::to_string(kProgramFormatVersion) + " (re-assemble the program with this n3)");
  if (isa_ver != static_cast<uint32_t>(kIsaVersion))
    throw bad("built for ISA version " + std::to_string(isa_ver) + ", this n3 implements version " +
              std::to_string(kIsaVersion) + " (re-assemble the program with this n3)");
  const uint64_t n_code = get32(data + 16), n_desc = get32(data + 20), n_const = get32(data + 24),
                 n_sym = get32(data + 28), n_reg = get32(data + 32), n_str = get32(data + 36);
  const uint32_t crc = get32(data + 40);
  for (size_t i = 44; i < kProgramHeaderBytes; ++i)
    if (data[i]) throw bad("reserved header byte " + std::to_string(i) + " is not zero");
  if (n_code == 0) throw bad("no instructions");
  if (n_code > static_cast<uint64_t>(kMaxProgramWords))
    throw bad(std::to_string(n_code) + " instructions, more than the " + std::to_string(kMaxProgramWords) +
              " a program may hold");
  if (n_desc < 1 || n_desc > static_cast<uint64_t>(kDescSlots))
    throw bad("descriptor count " + std::to_string(n_desc) + " not in [1, " + std::to_string(kDescSlots) + "]");
  if (n_const < 1 || n_const > static_cast<uint64_t>(kConstSlots))
    throw bad("constant count " + std::to_string(n_const) + " not in [1, " + std::to_string(kConstSlots) + "]");
  if (n_str % 8) throw bad("string table size " + std::to_string(n_str) + " is not a multiple of 8");
  const uint64_t need = kProgramHeaderBytes + n_code * 8 + n_desc * 8 * kDescWords + n_const * 8 +
                        n_sym * kSymBytes + n_reg * kRegionBytes + n_str;
  if (need != size)
    throw bad("size " + std::to_string(size) + " bytes does not match its header (" + std::to_string(need) +
              " bytes): truncated or corrupt");
  if (check_crc && crc32(data + kProgramHeaderBytes, size - kProgramHeaderBytes) != crc)
    throw bad("checksum mismatch: the file is corrupt");

  Program p;
  const uint8_t* q = data + kProgramHeaderBytes;
  p.code.resize(n_code);
  for (auto& w : p.code) w = get64(q), q += 8;
  p.descs.assign(n_desc, DescWords{});
  for (auto& d : p.descs)
    for (auto& w : d) w = get64(q), q += 8;
  p.consts.assign(n_const, 0);
  for (auto& c : p.consts) c = get64(q), q += 8;
  for (uint64_t w : p.descs[0])
    if (w) throw bad("descriptor slot 0 (the null descriptor) is not all zero");
  if (p.consts[0]) throw bad("constant slot 0 (the null constant) is not zero");

  const uint8_t* sym = q;
  const uint8_t* reg = sym + n_sym * kSymBytes;
  const uint8_t* str = reg + n_reg * kRegionBytes;
  auto name_at = [&](uint32_t off, const std::string& who) {
    if (off >= n_str) throw bad(who + ": name offset " + std::to_string(off) + " outside the string table");
    const void* nul = std::memchr(str + off, 0, n_str - off);
    if (!nul) throw bad(who + ": name is not NUL-terminated");
    std::string s(reinterpret_cast<const char*>(str + off), static_cast<const uint8_t*>(nul) - (str + off));
    if (!valid_symbol_name(s)) throw bad(who + ": invalid name");
    return s;
  };
  std::set<std::pair<int, std::string>> seen;
  std::set<std::pair<int, uint32_t>> named;
  for (uint64_t i = 0; i < n_sym; ++i, sym += kSymBytes) {
    const std::string who = "symbol " + std::to_string(i);
    Symbol s;
    const uint8_t kind = sym[4];
    if (kind < 1 || kind > 4) throw bad(who + ": unknown kind " + std::to_string(kind));
    if (sym[5] || sym[6] || sym[7]) throw bad(who + ": reserved bytes are not zero");
    s.kind = static_cast<SymKind>(kind);
    s.name = name_at(get32(sym), who);
    s.index = get32(sym + 8);
    s.at = static_cast<int32_t>(get32(sym + 12));
    const std::string who2 = who + " (" + sym_kind_name(s.kind) + " " + s.name + ")";
    switch (s.kind) {
      case SymKind::Desc:
        if (s.index == 0 || s.index >= n_desc) throw bad(who2 + ": slot " + std::to_string(s.index) + " out of range");
        break;
      case SymKind::Const:
        if (s.index == 0 || s.index >= n_const) throw bad(who2 + ": slot " + std::to_string(s.index) + " out of range");
        break;
      case SymKind::Label:
        if (s.index > n_code) throw bad(who2 + ": instruction " + std::to_string(s.index) + " out of range");
        break;
      case SymKind::Tensor:
        if (s.index == 0 || s.index >= n_desc) throw bad(who2 + ": slot " + std::to_string(s.index) + " out of range");
        if (s.at < -1 || s.at >= static_cast<int64_t>(n_code))
          throw bad(who2 + ": capture point " + std::to_string(s.at) + " out of range");
        break;
    }
    if (s.kind != SymKind::Tensor && s.at != -1) throw bad(who2 + ": 'at' must be -1");
    if (!seen.insert({kind, s.name}).second) throw bad(who2 + ": name defined twice");
    if ((s.kind == SymKind::Desc || s.kind == SymKind::Const) && !named.insert({kind, s.index}).second)
      throw bad(who2 + ": slot " + std::to_string(s.index) + " already has a name");
    p.symbols.push_back(std::move(s));
  }
  for (uint64_t i = 0; i < n_reg; ++i, reg += kRegionBytes) {
    const std::string who = "region " + std::to_string(i);
    Region r;
    r.name = name_at(get32(reg), who);
    if (!valid_space(reg[4])) throw bad(who + " (" + r.name + "): reserved space " + std::to_string(reg[4]));
    if (reg[5] > static_cast<uint8_t>(RegionRole::Scratch))
      throw bad(who + " (" + r.name + "): unknown role " + std::to_string(reg[5]));
    if (reg[6] || reg[7] || get64(reg + 24)) throw bad(who + " (" + r.name + "): reserved bytes are not zero");
    r.space = static_cast<Space>(reg[4]);
    r.role = static_cast<RegionRole>(reg[5]);
    r.base = get64(reg + 8);
    r.size = get64(reg + 16);
    if (r.base + r.size < r.base) throw bad(who + " (" + r.name + "): base + size overflows");
    p.regions.push_back(std::move(r));
  }
  return p;
}

}  // namespace n3::isa
