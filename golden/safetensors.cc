#include "golden/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <set>

#include "base/error.h"
#include "golden/json_read.h"

namespace n3 {

namespace {

size_t dtype_bytes(const std::string& d) {
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path)
    : file_(path), entries_(parse_safetensors(file_.data(), file_.size(), path)) {}

std::map<std::string, SafetensorsEntry> parse_safetensors(const uint8_t* data, size_t size, const std::string& path) {
  std::map<std::string, SafetensorsEntry> entries;
  require(size >= 8, path + ": truncated safetensors file (" + std::to_string(size) + " bytes)");
  uint64_t hlen;
  std::memcpy(&hlen, data, 8);
  require(hlen <= size - 8, path + ": header length " + std::to_string(hlen) +
                                " runs past the end of the file (" + std::to_string(size) + " bytes)");
  // A tensor named twice is refused (the parser alone would keep one).
  const nlohmann::json h = parse_json_file(reinterpret_cast<const char*>(data + 8),
                                           reinterpret_cast<const char*>(data + 8 + hlen), path + ": safetensors header");
  require(h.is_object(), path + ": safetensors header is not a JSON object");
  const uint8_t* base = data + 8 + hlen;
  const size_t body = size - 8 - hlen;
  for (auto& [name, v] : h.items()) {
    if (name == "__metadata__") continue;
    const std::string where = path + ": tensor '" + name + "'";
    try {
      SafetensorsEntry e;
      e.dtype = v.at("dtype").get<std::string>();
      // nlohmann converts a JSON float (or a negative number) to an integer
      // with a plain cast: 1e30 is undefined behaviour and -1 wraps; the
      // format's dimensions and offsets are non-negative integers.
      auto uint = [&](const nlohmann::json& x, const char* field) {
        require(!json_number_beyond(x, 64),
                where + ": " + field + " holds a number out of range (has " + x.dump() + "; at most 2^64 - 1)");
        require(x.is_number_unsigned(), where + ": " + field + " must hold non-negative integers (has " + x.dump() + ")");
        return x.get<uint64_t>();
      };
      require(v.at("shape").is_array(), where + ": shape must be a list");
      for (const auto& d : v.at("shape")) {
        const uint64_t n = uint(d, "shape");
        require(n <= uint64_t(INT64_MAX), where + ": dimension " + std::to_string(n) + " beyond 2^63");
        e.shape.push_back(int64_t(n));
      }
      auto off = v.at("data_offsets");
      require(off.is_array() && off.size() == 2, where + ": data_offsets must be [begin, end]");
      uint64_t b = uint(off[0], "data_offsets"), en = uint(off[1], "data_offsets");
      size_t es = dtype_bytes(e.dtype);
      require(es != 0, where + ": unknown dtype '" + e.dtype + "'");
      for (int64_t d : e.shape) require(d >= 0, where + ": negative dimension");
      require(b <= en && en <= body, where + ": data_offsets [" + std::to_string(b) + ", " +
                                         std::to_string(en) + ") run past the end of the file (data section is " +
                                         std::to_string(body) + " bytes)");
      uint64_t want = es;  // checked: a shape whose bytes overflow 64 bits must not wrap to a match
      for (int64_t d : e.shape)
        require(!__builtin_mul_overflow(want, uint64_t(d), &want),
                where + ": shape " + shape_str(e.shape) + " holds more than 2^64 bytes");
      require(en - b == want,
              where + ": byte range " + std::to_string(en - b) + " does not match shape " +
                  shape_str(e.shape) + " of " + e.dtype);
      e.data = base + b;
      e.nbytes = en - b;
      entries.emplace(name, e);
    } catch (const nlohmann::json::exception& ex) {
      throw Error(where + ": malformed header entry: " + ex.what());
    }
  }
  // Two tensors sharing bytes would alias silently (the format forbids it).
  std::vector<std::pair<const SafetensorsEntry*, const std::string*>> by_start;
  for (const auto& [name, e] : entries)
    if (e.nbytes) by_start.push_back({&e, &name});
  std::sort(by_start.begin(), by_start.end(), [](const auto& x, const auto& y) {
    return x.first->data != y.first->data ? x.first->data < y.first->data : *x.second < *y.second;
  });
  for (size_t i = 1; i < by_start.size(); ++i) {
    const SafetensorsEntry& p = *by_start[i - 1].first;
    require(p.data + p.nbytes <= by_start[i].first->data,
            path + ": tensors '" + *by_start[i - 1].second + "' and '" + *by_start[i].second +
                "' overlap (data_offsets " + std::to_string(p.data - base) + ".." + std::to_string(p.data - base + p.nbytes) +
                " and " + std::to_string(by_start[i].first->data - base) + "..)");
  }
  return entries;
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsOut>& tensors) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  uint64_t off = 0;
  for (const auto& t : tensors) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  std::string hs = h.dump();
  hs.append((8 - hs.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t hl = hs.size();
  std::memcpy(out.data(), &hl, 8);
  out += hs;
  for (const auto& t : tensors) out += t.bytes;
  write_file_atomic(path, out);
}

std::vector<std::string> parse_safetensors_index(const std::string& text, const std::string& path) {
  const nlohmann::json j = parse_json_file(text, path);  // a tensor mapped twice is refused there
  require(j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(), path + ": no weight_map");
  std::set<std::string> files;
  for (auto& [name, f] : j["weight_map"].items()) {
    const std::string shown = name.size() > 80 ? name.substr(0, 80) + "..." : name;
    require(f.is_string(), path + ": weight_map entry '" + shown + "' is not a file name");
    const std::string fn = f.get<std::string>();
    const std::string fs = fn.size() > 80 ? fn.substr(0, 80) + "..." : fn;
    require(!fn.empty() && fn != "." && fn != ".." && fn.find('/') == std::string::npos &&
                fn.find('\0') == std::string::npos,
            path + ": shard name '" + fs + "' (weight_map entry '" + shown + "') must be a plain file name");
    files.insert(fn);
  }
  return {files.begin(), files.end()};
}

}  // namespace n3
