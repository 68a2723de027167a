// GEMV and GEMM: linear layers (MV) and the two attention products (QK, PV),
// bit-exact through the numerics core's BFP quantiser and integer MACs.
#include <string>
#include <vector>

#include "golden/numerics/mac.h"
#include "golden/numerics/ops.h"
#include "sim/func_sim.h"

namespace n3::sim {

using isa::Dtype;
using isa::ScaleMode;

namespace {

// Below this many MACs an instruction runs on one thread: forking an OpenMP
// team per instruction costs more than small products save, and far more
// when the cores are shared (a spinning team waits on a busy core). Results
// do not depend on it: every output element is computed the same way.
constexpr int64_t kParallelMacs = int64_t(1) << 18;

std::string shape(const View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }

// Quantised rows of a float view: mantissas and block exponents per row.
struct BfpRows {
  std::vector<int16_t> mant;
  std::vector<int32_t> exp;
  std::vector<num::BfpView> rows;
};

BfpRows quantize_rows(const FuncSim& m, const View& v, int mbits) {
  const int B = m.formats().bfp_block;
  const int64_t nb = num::bfp_blocks(v.cols, B);
  BfpRows q;
  q.mant.resize(static_cast<size_t>(v.rows * nb * B));
  q.exp.resize(static_cast<size_t>(v.rows * nb));
  std::vector<float> x(static_cast<size_t>(v.cols));
  for (int64_t r = 0; r < v.rows; ++r) {
    read_row(m.memory(), v, r, x.data());
    q.rows.push_back(num::bfp_quantize(x.data(), v.cols, B, mbits, q.mant.data() + r * nb * B, q.exp.data() + r * nb));
  }
  return q;
}

void write_rows(FuncSim& m, const View& y, const std::vector<float>& out) {
  for (int64_t r = 0; r < y.rows; ++r) write_row(m.memory(), y, r, out.data() + r * y.cols);
}

// y[t, o] = W x_t.
void mv(FuncSim& m, const Issued& in) {
  const View &y = in.op("dst"), &x = in.op("src"), &w = in.op("w");
  const int64_t T = x.rows, K = x.cols, N = w.rows;
  if (w.cols != K || y.rows != T || y.cols != N)
    m.trap(TrapKind::ShapeMismatch, in, "src " + shape(x) + ", w " + shape(w) + ", dst " + shape(y) +
                                            ": need src [T, K], w [N, K], dst [T, N]");
  if (K > num::kMaxDotLen)
    m.trap(TrapKind::ShapeMismatch, in, std::to_string(K) + " inputs exceed the accumulator bound " +
                                            std::to_string(num::kMaxDotLen));
  const int B = m.formats().bfp_block;
  if ((w.d.scale_mode == ScaleMode::GROUP || w.d.scale_mode == ScaleMode::TWO_LEVEL) && w.d.group % B)
    m.trap(TrapKind::BadOperand, in, "w: scale group " + std::to_string(w.d.group) +
                                         " is not a multiple of numerics.bfp_block " + std::to_string(B));
  if (w.d.dtype == Dtype::INT8 && w.d.scale_mode != ScaleMode::ROW)
    m.trap(TrapKind::BadOperand, in, "w: INT8 weights take ROW scales");
  const num::Fmt out = y.fmt();
  std::vector<float> res(static_cast<size_t>(T * N));
  const bool quant = w.d.dtype == Dtype::INT4 || w.d.dtype == Dtype::INT8;
  const BfpRows xq = quantize_rows(m, x, m.formats().act_mant_bits);
  std::vector<float> xf;
  if (!quant) {
    xf.resize(static_cast<size_t>(T * K));
    for (int64_t t = 0; t < T; ++t) read_row(m.memory(), x, t, xf.data() + t * K);
  }
  const Memory& mem = m.memory();
#pragma omp parallel if (T * N * K >= kParallelMacs)
  {
    std::vector<uint8_t> row(static_cast<size_t>(w.row_bytes())), rec(static_cast<size_t>(w.scale_bytes()));
    std::vector<float> wf(quant ? 0 : static_cast<size_t>(K));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < N; ++o) {
      if (quant) {
        read_row_bytes(mem, w, o, row.data());
        read_scale_record(mem, w, o, rec.data());
      } else {
        read_row(mem, w, o, wf.data());
      }
      for (int64_t t = 0; t < T; ++t) {
        const num::BfpView& xv = xq.rows[static_cast<size_t>(t)];
        float v;
        if (w.d.dtype == Dtype::INT8) {
          v = num::dot_int8_bfp(reinterpret_cast<const int8_t*>(row.data()), xv, record_f32(rec.data(), 0), out);
        } else if (!quant) {
          v = num::round_to(out, num::tree_dot(wf.data(), xf.data() + t * K, K));
        } else if (w.d.scale_mode == ScaleMode::ROW) {
          v = num::dot_int4_row(row.data(), K, xv, record_f32(rec.data(), 0), out);
        } else if (w.d.scale_mode == ScaleMode::GROUP) {
          v = num::dot_int4_row_grouped(row.data(), K, xv, reinterpret_cast<const float*>(rec.data()), w.d.group, out);
        } else {
          v = num::dot_int4_row_two_level(row.data(), K, xv, rec.data() + 4, w.d.group, record_f32(rec.data(), 0), out);
        }
        res[static_cast<size_t>(t * N + o)] = v;
      }
    }
  }
  m.stats_mut().macs += static_cast<uint64_t>(T) * static_cast<uint64_t>(N) * static_cast<uint64_t>(K);
  write_rows(m, y, res);
}

// Grouped-query layout shared by QK and PV: H heads over G KV heads of d.
struct Gqa {
  int64_t H, G, d, n;
};

Gqa gqa(FuncSim& m, const Issued& in, int64_t heads, int64_t d, const View& kv) {
  if (d <= 0 || kv.cols % d)
    m.trap(TrapKind::ShapeMismatch, in, "w " + shape(kv) + ": row width is not a multiple of the head size " +
                                            std::to_string(d));
  const int64_t G = kv.cols / d;
  if (heads % G)
    m.trap(TrapKind::ShapeMismatch, in, std::to_string(heads) + " query heads do not group over " + std::to_string(G) +
                                            " KV heads");
  if (d > num::kMaxDotLen || kv.rows > num::kMaxDotLen)
    m.trap(TrapKind::ShapeMismatch, in, "dot product longer than the accumulator bound " + std::to_string(num::kMaxDotLen));
  if (kv.d.dtype == Dtype::INT8 &&
      !((kv.d.scale_mode == ScaleMode::GROUP && kv.d.group == d) || (kv.d.scale_mode == ScaleMode::ROW && G == 1)))
    m.trap(TrapKind::BadOperand, in, "w: an INT8 KV cache needs one scale per token and KV head (GROUP scales, group = " +
                                         std::to_string(d) + ")");
  return {heads, G, d, kv.rows};
}

// S[h, j] = q_h . k_j[g(h)].
void qk(FuncSim& m, const Issued& in) {
  const View &s = in.op("dst"), &q = in.op("src"), &k = in.op("w");
  const Gqa g = gqa(m, in, q.rows, q.cols, k);
  if (s.rows != g.H || s.cols != g.n)
    m.trap(TrapKind::ShapeMismatch, in, "dst " + shape(s) + ": need [" + std::to_string(g.H) + ", " +
                                            std::to_string(g.n) + "] (query heads x KV positions)");
  const int B = m.formats().bfp_block, M = m.formats().attn_mant_bits;
  const num::Fmt out = s.fmt();
  const BfpRows qq = quantize_rows(m, q, M);
  const int64_t per = g.H / g.G, nb = num::bfp_blocks(g.d, B);
  std::vector<float> res(static_cast<size_t>(g.H * g.n));
  const Memory& mem = m.memory();
  const bool i8 = k.d.dtype == Dtype::INT8;
#pragma omp parallel if (g.H * g.n * g.d >= kParallelMacs)
  {
    std::vector<float> row(i8 ? 0 : static_cast<size_t>(k.cols));
    std::vector<uint8_t> raw(i8 ? static_cast<size_t>(k.row_bytes()) : 0), rec(static_cast<size_t>(k.scale_bytes()));
    std::vector<int16_t> mant(static_cast<size_t>(nb * B));
    std::vector<int32_t> ex(static_cast<size_t>(nb));
#pragma omp for schedule(static)
    for (int64_t j = 0; j < g.n; ++j) {
      if (i8) {
        read_row_bytes(mem, k, j, raw.data());
        read_scale_record(mem, k, j, rec.data());
      } else {
        read_row(mem, k, j, row.data());
      }
      for (int64_t kh = 0; kh < g.G; ++kh) {
        num::BfpView kv;
        if (!i8) kv = num::bfp_quantize(row.data() + kh * g.d, g.d, B, M, mant.data(), ex.data());
        for (int64_t h = kh * per; h < (kh + 1) * per; ++h) {
          const num::BfpView& qv = qq.rows[static_cast<size_t>(h)];
          res[static_cast<size_t>(h * g.n + j)] =
              i8 ? num::dot_int8_bfp(reinterpret_cast<const int8_t*>(raw.data()) + kh * g.d, qv,
                                     record_f32(rec.data(), k.d.scale_mode == ScaleMode::ROW ? 0 : kh), out)
                 : num::dot_bfp_bfp(qv, kv, 1.0f, out);
        }
      }
    }
  }
  m.stats_mut().macs += static_cast<uint64_t>(g.H) * static_cast<uint64_t>(g.n) * static_cast<uint64_t>(g.d);
  write_rows(m, s, res);
}

// ctx[h, c] = sum_j p[h, j] v_j[g(h), c].
void pv(FuncSim& m, const Issued& in) {
  const View &y = in.op("dst"), &p = in.op("src"), &v = in.op("w");
  const Gqa g = gqa(m, in, p.rows, y.cols, v);
  if (y.rows != g.H || p.cols != g.n)
    m.trap(TrapKind::ShapeMismatch, in, "src " + shape(p) + ", w " + shape(v) + ", dst " + shape(y) +
                                            ": need src [H, n], w [n, G*d], dst [H, d]");
  const int B = m.formats().bfp_block, M = m.formats().attn_mant_bits;
  const num::Fmt out = y.fmt(), pfmt = p.fmt();
  const int64_t n = g.n, per = g.H / g.G, W = v.cols, nb = num::bfp_blocks(n, B);
  const bool i8 = v.d.dtype == Dtype::INT8;
  const Memory& mem = m.memory();
  // The whole value window, as floats or INT8 codes plus per-(token, KV head) scales.
  std::vector<float> vf(i8 ? 0 : static_cast<size_t>(n * W)), vs(i8 ? static_cast<size_t>(n * g.G) : 0);
  std::vector<int8_t> v8(i8 ? static_cast<size_t>(n * W) : 0);
  {
    std::vector<uint8_t> rec(static_cast<size_t>(v.scale_bytes()));
    for (int64_t j = 0; j < n; ++j) {
      if (!i8) {
        read_row(mem, v, j, vf.data() + j * W);
        continue;
      }
      read_row_bytes(mem, v, j, reinterpret_cast<uint8_t*>(v8.data() + j * W));
      read_scale_record(mem, v, j, rec.data());
      for (int64_t kh = 0; kh < g.G; ++kh)
        vs[static_cast<size_t>(j * g.G + kh)] = record_f32(rec.data(), v.d.scale_mode == ScaleMode::ROW ? 0 : kh);
    }
  }
  // Probabilities, quantised per head (INT8 values fold their scales in first).
  std::vector<float> prow(static_cast<size_t>(n));
  std::vector<int16_t> pm(static_cast<size_t>(g.H * nb * B));
  std::vector<int32_t> pe(static_cast<size_t>(g.H * nb));
  std::vector<num::BfpView> pq;
  for (int64_t h = 0; h < g.H; ++h) {
    read_row(mem, p, h, prow.data());
    if (i8)
      for (int64_t j = 0; j < n; ++j)
        prow[static_cast<size_t>(j)] = num::round_to(pfmt, prow[static_cast<size_t>(j)] * vs[static_cast<size_t>(j * g.G + h / per)]);
    pq.push_back(num::bfp_quantize(prow.data(), n, B, M, pm.data() + h * nb * B, pe.data() + h * nb));
  }
  std::vector<float> res(static_cast<size_t>(g.H * g.d));
#pragma omp parallel if (g.H * g.d * n >= kParallelMacs)
  {
    std::vector<int16_t> mant(static_cast<size_t>(nb * B));
    std::vector<int32_t> ex(static_cast<size_t>(nb));
    std::vector<float> tmp(static_cast<size_t>(n > B ? n : B));
    std::vector<int8_t> col8(static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t c = 0; c < g.G * g.d; ++c) {
      const int64_t kh = c / g.d, cc = c % g.d;
      num::BfpView vc;
      if (i8) {
        for (int64_t j = 0; j < n; ++j) col8[static_cast<size_t>(j)] = v8[static_cast<size_t>(j * W + c)];
      } else {
        vc = num::bfp_quantize_strided(vf.data() + c, n, W, B, M, mant.data(), ex.data(), tmp.data());
      }
      for (int64_t h = kh * per; h < (kh + 1) * per; ++h)
        res[static_cast<size_t>(h * g.d + cc)] = i8 ? num::dot_int8_bfp(col8.data(), pq[static_cast<size_t>(h)], 1.0f, out)
                                                    : num::dot_bfp_bfp(pq[static_cast<size_t>(h)], vc, 1.0f, out);
    }
  }
  m.stats_mut().macs += static_cast<uint64_t>(g.H) * static_cast<uint64_t>(g.n) * static_cast<uint64_t>(g.d);
  write_rows(m, y, res);
}

}  // namespace

void exec_gemv(FuncSim& m, const Issued& in) {
  const auto mode = static_cast<isa::GemvMode>(isa::field_raw(in.word, in.def->fields[in.def->subop_field]));
  switch (mode) {
    case isa::GemvMode::MV:
      mv(m, in);
      return;
    case isa::GemvMode::QK:
      qk(m, in);
      return;
    case isa::GemvMode::PV:
      pv(m, in);
      return;
  }
}

}  // namespace n3::sim
