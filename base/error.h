// One error type for every bad input: a one-line message naming what and
// where. The CLI turns it into exit status 2; nothing catches it silently.
#pragma once
#include <stdexcept>
#include <string>

namespace n3 {

// Control characters in a message (a newline in a tensor name, a region name
// or a shape copied from a file; found by the file fuzz targets) would split
// the one line or drive the terminal: they are written as \xNN.
//
// A value copied from a file or the command line can be any length (a
// million-digit number in a YAML file was once echoed whole): a message
// longer than kMaxMessage keeps its head (what and where, which come first)
// and its tail, with the count of characters left out between them.
constexpr size_t kMaxMessage = 1000;
inline std::string one_line(const std::string& msg) {
  static const char* const kHex = "0123456789abcdef";
  if (msg.size() > kMaxMessage) {
    constexpr size_t kHead = 800, kTail = 120;
    return one_line(msg.substr(0, kHead)) + " ... (" + std::to_string(msg.size() - kHead - kTail) +
           " characters left out) ... " + one_line(msg.substr(msg.size() - kTail));
  }
  std::string out;
  out.reserve(msg.size());
  for (const char ch : msg) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

struct Error : std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(one_line(what)) {}
};

// Throws n3::Error with `msg` when `cond` is false.
inline void require(bool cond, const std::string& msg) {
  if (!cond) throw Error(msg);
}

}  // namespace n3
