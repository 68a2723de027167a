// The n3 weights file (.n3w): INT4 weights with scales and the float tensors
// the model keeps, the model config in its header; versioned, checksummed,
// memory-mappable. Byte layout: docs/weights.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.h"

#include "golden/weight_names.h"
#include "golden/weights.h"

namespace n3 {

constexpr uint32_t kN3wVersion = 1;
constexpr uint64_t kN3wHeaderBytes = 64;
constexpr uint64_t kN3wRecordBytes = 256;
constexpr uint64_t kN3wAlign = 64;
constexpr size_t kN3wNameBytes = 160;  // NUL-padded; names are at most 159 bytes

// Opens, checks (magic, version, size, every offset, the tensor set against
// weight_specs(config), the header and every tensor's checksum) and maps an
// .n3w file. Throws n3::Error naming the file and what is wrong.
std::unique_ptr<WeightSource> open_n3w(const std::string& path);
// The same checks on an image in memory (`what` names it in errors; `data`
// must outlive the result). open_n3w maps the file and reads it this way;
// the fuzz target (fuzz/file_targets.h) feeds it bytes.
std::unique_ptr<WeightSource> parse_n3w(const uint8_t* data, uint64_t size, const std::string& what);

// One tensor's place in the file, as its table record holds it.
struct N3wTensor {
  std::string name;
  WeightKind kind = WeightKind::Vector;
  WDType dtype = WDType::F32;  // INT4 for WeightKind::Matrix, F32 otherwise
  Shape shape;                 // [rows, cols] or [n]
  int64_t group = 0;           // INT4: elements per scale (cols = one per row); F32: 0
  uint64_t data_offset = 0, data_bytes = 0;
  uint64_t scales_offset = 0, scales_bytes = 0;  // INT4 only
  uint64_t data_hash = 0, scales_hash = 0;       // XXH64 (seed 0) of each byte range

  int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  int64_t cols() const { return shape.back(); }
  int64_t groups_per_row() const { return group > 0 ? (cols() + group - 1) / group : 0; }
  int64_t row_bytes() const { return dtype == WDType::INT4 ? (cols() + 1) / 2 : cols() * 4; }
};

// Streams an .n3w file: the layout of every tensor of weight_specs(c) is fixed
// up front, then rows are appended tensor by tensor, in spec order, each
// tensor's rows in order. Writes go to a unique temporary beside `path`
// (base/atomic_file.h), which finish() renames to `path`; a writer destroyed
// before finish(), or killed by SIGINT/SIGTERM, removes it, so an error never
// leaves a partial output and two writers never mix their bytes. Memory use is that of the caller's row blocks.
class N3wWriter {
 public:
  // `group`: INT4 elements per scale for every Matrix tensor; 0 = per row.
  N3wWriter(const std::string& path, const ModelConfig& c, int64_t group);
  ~N3wWriter();
  N3wWriter(const N3wWriter&) = delete;
  N3wWriter& operator=(const N3wWriter&) = delete;

  const std::vector<N3wTensor>& tensors() const { return tensors_; }
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t bytes_written() const { return written_; }

  // Appends `nrows` rows to tensor `i` (the current one or the next):
  // INT4 tensors take packed rows and their scales, F32 tensors float rows
  // (a vector is one row).
  void append_int4(size_t i, int64_t nrows, const uint8_t* packed, const float* scales);
  void append_f32(size_t i, int64_t nrows, const float* values);
  // Checks that every row of every tensor was written, writes the table and
  // header with their checksums, syncs and renames to `path`.
  void finish();

 private:
  void advance_to(size_t i, int64_t nrows);
  void pwrite_all(const void* p, uint64_t n, uint64_t off);
  void close_tensor();

  std::string path_;
  std::unique_ptr<AtomicFile> file_;
  ModelConfig cfg_;
  std::string config_yaml_;
  std::vector<N3wTensor> tensors_;
  uint64_t file_bytes_ = 0, written_ = 0;
  bool done_ = false;
  size_t cur_ = 0;
  int64_t rows_done_ = 0;
  bool started_ = false;
  struct Hashers;
  std::unique_ptr<Hashers> hash_;
};

}  // namespace n3
