// Symmetric INT4 quantisation (docs/weights.md): for each group of G
// consecutive elements of a row (G = cols: one scale per row),
//   scale = max|w| / 8,  q = clamp(round_half_even(w / scale), -8, 7),
// an all-zero group gets scale 0 and q = 0. float32 arithmetic throughout.
// A row made as q * s with some q = -8 (the conformance fixtures, n3 synth)
// is recovered bit for bit: max|w| / 8 == s exactly, and w / s rounds to q.
// Packing: MatrixRef's (two per byte, even element in the low nibble).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "golden/weights.h"

namespace n3 {

inline int64_t int4_row_bytes(int64_t cols) { return (cols + 1) / 2; }
// The group size stored for a matrix of `cols` columns when asked for
// `group` (0 or >= cols: one scale per row).
inline int64_t effective_group(int64_t group, int64_t cols) { return group <= 0 || group > cols ? cols : group; }

// Quantises one row: `packed` receives int4_row_bytes(cols) bytes (a padding
// nibble is 0), `scales` ceil(cols / group) floats. Returns false, leaving
// the outputs unspecified, when the row holds a NaN or an infinity.
bool quantize_row_int4(const float* w, int64_t cols, int64_t group, uint8_t* packed, float* scales);

struct QuantizeOptions {
  int64_t group = 0;  // elements per scale; 0 = one scale per row
  // Called after each tensor with bytes written so far and the total.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Writes every tensor of `src` (weight_specs(src.config()) order) to an .n3w
// file at `path`: WeightKind::Matrix quantised to INT4, FloatMatrix and
// Vector kept float32. Streams row blocks (never a whole tensor in memory),
// rows quantised in parallel; atomic (path.tmp, then rename). Throws
// n3::Error naming the tensor and row of a non-finite weight. Returns the
// size of the file written.
uint64_t quantize_to_n3w(const WeightSource& src, const std::string& path, const QuantizeOptions& opt);

}  // namespace n3
