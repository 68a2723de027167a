// Encodings: golden words pin the layout, a million random valid words
// round-trip through the typed decoders/encoders and through the
// disassembler/assembler, and every class of reserved encoding (opcode, enum
// value, reserved bit, unused field, own-engine token bit, record bits) is
// rejected with a message naming it.
#include <gtest/gtest.h>

#include <chrono>

#include "isa/dis.h"
#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

using namespace isa;

int hdr(const char* name) { return field_index(*opcode_def(0), name); }

// A random valid word: opcode, sub-function, every used field random
// (enums among their allowed values), token bits without the own engine.
uint64_t random_valid_word(Rng& r) {
  const OpcodeDef& d = *opcode_def_at(static_cast<int>(r.below(kNumOpcodes)));
  const SubopDef& s = d.subops[r.below(static_cast<uint64_t>(d.n_subops))];
  uint64_t w = uint64_t(static_cast<uint32_t>(d.opcode)) << kHdr_opcode_lo;
  const uint64_t own = 1ull << static_cast<int>(d.engine);
  w = field_put(w, d.fields[1], r.next() & 31 & ~own);
  w = field_put(w, d.fields[2], r.next() & 31 & ~own);
  if (d.subop_field >= 0) w = field_put(w, d.fields[d.subop_field], s.value);
  for (int i = kNumHeaderFields; i < d.n_fields; ++i) {
    if (i == d.subop_field || !((s.used >> i) & 1)) continue;
    const FieldDef& f = d.fields[i];
    if (f.type == FieldType::Enum) {
      std::vector<uint32_t> ok;
      for (uint32_t v = 0; v < 64; ++v)
        if ((f.allowed >> v) & 1) ok.push_back(v);
      w = field_put(w, f, ok[r.below(ok.size())]);
    } else {
      w = field_put(w, f, r.next());
    }
  }
  return w;
}

TEST(IsaEncoding, GoldenWords) {
  // The pccx v002 lineage: opcode in [63:60], GEMV 0, GEMM 1, MEMCPY 2, MEMSET 3, CVO 4.
  EXPECT_EQ(static_cast<int>(Opcode::GEMV), 0);
  EXPECT_EQ(static_cast<int>(Opcode::GEMM), 1);
  EXPECT_EQ(static_cast<int>(Opcode::MEMCPY), 2);
  EXPECT_EQ(static_cast<int>(Opcode::MEMSET), 3);
  EXPECT_EQ(static_cast<int>(Opcode::CVO), 4);
  GemvInsn g;
  g.mode = GemvMode::QK;
  g.dst = 1;
  g.src = 2;
  g.w = 3;
  g.wait = 1u << static_cast<int>(Engine::DMA);
  g.signal = 1u << static_cast<int>(Engine::SFU);
  EXPECT_EQ(encode(g), (1ull << 56) | (1ull << 54) | (1ull << 47) | (1ull << 35) | (2ull << 23) | (3ull << 11));
  CvoInsn c;
  c.func = CvoFunc::RMSNORM;
  c.dst = 0xfff;
  c.a = 0x800;
  c.b = 1;
  c.k = 0xff;
  EXPECT_EQ(encode(c), (4ull << 60) | (21ull << 44) | (0xfffull << 32) | (0x800ull << 20) | (1ull << 8) | 0xffull);
  BrInsn b;
  b.cond = BrCond::NE;
  b.rs1 = 3;
  b.target = -2;
  EXPECT_EQ(encode(b), (8ull << 60) | (2ull << 47) | (3ull << 43) | ((0xfffffeull) << 15));
  EXPECT_EQ(decode_br(encode(b)).target, -2);
  EXPECT_EQ(disassemble_word(encode(g)), "gemv.qk dst=#1 src=#2 w=#3 wait=dma signal=sfu");
  uint64_t d[4];
  DescRecord r;
  r.dtype = Dtype::INT4;
  r.space = Space::DDR;
  r.base = 0xff'ffff'fff0ull;  // 1 TB of DDR: multi-GB weight images fit
  r.rows = 262400;             // the E4B vocabulary
  r.cols = 2048;
  encode(r, d);
  EXPECT_EQ(decode_desc(d).base, 0xff'ffff'fff0ull);
  EXPECT_EQ(decode_desc(d).rows, 262400u);
}

