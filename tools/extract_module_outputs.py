"""Extracts the HF module outputs that n3's tests compare against from a
fixture's module_outputs.npz into module_outputs/<name>.npy (plain .npy, so
the C++ tests need no zip/deflate reader). usage: extract_module_outputs.py FIXTURE_DIR"""
import os, sys
import numpy as np

d = sys.argv[1]
z = np.load(os.path.join(d, "module_outputs.npz"))
out = os.path.join(d, "module_outputs")
os.makedirs(out, exist_ok=True)
keep = ["model__embed_tokens", "model__embed_tokens_per_layer", "model__per_layer_projection_norm"]
for l in (0, 1):
    p = f"model__layers__{l}__"
    keep += [p + n for n in ("altup__modality_router", "input_layernorm", "laurel", "self_attn__q_norm",
                             "self_attn__k_norm", "self_attn__v_norm", "self_attn", "mlp",
                             "post_per_layer_input_norm")]
for k in keep:
    np.save(os.path.join(out, k + ".npy"), z[k][0].astype(np.float32))
print("wrote", len(keep), "tensors to", out)
