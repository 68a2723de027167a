// The assembler, the disassembler and the program container: canonical text
// is a fixed point (dis(asm(x)) == x), containers reassemble byte for byte
// (asm(dis(p)) == p), errors name file:line:column, and the loader rejects
// damaged containers with a reason instead of crashing.
#include <gtest/gtest.h>

#include <filesystem>

#include "isa/dis.h"
#include "isa/verify.h"
#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

using namespace isa;

std::string asm_error(const std::string& text, bool verify = true) {
  try {
    assemble_text(text, verify);
  } catch (const AsmError& e) {
    return e.what();
  }
  return "";
}

TEST(IsaAsm, ExamplesRoundTrip) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/isa/examples")) {
    if (e.path().extension() != ".s") continue;
    SCOPED_TRACE(e.path().string());
    const Program p = assemble_example(e.path().filename().string());
    const std::vector<uint8_t> bin = serialize(p);
    const std::string text = disassemble(p);
    const Program q = assemble_text(text);
    EXPECT_EQ(serialize(q), bin) << "asm(dis(p)) != p";
    EXPECT_EQ(disassemble(q), text) << "dis(asm(x)) != x for canonical x";
    EXPECT_TRUE(verify_program(p).empty());
    ++n;
  }
  EXPECT_GE(n, 5);
}

TEST(IsaAsm, CanonicalTextIsAFixedPoint) {
  // Anonymous slots, raw records, labels at the end, numeric capture points.
  const std::string text =
      "; n3 program, ISA version 1 (n3 dis)\n"
      ".isa 1\n"
      ".region io space=wbuf role=scratch base=0x40 size=0x100\n"
      ".desc a dtype=bf16 space=l2 base=0x0 rows=2 cols=8 row_stride=16\n"
      ".desc - dtype=f32 space=l2 base=0x100 rows=2 cols=8 row_stride=32 row_reg=r3 dyn_reg=r2 dyn_dim=cols\n"
      ".desc odd raw=0x80:0x0:0x0:0x1\n"
      ".const eps f32 1e-06\n"
      ".const - i32 -5\n"
      ".const nan f32 nan\n"
      ".const payload raw=0x7fc0000100000000\n"
      ".tensor a.out desc=a at=1\n"
      ".tensor b desc=#2\n"
      "top:\n"
      "    cvo.rmsnorm dst=#2 a=a b=- k=eps wait=dma|gemv signal=ctl\n"
      "    alui.xor rd=r15 rs1=r0 imm=-1\n"
      "    br.geu rs1=r1 rs2=r2 target=end\n"
      "    br.al target=top\n"
      "    .word 0xf000000000000000\n"
      "    sys.halt\n"
      "end:\n";
  const Program p = assemble_text(text, false);
  EXPECT_EQ(disassemble(p), text);
  const std::vector<uint8_t> bin = serialize(p);
  EXPECT_EQ(serialize(parse_program(bin.data(), bin.size(), "p")), bin);
  EXPECT_EQ(p.descs.size(), 4u);
  EXPECT_EQ(p.consts.size(), 5u);
}

