// A descriptor resolved at dispatch: the static record plus the register
// values it named (row offset, run-time extent), and the row-level reads and
// writes every engine uses. Element (r, c) of a view lives at physical row
// p = r + row_off (mod rows when the descriptor is a ring).
#pragma once
#include <cstdint>
#include <vector>

#include "golden/numerics/formats.h"
#include "isa/isa.h"
#include "sim/hazard.h"
#include "sim/memory.h"

namespace n3::sim {

struct View {
  uint32_t slot = 0;  // 0: absent operand
  isa::DescRecord d;
  int64_t rows = 0, cols = 0;  // effective extents
  int64_t row_off = 0;

  bool present() const { return slot != 0; }
  int64_t numel() const { return rows * cols; }
  int64_t phys(int64_t r) const {
    const int64_t p = r + row_off;
    return d.ring ? p % static_cast<int64_t>(d.rows) : p;
  }
  uint64_t row_addr(int64_t r) const { return d.base + static_cast<uint64_t>(phys(r)) * d.row_stride; }
  uint64_t scale_addr(int64_t r) const { return d.scale_base + static_cast<uint64_t>(phys(r)) * d.scale_stride; }
  int64_t row_bytes() const;     // bytes of `cols` elements
  int64_t scale_bytes() const;   // bytes of one scale record (0 without scales)
  bool scaled() const { return d.scale_mode != isa::ScaleMode::NONE; }
  bool is_float() const {
    return d.dtype == isa::Dtype::F32 || d.dtype == isa::Dtype::BF16 || d.dtype == isa::Dtype::F16;
  }
  num::Fmt fmt() const;  // storage format of a float view
  // Appends the byte ranges the view covers (data, and scale records when
  // scaled), contiguous rows coalesced.
  void accesses(bool write, std::vector<MemAccess>* out) const;
};

// Float and INT32 views: element values of row r as float32 (exact for
// float formats; INT32 converted with round-to-nearest-even).
void read_row(const Memory& m, const View& v, int64_t r, float* out);
// Float views: writes row r, each value rounded into the view's format.
void write_row(Memory& m, const View& v, int64_t r, const float* in);
// Raw bytes of row r's data (row_bytes()) and scale record (scale_bytes()).
void read_row_bytes(const Memory& m, const View& v, int64_t r, uint8_t* out);
void read_scale_record(const Memory& m, const View& v, int64_t r, uint8_t* out);

// Scale record accessors (record as read by read_scale_record).
float record_f32(const uint8_t* rec, int64_t i);  // i-th F32 of the record
// Value of element c of a scaled row: q * scale (F32 product; TWO_LEVEL:
// (q * block_scale) * row_scale), as MEMCPY dequantises.
float dequant(const View& v, const uint8_t* row, const uint8_t* rec, int64_t c);

}  // namespace n3::sim
