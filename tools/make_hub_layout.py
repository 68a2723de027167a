"""Rewrite a float32 Gemma3nForCausalLM checkpoint in the multimodal hub layout.

usage: /usr/bin/python3 tools/make_hub_layout.py [SRC_FIXTURE_DIR] [OUT_DIR]
defaults: tests/fixtures/gemma3n-dev  tests/fixtures/gemma3n-dev-hub

numpy only. Reads SRC/hf/{config.json,model.safetensors} and writes OUT/hf/:
  model-0000{1,2,3}-of-00003.safetensors, model.safetensors.index.json, config.json
laid out as the google/gemma-3n-* hub checkpoints (Gemma3nForConditionalGeneration) are:
  * every text tensor model.<x> is renamed model.language_model.<x> and stored as
    bfloat16 (round to nearest even of the float32 bits, as torch .to(bfloat16));
  * tensors are sorted by name and cut into three shards of about equal size
    (a decoder layer may straddle two shards);
  * small bf16 audio/vision tower and embedder tensors are added: a text-only
    reader must ignore them;
  * KV-shared layers also carry stale self_attn.{k_proj,v_proj}.weight and
    self_attn.k_norm.weight (random values), as checkpoints written by
    transformers < 5.6 do; the model never uses them (pass --no-stale-kv to omit);
  * config.json nests the decoder's fields under text_config.
Also copies SRC/prompt_ids.npy and SRC/tf_ids.npy into OUT/.
The bf16 reference outputs for this checkpoint come from tools/make_bf16_reference.py.
"""
import json, os, shutil, struct, sys

import numpy as np

args = [a for a in sys.argv[1:] if not a.startswith("--")]
stale_kv = "--no-stale-kv" not in sys.argv
src = args[0] if len(args) > 0 else "tests/fixtures/gemma3n-dev"
out = args[1] if len(args) > 1 else "tests/fixtures/gemma3n-dev-hub"
NSHARDS = 3

DT = {"F32": np.float32, "F16": np.float16, "I32": np.int32, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        tensors[name] = np.frombuffer(data[a:b], dtype=DT[e["dtype"]]).reshape(e["shape"])
    return tensors


def to_bf16_bits(x):
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    assert not np.isnan(x).any()
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def write_safetensors(path, tensors):
    """tensors: list of (name, uint16 bf16 bits array). Returns bytes of data written."""
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, a in tensors:
        header[name] = {"dtype": "BF16", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, a in tensors:
            f.write(np.ascontiguousarray(a).astype("<u2").tobytes())
    return off


src_cfg = json.load(open(os.path.join(src, "hf", "config.json")))
text = read_safetensors(os.path.join(src, "hf", "model.safetensors"))
rng = np.random.default_rng(1234)

tensors = {}
for name, a in text.items():
    assert name.startswith("model."), name
    tensors["model.language_model." + name[len("model."):]] = to_bf16_bits(a)

L = src_cfg["num_hidden_layers"]
shared = src_cfg.get("num_kv_shared_layers", 0)
D, hd, kvh = src_cfg["hidden_size"], src_cfg["head_dim"], src_cfg["num_key_value_heads"]
stale = []
if stale_kv:
    for l in range(L - shared, L):
        p = f"model.language_model.layers.{l}.self_attn."
        for n, shape, scale in ((p + "k_proj.weight", (kvh * hd, D), 0.5), (p + "v_proj.weight", (kvh * hd, D), 0.5),
                                (p + "k_norm.weight", (hd,), 3.0)):
            if n not in tensors:
                tensors[n] = to_bf16_bits((rng.standard_normal(shape) * scale).astype(np.float32))
                stale.append(n)

# Towers and embedders of the multimodal model: present in hub checkpoints, not text.
towers = {
    "model.vision_tower.timm_model.conv_stem.conv.weight": (16, 3, 3, 3),
    "model.vision_tower.timm_model.conv_stem.bn.weight": (16,),
    "model.vision_tower.timm_model.msfa.ffn.pw_exp.conv.weight": (32, 16, 1, 1),
    "model.audio_tower.subsample_conv_projection.conv_0.conv.weight": (8, 1, 3, 3),
    "model.audio_tower.subsample_conv_projection.input_proj_linear.weight": (32, 24),
    "model.audio_tower.conformer.0.attention.attn.per_dim_scale": (8,),
    "model.embed_vision.embedding.weight": (16, 32),
    "model.embed_vision.embedding_projection.weight": (D, 32),
    "model.embed_vision.hard_embedding_norm.weight": (32,),
    "model.embed_audio.embedding.weight": (8, 32),
    "model.embed_audio.embedding_projection.weight": (D, 32),
    "model.embed_audio.soft_embedding_norm.weight": (32,),
}
for n, shape in towers.items():
    tensors[n] = to_bf16_bits(rng.standard_normal(shape).astype(np.float32))

names = sorted(tensors)
total = sum(tensors[n].nbytes for n in names)
shards, cur, acc = [[] for _ in range(NSHARDS)], 0, 0
for n in names:
    if cur < NSHARDS - 1 and acc >= total * (cur + 1) / NSHARDS:
        cur += 1
    shards[cur].append(n)
    acc += tensors[n].nbytes
assert all(shards), "a shard came out empty"

hf = os.path.join(out, "hf")
if os.path.isdir(hf):
    shutil.rmtree(hf)
os.makedirs(hf)
weight_map, written = {}, 0
for i, shard in enumerate(shards):
    fn = "model-%05d-of-%05d.safetensors" % (i + 1, NSHARDS)
    written += write_safetensors(os.path.join(hf, fn), [(n, tensors[n]) for n in shard])
    weight_map.update({n: fn for n in shard})
assert written == total
json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))},
          open(os.path.join(hf, "model.safetensors.index.json"), "w"), indent=2)

