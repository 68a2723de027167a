// An FST waveform as GTKWave reads it: opened with fstapi, the reader
// GTKWave itself uses (Verilator ships a copy, compiled into the Verilated
// models' runtime), so a file this accepts is one GTKWave opens.
#pragma once
#ifdef N3_HAVE_RTL
#include <cstdint>
#include <string>
#include <vector>

#include <gtkwave/fstapi.h>

namespace n3::test {

struct FstFile {
  bool opened = false;
  uint64_t vars = 0, end_time = 0;
  std::vector<std::string> names;  // every variable's full name: its scopes and itself, joined by '.'
  // Whether a variable's full name ends in `.leaf` (a signal of that name).
  bool has(const std::string& leaf) const {
    for (const std::string& n : names)
      if (n.size() > leaf.size() && n.compare(n.size() - leaf.size(), leaf.size(), leaf) == 0 &&
          n[n.size() - leaf.size() - 1] == '.')
        return true;
    return false;
  }
  // Whether a variable's full name contains `part` (e.g. a scope path).
  bool mentions(const std::string& part) const {
    for (const std::string& n : names)
      if (n.find(part) != std::string::npos) return true;
    return false;
  }
};

inline FstFile read_fst(const std::string& path) {
  FstFile f;
  void* c = fstReaderOpen(path.c_str());
  if (!c) return f;
  f.opened = true;
  f.vars = fstReaderGetVarCount(c);
  f.end_time = fstReaderGetEndTime(c);
  std::vector<std::string> scopes;
  while (const fstHier* h = fstReaderIterateHier(c)) {
    if (h->htyp == FST_HT_SCOPE) {
      scopes.emplace_back(h->u.scope.name, h->u.scope.name_length);
    } else if (h->htyp == FST_HT_UPSCOPE) {
      if (!scopes.empty()) scopes.pop_back();
    } else if (h->htyp == FST_HT_VAR) {
      std::string n;
      for (const std::string& s : scopes) n += s + ".";
      // Verilator names a vector "x [63:0]": the signal is "x".
      const std::string v(h->u.var.name, h->u.var.name_length);
      f.names.push_back(n + v.substr(0, v.find(" [")));
    }
  }
  fstReaderClose(c);
  return f;
}

}  // namespace n3::test
#endif
