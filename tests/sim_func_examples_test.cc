// The example programs of isa/examples/, run on the functional simulator
// with deterministic random inputs, compared bit for bit with the numerics
// core's own operators (golden/numerics/ops.h, npu_ops.h): what the golden
// model computes is what the ISA computes.
#include <gtest/gtest.h>

#include "golden/hw_config.h"
#include "golden/numerics/npu_ops.h"
#include "golden/numerics/ops.h"
#include "tests/sim_func_util.h"

namespace n3::test {
namespace {

using isa::Space;

std::vector<float> randv(Rng& r, size_t n, float scale) {
  std::vector<float> v(n);
  for (float& x : v) x = r.unit() * scale;
  return v;
}

// Both the core's default formats and the kv260 hardware file's.
void gemv_case(const num::Formats& f) {
  sim::SimOptions o = small_options();
  o.formats = f;
  sim::FuncSim s(assemble_example("gemv_int4.s"), o);
  Rng r(1);
  const int64_t N = 64, K = 256, G = 64;
  std::vector<uint8_t> w(static_cast<size_t>(N * K / 2));
  for (auto& b : w) b = static_cast<uint8_t>(r.next());
  std::vector<float> rs(N), gs(static_cast<size_t>(N * K / G));
  for (float& x : rs) x = 0.001f + 0.01f * (r.unit() + 1.0f);
  for (float& x : gs) x = 0.001f + 0.01f * (r.unit() + 1.0f);
  put_bytes(s, Space::DDR, 0x0, w.data(), w.size());
  put_f32(s, Space::DDR, 0x2000, rs);
  put_f32(s, Space::DDR, 0x2100, gs);
  const std::vector<float> x = put_h16(s, Space::L2, 0x0, randv(r, K, 3.0f), true);
  s.run();

  num::Int4Matrix m;
  m.data = w.data();
  m.rows = N;
  m.cols = K;
  m.scales = rs.data();
  std::vector<float> want(N);
  num::linear_npu(m, x.data(), 1, want.data(), f, num::Fmt::BF16);
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x200, N, true), want), "") << "row scales";
  m.mode = num::WScale::PerGroup;
  m.group = G;
  m.scales = gs.data();
  num::linear_npu(m, x.data(), 1, want.data(), f, num::Fmt::F32);
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x300, N), want), "") << "group scales";
  EXPECT_EQ(s.stats().macs, uint64_t(2 * N * K));
}

TEST(SimFuncExamples, GemvInt4RowAndGroupScales) {
  gemv_case(num::Formats{});
  gemv_case(load_hw_config(source_dir() + "/configs/hw/kv260.yaml").numerics.formats);
}

TEST(SimFuncExamples, GemmEqualsGemv) {
  // The same product on both engines, three tokens: identical bits.
  const std::string text = R"(
.desc w dtype=int4 space=ddr base=0x0 rows=48 cols=96 row_stride=48 scale_mode=row scale_base=0x1000 scale_stride=4
.desc x dtype=bf16 space=l2 base=0x0 rows=3 cols=96 row_stride=192
.desc a dtype=f32 space=l2 base=0x400 rows=3 cols=48 row_stride=192
.desc b dtype=f32 space=l2 base=0x800 rows=3 cols=48 row_stride=192
    gemv.mv dst=a src=x w=w
    gemm.mv dst=b src=x w=w
    sys.halt
)";
  sim::FuncSim s(assemble_text(text), small_options());
  Rng r(2);
  std::vector<uint8_t> w(48 * 48);
  for (auto& b : w) b = static_cast<uint8_t>(r.next());
  put_bytes(s, Space::DDR, 0, w.data(), w.size());
  std::vector<float> sc(48);
  for (float& x : sc) x = 0.02f + 0.01f * r.unit();
  put_f32(s, Space::DDR, 0x1000, sc);
  put_h16(s, Space::L2, 0, randv(r, 3 * 96, 2.0f), true);
  s.run();
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x800, 3 * 48), get_f32(s, Space::L2, 0x400, 3 * 48)), "");
  EXPECT_EQ(s.stats().insns[static_cast<int>(isa::Engine::GEMM)], 1u);
}

