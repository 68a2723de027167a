#include "golden/dump.h"

#include <algorithm>
#include <climits>

#include <nlohmann/json.hpp>

#include <cstring>

#include "base/error.h"
#include "base/file_util.h"
#include "base/npy.h"
#include "golden/json_read.h"

namespace n3 {

bool DumpCollector::Key::operator<(const Key& o) const {
  if (phase != o.phase) return phase < o.phase;
  if (layer_rank != o.layer_rank) return layer_rank < o.layer_rank;
  return op < o.op;
}

bool DumpCollector::wants(Op op) const { return all_ops_ || op_def(op).always; }

void DumpCollector::record(Phase phase, Op op, int layer, const Shape& shape, const float* data,
                           const std::string& native_dtype) {
  if (!wants(op)) return;
  const OpDef& d = op_def(op);
  // Pre ops sort before layer 0, Post ops after every layer.
  int rank = d.scope == OpScope::Pre ? -1 : d.scope == OpScope::Post ? 1 << 30 : layer;
  Key k{static_cast<int>(phase), rank, static_cast<int>(op)};
  auto it = entries_.find(k);
  if (it == entries_.end()) {
    Entry e{tensor_name(op, layer, phase == Phase::Decode), native_dtype, layer, op, phase,
            Tensor(shape, std::vector<float>(data, data + numel(shape)))};
    entries_.emplace(k, std::move(e));
    return;
  }
  // Concatenate along the token axis: [outer, T, inner] blocks.
  Tensor& t = it->second.t;
  const int ax = d.token_axis;
  require(t.shape.size() == shape.size(), "dump: rank mismatch recording " + it->second.name);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= shape[i];
  for (size_t i = ax + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t t_old = t.shape[ax], t_new = shape[ax];
  std::vector<float> merged(static_cast<size_t>(outer * (t_old + t_new) * inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(&merged[o * (t_old + t_new) * inner], &t.data[o * t_old * inner], t_old * inner * 4);
    std::memcpy(&merged[(o * (t_old + t_new) + t_old) * inner], data + o * t_new * inner,
                t_new * inner * 4);
  }
  t.shape[ax] = t_old + t_new;
  t.data = std::move(merged);
}

const Tensor* DumpCollector::find(const std::string& name) const {
  for (const auto& [k, e] : entries_)
    if (e.name == name) return &e.t;
  return nullptr;
}

void DumpCollector::write(const std::string& dir) const {
  nlohmann::ordered_json m;
  m["format"] = "n3-dump";
  m["version"] = 1;
  for (const auto& [k, v] : meta_) m["meta"][k] = v;
  m["tensors"] = nlohmann::json::array();
  for (const auto& [k, e] : entries_) {
    Tensor t = e.t;
    if (logits_last_ && e.op == Op::Logits && e.phase == Phase::Prefill) {
      const int64_t V = t.shape[1];
      t = Tensor({1, V}, std::vector<float>(t.data.end() - V, t.data.end()));
    }
    std::string file = e.name + ".npy";
    write_npy(dir + "/" + file, t);
    nlohmann::ordered_json j;
    j["name"] = e.name;
    j["file"] = file;
    j["shape"] = t.shape;
    j["dtype"] = "float32";
    j["native_dtype"] = e.native_dtype;
    j["phase"] = e.phase == Phase::Decode ? "decode" : "prefill";
    j["layer"] = op_def(e.op).scope == OpScope::Layer ? e.layer : -1;
    j["op"] = manifest_op(e.op);
    m["tensors"].push_back(j);
  }
  write_file_atomic(dir + "/manifest.json", m.dump(1) + "\n");
}

namespace {

// A JSON value shown in a message: a whole object could be any size.
std::string clip(const std::string& s) { return s.size() <= 80 ? s : s.substr(0, 77) + "..."; }

// nlohmann converts a JSON float to an integer with a plain cast: 2.5 would
// read as 2 and 1e30 is undefined behaviour (found by fuzz_manifest). Integers
// only, within int64.
int64_t json_int(const nlohmann::json& v, const std::string& what) {
  require(!json_number_beyond(v, 63), what + " is out of range (is " + v.dump() + "; at most 2^63 - 1)");
  require(v.is_number_integer(), what + " must be an integer (is " + v.dump() + ")");
  return v.get<int64_t>();
}

}  // namespace

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  require(is_directory(dir), dir + ": not a dump directory");
  require(file_exists(path), path + ": missing (not an n3 dump, or an incomplete one)");
  return parse_manifest(read_file_text(path), path);
}

Manifest parse_manifest(const std::string& text, const std::string& path) {
  nlohmann::json j = parse_json_file(text, path);  // a repeated key is refused there
  Manifest m;
  try {
    require(j.value("format", "") == "n3-dump", path + ": not an n3 dump manifest");
    const nlohmann::json version = j.value("version", nlohmann::json(0));
    require(version.is_number_integer() && json_int(version, path + ": version") == 1,
            path + ": unsupported manifest version " + version.dump() + " (this n3 reads version 1; re-dump with it)");
    if (j.contains("meta"))
      for (auto& [k, v] : j["meta"].items()) {
        require(v.is_string(), path + ": malformed manifest: meta '" + clip(k) + "' must be a string (is " +
                                   clip(v.dump()) + ")");
        m.meta[k] = v.get<std::string>();
      }
    // Each entry is checked for its kind before nlohmann's at() and get()
    // see it: theirs is a type_error that names neither the file nor the entry.
    require(j.contains("tensors") && j["tensors"].is_array(),
            path + ": malformed manifest: 'tensors' must be a list of objects (is " +
                (j.contains("tensors") ? std::string(j["tensors"].type_name()) : std::string("missing")) + ")");
    size_t index = 0;
    for (const auto& t : j["tensors"]) {
      const std::string at = path + ": malformed manifest: tensor #" + std::to_string(index++);
      require(t.is_object(), at + " is not an object (is " + clip(t.dump()) + ")");
      auto text = [&](const char* key, const char* fallback) {
        if (!t.contains(key)) {
          require(fallback != nullptr, at + " lacks '" + key + "'");
          return std::string(fallback);
        }
        require(t[key].is_string(), at + ": '" + key + "' must be a string (is " + clip(t[key].dump()) + ")");
        return t[key].get<std::string>();
      };
      ManifestEntry e;
      e.name = text("name", nullptr);
      e.file = text("file", nullptr);
      e.dtype = text("dtype", "float32");
      require(e.file.find('/') == std::string::npos && e.file.find("..") == std::string::npos,
              path + ": tensor " + e.name + " has an unsafe file name");
      require(t.contains("shape") && t["shape"].is_array(),
              path + ": malformed manifest: tensor " + e.name + ": shape is not a list");
      for (const auto& d : t.at("shape")) {
        const int64_t v = json_int(d, path + ": malformed manifest: tensor " + e.name + ": shape");
        require(v >= 0, path + ": malformed manifest: tensor " + e.name + ": negative dimension in shape");
        e.shape.push_back(v);
      }
      e.native_dtype = text("native_dtype", "float32");
      e.phase = text("phase", "prefill");
      e.layer = t.contains("layer") ? int(std::clamp<int64_t>(json_int(t["layer"], path + ": malformed manifest: tensor " + e.name + ": layer"), -1, INT32_MAX)) : -1;
      e.op = text("op", "");
      m.tensors.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": malformed manifest: " + e.what());
  }
  return m;
}

}  // namespace n3
