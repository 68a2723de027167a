// The fuzz targets as plain functions: libFuzzer calls them through the
// *_fuzz.cc entry points (clang builds, docs/fuzzing.md), and the default
// test suite replays the checked-in corpora of tests/fuzz_corpus/ through
// them (tests/isa_fuzz_corpus_test.cc). A property violation aborts.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "isa/asm.h"
#include "isa/dis.h"
#include "isa/verify.h"
#include "sim/func_sim.h"

namespace n3::fuzz {

using namespace n3::isa;

// Instruction words and table records. Every 8 bytes are a word: it is valid or rejected with a message, never a crash; a valid word
// survives the typed decode/encode; every word survives dis/asm (invalid
// words as .word). Every 32 bytes are also a descriptor, every 8 a constant.
inline int fuzz_decode(const uint8_t* data, size_t size) {
  std::string text;
  std::vector<uint64_t> words;
  for (size_t off = 0; off + 8 <= size; off += 8) {
    uint64_t w;
    std::memcpy(&w, data + off, 8);
    const Check c = check_word(w);
    if (c.ok() != c.message.empty()) std::abort();  // a rejection always says why
    if (c.ok() && reencode(w) != w) std::abort();
    text += disassemble_word(w) + "\n";
    words.push_back(w);
    (void)check_const(w);
  }
  for (size_t off = 0; off + 32 <= size; off += 32) {
    uint64_t d[4];
    std::memcpy(d, data + off, 32);
    if (check_desc(d).ok()) (void)desc_problem(decode_desc(d));
  }
  if (words.empty()) return 0;
  AsmOptions o;
  o.verify = false;
  const Program p = assemble(text, "fuzz", o);
  if (p.code != words) std::abort();
  return 0;
}

// Assembly text. Any input assembles or fails with an AsmError (file:line:column); whatever assembles disassembles to canonical
// text that reassembles to the same container and is a fixed point.
inline int fuzz_asm(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  AsmOptions o;
  o.verify = (size & 1) != 0;  // both modes
  Program p;
  try {
    p = assemble(text, "fuzz.s", o);
  } catch (const AsmError&) {
    return 0;
  }
  const std::string canon = disassemble(p);
  AsmOptions raw;
  raw.verify = false;
  const Program q = assemble(canon, "canon.s", raw);
  if (serialize(q) != serialize(p)) std::abort();
  if (disassemble(q) != canon) std::abort();
  return 0;
}

// Program containers. Any bytes load or fail with an n3::Error; a loaded program passes the static checks without crashing and
// disassembles to text that reassembles to the same program.
inline int fuzz_load(const uint8_t* data, size_t size) {
  Program p;
  try {
    p = parse_program(data, size, "fuzz.n3p", /*check_crc=*/false);
  } catch (const n3::Error&) {
    return 0;
  }
  (void)verify_program(p);
  AsmOptions raw;
  raw.verify = false;
  const Program q = assemble(disassemble(p), "dis.s", raw);
  p.canonicalise();
  if (!(q == p)) std::abort();
  return 0;
}

// Programs run on the functional simulator with small
// memories and a step budget. Whatever a loadable program does, the
// simulator finishes or traps; it never crashes, reads out of bounds or
// runs forever.
inline int fuzz_sim(const uint8_t* data, size_t size) {
  isa::Program p;
  try {
    p = isa::parse_program(data, size, "fuzz.n3p", /*check_crc=*/false);
  } catch (const Error&) {
    return 0;
  }
  sim::SimOptions o;
  o.caps.ddr = 1 << 20;
  o.caps.l2 = 1 << 18;
  o.caps.wbuf = 1 << 16;
  o.max_steps = 2000;
  try {
    sim::FuncSim s(p, o);
    s.run();
  } catch (const Error&) {  // traps and bad programs
  }
  return 0;
}

}  // namespace n3::fuzz
