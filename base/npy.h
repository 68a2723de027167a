// NumPy .npy files (format 1.0/2.0, little-endian, C order), the format every
// tensor n3 writes or reads is in, so NumPy opens them without help.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/tensor.h"

namespace n3 {

struct NpyArray {
  std::string dtype;  // numpy descr without byte order: "f4", "i4", "i8", ...
  Shape shape;
  std::vector<uint8_t> bytes;
};

NpyArray read_npy(const std::string& path);
// Parses an in-memory .npy image; `what` names it in errors.
NpyArray parse_npy(const uint8_t* data, size_t size, const std::string& what);

Tensor read_npy_f32(const std::string& path);
// Token ids: int32 or int64, shape [T] or [1, T]; checked to lie in [0, limit).
std::vector<int32_t> read_ids(const std::string& path, int64_t limit);

// Writes atomically (temp file + rename) so no half-written file is left.
void write_npy(const std::string& path, const Tensor& t);
void write_npy_i32(const std::string& path, const std::vector<int32_t>& v);
void write_npy_raw(const std::string& path, const std::string& dtype, const Shape& shape,
                   const void* data, size_t nbytes);

}  // namespace n3
