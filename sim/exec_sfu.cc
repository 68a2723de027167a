// SFU (CVO): elementwise functions, row reductions and the fused row
// operators, each a call into the numerics core's SFU functions and
// operators (golden/numerics/sfu.h, ops.h), so the golden model and the
// simulator share one definition of every bit.
#include <string>
#include <vector>

#include "golden/numerics/ops.h"
#include "sim/func_sim.h"

namespace n3::sim {

using isa::CvoFunc;

namespace {

std::string shape(const View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }

struct Rows {
  std::vector<float> v;
  int64_t rows = 0, cols = 0;
  float* row(int64_t r) { return v.data() + r * cols; }
  float at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

Rows load(const FuncSim& m, const View& x) {
  Rows r{std::vector<float>(static_cast<size_t>(x.numel())), x.rows, x.cols};
  for (int64_t i = 0; i < x.rows; ++i) read_row(m.memory(), x, i, r.row(i));
  return r;
}

void store(FuncSim& m, const View& y, Rows& r) {
  for (int64_t i = 0; i < y.rows; ++i) write_row(m.memory(), y, i, r.row(i));
  m.stats_mut().sfu_elems += static_cast<uint64_t>(y.numel());
}

void same_shape(FuncSim& m, const Issued& in, const View& y, const View& a) {
  if (y.rows != a.rows || y.cols != a.cols)
    m.trap(TrapKind::ShapeMismatch, in, "dst " + shape(y) + " differs from a " + shape(a));
}

// b as a's shape, a row [1, cols], a column [rows, 1] or a scalar [1, 1].
float bcast(const Rows& b, int64_t r, int64_t c) {
  return b.at(b.rows == 1 ? 0 : r, b.cols == 1 ? 0 : c);
}

void check_bcast(FuncSim& m, const Issued& in, const View& y, const View& b, const char* name) {
  const bool rows_ok = b.rows == y.rows || b.rows == 1, cols_ok = b.cols == y.cols || b.cols == 1;
  if (!rows_ok || !cols_ok)
    m.trap(TrapKind::ShapeMismatch, in, std::string(name) + " " + shape(b) + " does not broadcast to dst " + shape(y) +
                                            " (same shape, [1, cols], [rows, 1] or [1, 1])");
}

float unary(CvoFunc f, float x) {
  switch (f) {
    case CvoFunc::EXP: return num::exp_sfu(x);
    case CvoFunc::SQRT: return num::sqrt_rn(x);
    case CvoFunc::GELU: return num::gelu_tanh_sfu(x);
    case CvoFunc::SIN: return num::sin_sfu(x);
    case CvoFunc::COS: return num::cos_sfu(x);
    case CvoFunc::RECIP: return num::recip(x);
    case CvoFunc::TANH: return num::tanh_sfu(x);
    case CvoFunc::RSQRT: return num::rsqrt_rn(x);
    case CvoFunc::RELU: return num::relu(x);
    default: return x;
  }
}

float binary(CvoFunc f, float a, float b) {
  switch (f) {
    case CvoFunc::ADD: return a + b;
    case CvoFunc::SUB: return a - b;
    case CvoFunc::MUL: return a * b;
    case CvoFunc::MAX: return num::nmax(a, b);
    default: return a;
  }
}

}  // namespace

void exec_sfu(FuncSim& m, const Issued& in) {
  const auto f = static_cast<CvoFunc>(isa::field_raw(in.word, in.def->fields[in.def->subop_field]));
  const View &y = in.op("dst"), &a = in.op("a"), &bv = in.op("b");
  const num::Fmt out = y.fmt();
  Rows x = load(m, a);
  switch (f) {
    case CvoFunc::EXP: case CvoFunc::SQRT: case CvoFunc::GELU: case CvoFunc::SIN: case CvoFunc::COS:
    case CvoFunc::RECIP: case CvoFunc::TANH: case CvoFunc::RSQRT: case CvoFunc::RELU:
      same_shape(m, in, y, a);
      for (float& v : x.v) v = unary(f, v);
      break;
    case CvoFunc::SCALE: case CvoFunc::ADDK: case CvoFunc::MAXK: {
      same_shape(m, in, y, a);
      const float k = in.kf32();
      for (float& v : x.v) v = f == CvoFunc::SCALE ? v * k : f == CvoFunc::ADDK ? v + k : num::nmax(v, k);
      break;
    }
    case CvoFunc::ADD: case CvoFunc::SUB: case CvoFunc::MUL: case CvoFunc::MAX: case CvoFunc::MAC: {
      // dst's shape is the result's; a and b each broadcast to it.
      check_bcast(m, in, y, a, "a");
      check_bcast(m, in, y, bv, "b");
      const Rows b = load(m, bv);
      Rows acc;
      if (f == CvoFunc::MAC) acc = load(m, y);
      Rows r{std::vector<float>(static_cast<size_t>(y.numel())), y.rows, y.cols};
      for (int64_t i = 0; i < y.rows; ++i)
        for (int64_t c = 0; c < y.cols; ++c) {
          const float u = bcast(x, i, c), v = bcast(b, i, c);
          if (f == CvoFunc::MAC) {
            const float p = u * v;  // rounded to float32 before the sum: no FMA
            r.row(i)[c] = acc.at(i, c) + p;
          } else {
            r.row(i)[c] = binary(f, u, v);
          }
        }
      store(m, y, r);
      return;
    }
    case CvoFunc::RSUM: case CvoFunc::RMAX: case CvoFunc::RSUMSQ: case CvoFunc::RMS: {
      if (y.rows != a.rows || y.cols != 1)
        m.trap(TrapKind::ShapeMismatch, in, "dst " + shape(y) + ": a row reduction of a " + shape(a) + " writes [" +
                                                std::to_string(a.rows) + ", 1]");
      Rows r{std::vector<float>(static_cast<size_t>(a.rows)), a.rows, 1};
      for (int64_t i = 0; i < a.rows; ++i) {
        const float* row = x.row(i);
        r.v[static_cast<size_t>(i)] = f == CvoFunc::RSUM     ? num::tree_sum(row, a.cols)
                                      : f == CvoFunc::RMAX   ? num::tree_max(row, a.cols)
                                      : f == CvoFunc::RSUMSQ ? num::tree_sumsq(row, a.cols)
                                                             : num::rms(row, a.cols);
      }
      store(m, y, r);
      return;
    }
    case CvoFunc::RMSNORM: {
      same_shape(m, in, y, a);
      Rows w;
      if (bv.present()) {
        if (bv.cols != a.cols || (bv.rows != 1 && bv.rows != a.rows))
          m.trap(TrapKind::ShapeMismatch, in, "weight b " + shape(bv) + " must be [1, " + std::to_string(a.cols) +
                                                  "] or a's shape " + shape(a));
        w = load(m, bv);
      }
      const float eps = in.kf32();
      for (int64_t r = 0; r < x.rows; ++r)
        num::rmsnorm(x.row(r), bv.present() ? w.row(w.rows == 1 ? 0 : r) : nullptr, x.cols, eps, x.row(r), out);
      break;
    }
    case CvoFunc::SOFTMAX:
      same_shape(m, in, y, a);
      for (int64_t r = 0; r < x.rows; ++r) num::softmax(x.row(r), x.cols, out);
      break;
    case CvoFunc::ROPE: {
      same_shape(m, in, y, a);
      if (a.cols % 2 || bv.cols * 2 != a.cols || bv.rows < 1 || a.rows % bv.rows)
        m.trap(TrapKind::ShapeMismatch, in, "a " + shape(a) + " and angles b " + shape(bv) +
                                                ": need a [T*H, d] and b [T, d/2]");
      Rows ang = load(m, bv);
      const int64_t heads = a.rows / bv.rows;
      // num::rope forms each angle as float(pos) * inv_freq[i]; with pos = 1 and
      // the angle row as inv_freq that product is the angle itself, exactly.
      for (int64_t t = 0; t < bv.rows; ++t) num::rope(x.row(t * heads), heads, a.cols, 1, ang.row(t), out);
      break;
    }
    case CvoFunc::GTOPK:
      same_shape(m, in, y, a);
      for (int64_t r = 0; r < x.rows; ++r) num::gaussian_topk(x.row(r), x.cols, in.kf32(), out);
      break;
    case CvoFunc::SOFTCAP:
      same_shape(m, in, y, a);
      for (int64_t r = 0; r < x.rows; ++r) num::softcap(x.row(r), x.cols, in.kf32(), out);
      break;
    case CvoFunc::MAGMATCH: {
      same_shape(m, in, y, a);
      if (!(bv.cols == 1 && (bv.rows == a.rows || bv.rows == 1)))
        m.trap(TrapKind::ShapeMismatch, in, "target b " + shape(bv) + " must be [" + std::to_string(a.rows) +
                                                ", 1] or [1, 1]");
      const Rows t = load(m, bv);
      for (int64_t r = 0; r < x.rows; ++r)
        num::match_magnitude(x.row(r), x.cols, t.at(t.rows == 1 ? 0 : r, 0), in.kf32(), out);
      break;
    }
  }
  store(m, y, x);
}

}  // namespace n3::sim
