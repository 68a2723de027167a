// Comparing dumps: the library behind `n3 diff` (docs/dumps.md).
// Tests and backends call diff_dumps() / diff_tensor() directly; printing the
// report is host_driver/cmd_diff.cc's job. docs/dumps.md documents the rules.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/tensor.h"

namespace n3 {

// An element passes when |a - b| <= abs + rel * |b| (computed in double).
// NaN and Inf never pass by tolerance: they match only the same bits.
struct DiffTolerance {
  double abs = 0, rel = 0;
};

struct DiffOptions {
  // nullopt: bit-exact comparison (the default of `n3 diff`).
  std::optional<DiffTolerance> tol;
};

enum class DiffStatus { Identical, WithinTol, Differs };
const char* diff_status_name(DiffStatus s);  // "identical", "within-tol", "DIFFERS"

// One element of a candidate/reference pair.
struct ElementDiff {
  int64_t flat = -1;  // row-major index
  Shape index;        // the same index, one entry per axis
  float candidate = 0, reference = 0;
  uint32_t candidate_bits = 0, reference_bits = 0;
  double abs_err = 0;  // +inf when a NaN or Inf does not match
  double rel_err = 0;  // abs_err / |reference|; +inf for a nonzero error on a zero reference
  uint64_t ulp = 0;    // ulp_distance(candidate, reference)
};

struct TensorDiff {
  std::string name;
  Shape shape;
  DiffStatus status = DiffStatus::Identical;
  int64_t elements = 0;
  int64_t differing_bits = 0;  // elements whose bits differ
  int64_t mismatched = 0;      // elements failing the rule (bits, or the tolerance)
  double max_abs_err = 0, max_rel_err = 0;
  double cosine = 1;  // over elements finite in both; 1 if both norms are 0, 0 if one is
  uint64_t max_ulp = 0;
  // The worst element, set whenever some bits differ. Exact: the largest
  // abs_err, then the largest ulp. With a tolerance: the largest share of the
  // tolerance used, abs_err / (abs + rel*|b|), then abs_err, then ulp. Ties go
  // to the lowest flat index. A mismatching element always beats a passing one.
  std::optional<ElementDiff> worst;
};

struct DiffResult {
  std::vector<TensorDiff> tensors;          // every candidate tensor, in reference order
  std::vector<std::string> reference_only;  // reference tensors the candidate lacks (optional ops)
  std::optional<DiffTolerance> tol;         // as given
  int first_differing = -1;                 // index into tensors, -1 when none differ
  bool ok() const { return first_differing < 0; }
  int count(DiffStatus s) const;
};

// Compares dump directory `candidate` against `reference`. Throws n3::Error
// (one line naming file and tensor) on bad input: a missing directory or
// manifest, a malformed manifest or .npy, a duplicate name, a candidate tensor
// the reference lacks, a shape that differs between the two or between a
// manifest and its .npy, or an always-present tensor of the reference (op
// "logits" or "layer_out", either phase) missing from the candidate. The
// reference itself must hold prefill logits and layers 0..L-1.
DiffResult diff_dumps(const std::string& candidate, const std::string& reference,
                      const DiffOptions& opt = {});

// Compares two in-memory tensors of equal shape (throws n3::Error otherwise).
TensorDiff diff_tensor(const std::string& name, const Tensor& candidate, const Tensor& reference,
                       const DiffOptions& opt = {});

// Distance in units in the last place: each float's bits mapped to an integer
// that increases with the value (negative floats: INT32_MIN - bits, as
// numpy.testing's nulp functions do, so -0 and +0 are 0 apart), then |ia - ib|.
uint64_t ulp_distance(float a, float b);

// Row-major flat index -> one index per axis.
Shape unravel_index(int64_t flat, const Shape& shape);

}  // namespace n3
