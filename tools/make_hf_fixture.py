# Conformance fixture generator: an unchanged copy of
# shared/conformance/make_hf_fixture.py (HuggingFace transformers as the oracle).
# Do not edit here; the fixtures in tests/fixtures/ were made by exactly this code.
"""Make a Gemma3n conformance fixture with HuggingFace transformers as the oracle.

usage: python3 make_hf_fixture.py CONFIG.json OUTDIR
CONFIG.json holds Gemma3nTextConfig fields plus "seq", "gen" and "seed".
"""
import json, math, os, sys
import numpy as np
import torch
import transformers
from transformers import Gemma3nTextConfig, Gemma3nForCausalLM

torch.set_grad_enabled(False)
cfg_path, out = sys.argv[1], sys.argv[2]
c = json.load(open(cfg_path))
seq, gen_n, seed = c.pop("seq"), c.pop("gen"), c.pop("seed")
cfg = Gemma3nTextConfig(**c)
cfg._attn_implementation = "eager"
torch.manual_seed(seed)
model = Gemma3nForCausalLM(cfg).float().eval()
g = torch.Generator().manual_seed(seed)

def int4_rows(shape, fan_in, gain):
    q = torch.randint(-8, 8, shape, generator=g).float()
    q[torch.arange(shape[0]), torch.randint(0, shape[1], (shape[0],), generator=g)] = -8.0  # one -8 per row: max|w|/8 recovers it
    s = (gain / math.sqrt(fan_in) / 4.6) * (0.5 + torch.rand(shape[0], 1, generator=g))
    return q * s

names = []
for k, v in model.state_dict().items():
    names.append((k, list(v.shape)))
    small_altup = ".altup." in k and "projections" not in k
    if v.ndim == 2 and not small_altup:
        emb = "embed_tokens" in k
        v.copy_(int4_rows(tuple(v.shape), 1 if emb else v.shape[1], 4 / math.sqrt(v.shape[1]) if emb else 1.0))
    elif v.ndim == 2:
        v.copy_(torch.randn(v.shape, generator=g) * 0.3)
    else:
        v.copy_(0.5 + torch.rand(v.shape, generator=g))

os.makedirs(out, exist_ok=True)
model.save_pretrained(os.path.join(out, "hf"), safe_serialization=True)
json.dump(names, open(os.path.join(out, "param_names.json"), "w"), indent=0)
ids = torch.randint(0, cfg.vocab_size_per_layer_input, (1, seq), generator=g)
np.save(os.path.join(out, "prompt_ids.npy"), ids.numpy().astype(np.int32))

captured, hooks = {}, []
for name, m in model.named_modules():
    if name and not name.endswith("layers"):
        def hook(mod, inp, o, name=name):
            t = o[0] if isinstance(o, tuple) else o
            if torch.is_tensor(t) and name not in captured:
                captured[name] = t.detach().float().numpy()
        hooks.append(m.register_forward_hook(hook))
res = model(input_ids=ids, use_cache=False, output_hidden_states=True)
for h in hooks:
    h.remove()
np.savez_compressed(os.path.join(out, "module_outputs.npz"),
                    **{k.replace(".", "__"): v for k, v in captured.items()})
np.save(os.path.join(out, "logits.npy"), res.logits[0].float().numpy())
np.save(os.path.join(out, "layer_streams.npy"),
        np.stack([captured[f"model.layers.{i}"] for i in range(cfg.num_hidden_layers)]))
np.save(os.path.join(out, "hidden_states.npy"), np.stack([h.float().numpy()[:, 0] for h in res.hidden_states]))

gout = model.generate(input_ids=ids, max_new_tokens=gen_n, do_sample=False, use_cache=True)
np.save(os.path.join(out, "greedy_ids.npy"), gout[0, seq:].numpy().astype(np.int32))
lg = model(input_ids=gout, use_cache=False).logits[0].float().numpy()
top2 = np.sort(lg, axis=-1)[:, -2:]
np.save(os.path.join(out, "greedy_margins.npy"), (top2[:, 1] - top2[:, 0])[seq - 1:seq - 1 + gen_n])

tf = torch.randint(0, cfg.vocab_size_per_layer_input, (1, 3 * cfg.sliding_window), generator=g)
full = torch.cat([ids, tf], dim=1)
np.save(os.path.join(out, "tf_ids.npy"), full[0].numpy().astype(np.int32))
np.save(os.path.join(out, "tf_logits.npy"), model(input_ids=full, use_cache=False).logits[0].float().numpy())
json.dump(dict(config=c, seq=seq, gen=gen_n, seed=seed, transformers=transformers.__version__,
               torch=torch.__version__), open(os.path.join(out, "meta.json"), "w"), indent=1)
print("wrote", out)
