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
  uint64_t vars = 0, start_time = 0, end_time = 0;
  int timescale = 0;  // a time unit is 10^timescale s (fstReaderGetTimescale)
  // A time of the file in microseconds (the model's --trace unit).
  double us(uint64_t t) const {
    double s = double(t);
    for (int e = timescale + 6; e > 0; --e) s *= 10;
    for (int e = timescale + 6; e < 0; ++e) s /= 10;
    return s;
  }
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
  f.start_time = fstReaderGetStartTime(c);
  f.end_time = fstReaderGetEndTime(c);
  f.timescale = fstReaderGetTimescale(c);
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

// The times at which the first 1-bit variable whose full name ends in
// `.leaf` changes to 1, from the file's value changes (empty: no such
// variable, or it never rises).
inline std::vector<uint64_t> rises(const std::string& path, const std::string& leaf) {
  std::vector<uint64_t> out;
  void* c = fstReaderOpen(path.c_str());
  if (!c) return out;
  std::vector<std::string> scopes;
  fstHandle want = 0;
  while (const fstHier* h = fstReaderIterateHier(c)) {
    if (h->htyp == FST_HT_SCOPE) {
      scopes.emplace_back(h->u.scope.name, h->u.scope.name_length);
    } else if (h->htyp == FST_HT_UPSCOPE) {
      if (!scopes.empty()) scopes.pop_back();
    } else if (h->htyp == FST_HT_VAR && !want && h->u.var.length == 1 &&
               std::string(h->u.var.name, h->u.var.name_length) == leaf) {
      want = h->u.var.handle;
    }
  }
  if (want) {
    struct Acc {
      std::vector<uint64_t>* out;
      char last = '0';
    } acc{&out};
    fstReaderClrFacProcessMaskAll(c);
    fstReaderSetFacProcessMask(c, want);
    fstReaderIterBlocks(
        c,
        [](void* u, uint64_t t, fstHandle, const unsigned char* v) {
          Acc& a = *static_cast<Acc*>(u);
          if (v[0] == '1' && a.last != '1') a.out->push_back(t);
          a.last = char(v[0]);
        },
        &acc, nullptr);
  }
  fstReaderClose(c);
  return out;
}

}  // namespace n3::test
#endif
