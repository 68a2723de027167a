#include "sim/sim_dump.h"

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/npy.h"
#include "golden/dump_ops.h"

namespace n3::sim {

void write_dump(const std::string& dir, const std::vector<Capture>& caps, const std::map<std::string, std::string>& meta) {
  nlohmann::ordered_json m;
  m["format"] = "n3-dump";
  m["version"] = 1;
  for (const auto& [k, v] : meta) m["meta"][k] = v;
  m["tensors"] = nlohmann::json::array();
  for (const Capture& c : caps) {
    const std::string file = c.name + ".npy";
    write_npy(dir + "/" + file, Tensor({c.rows, c.cols}, c.data));
    // "decode_layers.3.attn.q" -> phase decode, layer 3, op "attn.q".
    std::string rest = c.name, phase = "prefill";
    if (rest.rfind("decode_", 0) == 0) {
      phase = "decode";
      rest = rest.substr(7);
    }
    int layer = -1;
    if (rest.rfind("layers.", 0) == 0) {
      size_t i = 7, j = i;
      while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
      if (j > i && j - i < 6) {
        layer = std::stoi(rest.substr(i, j - i));
        rest = j < rest.size() ? rest.substr(j + 1) : manifest_op(Op::LayerOut);
      }
    }
    nlohmann::ordered_json j;
    j["name"] = c.name;
    j["file"] = file;
    j["shape"] = std::vector<int64_t>{c.rows, c.cols};
    j["dtype"] = "float32";
    j["native_dtype"] = c.native_dtype;
    j["phase"] = phase;
    j["layer"] = layer;
    j["op"] = rest;
    m["tensors"].push_back(j);
  }
  write_file_atomic(dir + "/manifest.json", m.dump(1) + "\n");
}

}  // namespace n3::sim
