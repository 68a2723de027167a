#include "sim/view.h"

#include <cstring>

#include "base/error.h"
#include "golden/numerics/mac.h"
#include "isa/verify.h"

namespace n3::sim {

using isa::Dtype;

int64_t View::row_bytes() const { return isa::data_bytes(d.dtype, cols); }
int64_t View::scale_bytes() const { return isa::scale_record_bytes(d); }

num::Fmt View::fmt() const {
  return d.dtype == Dtype::BF16 ? num::Fmt::BF16 : d.dtype == Dtype::F16 ? num::Fmt::F16 : num::Fmt::F32;
}

void View::accesses(bool write, std::vector<MemAccess>* out) const {
  if (!present()) return;
  auto add = [&](uint64_t lo, uint64_t n) {
    if (!out->empty()) {
      MemAccess& b = out->back();
      if (b.space == d.space && b.write == write && b.hi == lo) {
        b.hi = lo + n;
        return;
      }
    }
    out->push_back({d.space, lo, lo + n, write});
  };
  const int64_t rb = row_bytes(), sb = scale_bytes();
  for (int64_t r = 0; r < rows; ++r) add(row_addr(r), static_cast<uint64_t>(rb));
  if (sb)
    for (int64_t r = 0; r < rows; ++r) add(scale_addr(r), static_cast<uint64_t>(sb));
}

void read_row(const Memory& m, const View& v, int64_t r, float* out) {
  const SpaceMemory& s = m.space(v.d.space);
  const uint64_t a = v.row_addr(r);
  const int64_t n = v.cols;
  switch (v.d.dtype) {
    case Dtype::F32:
      s.read(a, out, static_cast<uint64_t>(n) * 4);
      return;
    case Dtype::BF16:
    case Dtype::F16: {
      std::vector<uint16_t> h(static_cast<size_t>(n));
      s.read(a, h.data(), static_cast<uint64_t>(n) * 2);
      for (int64_t i = 0; i < n; ++i)
        out[i] = v.d.dtype == Dtype::BF16 ? num::bf16_value(h[i]) : num::f16_value(h[i]);
      return;
    }
    case Dtype::INT32: {
      std::vector<int32_t> q(static_cast<size_t>(n));
      s.read(a, q.data(), static_cast<uint64_t>(n) * 4);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]);
      return;
    }
    case Dtype::INT4:
    case Dtype::INT8: {
      std::vector<uint8_t> row(static_cast<size_t>(v.row_bytes())), rec(static_cast<size_t>(v.scale_bytes()));
      read_row_bytes(m, v, r, row.data());
      read_scale_record(m, v, r, rec.data());
      for (int64_t i = 0; i < n; ++i) out[i] = dequant(v, row.data(), rec.data(), i);
      return;
    }
  }
}

void write_row(Memory& m, const View& v, int64_t r, const float* in) {
  SpaceMemory& s = m.space(v.d.space);
  const uint64_t a = v.row_addr(r);
  const int64_t n = v.cols;
  switch (v.d.dtype) {
    case Dtype::F32: {
      std::vector<float> t(in, in + n);
      for (float& x : t) x = num::canon(x);
      s.write(a, t.data(), static_cast<uint64_t>(n) * 4);
      return;
    }
    case Dtype::BF16:
    case Dtype::F16: {
      std::vector<uint16_t> h(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) h[i] = v.d.dtype == Dtype::BF16 ? num::bf16_bits(in[i]) : num::f16_bits(in[i]);
      s.write(a, h.data(), static_cast<uint64_t>(n) * 2);
      return;
    }
    default:
      throw Error("write_row: not a float view");
  }
}

void read_row_bytes(const Memory& m, const View& v, int64_t r, uint8_t* out) {
  m.space(v.d.space).read(v.row_addr(r), out, static_cast<uint64_t>(v.row_bytes()));
}

void read_scale_record(const Memory& m, const View& v, int64_t r, uint8_t* out) {
  if (v.scale_bytes()) m.space(v.d.space).read(v.scale_addr(r), out, static_cast<uint64_t>(v.scale_bytes()));
}

float record_f32(const uint8_t* rec, int64_t i) {
  float f;
  std::memcpy(&f, rec + 4 * i, 4);
  return f;
}

float dequant(const View& v, const uint8_t* row, const uint8_t* rec, int64_t c) {
  const int q = v.d.dtype == Dtype::INT4 ? num::int4_at(row, c) : static_cast<int8_t>(row[c]);
  switch (v.d.scale_mode) {
    case isa::ScaleMode::ROW:
      return num::canon(static_cast<float>(q) * record_f32(rec, 0));
    case isa::ScaleMode::GROUP:
      return num::canon(static_cast<float>(q) * record_f32(rec, c / v.d.group));
    case isa::ScaleMode::TWO_LEVEL: {
      const int b = rec[4 + c / v.d.group];
      return num::canon(static_cast<float>(q * b) * record_f32(rec, 0));
    }
    case isa::ScaleMode::NONE:
      break;
  }
  return static_cast<float>(q);
}

}  // namespace n3::sim
