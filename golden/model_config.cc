#include "golden/model_config.h"

#include <yaml-cpp/yaml.h>

#include <climits>
#include <cmath>
#include <set>
#include <utility>
#include <vector>
#include <sstream>

#include "base/error.h"
#include "base/file_util.h"

namespace n3 {

int ModelConfig::kv_source(int l) const {
  if (owns_kv(l)) return l;
  for (int s = first_shared() - 1; s >= 0; --s)
    if (layer_types[s] == layer_types[l]) return s;
  return -1;  // rejected by validate()
}

namespace {

// Inverse standard normal CDF in float64 (torch.distributions.Normal.icdf).
double normal_icdf(double p) {
  // Newton on Phi(x) - p from a rational first guess; converges to double
  // precision in a few steps for p in (0, 1).
  double x = std::sqrt(2.0) * (p < 0.5 ? -1 : 1) * std::sqrt(-std::log(4 * p * (1 - p)) * 0.9);
  for (int it = 0; it < 60; ++it) {
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double step = (cdf - p) / pdf;
    x -= step;
    if (std::fabs(step) < 1e-15) break;
  }
  return x;
}

// A model name travels into .n3w headers, reports and terminal lines: it must
// be text (UTF-8, no control characters), or the canonical YAML the emitter
// writes would not read back as the same name (a fuzz finding: 0xff bytes).
bool is_plain_text(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7f) return false;
    const int n = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xe ? 2 : (b >> 3) == 0x1e ? 3 : -1;
    if (n < 0 || s.size() - i <= static_cast<size_t>(n)) return false;  // (a cut sequence)
    for (int k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += n + 1;
  }
  return true;
}

// Keys n3's YAML accepts: HF's Gemma3nTextConfig names plus `name`.
const std::set<std::string> kKnownKeys = {
    "name", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "vocab_size", "vocab_size_per_layer_input",
    "hidden_size_per_layer_input", "num_kv_shared_layers", "sliding_window", "laurel_rank",
    "altup_num_inputs", "altup_active_idx", "altup_correct_scale", "activation_sparsity_pattern",
    "layer_types", "rope_theta", "rope_local_base_freq", "rope_parameters", "rms_norm_eps",
    "final_logit_softcapping", "max_position_embeddings", "hidden_activation", "model_type"};

template <typename T>
T as(const YAML::Node& n, const std::string& key, const std::string& where) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw Error(where + ": key '" + key + "' has the wrong type");
  }
}

int get_int(const YAML::Node& root, const std::string& key, const std::string& where, bool required,
            int def = 0) {
  YAML::Node n = root[key];
  if (!n || n.IsNull()) {
    require(!required, where + ": missing key '" + key + "'");
    return def;
  }
  require(n.IsScalar() && n.Tag() != "!", where + ": key '" + key + "' must be an integer (not a quoted string)");
  double v = as<double>(n, key, where);
  // 1e30 is an integer, just not one an int holds: say which is wrong.
  require(std::floor(v) == v, where + ": key '" + key + "' must be an integer (is " + n.as<std::string>() + ")");
  require(std::fabs(v) < 2e9, where + ": key '" + key + "' is out of range (is " + n.as<std::string>() + ")");
  return static_cast<int>(v);
}

double get_double(const YAML::Node& root, const std::string& key, const std::string& where,
                  bool required, double def = 0) {
  YAML::Node n = root[key];
  if (!n || n.IsNull()) {
    require(!required, where + ": missing key '" + key + "'");
    return def;
  }
  require(n.IsScalar() && n.Tag() != "!", where + ": key '" + key + "' must be a number (not a quoted string)");
  return as<double>(n, key, where);
}

// yaml-cpp keeps both of two equal keys and node[k] returns the first. A
// config.json is HF's whole file: its top level around text_config and the
// maps nested anywhere in it (rope_scaling, vision_config, ...) are held to
// the rule the JSON readers follow (golden/json_read.h): a key repeated in
// one mapping is refused, naming file, line, key and the mapping. Walked
// with an explicit stack, so nesting depth costs no recursion.
void refuse_repeated_keys(const YAML::Node& doc, const std::string& where) {
  std::vector<std::pair<YAML::Node, std::string>> todo = {{doc, ""}};
  // Aliases make the document a graph that a walk sees as a tree: nested
  // ones ("billion laughs") would multiply the walk without end. A real
  // config.json has a few thousand nodes at most.
  const int64_t kMaxNodes = 200000;
  int64_t visited = 0;
  while (!todo.empty()) {
    require(++visited <= kMaxNodes, where + ": more than " + std::to_string(kMaxNodes) +
                                        " YAML/JSON nodes (nested aliases?); not a model config");
    const YAML::Node n = todo.back().first;
    const std::string path = todo.back().second;
    todo.pop_back();
    if (n.IsSequence()) {
      for (const auto& e : n) todo.push_back({e, path});
    } else if (n.IsMap()) {
      std::set<std::string> seen;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) continue;  // the readers refuse these where they matter
        const std::string k = kv.first.Scalar();
        const std::string shown = k.size() > 80 ? k.substr(0, 80) + "..." : k;
        require(seen.insert(k).second, where + ":" + std::to_string(kv.first.Mark().line + 1) + ": key '" + shown +
                                           "' is given twice" + (path.empty() ? "" : " in '" + path + "'"));
        const std::string sub = path.empty() ? shown : path + "." + shown;
        todo.push_back({kv.second, sub.size() > 160 ? sub.substr(0, 160) + "..." : sub});
      }
    }
  }
}

}  // namespace