TEST(SimFuncExamples, RmsNormWithAndWithoutWeight) {
  sim::FuncSim s(assemble_example("rmsnorm.s"), small_options());
  Rng r(3);
  const std::vector<float> w = randv(r, 256, 2.0f);
  put_f32(s, Space::DDR, 0x0, w);
  const std::vector<float> x = put_h16(s, Space::L2, 0x0, randv(r, 4 * 256, 40.0f), true);
  s.run();
  std::vector<float> y(4 * 256), v(4 * 256);
  for (int row = 0; row < 4; ++row) {
    num::rmsnorm(x.data() + row * 256, w.data(), 256, 1e-6f, y.data() + row * 256, num::Fmt::BF16);
    num::rmsnorm(x.data() + row * 256, nullptr, 256, 1e-6f, v.data() + row * 256, num::Fmt::BF16);
  }
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x1000, 4 * 256, true), y), "") << "weighted";
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x1800, 4 * 256, true), v), "") << "weightless";
}

TEST(SimFuncExamples, Softmax) {
  sim::FuncSim s(assemble_example("softmax.s"), small_options());
  Rng r(4);
  std::vector<float> want;
  for (int row = 0; row < 8; ++row) {
    std::vector<float> v = randv(r, 100, 30.0f);
    put_f32(s, Space::L2, 0x0 + row * 512, v);
    num::softmax(v.data(), 100, num::Fmt::F32);
    want.insert(want.end(), v.begin(), v.end());
  }
  s.run();
  std::vector<float> got;
  for (int row = 0; row < 8; ++row) {
    const std::vector<float> v = get_f32(s, Space::L2, 0x1000 + row * 512, 100);
    got.insert(got.end(), v.begin(), v.end());
  }
  EXPECT_EQ(bit_diff(got, want), "");
}

TEST(SimFuncExamples, RopeAtRunTimePositions) {
  for (const auto& pos : {std::vector<int32_t>{0, 1}, std::vector<int32_t>{5, 1234}, std::vector<int32_t>{8191, 32767}}) {
    sim::FuncSim s(assemble_example("rope.s"), small_options());
    Rng r(5 + pos[1]);
    const std::vector<float> inv = num::rope_inv_freq(10000.0, 64);
    put_i32(s, Space::DDR, 0x0, {pos[0]});
    put_i32(s, Space::DDR, 0x10, {pos[1]});
    put_f32(s, Space::DDR, 0x100, inv);
    std::vector<float> q = put_h16(s, Space::L2, 0x0, randv(r, 8 * 64, 4.0f), true);
    s.run();
    for (int t = 0; t < 2; ++t) num::rope(q.data() + t * 4 * 64, 4, 64, pos[t], inv.data(), num::Fmt::BF16);
    EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x0, 8 * 64, true), q), "") << "positions " << pos[0] << ", " << pos[1];
  }
}

// attention_decode.s against attend(): ring slots hold positions p at p % 16.
void attention_case(int32_t pos) {
  sim::FuncSim s(assemble_example("attention_decode.s"), small_options());
  Rng r(100 + pos);
  const int D = 32, W = 64, cap = 16, window = 8;
  std::vector<float> K(static_cast<size_t>((pos + 1) * W)), V(K.size());
  for (int p = std::max(0, pos - cap + 1); p < pos; ++p) {
    const std::vector<float> k = put_h16(s, Space::DDR, 0x1000 + (p % cap) * 128, randv(r, W, 3.0f), false);
    const std::vector<float> v = put_h16(s, Space::DDR, 0x2000 + (p % cap) * 128, randv(r, W, 3.0f), false);
    std::copy(k.begin(), k.end(), K.begin() + p * W);
    std::copy(v.begin(), v.end(), V.begin() + p * W);
  }
  put_i32(s, Space::DDR, 0x0, {pos});
  const std::vector<float> q = put_h16(s, Space::L2, 0x0, randv(r, 4 * D, 3.0f), true);
  std::vector<float> kn = put_h16(s, Space::L2, 0x100, randv(r, W, 3.0f), true);
  std::vector<float> vn = put_h16(s, Space::L2, 0x180, randv(r, W, 3.0f), true);
  num::to_kv(kn.data(), W, num::KvFmt::F16);
  num::to_kv(vn.data(), W, num::KvFmt::F16);
  std::copy(kn.begin(), kn.end(), K.begin() + pos * W);
  std::copy(vn.begin(), vn.end(), V.begin() + pos * W);
  s.run();

  const num::Formats f;
  const int64_t lo = std::max(0, pos - window + 1);
  std::vector<float> want(4 * D);
  for (int h = 0; h < 4; ++h) {
    num::KvView kv{num::KvFmt::F16, K.data() + (h / 2) * D, nullptr, nullptr, W};
    num::KvView vv{num::KvFmt::F16, V.data() + (h / 2) * D, nullptr, nullptr, W};
    num::attend_npu(q.data() + h * D, kv, vv, lo, pos, D, want.data() + h * D, f);
  }
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x400, 4 * D, true), want), "") << "pos " << pos;
  EXPECT_EQ(s.reg(2), lo);
  EXPECT_EQ(s.reg(3), pos - lo + 1);
  ASSERT_EQ(s.captures().size(), 2u);
  EXPECT_EQ(s.captures()[0].name, "s");
  EXPECT_EQ(s.captures()[0].cols, pos - lo + 1);  // the run-time window
}

