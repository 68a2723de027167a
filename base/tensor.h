// A dense float32 tensor, row-major. The golden model computes in these; the
// dump writer and n3 diff read and write them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace n3 {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s);

struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), data(static_cast<size_t>(numel(shape)), 0.0f) {}
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}

  int64_t size() const { return static_cast<int64_t>(data.size()); }
  float* ptr() { return data.data(); }
  const float* ptr() const { return data.data(); }
  // Row `r` of a tensor viewed as [shape[0], rest].
  float* row(int64_t r) { return data.data() + r * (size() / shape[0]); }
  const float* row(int64_t r) const { return data.data() + r * (size() / shape[0]); }
};

}  // namespace n3
