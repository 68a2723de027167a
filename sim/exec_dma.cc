// DMA: MEMCPY (copy, convert, dequantise, quantise to INT8) and MEMSET.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "golden/numerics/formats.h"
#include "isa/verify.h"
#include "sim/func_sim.h"

namespace n3::sim {

using isa::Dtype;
using isa::ScaleMode;

namespace {

std::string shape(const View& v) { return "[" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "]"; }
std::string dt(const View& v) { return isa::dtype_text(v.d.dtype); }
bool scaled_type(Dtype t) { return t == Dtype::INT4 || t == Dtype::INT8; }

// Same dtype, scaled: rows of data and their scale records, shapes equal.
void copy_scaled(FuncSim& m, const Issued& in, const View& dst, const View& src) {
  if (dst.rows != src.rows || dst.cols != src.cols || dst.d.scale_mode != src.d.scale_mode ||
      dst.d.group != src.d.group || dst.d.cols != src.d.cols)
    m.trap(TrapKind::ShapeMismatch, in, "copying scaled " + dt(src) + " needs equal shapes and scale layouts (src " +
                                            shape(src) + ", dst " + shape(dst) + ")");
  const size_t rb = static_cast<size_t>(src.row_bytes()), sb = static_cast<size_t>(src.scale_bytes());
  std::vector<uint8_t> rows(rb * static_cast<size_t>(src.rows)), recs(sb * static_cast<size_t>(src.rows));
  for (int64_t r = 0; r < src.rows; ++r) {  // every read before any write: dst may alias src
    read_row_bytes(m.memory(), src, r, rows.data() + r * rb);
    read_scale_record(m.memory(), src, r, recs.data() + r * sb);
  }
  SpaceMemory& out = m.memory().space(dst.d.space);
  for (int64_t r = 0; r < src.rows; ++r) {
    out.write(dst.row_addr(r), rows.data() + r * rb, rb);
    if (sb) out.write(dst.scale_addr(r), recs.data() + r * sb, sb);
  }
}

// Same dtype, unscaled: element bytes in row-major order (reshaping).
void copy_raw(FuncSim& m, const View& dst, const View& src) {
  const int64_t es = isa::dtype_bits(src.d.dtype) / 8;
  std::vector<uint8_t> flat(static_cast<size_t>(src.numel() * es));
  for (int64_t r = 0; r < src.rows; ++r)
    m.memory().space(src.d.space).read(src.row_addr(r), flat.data() + r * src.cols * es, static_cast<uint64_t>(src.cols * es));
  for (int64_t r = 0; r < dst.rows; ++r)
    m.memory().space(dst.d.space).write(dst.row_addr(r), flat.data() + r * dst.cols * es, static_cast<uint64_t>(dst.cols * es));
}

// Any readable dtype to a float dtype: values, then rounding into dst.
void convert_to_float(FuncSim& m, const View& dst, const View& src) {
  std::vector<float> flat(static_cast<size_t>(src.numel()));
  for (int64_t r = 0; r < src.rows; ++r) read_row(m.memory(), src, r, flat.data() + r * src.cols);
  for (int64_t r = 0; r < dst.rows; ++r) write_row(m.memory(), dst, r, flat.data() + r * dst.cols);
}

// Float to INT8 with ROW or GROUP scales: each group quantised symmetrically
// (numerics int8_quantize) and its scale written into the row's record.
void quantize_int8(FuncSim& m, const Issued& in, const View& dst, const View& src) {
  if (dst.rows != src.rows || dst.cols != src.cols)
    m.trap(TrapKind::ShapeMismatch, in, "quantising to INT8 needs equal shapes (src " + shape(src) + ", dst " +
                                            shape(dst) + ")");
  if (dst.d.scale_mode == ScaleMode::TWO_LEVEL)
    m.trap(TrapKind::BadOperand, in, "dst: INT8 data takes ROW or GROUP scales");
  const int64_t g = isa::scale_group(dst.d);
  std::vector<float> x(static_cast<size_t>(src.cols));
  std::vector<int8_t> q(static_cast<size_t>(src.cols));
  std::vector<uint8_t> rec(static_cast<size_t>(dst.scale_bytes()));
  for (int64_t r = 0; r < src.rows; ++r) {
    read_row(m.memory(), src, r, x.data());
    std::fill(rec.begin(), rec.end(), 0);
    for (int64_t lo = 0, k = 0; lo < src.cols; lo += g, ++k) {
      const int64_t cnt = src.cols - lo < g ? src.cols - lo : g;
      const float s = num::int8_quantize(x.data() + lo, cnt, q.data() + lo);
      std::memcpy(rec.data() + 4 * k, &s, 4);
    }
    m.memory().space(dst.d.space).write(dst.row_addr(r), q.data(), q.size());
    m.memory().space(dst.d.space).write(dst.scale_addr(r), rec.data(), rec.size());
  }
}

void memcpy_op(FuncSim& m, const Issued& in) {
  const View &dst = in.op("dst"), &src = in.op("src");
  const Dtype s = src.d.dtype, d = dst.d.dtype;
  enum { Same, ToFloat, ToInt8 } kind;
  if (s == d) kind = Same;
  else if (dst.is_float()) kind = ToFloat;  // float, INT32, or scaled INT4 / INT8 sources
  else if (d == Dtype::INT8 && src.is_float()) kind = ToInt8;
  else m.trap(TrapKind::DtypeMismatch, in, "no conversion from " + dt(src) + " to " + dt(dst));
  if (dst.numel() != src.numel())
    m.trap(TrapKind::ShapeMismatch, in, "src " + shape(src) + " and dst " + shape(dst) + " hold different element counts");
  switch (kind) {
    case Same:
      if (scaled_type(s)) copy_scaled(m, in, dst, src);
      else copy_raw(m, dst, src);
      return;
    case ToFloat:
      convert_to_float(m, dst, src);
      return;
    case ToInt8:
      quantize_int8(m, in, dst, src);
      return;
  }
}

void memset_op(FuncSim& m, const Issued& in) {
  const View& dst = in.op("dst");
  if (dst.is_float() && in.konst_type == Dtype::F32) {
    const std::vector<float> row(static_cast<size_t>(dst.cols), in.kf32());
    for (int64_t r = 0; r < dst.rows; ++r) write_row(m.memory(), dst, r, row.data());
  } else if (dst.d.dtype == Dtype::INT32 && in.konst_type == Dtype::INT32) {
    const std::vector<uint32_t> row(static_cast<size_t>(dst.cols), in.konst);
    for (int64_t r = 0; r < dst.rows; ++r)
      m.memory().space(dst.d.space).write(dst.row_addr(r), row.data(), row.size() * 4);
  } else {
    m.trap(TrapKind::DtypeMismatch, in, std::string("cannot fill ") + dt(dst) + " with a " +
                                            isa::dtype_text(in.konst_type) + " constant");
  }
}

}  // namespace

void exec_dma(FuncSim& m, const Issued& in) {
  if (in.def->opcode == isa::Opcode::MEMCPY) memcpy_op(m, in);
  else memset_op(m, in);
}

}  // namespace n3::sim