TEST(SimFuncExamples, AttentionDecodeOverKvRing) {
  attention_case(3);   // window not yet full
  attention_case(10);  // sliding window inside the ring
  attention_case(20);  // ring wrapped
}

TEST(SimFuncExamples, Int8KvCacheQuantisedByDma) {
  // MEMCPY float -> INT8 with one scale per (token, KV head), then QK and PV
  // over it, against attend() on an INT8 KvView.
  const std::string text = R"(
.desc q dtype=bf16 space=l2 base=0x0 rows=2 cols=32 row_stride=64
.desc kf dtype=bf16 space=l2 base=0x100 rows=5 cols=64 row_stride=128
.desc vf dtype=bf16 space=l2 base=0x400 rows=5 cols=64 row_stride=128
.desc k8 dtype=int8 space=ddr base=0x0 rows=5 cols=64 row_stride=64 scale_mode=group scale_base=0x1000 scale_stride=8 group=32
.desc v8 dtype=int8 space=ddr base=0x2000 rows=5 cols=64 row_stride=64 scale_mode=group scale_base=0x3000 scale_stride=8 group=32
.desc s dtype=f32 space=l2 base=0x800 rows=2 cols=5 row_stride=32
.desc ctx dtype=bf16 space=l2 base=0xa00 rows=2 cols=32 row_stride=64
    memcpy dst=k8 src=kf
    memcpy dst=v8 src=vf signal=gemv
    gemv.qk dst=s src=q w=k8 wait=dma signal=sfu
    cvo.softmax dst=s a=s wait=gemv signal=gemv
    gemv.pv dst=ctx src=s w=v8 wait=sfu
    sys.halt
)";
  sim::FuncSim s(assemble_text(text), small_options());
  Rng r(7);
  const std::vector<float> q = put_h16(s, Space::L2, 0x0, randv(r, 64, 3.0f), true);
  const std::vector<float> kf = put_h16(s, Space::L2, 0x100, randv(r, 5 * 64, 3.0f), true);
  const std::vector<float> vf = put_h16(s, Space::L2, 0x400, randv(r, 5 * 64, 3.0f), true);
  s.run();
  num::Formats f;
  f.kv = num::KvFmt::INT8;
  // Two query heads over two KV heads: head h reads KV head h.
  std::vector<int8_t> k8(5 * 64), v8(5 * 64);
  std::vector<float> ks(10), vs(10), want(64);
  for (int t = 0; t < 5; ++t)
    for (int g = 0; g < 2; ++g) {
      ks[t * 2 + g] = num::int8_quantize(kf.data() + t * 64 + g * 32, 32, k8.data() + t * 64 + g * 32);
      vs[t * 2 + g] = num::int8_quantize(vf.data() + t * 64 + g * 32, 32, v8.data() + t * 64 + g * 32);
    }
  for (int h = 0; h < 2; ++h) {
    std::vector<float> kscale(5), vscale(5);
    for (int t = 0; t < 5; ++t) kscale[t] = ks[t * 2 + h], vscale[t] = vs[t * 2 + h];
    num::KvView kv{num::KvFmt::INT8, nullptr, k8.data() + h * 32, kscale.data(), 64};
    num::KvView vv{num::KvFmt::INT8, nullptr, v8.data() + h * 32, vscale.data(), 64};
    num::attend_npu(q.data() + h * 32, kv, vv, 0, 4, 32, want.data() + h * 32, f);
  }
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0xa00, 64, true), want), "");
}

