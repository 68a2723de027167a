#include "isa/asm.h"

#include <cctype>
#include <cstring>
#include <strings.h>
#include <map>
#include <set>
#include <vector>

#include "isa/verify.h"

namespace n3::isa {

namespace {

struct Tok {
  std::string text;
  int col;  // 1-based
};

struct Line {
  int no;
  std::vector<std::string> labels;
  std::vector<int> label_cols;
  std::vector<Tok> toks;  // statement tokens (mnemonic or directive first)
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// Splits a line into tokens at spaces, tabs and commas; ';' starts a comment.
std::vector<Tok> split(const std::string& s) {
  std::vector<Tok> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ';') break;
    if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
      ++i;
      continue;
    }
    const size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != ';' && s[i] != '\r') ++i;
    out.push_back({s.substr(b, i - b), static_cast<int>(b) + 1});
  }
  return out;
}

class Assembler {
 public:
  Assembler(const std::string& file, const AsmOptions& opt) : file_(file), opt_(opt) {}

  Program run(const std::string& text) {
    parse_lines(text);
    pass1();
    pass2();
    prog_.canonicalise();
    if (prog_.code.empty()) throw AsmError(file_, last_line_, 1, "the program has no instructions");
    if (prog_.code.size() > static_cast<size_t>(kMaxProgramWords))
      throw AsmError(file_, last_line_, 1, "more than " + std::to_string(kMaxProgramWords) + " instructions");
    const int64_t n = static_cast<int64_t>(prog_.code.size());
    for (size_t i = 0, k = 0; i < prog_.symbols.size(); ++i) {
      const Symbol& s = prog_.symbols[i];
      if (s.kind != SymKind::Tensor) continue;
      if (s.at >= n)
        err(tensor_lines_[k].first, tensor_lines_[k].second,
            "tensor " + s.name + ": at=" + std::to_string(s.at) + " is beyond the last instruction");
      ++k;
    }
    for (uint32_t pc = 0; pc < prog_.code.size(); ++pc) {
      const Check c = check_word(prog_.code[pc]);
      if (!c.ok() && (opt_.verify || !raw_word_[pc])) err(pc_line_[pc], pc_col_[pc], c.message);
      if (opt_.verify && opcode_bits(prog_.code[pc]) == static_cast<uint32_t>(Opcode::BR)) {
        const int64_t t = int64_t(pc) + decode_br(prog_.code[pc]).target;
        if (t < 0 || t > n) err(pc_line_[pc], pc_col_[pc], "branch target " + std::to_string(t) + " is outside the program");
      }
      if (opt_.verify) {
        std::vector<Diag> d;
        verify_operands(prog_, pc, &d);
        if (!d.empty()) err(pc_line_[pc], pc_col_[pc], d[0].message);
      }
    }
    return std::move(prog_);
  }

 private:
  [[noreturn]] void err(int line, int col, const std::string& m) const { throw AsmError(file_, line, col, m); }
  [[noreturn]] void err(const Line& l, const Tok& t, const std::string& m) const { err(l.no, t.col, m); }