text_config = {k: v for k, v in src_cfg.items() if k != "architectures"}
text_config["model_type"] = "gemma3n_text"
text_config["dtype"] = "bfloat16"
config = {
    "architectures": ["Gemma3nForConditionalGeneration"],
    "audio_config": {
        "model_type": "gemma3n_audio", "hidden_size": 32, "input_feat_size": 24, "vocab_size": 8,
        "vocab_offset": src_cfg["vocab_size"] + 16, "conf_num_hidden_layers": 1, "conf_num_attention_heads": 1,
        "sscp_conv_channel_size": [8, 8], "rms_norm_eps": 1e-06,
    },
    "audio_soft_tokens_per_image": 4,
    "audio_token_id": src_cfg["vocab_size"] + 17,
    "boa_token_id": src_cfg["vocab_size"] - 3,
    "boi_token_id": src_cfg["vocab_size"] - 4,
    "dtype": "bfloat16",
    "eoa_token_id": src_cfg["vocab_size"] + 16 + 8 - 1,
    "eoi_token_id": src_cfg["vocab_size"],
    "eos_token_id": [1, 106],
    "image_token_id": src_cfg["vocab_size"] + 1,
    "initializer_range": 0.02,
    "model_type": "gemma3n",
    "text_config": text_config,
    "tie_word_embeddings": True,
    "transformers_version": src_cfg.get("transformers_version", ""),
    "vision_config": {
        "model_type": "gemma3n_vision", "architecture": "mobilenetv5_300m_enc", "hidden_size": 32,
        "vocab_size": 16, "vocab_offset": src_cfg["vocab_size"], "num_classes": 2, "rms_norm_eps": 1e-06,
    },
    "vision_soft_tokens_per_image": 4,
}
json.dump(config, open(os.path.join(hf, "config.json"), "w"), indent=2)
for f in ("prompt_ids.npy", "tf_ids.npy"):
    shutil.copyfile(os.path.join(src, f), os.path.join(out, f))

# Read everything back: names, shapes and exact bf16 values.
back = {}
for i in range(NSHARDS):
    fn = os.path.join(hf, "model-%05d-of-%05d.safetensors" % (i + 1, NSHARDS))
    with open(fn, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        assert n % 8 == 0
        h = json.loads(f.read(n))
        data = f.read()
    for name, e in h.items():
        if name != "__metadata__":
            a, b = e["data_offsets"]
            assert e["dtype"] == "BF16" and weight_map[name] == os.path.basename(fn)
            back[name] = np.frombuffer(data[a:b], dtype="<u2").reshape(e["shape"])
    assert len(data) == max(e["data_offsets"][1] for k, e in h.items() if k != "__metadata__")
assert set(back) == set(tensors)
for name, a in text.items():
    b = back["model.language_model." + name[len("model."):]]
    f = (b.astype(np.uint32) << 16).view(np.float32)
    assert f.shape == a.shape
    rel = np.abs(f - a) / np.maximum(np.abs(a), 1e-30)
    assert (rel <= 2.0 ** -8).all(), name
print("wrote %s: %d tensors (%d text, %d stale kv, %d tower), %d bytes in %s"
      % (hf, len(tensors), len(text), len(stale), len(towers), total,
         [len(s) for s in shards]))
