// One safetensors file, memory-mapped, its header parsed and every entry's
// dtype, shape and byte range checked against the file before use.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/tensor.h"
#include "golden/weights.h"

namespace n3 {

struct SafetensorsEntry {
  std::string dtype;  // "F32", "BF16", "F16", ... as in the header
  Shape shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
};

// Parses and checks a safetensors image in memory: the entries point into
// `data`. `path` names it in errors. SafetensorsFile maps the file and reads
// it this way; the fuzz target (fuzz/file_targets.h) feeds it bytes.
std::map<std::string, SafetensorsEntry> parse_safetensors(const uint8_t* data, size_t size, const std::string& path);

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  const std::string& path() const { return file_.path(); }

 private:
  MappedFile file_;
  std::map<std::string, SafetensorsEntry> entries_;
};

// Writes a safetensors file (used by tests and tools to make checkpoints).
struct SafetensorsOut {
  std::string name, dtype;
  Shape shape;
  std::string bytes;
};
void write_safetensors(const std::string& path, const std::vector<SafetensorsOut>& tensors);

// model.safetensors.index.json's text (read from `path`, named in errors):
// the shard file names its weight_map points at, sorted, each once. Refuses
// malformed JSON, a repeated key anywhere (a tensor mapped twice), a missing
// weight_map, and a shard name that is not a plain file name.
std::vector<std::string> parse_safetensors_index(const std::string& text, const std::string& path);

}  // namespace n3