TEST(SimFuncExamples, ElementwiseAndReductionsMatchTheCore) {
  // SFU functions one by one against the core's scalar functions.
  const std::string text = R"(
.desc a dtype=f32 space=l2 base=0x0 rows=3 cols=40 row_stride=160
.desc b dtype=f32 space=l2 base=0x200 rows=1 cols=40 row_stride=160
.desc y dtype=f32 space=l2 base=0x400 rows=3 cols=40 row_stride=160
.desc r dtype=f32 space=l2 base=0x800 rows=3 cols=1 row_stride=16
.const k f32 0.75
.const cap f32 30
    cvo.gelu dst=y a=a
    sys.halt
)";
  Rng rng(9);
  std::vector<float> a = randv(rng, 120, 12.0f), b = randv(rng, 40, 2.0f);
  struct Case {
    const char* insn;
    bool reduce;
    float (*ref)(float, float, float);  // (a, b, k)
  };
  const Case cases[] = {
      {"cvo.exp dst=y a=a", false, [](float x, float, float) { return num::exp_sfu(x); }},
      {"cvo.tanh dst=y a=a", false, [](float x, float, float) { return num::tanh_sfu(x); }},
      {"cvo.gelu dst=y a=a", false, [](float x, float, float) { return num::gelu_tanh_sfu(x); }},
      {"cvo.sin dst=y a=a", false, [](float x, float, float) { return num::sin_sfu(x); }},
      {"cvo.cos dst=y a=a", false, [](float x, float, float) { return num::cos_sfu(x); }},
      {"cvo.recip dst=y a=a", false, [](float x, float, float) { return num::recip(x); }},
      {"cvo.sqrt dst=y a=a", false, [](float x, float, float) { return num::sqrt_rn(x); }},
      {"cvo.rsqrt dst=y a=a", false, [](float x, float, float) { return num::rsqrt_rn(x); }},
      {"cvo.relu dst=y a=a", false, [](float x, float, float) { return x > 0 ? x : 0.0f; }},
      {"cvo.scale dst=y a=a k=k", false, [](float x, float, float k) { return x * k; }},
      {"cvo.addk dst=y a=a k=k", false, [](float x, float, float k) { return x + k; }},
      {"cvo.maxk dst=y a=a k=k", false, [](float x, float, float k) { return num::nmax(x, k); }},
      {"cvo.add dst=y a=a b=b", false, [](float x, float y, float) { return x + y; }},
      {"cvo.sub dst=y a=a b=b", false, [](float x, float y, float) { return x - y; }},
      {"cvo.mul dst=y a=a b=b", false, [](float x, float y, float) { return x * y; }},
      {"cvo.max dst=y a=a b=b", false, [](float x, float y, float) { return num::nmax(x, y); }},
      {"cvo.softcap dst=y a=a k=cap", false, nullptr},
      {"cvo.rsum dst=r a=a", true, nullptr},
      {"cvo.rmax dst=r a=a", true, nullptr},
      {"cvo.rsumsq dst=r a=a", true, nullptr},
      {"cvo.rms dst=r a=a", true, nullptr},
  };
  for (const Case& c : cases) {
    std::string t = text;
    t.replace(t.find("cvo.gelu dst=y a=a"), 18, c.insn);
    sim::FuncSim s(assemble_text(t), small_options());
    put_f32(s, Space::L2, 0x0, a);
    put_f32(s, Space::L2, 0x200, b);
    s.run();
    std::vector<float> want;
    const std::string ins = c.insn;
    if (c.reduce) {
      for (int row = 0; row < 3; ++row) {
        const float* x = a.data() + row * 40;
        want.push_back(ins.find("rsumsq") != std::string::npos ? num::tree_sumsq(x, 40)
                       : ins.find("rsum") != std::string::npos ? num::tree_sum(x, 40)
                       : ins.find("rmax") != std::string::npos ? num::tree_max(x, 40)
                                                                : num::rms(x, 40));
      }
      std::vector<float> got;
      for (int row = 0; row < 3; ++row) got.push_back(get_f32(s, Space::L2, 0x800 + row * 16, 1)[0]);
      EXPECT_EQ(bit_diff(got, want), "") << c.insn;
      continue;
    }
    if (!c.ref) {  // softcap
      want = a;
      num::softcap(want.data(), 120, 30.0f, num::Fmt::F32);
    } else {
      for (int i = 0; i < 120; ++i) want.push_back(num::canon(c.ref(a[i], b[i % 40], 0.75f)));
    }
    EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x400, 120), want), "") << c.insn;
  }
}

