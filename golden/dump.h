// Per-tensor dumps: what the golden model and every backend record while
// running, and the on-disk layout of docs/dumps.md: manifest.json
// (canonical order: phase, layer, op) plus one .npy per tensor.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "golden/dump_ops.h"
#include "base/tensor.h"

namespace n3 {

enum class Phase { Prefill = 0, Decode = 1 };

// What a model calls while it runs. Backends that do not dump pass nullptr.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual bool wants(Op op) const = 0;
  // `native_dtype` names the format the tensor had on the backend ("float32",
  // "bfloat16", "bfp16", ...); data is always float32.
  virtual void record(Phase phase, Op op, int layer, const Shape& shape, const float* data,
                      const std::string& native_dtype = "float32") = 0;
};

struct ManifestEntry {
  std::string name, file, native_dtype, op;
  std::string dtype = "float32";  // the .npy's dtype by numpy name (n3 writes float32)
  Shape shape;
  std::string phase;  // "prefill" | "decode"
  int layer = -1;     // -1 for Pre/Post ops
};

struct Manifest {
  std::map<std::string, std::string> meta;  // backend, numerics, model, ...
  std::vector<ManifestEntry> tensors;       // canonical order
};

// Accumulates recorded chunks (several prefill chunks, every decode step)
// along each op's token axis, then writes the dump directory.
class DumpCollector : public Recorder {
 public:
  // `all_ops`: record every op of the table; otherwise only the always-present ones.
  explicit DumpCollector(bool all_ops) : all_ops_(all_ops) {}
  bool wants(Op op) const override;
  void record(Phase phase, Op op, int layer, const Shape& shape, const float* data,
              const std::string& native_dtype) override;
  // Keep only the last row of prefill logits (--logits last).
  void set_logits_last(bool v) { logits_last_ = v; }
  void set_meta(const std::string& k, const std::string& v) { meta_[k] = v; }
  // Writes into `dir` (prepare_output_dir() first). Files are written atomically
  // and the manifest last, so a dump with a manifest is complete.
  void write(const std::string& dir) const;
  const Tensor* find(const std::string& name) const;

 private:
  struct Key {
    int phase, layer_rank, op;
    bool operator<(const Key& o) const;
  };
  struct Entry {
    std::string name, native_dtype;
    int layer;
    Op op;
    Phase phase;
    Tensor t;
  };
  bool all_ops_;
  bool logits_last_ = false;
  std::map<std::string, std::string> meta_;
  std::map<Key, Entry> entries_;
};

Manifest read_manifest(const std::string& dir);
// The manifest's checks on its text (`path` names it in errors): what
// read_manifest does once the file is read, and what the fuzz target feeds.
Manifest parse_manifest(const std::string& text, const std::string& path);

}  // namespace n3