float ModelConfig::topk_multiplier(int l) const {
  return sparsity[l] > 0 ? float(normal_icdf(sparsity[l])) : 0.0f;
}

ModelConfig parse_model_config(const std::string& text, const std::string& where, bool strict) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(where + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": malformed YAML/JSON: " + e.msg);
  }
  require(root.IsMap(), where + ": expected a mapping at the top level");
  refuse_repeated_keys(root, where);
  if (root["text_config"]) {
    require(root["text_config"].IsMap(), where + ": text_config must be a mapping");
    root = root["text_config"];
  }
  {
    // yaml-cpp keeps both of two equal keys and root[k] returns the first:
    // refuse them, as the hardware file does, rather than pick one.
    std::set<std::string> seen;
    for (const auto& kv : root) {
      // A sequence or mapping as a key has no text; yaml-cpp's conversion
      // would throw past the one-line error (found by fuzz_model_yaml).
      require(kv.first.IsScalar(), where + ": a key must be a plain name");
      std::string k = kv.first.as<std::string>();
      require(seen.insert(k).second, where + ":" + std::to_string(kv.first.Mark().line + 1) + ": key '" + k +
                                         "' is given twice");
      require(!strict || kKnownKeys.count(k), where + ": unknown key '" + k + "'");
    }
  }
  if (root["model_type"]) {
    std::string mt = as<std::string>(root["model_type"], "model_type", where);
    require(mt == "gemma3n_text" || mt == "gemma3n",
            where + ": model_type '" + mt + "' is not a Gemma 3n text decoder");
  }
  if (root["hidden_activation"]) {
    std::string act = as<std::string>(root["hidden_activation"], "hidden_activation", where);
    require(act == "gelu_pytorch_tanh",
            where + ": hidden_activation '" + act + "' unsupported (only gelu_pytorch_tanh)");
  }

  ModelConfig c;
  if (root["name"]) {
    c.name = as<std::string>(root["name"], "name", where);
    require(is_plain_text(c.name), where + ": name '" + c.name + "' is not UTF-8 text without control characters");
  }
  c.hidden = get_int(root, "hidden_size", where, true);
  c.layers = get_int(root, "num_hidden_layers", where, true);
  c.q_heads = get_int(root, "num_attention_heads", where, true);
  c.kv_heads = get_int(root, "num_key_value_heads", where, true);
  c.head_dim = get_int(root, "head_dim", where, true);
  c.vocab = get_int(root, "vocab_size", where, true);
  c.vocab_pl = get_int(root, "vocab_size_per_layer_input", where, false, c.vocab);
  c.pl_dim = get_int(root, "hidden_size_per_layer_input", where, true);
  c.kv_shared = get_int(root, "num_kv_shared_layers", where, false, 0);
  c.sliding_window = get_int(root, "sliding_window", where, true);
  c.laurel_rank = get_int(root, "laurel_rank", where, true);
  c.altup_streams = get_int(root, "altup_num_inputs", where, false, 4);
  c.altup_active = get_int(root, "altup_active_idx", where, false, 0);
  if (root["altup_correct_scale"])
    c.altup_correct_scale = as<bool>(root["altup_correct_scale"], "altup_correct_scale", where);
  c.rms_eps = get_double(root, "rms_norm_eps", where, false, 1e-6);
  c.softcap = get_double(root, "final_logit_softcapping", where, false, 30.0);
  c.max_positions = get_int(root, "max_position_embeddings", where, false, 32768);

  YAML::Node ffn = root["intermediate_size"];
  require(ffn && !ffn.IsNull(), where + ": missing key 'intermediate_size'");
  if (ffn.IsSequence()) {
    for (size_t i = 0; i < ffn.size(); ++i) c.ffn.push_back(as<int>(ffn[i], "intermediate_size", where));
  } else {
    c.ffn.assign(c.layers > 0 ? c.layers : 0, get_int(root, "intermediate_size", where, true));
  }

  YAML::Node sp = root["activation_sparsity_pattern"];
  if (sp && !sp.IsNull()) {
    require(sp.IsSequence(), where + ": key 'activation_sparsity_pattern' must be a list");
    for (size_t i = 0; i < sp.size(); ++i)
      c.sparsity.push_back(as<float>(sp[i], "activation_sparsity_pattern", where));
  } else {
    c.sparsity.assign(c.layers > 0 ? c.layers : 0, 0.0f);
  }

  YAML::Node lt = root["layer_types"];
  require(lt && lt.IsSequence(), where + ": missing list 'layer_types'");
  for (size_t i = 0; i < lt.size(); ++i) {
    std::string t = as<std::string>(lt[i], "layer_types", where);
    if (t == "sliding_attention") c.layer_types.push_back(LayerType::Local);
    else if (t == "full_attention") c.layer_types.push_back(LayerType::Global);
    else throw Error(where + ": layer_types[" + std::to_string(i) + "] '" + t +
                     "' is neither sliding_attention nor full_attention");
  }

  YAML::Node rp = root["rope_parameters"];
  if (rp && !rp.IsNull()) {
    require(rp.IsMap(), where + ": rope_parameters must be a mapping");
    for (const char* kind : {"full_attention", "sliding_attention"}) {
      YAML::Node k = rp[kind];
      require(k && k.IsMap(), where + ": rope_parameters lacks '" + kind + "'");
      if (k["rope_type"]) {
        std::string rt = as<std::string>(k["rope_type"], "rope_type", where);
        require(rt == "default", where + ": rope_parameters." + kind + ".rope_type '" + rt +
                                     "' unsupported (only default)");
      }
      double th = get_double(k, "rope_theta", where + ": rope_parameters." + kind, true);
      (std::string(kind) == "full_attention" ? c.rope_global : c.rope_local) = th;
    }
  } else {
    c.rope_global = get_double(root, "rope_theta", where, false, 1000000.0);
    c.rope_local = get_double(root, "rope_local_base_freq", where, false, 10000.0);
  }
  c.validate(where);
  return c;
}

