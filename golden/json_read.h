// The one JSON reader for files that come from users (safetensors headers,
// model.safetensors.index.json, dump manifests, cosim shard reports).
// nlohmann's parser keeps one of two equal keys in an object; a file that
// names a tensor (or anything else) twice is ambiguous, so it is refused
// here, for every such file alike, instead of picking one.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace n3 {

// Parses [first, last) as JSON. Throws n3::Error "WHERE: malformed JSON: ..."
// on a syntax error and "WHERE: key 'K' appears twice in OBJECT" (OBJECT:
// the enclosing keys, "the top-level object" at depth 0) on a repeated key
// at any depth. Keys and paths in messages are clipped to 80 characters.
// Nesting deeper than kMaxJsonDepth objects/arrays is refused ("WHERE: JSON
// nested deeper than 64 levels") while parsing.
constexpr int kMaxJsonDepth = 64;
nlohmann::json parse_json_file(const char* first, const char* last, const std::string& where);
inline nlohmann::json parse_json_file(const std::string& text, const std::string& where) {
  return parse_json_file(text.data(), text.data() + text.size(), where);
}

// True for a JSON number at or beyond 2^bits in magnitude. nlohmann reads an
// integer literal past 2^64 as a float (2^64 becomes 1.8446744073709552e+19),
// so "is it an integer" alone would call such a number not an integer; it is
// one, out of range. Floats this large are all integral.
inline bool json_number_beyond(const nlohmann::json& x, int bits) {
  const double limit = std::ldexp(1.0, bits);
  if (x.is_number_float()) return !std::isfinite(x.get<double>()) || std::fabs(x.get<double>()) >= limit;
  if (x.is_number_unsigned()) return bits < 64 && x.get<uint64_t>() >= (uint64_t(1) << bits);
  return false;
}

}  // namespace n3