TEST(IsaEncoding, MillionRandomWordsRoundTrip) {
  const auto t0 = std::chrono::steady_clock::now();
  Rng r(42);
  constexpr int kWords = 1000000, kBatch = 50000;
  std::vector<uint64_t> words(kBatch);
  for (int done = 0; done < kWords; done += kBatch) {
    std::string text;
    for (int i = 0; i < kBatch; ++i) {
      const uint64_t w = random_valid_word(r);
      words[static_cast<size_t>(i)] = w;
      const Check c = check_word(w);
      ASSERT_TRUE(c.ok()) << std::hex << w << ": " << c.message;
      ASSERT_EQ(reencode(w), w) << std::hex << w;
      text += disassemble_word(w) + "\n";
    }
    const Program p = assemble_text(text, /*verify=*/false);
    ASSERT_EQ(p.code.size(), words.size());
    for (int i = 0; i < kBatch; ++i)
      ASSERT_EQ(p.code[static_cast<size_t>(i)], words[static_cast<size_t>(i)])
          << "word " << done + i << ": " << disassemble_word(words[static_cast<size_t>(i)]);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  1M words: decode/encode and dis/asm round trips in %.2f s\n", s);
}

TEST(IsaEncoding, ReservedOpcodesRejected) {
  Rng r(1);
  for (uint32_t op = 0; op < 16; ++op) {
    if (opcode_def(op)) continue;
    for (int k = 0; k < 100; ++k) {
      const uint64_t w = (uint64_t(op) << 60) | (r.next() >> 4);
      const Check c = check_word(w);
      EXPECT_EQ(c.problem, Problem::ReservedOpcode);
      EXPECT_NE(c.message.find("opcode " + std::to_string(op) + " is reserved"), std::string::npos) << c.message;
      EXPECT_EQ(disassemble_word(w).rfind(".word ", 0), 0u);
    }
  }
}

TEST(IsaEncoding, EveryReservedEnumValueRejected) {
  int checked = 0;
  for (int oi = 0; oi < kNumOpcodes; ++oi) {
    const OpcodeDef& d = *opcode_def_at(oi);
    for (int si = 0; si < d.n_subops; ++si) {
      const SubopDef& s = d.subops[si];
      uint64_t base = uint64_t(static_cast<uint32_t>(d.opcode)) << 60;
      if (d.subop_field >= 0) base = field_put(base, d.fields[d.subop_field], s.value);
      for (int i = kNumHeaderFields; i < d.n_fields; ++i) {
        const FieldDef& f = d.fields[i];
        if (f.type != FieldType::Enum || !((s.used >> i) & 1)) continue;
        for (uint64_t v = 0; v < (1ull << f.width); ++v) {
          if ((f.allowed >> v) & 1) continue;
          const Check c = check_word(field_put(base, f, v));
          EXPECT_EQ(c.problem, Problem::ReservedEnum) << d.name << " " << f.name << "=" << v;
          EXPECT_NE(c.message.find(f.name), std::string::npos) << c.message;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);  // gemv modes 3..7, GEMM's QK/PV, cvo funcs 27..63, ...
}

TEST(IsaEncoding, EveryReservedBitAndUnusedFieldRejected) {
  int checked = 0;
  for (int oi = 0; oi < kNumOpcodes; ++oi) {
    const OpcodeDef& d = *opcode_def_at(oi);
    for (int si = 0; si < d.n_subops; ++si) {
      const SubopDef& s = d.subops[si];
      uint64_t base = uint64_t(static_cast<uint32_t>(d.opcode)) << 60;
      if (d.subop_field >= 0) base = field_put(base, d.fields[d.subop_field], s.value);
      ASSERT_TRUE(check_word(base).ok()) << d.name << "." << s.name << ": " << check_word(base).message;
      for (int b = 0; b < 64; ++b) {
        const uint64_t bit = 1ull << b;
        bool unused = (d.reserved_mask & bit) != 0;
        std::string field = "reserved bits";
        for (int i = kNumHeaderFields; i < d.n_fields; ++i)
          if ((d.fields[i].mask() & bit) && !((s.used >> i) & 1)) {
            unused = true;
            field = d.fields[i].name;
          }
        if (!unused) continue;
        const Check c = check_word(base | bit);
        EXPECT_EQ(c.problem, Problem::ReservedBits) << d.name << "." << s.name << " bit " << b;
        EXPECT_NE(c.message.find(field), std::string::npos) << c.message;
        ++checked;
      }
      // A token bit naming the instruction's own engine.
      const uint64_t own = 1ull << static_cast<int>(d.engine);
      for (int h : {hdr("wait"), hdr("signal")}) {
        const Check c = check_word(field_put(base, d.fields[h], own));
        EXPECT_EQ(c.problem, Problem::ReservedBits) << d.name;
        EXPECT_NE(c.message.find("own engine"), std::string::npos) << c.message;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(IsaEncoding, TableRecordsRejectReservedEncodings) {
  uint64_t d[4] = {};
  EXPECT_TRUE(check_desc(d).ok());
  for (int k = 0; k < 4; ++k)
    for (int b = 0; b < 64; ++b) {
      const uint64_t rsv[] = {kDesc_reserved_mask0, kDesc_reserved_mask1, kDesc_reserved_mask2, kDesc_reserved_mask3};
      if (!((rsv[k] >> b) & 1)) continue;
      uint64_t x[4] = {};
      x[k] = 1ull << b;
      EXPECT_EQ(check_desc(x).problem, Problem::ReservedBits) << "word " << k << " bit " << b;
    }
  for (uint64_t v : {6, 15}) {  // dtype
    uint64_t x[4] = {v, 0, 0, 0};
    EXPECT_EQ(check_desc(x).problem, Problem::ReservedEnum);
    EXPECT_NE(check_desc(x).message.find("dtype"), std::string::npos);
  }
  for (uint64_t v : {3, 7}) {  // space
    uint64_t x[4] = {v << 4, 0, 0, 0};
    EXPECT_EQ(check_desc(x).problem, Problem::ReservedEnum);
    EXPECT_NE(check_desc(x).message.find("space"), std::string::npos);
  }
  // Constants: F32 / INT32 only; the bits between dtype and value are reserved.
  EXPECT_TRUE(check_const(5).ok());
  EXPECT_EQ(check_const(static_cast<uint64_t>(Dtype::BF16)).problem, Problem::ReservedEnum);
  EXPECT_EQ(check_const(1ull << 10).problem, Problem::ReservedBits);
}

TEST(IsaEncoding, InvalidWordsDisassembleRaw) {
  Rng r(3);
  int raw = 0;
  std::vector<uint64_t> words;
  std::string text;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t w = r.next();
    const std::string t = disassemble_word(w);
    if (!check_word(w).ok()) {
      ASSERT_EQ(t.rfind(".word ", 0), 0u) << t;
      ++raw;
    }
    words.push_back(w);
    text += t + "\n";
  }
  EXPECT_GT(raw, 50000);
  EXPECT_EQ(assemble_text(text, false).code, words);  // asm(dis(w)) == w for every word
}

}  // namespace
}  // namespace n3::test