void ModelConfig::validate(const std::string& where) const {
  auto pos = [&](int v, const char* key) {
    require(v > 0, where + ": '" + key + "' must be positive (is " + std::to_string(v) + ")");
  };
  pos(hidden, "hidden_size");
  pos(layers, "num_hidden_layers");
  pos(q_heads, "num_attention_heads");
  pos(kv_heads, "num_key_value_heads");
  pos(head_dim, "head_dim");
  pos(vocab, "vocab_size");
  pos(vocab_pl, "vocab_size_per_layer_input");
  pos(pl_dim, "hidden_size_per_layer_input");
  pos(sliding_window, "sliding_window");
  pos(laurel_rank, "laurel_rank");
  pos(max_positions, "max_position_embeddings");
  require(head_dim % 2 == 0, where + ": head_dim must be even for RoPE (is " + std::to_string(head_dim) + ")");
  require(q_heads % kv_heads == 0, where + ": num_attention_heads (" + std::to_string(q_heads) +
                                       ") is not a multiple of num_key_value_heads (" +
                                       std::to_string(kv_heads) + ")");
  require(altup_streams >= 2, where + ": altup_num_inputs must be >= 2");
  // Products the model computes in int (q_dim(), kv_dim(), the per-layer
  // embedding width, AltUp's S x S predictor) must fit: each factor alone
  // passes the checks above, their product would overflow (undefined).
  auto fits = [&](int64_t a, int64_t b, const char* what) {
    require(a * b <= INT32_MAX, where + ": " + what + " (" + std::to_string(a) + " x " + std::to_string(b) +
                                    ") exceeds 2^31 - 1");
  };
  fits(q_heads, head_dim, "num_attention_heads x head_dim");
  fits(kv_heads, head_dim, "num_key_value_heads x head_dim");
  fits(layers, pl_dim, "num_hidden_layers x hidden_size_per_layer_input");
  fits(altup_streams, altup_streams, "altup_num_inputs squared");
  require(altup_active == 0, where + ": altup_active_idx must be 0 (n3 models stream 0 as active)");
  require(vocab_pl <= vocab, where + ": vocab_size_per_layer_input (" + std::to_string(vocab_pl) +
                                 ") exceeds vocab_size (" + std::to_string(vocab) + ")");
  require(static_cast<int>(ffn.size()) == layers,
          where + ": intermediate_size has " + std::to_string(ffn.size()) + " entries for " +
              std::to_string(layers) + " layers");
  for (int f : ffn) pos(f, "intermediate_size");
  require(static_cast<int>(sparsity.size()) == layers,
          where + ": activation_sparsity_pattern has " + std::to_string(sparsity.size()) +
              " entries for " + std::to_string(layers) + " layers");
  for (float s : sparsity)
    require(s == 0.0f || (s > 0.0f && s < 1.0f),
            where + ": activation_sparsity_pattern values must be 0 or in (0, 1)");
  require(static_cast<int>(layer_types.size()) == layers,
          where + ": layer_types has " + std::to_string(layer_types.size()) + " entries for " +
              std::to_string(layers) + " layers");
  require(kv_shared >= 0 && kv_shared < layers,
          where + ": num_kv_shared_layers must be in [0, num_hidden_layers)");
  for (int l = first_shared(); l < layers; ++l)
    require(kv_source(l) >= 0, where + ": KV-shared layer " + std::to_string(l) +
                                   " has no earlier non-shared layer of its type to read");
  require(rms_eps > 0, where + ": rms_norm_eps must be positive");
  require(softcap >= 0, where + ": final_logit_softcapping must be >= 0");
  require(rope_local > 0 && rope_global > 0, where + ": rope theta must be positive");
}