TEST(SimFuncExamples, FusedRowOperators) {
  // Gaussian top-k, magnitude matching and MAC against the core.
  const std::string text = R"(
.desc a dtype=f32 space=l2 base=0x0 rows=2 cols=64 row_stride=256
.desc t dtype=f32 space=l2 base=0x200 rows=2 cols=1 row_stride=16
.desc g dtype=bf16 space=l2 base=0x400 rows=2 cols=64 row_stride=128
.desc mm dtype=f32 space=l2 base=0x600 rows=2 cols=64 row_stride=256
.desc acc dtype=f32 space=l2 base=0x800 rows=2 cols=64 row_stride=256
.desc c dtype=f32 space=l2 base=0xa00 rows=1 cols=1 row_stride=16
.const mult f32 1.6448536
.const floor f32 1e-05
    cvo.gtopk dst=g a=a k=mult
    cvo.magmatch dst=mm a=a b=t k=floor
    cvo.mac dst=acc a=a b=c
    sys.halt
)";
  sim::FuncSim s(assemble_text(text), small_options());
  Rng r(11);
  const std::vector<float> a = randv(r, 128, 5.0f), acc0 = randv(r, 128, 1.0f);
  put_f32(s, Space::L2, 0x0, a);
  put_f32(s, Space::L2, 0x200, {1.5f});
  put_f32(s, Space::L2, 0x210, {0.25f});
  put_f32(s, Space::L2, 0x800, acc0);
  put_f32(s, Space::L2, 0xa00, {-0.375f});
  s.run();
  std::vector<float> g = a, mm = a, acc = acc0;
  for (int row = 0; row < 2; ++row) {
    num::gaussian_topk(g.data() + row * 64, 64, 1.6448536f, num::Fmt::BF16);
    num::match_magnitude(mm.data() + row * 64, 64, row ? 0.25f : 1.5f, 1e-5f, num::Fmt::F32);
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    const float p = a[i] * -0.375f;
    acc[i] = acc[i] + p;
  }
  EXPECT_EQ(bit_diff(get_h16(s, Space::L2, 0x400, 128, true), g), "") << "gtopk";
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x600, 128), mm), "") << "magmatch";
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x800, 128), acc), "") << "mac";
}

TEST(SimFuncExamples, DmaConversionsAndWeightPrefetch) {
  // Dequantising an INT4 row (the embedding lookup, row chosen by a register),
  // prefetching a weight into WBUF and using it from there.
  const std::string text = R"(
.desc e dtype=int4 space=ddr base=0x0 rows=10 cols=64 row_stride=32 scale_mode=row scale_base=0x400 scale_stride=4 row_reg=r1
.desc e_all dtype=int4 space=ddr base=0x0 rows=10 cols=64 row_stride=32 scale_mode=row scale_base=0x400 scale_stride=4
.desc e_wb dtype=int4 space=wbuf base=0x0 rows=10 cols=64 row_stride=32 scale_mode=row scale_base=0x400 scale_stride=4
.desc e_row dtype=int4 space=ddr base=0x0 rows=1 cols=64 row_stride=32 scale_mode=row scale_base=0x400 scale_stride=4 row_reg=r1
.desc x dtype=f32 space=l2 base=0x0 rows=1 cols=64 row_stride=256
.desc xb dtype=bf16 space=l2 base=0x100 rows=1 cols=64 row_stride=128
.desc y1 dtype=f32 space=l2 base=0x200 rows=1 cols=10 row_stride=64
.desc y2 dtype=f32 space=l2 base=0x300 rows=1 cols=10 row_stride=64
.desc id dtype=int32 space=ddr base=0x800 rows=1 cols=1 row_stride=16
    ldst.lw space=ddr rd=r1 rs1=r0 imm=2048
    memcpy dst=x src=e_row
    memcpy dst=xb src=x
    memcpy dst=e_wb src=e_all signal=gemv
    gemv.mv dst=y1 src=xb w=e_all wait=dma
    gemv.mv dst=y2 src=xb w=e_wb
    sys.halt
)";
  sim::FuncSim s(assemble_text(text), small_options());
  Rng r(12);
  std::vector<uint8_t> w(320);
  for (auto& b : w) b = static_cast<uint8_t>(r.next());
  std::vector<float> sc(10);
  for (float& x : sc) x = 0.01f + 0.001f * r.unit();
  put_bytes(s, Space::DDR, 0, w.data(), w.size());
  put_f32(s, Space::DDR, 0x400, sc);
  put_i32(s, Space::DDR, 0x800, {7});
  s.run();
  std::vector<float> want(64);
  for (int c = 0; c < 64; ++c) want[c] = static_cast<float>(num::int4_at(w.data() + 7 * 32, c)) * sc[7];
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x0, 64), want), "") << "dequantised row 7";
  EXPECT_EQ(bit_diff(get_f32(s, Space::L2, 0x300, 10), get_f32(s, Space::L2, 0x200, 10)), "") << "WBUF vs DDR";
  EXPECT_EQ(s.stats().bytes_written[static_cast<int>(Space::WBUF)], 320u + 40u);
}

}  // namespace
}  // namespace n3::test
