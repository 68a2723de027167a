// The Gemma 3n text-decoder configuration: plain data, loaded from an n3
// model YAML or a HuggingFace config.json (the same field names; YAML reads
// JSON), validated once, then trusted everywhere.
#pragma once
#include <string>
#include <vector>

namespace n3 {

enum class LayerType { Local, Global };  // sliding_attention / full_attention

struct ModelConfig {
  std::string name = "gemma3n";
  int hidden = 0;          // D
  int layers = 0;          // L
  int q_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int vocab = 0;           // V (embedding rows, logits)
  int vocab_pl = 0;        // per-layer-input vocab
  int pl_dim = 0;          // P
  int kv_shared = 0;       // the last kv_shared layers reuse another layer's cache
  int sliding_window = 0;
  int laurel_rank = 0;
  int altup_streams = 4;
  int altup_active = 0;
  bool altup_correct_scale = true;
  std::vector<int> ffn;              // per layer
  std::vector<float> sparsity;       // per layer; 0 = dense
  std::vector<LayerType> layer_types;
  double rope_local = 10000.0;
  double rope_global = 1000000.0;
  double rms_eps = 1e-6;
  double softcap = 30.0;             // 0 disables
  int max_positions = 32768;

  bool is_global(int l) const { return layer_types[l] == LayerType::Global; }
  int first_shared() const { return layers - kv_shared; }
  bool owns_kv(int l) const { return l < first_shared(); }
  // The layer whose K/V cache layer l attends over: itself, or for a shared
  // layer the last non-shared layer of the same type (HF's kv_shared_layer_index).
  int kv_source(int l) const;
  int q_dim() const { return q_heads * head_dim; }
  int kv_dim() const { return kv_heads * head_dim; }
  double rope_theta(int l) const { return is_global(l) ? rope_global : rope_local; }
  // Layer l's Gaussian top-k multiplier (the MLP gate keeps values above
  // mean + multiplier * std): Normal(0,1).icdf(sparsity) evaluated in float64
  // and rounded to float32, as HF does (1.6448536 at sparsity 0.95); 0 for a
  // dense layer. The golden model, the compiler and the CUDA path all use it.
  float topk_multiplier(int l) const;

  // Throws n3::Error naming the first inconsistency.
  void validate(const std::string& where) const;
};

// `path` may be a .yaml/.yml model file, a config.json, or a checkpoint
// directory holding config.json. HF files may nest fields under text_config.
ModelConfig load_model_config(const std::string& path);
// Parses YAML (or JSON) text; `strict` rejects unknown keys (n3's own YAML),
// HF configs carry many unrelated keys and are read leniently.
ModelConfig parse_model_config(const std::string& text, const std::string& where, bool strict);
// Canonical YAML: what n3 writes into weight-file headers; round-trips.
std::string model_config_to_yaml(const ModelConfig& c);

bool operator==(const ModelConfig& a, const ModelConfig& b);

}  // namespace n3