  void parse_lines(const std::string& text) {
    size_t pos = 0;
    int no = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      const std::string s = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++no;
      for (char c : s)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r')
          err(no, 1, "control character in the source");
      Line l;
      l.no = no;
      std::vector<Tok> toks = split(s);
      size_t k = 0;
      // Leading "name:" tokens are labels.
      while (k < toks.size() && toks[k].text.size() > 1 && toks[k].text.back() == ':' &&
             toks[k].text.find('=') == std::string::npos) {
        const std::string name = toks[k].text.substr(0, toks[k].text.size() - 1);
        if (!valid_symbol_name(name)) err(no, toks[k].col, "invalid label name '" + name + "'");
        l.labels.push_back(name);
        l.label_cols.push_back(toks[k].col);
        ++k;
      }
      l.toks.assign(toks.begin() + k, toks.end());
      if (!l.labels.empty() || !l.toks.empty()) lines_.push_back(std::move(l));
      if (nl == text.size()) break;
    }
    last_line_ = (!text.empty() && text.back() == '\n') ? no - 1 : no;
    if (last_line_ < 1) last_line_ = 1;
  }

  // ---- values ----------------------------------------------------------------

  static std::string strip_underscores(const std::string& s0) {
    if (s0.find('_') == std::string::npos) return s0;
    std::string s;
    for (char c : s0)
      if (c != '_') s += c;
    return s;
  }

  bool parse_int(const std::string& s0, int64_t* v, bool* neg_out = nullptr) const {
    const std::string s = strip_underscores(s0);
    if (s.empty()) return false;
    bool neg = false;
    size_t i = 0;
    if (s[0] == '-' || s[0] == '+') {
      neg = s[0] == '-';
      i = 1;
    }
    int base = 10;
    if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
      base = 16;
      i += 2;
    }
    if (i >= s.size()) return false;
    uint64_t acc = 0;
    for (; i < s.size(); ++i) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else return false;
      if (acc > (~0ull - d) / base) return false;  // overflow
      acc = acc * base + d;
    }
    if (neg) {
      if (acc > (1ull << 63)) return false;
      *v = acc == (1ull << 63) ? INT64_MIN : -static_cast<int64_t>(acc);
    } else {
      if (acc > static_cast<uint64_t>(INT64_MAX)) {
        // Only 64-bit raw words may need the top bit; callers that allow it use parse_u64.
        return false;
      }
      *v = static_cast<int64_t>(acc);
    }
    if (neg_out) *neg_out = neg;
    return true;
  }

  bool parse_u64(const std::string& s0, uint64_t* v) const {
    const std::string s = strip_underscores(s0);
    if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
      int64_t x;
      if (!parse_int(s, &x) || x < 0) return false;
      *v = static_cast<uint64_t>(x);
      return true;
    }
    uint64_t acc = 0;
    if (s.size() > 18) return false;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else return false;
      acc = acc << 4 | static_cast<uint64_t>(d);
    }
    *v = acc;
    return true;
  }

  int parse_reg(const Line& l, const Tok& t, const std::string& v) const {
    int64_t n;
    if (v.size() < 2 || (v[0] != 'r' && v[0] != 'R') || !parse_int(v.substr(1), &n) || n < 0 ||
        n >= kNumRegs || v[1] == '-' || v[1] == '+')
      err(l, t, "'" + v + "' is not a register (r0..r" + std::to_string(kNumRegs - 1) + ")");
    return static_cast<int>(n);
  }

  uint64_t parse_slot(const Line& l, const Tok& t, const std::string& v, bool desc) const {
    const uint64_t limit = desc ? kDescSlots : kConstSlots;
    if (v == "-") return 0;
    if (!v.empty() && v[0] == '#') {
      int64_t n;
      if (!parse_int(v.substr(1), &n) || n < 0 || static_cast<uint64_t>(n) >= limit || v[1] == '-' || v[1] == '+')
        err(l, t, "'" + v + "' is not a slot number below " + std::to_string(limit));
      return static_cast<uint64_t>(n);
    }
    const auto& m = desc ? desc_names_ : const_names_;
    auto it = m.find(v);
    if (it == m.end()) err(l, t, std::string("unknown ") + (desc ? "descriptor" : "constant") + " '" + v + "'");
    return it->second;
  }

  uint8_t parse_engines(const Line& l, const Tok& t, const std::string& v) const {
    if (v == "-") return 0;
    uint8_t m = 0;
    size_t b = 0;
    while (b <= v.size()) {
      size_t e = v.find('|', b);
      if (e == std::string::npos) e = v.size();
      const std::string n = v.substr(b, e - b);
      uint32_t id = 0;
      bool found = false;
      for (int k = 0; k < kNumEngines; ++k)
        if (!strcasecmp(n.c_str(), name_of(static_cast<Engine>(k)))) {
          id = static_cast<uint32_t>(k);
          found = true;
        }
      if (!found) err(l, t, "'" + n + "' is not an engine (ctl, dma, gemv, gemm, sfu)");
      if ((m >> id) & 1) err(l, t, "engine '" + n + "' named twice");
      m = static_cast<uint8_t>(m | (1u << id));
      b = e + 1;
    }
    return m;
  }

  // Raw bits of field f for text value v (instruction at pc, or a record: pc < 0).
  uint64_t parse_field(const Line& l, const Tok& t, const FieldDef& f, const std::string& v, int64_t pc) const {
    auto who = [&] { return std::string("field ") + f.name; };
    const uint64_t maxraw = f.width >= 64 ? ~0ull : (1ull << f.width) - 1;
    switch (f.type) {
      case FieldType::Uint: {
        uint64_t x;
        if (!parse_u64(v, &x)) err(l, t, who() + ": '" + v + "' is not an unsigned integer");
        if (x > maxraw) err(l, t, who() + ": " + v + " does not fit " + std::to_string(f.width) + " bits");
        return x;
      }
      case FieldType::Sint: {
        int64_t x;
        if (!parse_int(v, &x)) err(l, t, who() + ": '" + v + "' is not an integer");
        const int64_t lo = -(int64_t(1) << (f.width - 1)), hi = (int64_t(1) << (f.width - 1)) - 1;
        if (x < lo || x > hi) err(l, t, who() + ": " + v + " does not fit a signed " + std::to_string(f.width) + "-bit field");
        return static_cast<uint64_t>(x) & maxraw;
      }
      case FieldType::Offset: {
        int64_t x;
        if (!v.empty() && ident_start(v[0])) {
          auto it = labels_.find(v);
          if (it == labels_.end()) err(l, t, "unknown label '" + v + "'");
          x = static_cast<int64_t>(it->second) - pc;
        } else if (!parse_int(v, &x)) {
          err(l, t, who() + ": '" + v + "' is neither a label nor an offset");
        }
        const int64_t lo = -(int64_t(1) << (f.width - 1)), hi = (int64_t(1) << (f.width - 1)) - 1;
        if (x < lo || x > hi) err(l, t, who() + ": offset " + std::to_string(x) + " out of reach");
        return static_cast<uint64_t>(x) & maxraw;
      }
      case FieldType::Enum: {
        uint32_t x;
        if (!enum_value(f.enum_id, v, &x)) err(l, t, who() + ": '" + v + "' is not a " + enum_def(f.enum_id).name);
        if (!((f.allowed >> x) & 1)) err(l, t, who() + ": " + v + " is not allowed here");
        return x;
      }
      case FieldType::Desc:
        return parse_slot(l, t, v, true);
      case FieldType::Const:
        return parse_slot(l, t, v, false);
      case FieldType::Reg:
        return static_cast<uint64_t>(parse_reg(l, t, v));
      case FieldType::Engines:
        return parse_engines(l, t, v);
    }
    return 0;
  }

  static bool split_kv(const std::string& s, std::string* k, std::string* v) {
    const size_t e = s.find('=');
    if (e == std::string::npos || e == 0) return false;
    *k = s.substr(0, e);
    *v = s.substr(e + 1);
    return true;
  }

  // ---- pass 1: labels, descriptors, constants ---------------------------------

  void define(std::map<std::string, uint32_t>& m, const Line& l, const Tok& t, const std::string& name, uint32_t v,
              const char* what) {
    if (!valid_symbol_name(name)) err(l, t, std::string("invalid ") + what + " name '" + name + "'");
    if (!m.emplace(name, v).second) err(l, t, std::string(what) + " '" + name + "' defined twice");
  }

  void pass1() {
    uint32_t pc = 0;
    for (const Line& l : lines_) {
      for (size_t i = 0; i < l.labels.size(); ++i) {
        define(labels_, l, Tok{l.labels[i], l.label_cols[i]}, l.labels[i], pc, "label");
        prog_.symbols.push_back({SymKind::Label, l.labels[i], pc, -1});
      }
      if (l.toks.empty()) continue;
      const Tok& head = l.toks[0];
      if (head.text == ".desc") {
        desc_directive(l);
      } else if (head.text == ".const") {
        const_directive(l);
      } else if (head.text == ".isa") {
        int64_t v;
        if (l.toks.size() != 2 || !parse_int(l.toks[1].text, &v)) err(l, head, ".isa takes one version number");
        if (v != kIsaVersion)
          err(l, l.toks[1], "this assembler implements ISA version " + std::to_string(kIsaVersion) + ", not " +
                                l.toks[1].text);
      } else if (head.text == ".tensor" || head.text == ".region") {
        // pass 2 (they may name labels defined later)
      } else if (head.text == ".word" || head.text[0] != '.') {
        if (pc >= static_cast<uint32_t>(kMaxProgramWords)) err(l, head, "program too long");
        ++pc;
      } else {
        err(l, head, "unknown directive '" + head.text + "'");
      }
    }
  }

  void desc_directive(const Line& l) {
    if (l.toks.size() < 2) err(l, l.toks[0], ".desc needs a name (or '-') and fields");
    if (prog_.descs.size() >= static_cast<size_t>(kDescSlots))
      err(l, l.toks[0], "more than " + std::to_string(kDescSlots - 1) + " descriptors");
    const uint32_t slot = static_cast<uint32_t>(prog_.descs.size());
    const Tok& nt = l.toks[1];
    if (nt.text != "-") {
      define(desc_names_, l, nt, nt.text, slot, "descriptor");
      prog_.symbols.push_back({SymKind::Desc, nt.text, slot, -1});
    }
    DescWords w{};
    std::set<std::string> given;
    for (size_t i = 2; i < l.toks.size(); ++i) {
      const Tok& t = l.toks[i];
      std::string k, v;
      if (!split_kv(t.text, &k, &v)) err(l, t, "expected field=value, got '" + t.text + "'");
      if (!given.insert(k).second) err(l, t, "field '" + k + "' given twice");
      if (k == "raw") {
        if (l.toks.size() != 3) err(l, t, "raw= stands alone");
        size_t b = 0;
        for (int word = 0; word < kDescWords; ++word) {
          size_t e = v.find(':', b);
          if ((e == std::string::npos) != (word == kDescWords - 1)) err(l, t, "raw= takes 4 words joined by ':'");
          if (e == std::string::npos) e = v.size();
          if (!parse_u64(v.substr(b, e - b), &w[word])) err(l, t, "raw=: bad word '" + v.substr(b, e - b) + "'");
          b = e + 1;
        }
        continue;
      }
      const FieldDef* f = nullptr;
      for (int j = 0; j < kNumRecordFields_desc; ++j)
        if (k == kRecordFields_desc[j].name) f = &kRecordFields_desc[j];
      if (!f) err(l, t, "unknown descriptor field '" + k + "'");
      w[f->word] = field_put(w[f->word], *f, parse_field(l, t, *f, v, -1));
    }
    if (!given.count("raw")) {
      const Check c = check_desc(w.data());
      if (!c.ok()) err(l, nt, c.message);
      const DescCheck dc = desc_problem(decode_desc(w.data()));
      if (!dc.ok() && opt_.verify) err(l, nt, "descriptor " + nt.text + ": " + dc.message);
    }
    prog_.descs.push_back(w);
  }

  void const_directive(const Line& l) {
    if (l.toks.size() < 3) err(l, l.toks[0], ".const needs a name (or '-'), a type (f32, i32) and a value");
    if (prog_.consts.size() >= static_cast<size_t>(kConstSlots))
      err(l, l.toks[0], "more than " + std::to_string(kConstSlots - 1) + " constants");
    const uint32_t slot = static_cast<uint32_t>(prog_.consts.size());
    const Tok& nt = l.toks[1];
    if (nt.text != "-") {
      define(const_names_, l, nt, nt.text, slot, "constant");
      prog_.symbols.push_back({SymKind::Const, nt.text, slot, -1});
    }
    ConstRecord r;
    uint64_t word = 0;
    const Tok& tt = l.toks[2];
    std::string k, v;
    if (split_kv(tt.text, &k, &v) && k == "raw") {
      if (l.toks.size() != 3) err(l, tt, "raw= stands alone");
      if (!parse_u64(v, &word)) err(l, tt, "raw=: bad word '" + v + "'");
      prog_.consts.push_back(word);
      return;
    }
    if (l.toks.size() != 4) err(l, tt, ".const takes a type and one value");
    const Tok& vt = l.toks[3];
    if (lower(tt.text) == "f32") {
      uint32_t bits;
      if (!parse_float_text(vt.text, &bits)) err(l, vt, "'" + vt.text + "' is not a float32 value");
      r.dtype = Dtype::F32;
      r.value = bits;
    } else if (lower(tt.text) == "i32") {
      int64_t x;
      if (!parse_int(vt.text, &x) || x < INT32_MIN || x > INT32_MAX)
        err(l, vt, "'" + vt.text + "' is not a 32-bit integer");
      r.dtype = Dtype::INT32;
      r.value = static_cast<uint32_t>(static_cast<int32_t>(x));
    } else {
      err(l, tt, "constant type must be f32 or i32");
    }
    encode(r, &word);
    prog_.consts.push_back(word);
  }

  // ---- pass 2: instructions, tensors, regions --------------------------------

  void pass2() {
    for (const Line& l : lines_) {
      if (l.toks.empty()) continue;
      const Tok& head = l.toks[0];
      if (head.text == ".tensor") tensor_directive(l);
      else if (head.text == ".region") region_directive(l);
      else if (head.text == ".word") word_directive(l);
      else if (head.text[0] != '.') instruction(l);
    }
  }

  void push_word(const Line& l, int col, uint64_t w, bool raw = false) {
    prog_.code.push_back(w);
    raw_word_.push_back(raw);
    pc_line_.push_back(l.no);
    pc_col_.push_back(col);
  }

  void word_directive(const Line& l) {
    uint64_t w;
    if (l.toks.size() != 2 || !parse_u64(l.toks[1].text, &w)) err(l, l.toks[0], ".word takes one 64-bit value");
    push_word(l, l.toks[0].col, w, true);
  }

  void tensor_directive(const Line& l) {
    if (l.toks.size() < 3) err(l, l.toks[0], ".tensor needs a name and desc=");
    const Tok& nt = l.toks[1];
    if (!valid_symbol_name(nt.text)) err(l, nt, "invalid tensor name '" + nt.text + "'");
    if (!tensor_names_.insert(nt.text).second) err(l, nt, "tensor '" + nt.text + "' defined twice");
    Symbol s{SymKind::Tensor, nt.text, 0, -1};
    bool have_desc = false;
    std::set<std::string> given;
    for (size_t i = 2; i < l.toks.size(); ++i) {
      const Tok& t = l.toks[i];
      std::string k, v;
      if (!split_kv(t.text, &k, &v)) err(l, t, "expected key=value, got '" + t.text + "'");
      if (!given.insert(k).second) err(l, t, "'" + k + "' given twice");
      if (k == "desc") {
        const uint64_t slot = parse_slot(l, t, v, true);
        if (slot == 0) err(l, t, "a tensor needs a descriptor");
        s.index = static_cast<uint32_t>(slot);
        have_desc = true;
      } else if (k == "at") {
        int64_t x;
        if (v == "end") {
          s.at = -1;
        } else if (!v.empty() && ident_start(v[0])) {
          auto it = labels_.find(v);
          if (it == labels_.end()) err(l, t, "unknown label '" + v + "'");
          s.at = static_cast<int32_t>(it->second);
        } else if (parse_int(v, &x) && x >= 0 && x < kMaxProgramWords) {
          s.at = static_cast<int32_t>(x);
        } else {
          err(l, t, "at= takes a label, an instruction index or 'end'");
        }
      } else {
        err(l, t, "unknown key '" + k + "' (desc, at)");
      }
    }
    if (!have_desc) err(l, nt, ".tensor needs desc=");
    tensor_lines_.push_back({l.no, nt.col});
    prog_.symbols.push_back(std::move(s));
  }

  void region_directive(const Line& l) {
    if (l.toks.size() < 2) err(l, l.toks[0], ".region needs a name");
    Region r;
    r.name = l.toks[1].text;
    if (!valid_symbol_name(r.name)) err(l, l.toks[1], "invalid region name '" + r.name + "'");
    std::set<std::string> given;
    for (size_t i = 2; i < l.toks.size(); ++i) {
      const Tok& t = l.toks[i];
      std::string k, v;
      if (!split_kv(t.text, &k, &v)) err(l, t, "expected key=value, got '" + t.text + "'");
      if (!given.insert(k).second) err(l, t, "'" + k + "' given twice");
      if (k == "space") {
        uint32_t x;
        if (!enum_value(EnumId::Space, v, &x)) err(l, t, "'" + v + "' is not a space (ddr, l2, wbuf)");
        r.space = static_cast<Space>(x);
      } else if (k == "role") {
        if (!parse_region_role(v, &r.role)) err(l, t, "'" + v + "' is not a role (input, output, weights, kv, scratch)");
      } else if (k == "base") {
        if (!parse_u64(v, &r.base)) err(l, t, "base: '" + v + "' is not an address");
      } else if (k == "size") {
        if (!parse_u64(v, &r.size)) err(l, t, "size: '" + v + "' is not a size");
      } else {
        err(l, t, "unknown key '" + k + "' (space, role, base, size)");
      }
    }
    for (const char* k : {"space", "role", "base", "size"})
      if (!given.count(k)) err(l, l.toks[1], std::string(".region needs ") + k + "=");
    if (r.base + r.size < r.base) err(l, l.toks[1], "base + size overflows");
    prog_.regions.push_back(std::move(r));
  }

  // "gemv.mv" -> (opcode, sub-function); "gemv" -> (opcode, null) for the error message.
  static const std::map<std::string, std::pair<const OpcodeDef*, const SubopDef*>>& mnemonics() {
    static const auto* m = [] {
      auto* t = new std::map<std::string, std::pair<const OpcodeDef*, const SubopDef*>>;
      for (int i = 0; i < kNumOpcodes; ++i) {
        const OpcodeDef* d = opcode_def_at(i);
        (*t)[lower(d->name)] = {d, d->subop_field < 0 ? &d->subops[0] : nullptr};
        for (int k = 0; k < d->n_subops && d->subop_field >= 0; ++k) (*t)[mnemonic(*d, d->subops[k])] = {d, &d->subops[k]};
      }
      return t;
    }();
    return *m;
  }

  void instruction(const Line& l) {
    const Tok& head = l.toks[0];
    auto found = mnemonics().find(lower(head.text));
    if (found == mnemonics().end()) {
      const std::string op = lower(head.text.substr(0, head.text.find('.')));
      auto base = mnemonics().find(op);
      if (base == mnemonics().end()) err(l, head, "unknown instruction '" + head.text + "'");
      const OpcodeDef* d = base->second.first;
      if (d->subop_field < 0) err(l, head, std::string(d->name) + " has no sub-functions");
      std::string all;
      for (int i = 0; i < d->n_subops; ++i) all += (i ? ", ." : "") + lower(d->subops[i].name);
      err(l, head, "'" + head.text + "': " + lower(d->name) + " takes one of ." + all);
    }
    const OpcodeDef* d = found->second.first;
    const SubopDef* s = found->second.second;
    if (!s) {
      std::string all;
      for (int i = 0; i < d->n_subops; ++i) all += (i ? ", ." : "") + lower(d->subops[i].name);
      err(l, head, "'" + head.text + "': " + lower(d->name) + " takes one of ." + all);
    }
    const int64_t pc = static_cast<int64_t>(prog_.code.size());
    uint64_t w = uint64_t(static_cast<uint32_t>(d->opcode)) << kHdr_opcode_lo;
    if (d->subop_field >= 0) w = field_put(w, d->fields[d->subop_field], s->value);
    uint32_t given = 0;  // bit per field index
    for (size_t i = 1; i < l.toks.size(); ++i) {
      const Tok& t = l.toks[i];
      std::string k, v;
      if (!split_kv(t.text, &k, &v)) err(l, t, "expected field=value, got '" + t.text + "'");
      const int fi = field_index(*d, k.c_str());
      if (fi < 0 || fi == 0 || fi == d->subop_field)
        err(l, t, "'" + k + "' is not a field of " + mnemonic(*d, *s));
      if (!((s->used >> fi) & 1)) err(l, t, "field '" + k + "' is not used by " + mnemonic(*d, *s));
      if ((given >> fi) & 1) err(l, t, "field '" + k + "' given twice");
      given |= 1u << fi;
      w = field_put(w, d->fields[fi], parse_field(l, t, d->fields[fi], v, pc));
    }
    for (int i = 0; i < s->n_operands; ++i) {
      const OperandDef& od = s->operands[i];
      const FieldDef& f = d->fields[od.field];
      // Registers default to r0 and optional slots to '-'; everything else must be written.
      const bool defaultable = f.type == FieldType::Reg || od.optional;
      if (!((given >> od.field) & 1) && !defaultable)
        err(l, head, mnemonic(*d, *s) + " needs " + f.name + "=");
    }
    push_word(l, head.col, w);
  }

  std::string file_;
  AsmOptions opt_;
  std::vector<Line> lines_;
  int last_line_ = 1;
  Program prog_;
  std::map<std::string, uint32_t> labels_, desc_names_, const_names_;
  std::set<std::string> tensor_names_;
  std::vector<std::pair<int, int>> tensor_lines_;
  std::vector<int> pc_line_, pc_col_;
  std::vector<bool> raw_word_;  // from .word: judged only when verifying
};

}  // namespace

Program assemble(const std::string& text, const std::string& file, const AsmOptions& opt) {
  return Assembler(file, opt).run(text);
}

}  // namespace n3::isa
