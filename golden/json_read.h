// The one JSON reader for files that come from users (safetensors headers,
// model.safetensors.index.json, dump manifests, cosim shard reports).
// nlohmann's parser keeps one of two equal keys in an object; a file that
// names a tensor (or anything else) twice is ambiguous, so it is refused
// here, for every such file alike, instead of picking one.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace n3 {

// Parses [first, last) as JSON. Throws n3::Error "WHERE: malformed JSON: ..."
// on a syntax error and "WHERE: key 'K' appears twice in OBJECT" (OBJECT:
// the enclosing keys, "the top-level object" at depth 0) on a repeated key
// at any depth. Keys and paths in messages are clipped to 80 characters.
nlohmann::json parse_json_file(const char* first, const char* last, const std::string& where);
inline nlohmann::json parse_json_file(const std::string& text, const std::string& where) {
  return parse_json_file(text.data(), text.data() + text.size(), where);
}

}  // namespace n3
