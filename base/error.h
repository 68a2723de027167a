// One error type for every bad input: a one-line message naming what and
// where. The CLI turns it into exit status 2; nothing catches it silently.
#pragma once
#include <stdexcept>
#include <string>

namespace n3 {

struct Error : std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Throws n3::Error with `msg` when `cond` is false.
inline void require(bool cond, const std::string& msg) {
  if (!cond) throw Error(msg);
}

}  // namespace n3