TEST(IsaAsm, ErrorsNameFileLineColumn) {
  const char* d = ".desc x dtype=f32 space=l2 base=0x0 rows=1 cols=8 row_stride=32\n";
  struct Case {
    std::string text, where, what;
  };
  const Case cases[] = {
      {"  gemv.xx dst=x\n", "test.s:1:3:", "gemv takes one of .mv, .qk, .pv"},
      {"nop\n", "test.s:1:1:", "unknown instruction 'nop'"},
      {std::string(d) + "  cvo.exp dst=x a=y\n", "test.s:2:17:", "unknown descriptor 'y'"},
      {std::string(d) + "  cvo.exp dst=x a=x b=x\n", "test.s:2:21:", "field 'b' is not used by cvo.exp"},
      {std::string(d) + "  cvo.exp dst=x\n", "test.s:2:3:", "cvo.exp needs a="},
      {std::string(d) + "  cvo.exp dst=x a=x a=x\n", "test.s:2:21:", "given twice"},
      {"  alui.add rd=r1 rs1=r0 imm=4294967296\n", "test.s:1:25:", "does not fit a signed 32-bit field"},
      {"  alui.add rd=r16 rs1=r0 imm=1\n", "test.s:1:12:", "is not a register"},
      {"  br.al target=nowhere\n", "test.s:1:9:", "unknown label 'nowhere'"},
      {"a:\na:\n  sys.halt\n", "test.s:2:1:", "label 'a' defined twice"},
      {".desc x dtype=f64 space=l2\n", "test.s:1:9:", "is not a dtype"},
      {".desc x dtype=f32 space=l2 base=0x8 rows=1 cols=8 row_stride=32\n  sys.halt\n", "test.s:1:7:", "16-byte aligned"},
      {".const k f16 1\n", "test.s:1:10:", "f32 or i32"},
      {".bogus\n", "test.s:1:1:", "unknown directive"},
      {std::string(d) + "  cvo.exp dst=x a=x wait=sfu\n", "test.s:2:3:", "own engine"},
      {std::string(d) + "  gemv.mv dst=x src=x w=x\n", "", ""},  // valid: float weights
      {".desc i dtype=int32 space=l2 base=0x0 rows=8 cols=8 row_stride=32\n" + std::string(d) +
           "  gemv.mv dst=x src=x w=i\n",
       "test.s:3:3:", "dtype mismatch: int32 is not weight"},
      {"  sys.sync\n  br.al target=5\n", "test.s:2:3:", "outside the program"},
      {"; nothing\n", "test.s:1:1:", "no instructions"},
      {"  sys.halt\x01\n", "test.s:1:1:", "control character"},
  };
  for (const Case& c : cases) {
    const std::string e = asm_error(c.text);
    if (c.where.empty()) {
      EXPECT_EQ(e, "") << c.text;
      continue;
    }
    EXPECT_EQ(e.rfind(c.where, 0), 0u) << c.text << " -> " << e;
    EXPECT_NE(e.find(c.what), std::string::npos) << c.text << " -> " << e;
  }
}

TEST(IsaAsm, SymbolicSlotsAndForwardLabels) {
  const Program p = assemble_text(
      "    br.al target=later\n"
      "    sys.halt\n"
      "later:\n"
      "    memset dst=buf k=zero\n"
      "    sys.halt\n"
      ".desc buf dtype=f32 space=l2 base=0x0 rows=1 cols=4 row_stride=16\n"
      ".const zero f32 0\n");
  EXPECT_EQ(decode_br(p.code[0]).target, 2);
  EXPECT_EQ(decode_memset(p.code[2]).dst, 1);
  EXPECT_EQ(decode_memset(p.code[2]).k, 1);
  EXPECT_EQ(p.name_of(SymKind::Label, 2), "later");
}

TEST(IsaProgram, LoaderRejectsDamage) {
  const Program p = assemble_example("attention_decode.s");
  const std::vector<uint8_t> bin = serialize(p);
  auto load_error = [&](std::vector<uint8_t> b) {
    try {
      parse_program(b.data(), b.size(), "p.n3p");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(load_error(bin), "");
  EXPECT_NE(load_error({bin.begin(), bin.begin() + 40}).find("too short"), std::string::npos);
  EXPECT_NE(load_error({bin.begin(), bin.end() - 8}).find("does not match its header"), std::string::npos);
  auto b = bin;
  b[0] = 'X';
  EXPECT_NE(load_error(b).find("bad magic"), std::string::npos);
  b = bin;
  b[12] = 99;  // ISA version
  EXPECT_NE(load_error(b).find("re-assemble"), std::string::npos);
  b = bin;
  b[8] = 2;  // container format
  EXPECT_NE(load_error(b).find("container format 2"), std::string::npos);
  b = bin;
  b[100] ^= 1;
  EXPECT_NE(load_error(b).find("checksum"), std::string::npos);
}

TEST(IsaProgram, RandomDamageNeverCrashes) {
  // Mutated containers (CRC recomputed so the structure checks are reached).
  const std::vector<uint8_t> bin = serialize(assemble_example("attention_decode.s"));
  Rng r(5);
  int loaded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b = bin;
    const int flips = 1 + static_cast<int>(r.below(4));
    for (int k = 0; k < flips; ++k) b[r.below(b.size())] ^= static_cast<uint8_t>(1u << r.below(8));
    const uint32_t crc = crc32(b.data() + kProgramHeaderBytes, b.size() - kProgramHeaderBytes);
    for (int k = 0; k < 4; ++k) b[40 + k] = static_cast<uint8_t>(crc >> (8 * k));
    try {
      const Program p = parse_program(b.data(), b.size(), "m");
      ++loaded;
      disassemble(p);  // any loadable container disassembles
    } catch (const Error&) {
    }
  }
  EXPECT_GT(loaded, 1000);
}

}  // namespace
}  // namespace n3::test
