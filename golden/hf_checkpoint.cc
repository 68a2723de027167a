#include "golden/hf_checkpoint.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "base/error.h"
#include "base/file_util.h"
#include "golden/safetensors.h"
#include "golden/weight_names.h"

namespace n3 {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

class HfCheckpoint : public WeightSource {
 public:
  explicit HfCheckpoint(const std::string& dir);
  const ModelConfig& config() const override { return cfg_; }
  bool has(const std::string& name) const override { return tensors_.count(name) > 0; }
  MatrixRef matrix(const std::string& name) const override;
  std::vector<float> vec(const std::string& name) const override;
  std::string describe() const override { return "HuggingFace checkpoint " + dir_; }

 private:
  const SafetensorsEntry& get(const std::string& name) const;
  std::string dir_;
  ModelConfig cfg_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::pair<const SafetensorsEntry*, std::string>> tensors_;  // entry, file
};

std::vector<std::string> shard_files(const std::string& dir) {
  const std::string index = dir + "/model.safetensors.index.json";
  if (file_exists(index)) {
    std::vector<std::string> out;
    for (const auto& f : parse_safetensors_index(read_file_text(index), index)) out.push_back(dir + "/" + f);
    return out;
  }
  const std::string single = dir + "/model.safetensors";
  require(file_exists(single), dir + ": no model.safetensors or model.safetensors.index.json");
  return {single};
}

HfCheckpoint::HfCheckpoint(const std::string& dir) : dir_(dir), cfg_(load_model_config(dir)) {
  for (const auto& f : shard_files(dir)) files_.push_back(std::make_unique<SafetensorsFile>(f));

  bool multimodal = false;
  for (const auto& f : files_)
    for (const auto& [name, e] : f->entries())
      if (starts_with(name, "model.language_model.")) multimodal = true;
  const std::string prefix = multimodal ? "model.language_model." : "model.";

  std::map<std::string, Shape> expected, optional;
  for (const auto& s : weight_specs(cfg_)) expected[s.name] = s.shape;
  for (const auto& s : unused_shared_kv_specs(cfg_)) optional[s.name] = s.shape;

  for (const auto& f : files_) {
    for (const auto& [full, e] : f->entries()) {
      // Towers, embedders and a materialised lm_head are not part of the text decoder.
      if (!starts_with(full, prefix)) continue;
      std::string name = full.substr(prefix.size());
      const std::string where = f->path() + ": tensor '" + full + "'";
      auto it = expected.find(name);
      bool used = it != expected.end();
      if (!used) {
        auto o = optional.find(name);
        require(o != optional.end(), where + " is not part of a Gemma 3n decoder with this config.json (" +
                                         std::to_string(cfg_.layers) + " layers)");
        it = o;
      }
      require(e.dtype == "F32" || e.dtype == "BF16" || e.dtype == "F16",
              where + ": dtype " + e.dtype + " unsupported (float32, bfloat16 or float16)");
      require(e.shape == it->second, where + ": shape " + shape_str(e.shape) + " but the config implies " +
                                         shape_str(it->second));
      require(!tensors_.count(name), where + ": appears twice");
      if (used) tensors_[name] = {&e, f->path()};
    }
  }
  for (const auto& [name, shape] : expected)
    require(tensors_.count(name), dir + ": missing tensor '" + prefix + name + "' " + shape_str(shape));
}

const SafetensorsEntry& HfCheckpoint::get(const std::string& name) const {
  auto it = tensors_.find(name);
  require(it != tensors_.end(), describe() + ": no tensor '" + name + "'");
  return *it->second.first;
}

WDType to_wdtype(const std::string& d) {
  return d == "F32" ? WDType::F32 : d == "BF16" ? WDType::BF16 : WDType::F16;
}

MatrixRef HfCheckpoint::matrix(const std::string& name) const {
  const SafetensorsEntry& e = get(name);
  require(e.shape.size() == 2, describe() + ": tensor '" + name + "' is not a matrix");
  MatrixRef m;
  m.dtype = to_wdtype(e.dtype);
  m.rows = e.shape[0];
  m.cols = e.shape[1];
  m.data = e.data;
  return m;
}

std::vector<float> HfCheckpoint::vec(const std::string& name) const {
  const SafetensorsEntry& e = get(name);
  MatrixRef m;
  m.dtype = to_wdtype(e.dtype);
  m.rows = 1;
  m.cols = numel(e.shape);
  m.data = e.data;
  std::vector<float> out(static_cast<size_t>(m.cols));
  dequant_row(m, 0, out.data());
  return out;
}

}  // namespace

std::unique_ptr<WeightSource> open_hf_checkpoint(const std::string& dir) {
  return std::make_unique<HfCheckpoint>(dir);
}

}  // namespace n3