ModelConfig load_model_config(const std::string& path) {
  std::string file = path;
  if (is_directory(path)) file = path + "/config.json";
  require(file_exists(file), file + ": no such file");
  bool json = file.size() >= 5 && file.substr(file.size() - 5) == ".json";
  ModelConfig c = parse_model_config(read_file_text(file), file, !json);
  return c;
}

std::string model_config_to_yaml(const ModelConfig& c) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  e.SetFloatPrecision(9);
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << c.name;
  e << YAML::Key << "hidden_size" << YAML::Value << c.hidden;
  e << YAML::Key << "intermediate_size" << YAML::Value << YAML::Flow << c.ffn;
  e << YAML::Key << "num_hidden_layers" << YAML::Value << c.layers;
  e << YAML::Key << "num_attention_heads" << YAML::Value << c.q_heads;
  e << YAML::Key << "num_key_value_heads" << YAML::Value << c.kv_heads;
  e << YAML::Key << "head_dim" << YAML::Value << c.head_dim;
  e << YAML::Key << "vocab_size" << YAML::Value << c.vocab;
  e << YAML::Key << "vocab_size_per_layer_input" << YAML::Value << c.vocab_pl;
  e << YAML::Key << "hidden_size_per_layer_input" << YAML::Value << c.pl_dim;
  e << YAML::Key << "num_kv_shared_layers" << YAML::Value << c.kv_shared;
  e << YAML::Key << "sliding_window" << YAML::Value << c.sliding_window;
  e << YAML::Key << "laurel_rank" << YAML::Value << c.laurel_rank;
  e << YAML::Key << "altup_num_inputs" << YAML::Value << c.altup_streams;
  e << YAML::Key << "altup_active_idx" << YAML::Value << c.altup_active;
  e << YAML::Key << "altup_correct_scale" << YAML::Value << c.altup_correct_scale;
  e << YAML::Key << "activation_sparsity_pattern" << YAML::Value << YAML::Flow << c.sparsity;
  std::vector<std::string> lt;
  for (LayerType t : c.layer_types)
    lt.push_back(t == LayerType::Global ? "full_attention" : "sliding_attention");
  e << YAML::Key << "layer_types" << YAML::Value << YAML::Flow << lt;
  e << YAML::Key << "rope_theta" << YAML::Value << c.rope_global;
  e << YAML::Key << "rope_local_base_freq" << YAML::Value << c.rope_local;
  e << YAML::Key << "rms_norm_eps" << YAML::Value << c.rms_eps;
  e << YAML::Key << "final_logit_softcapping" << YAML::Value << c.softcap;
  e << YAML::Key << "max_position_embeddings" << YAML::Value << c.max_positions;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

bool operator==(const ModelConfig& a, const ModelConfig& b) {
  return a.name == b.name && a.hidden == b.hidden && a.layers == b.layers && a.q_heads == b.q_heads &&
         a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.vocab == b.vocab &&
         a.vocab_pl == b.vocab_pl && a.pl_dim == b.pl_dim && a.kv_shared == b.kv_shared &&
         a.sliding_window == b.sliding_window && a.laurel_rank == b.laurel_rank &&
         a.altup_streams == b.altup_streams && a.altup_active == b.altup_active &&
         a.altup_correct_scale == b.altup_correct_scale && a.ffn == b.ffn &&
         a.sparsity == b.sparsity && a.layer_types == b.layer_types &&
         a.rope_local == b.rope_local && a.rope_global == b.rope_global && a.rms_eps == b.rms_eps &&
         a.softcap == b.softcap && a.max_positions == b.max_positions;
}

}  // namespace n3
