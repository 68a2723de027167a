"""HF reference outputs of the dev fixture with its weights rounded to bfloat16.

usage: python3 tools/make_bf16_reference.py FIXTURE_DIR OUT_DIR [--check-hub HUB_DIR]

FIXTURE_DIR is a conformance fixture (e.g. tests/fixtures/gemma3n-dev) holding
hf/ (a float32 Gemma3nForCausalLM checkpoint), prompt_ids.npy and tf_ids.npy.
Every parameter is rounded to bfloat16 (round to nearest even,
torch .to(torch.bfloat16)) and back to float32; the model then runs in float32
with eager attention, exactly as HF runs a bfloat16 checkpoint loaded with
dtype=float32. Writes to OUT_DIR:
  layer_streams.npy  (L, 4, 1, T, D) f32  output of each decoder layer (all 4 AltUp streams)
  logits.npy         (T, V) f32           final logits for the prompt, no KV cache
  tf_logits.npy      (T_tf, V) f32        logits of a no-cache forward over tf_ids
With --check-hub, also checks that HUB_DIR/hf (tools/make_hub_layout.py's
output) holds exactly these rounded weights, and that HF itself, loading that
sharded bf16 checkpoint, reproduces logits.npy. Needs torch and transformers.
"""
import glob, json, os, sys
import numpy as np
import torch
import transformers
from transformers import Gemma3nForCausalLM

torch.set_grad_enabled(False)
args = sys.argv[1:]
hub = None
if "--check-hub" in args:
    i = args.index("--check-hub")
    hub = args[i + 1]
    del args[i:i + 2]
fix, out = args


def load(path, **kw):
    try:
        return Gemma3nForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager", **kw)
    except TypeError:
        return Gemma3nForCausalLM.from_pretrained(path, torch_dtype=torch.float32, attn_implementation="eager", **kw)


model = load(os.path.join(fix, "hf")).float().eval()
cfg = model.config
prompt = torch.from_numpy(np.load(os.path.join(fix, "prompt_ids.npy")).astype(np.int64))
if prompt.ndim == 1:
    prompt = prompt[None]
tf = torch.from_numpy(np.load(os.path.join(fix, "tf_ids.npy")).astype(np.int64)).reshape(1, -1)

# The float32 model must reproduce the fixture before we round anything.
f32_logits = model(input_ids=prompt, use_cache=False).logits[0].float().numpy()
ref = os.path.join(fix, "logits.npy")
if os.path.exists(ref):
    print("float32 reload vs fixture logits.npy: max abs diff %.3g" % np.abs(f32_logits - np.load(ref)).max())

sd_names = set(model.state_dict().keys())
par_names = {n for n, _ in model.named_parameters()}
print("state-dict entries that are not parameters (left unrounded):", sorted(sd_names - par_names))
changed = 0
for n, p in model.named_parameters():
    r = p.data.to(torch.bfloat16).float()
    changed += int((r != p.data).sum())
    p.data.copy_(r)
print("rounded %d parameters, %d values changed" % (len(par_names), changed))

layers = model.model.layers
captured = {}
hooks = []
for i, layer in enumerate(layers):
    def hook(mod, inp, o, i=i):
        t = o[0] if isinstance(o, tuple) else o
        if i not in captured:
            captured[i] = t.detach().float().numpy()
    hooks.append(layer.register_forward_hook(hook))
res = model(input_ids=prompt, use_cache=False)
for h in hooks:
    h.remove()
logits = res.logits[0].float().numpy()
streams = np.stack([captured[i] for i in range(len(layers))])
tf_logits = model(input_ids=tf, use_cache=False).logits[0].float().numpy()

os.makedirs(out, exist_ok=True)
np.save(os.path.join(out, "layer_streams.npy"), streams.astype(np.float32))
np.save(os.path.join(out, "logits.npy"), logits.astype(np.float32))
np.save(os.path.join(out, "tf_logits.npy"), tf_logits.astype(np.float32))
print("layer_streams", streams.shape, "logits", logits.shape, "tf_logits", tf_logits.shape)
d = np.abs(logits - f32_logits)
print("bf16-rounded vs float32 logits: max abs diff %.4g, mean %.4g; argmax agree %d/%d"
      % (d.max(), d.mean(), int((logits.argmax(-1) == f32_logits.argmax(-1)).sum()), logits.shape[0]))
json.dump(dict(source=os.path.join(fix, "hf"), rounding="torch .to(torch.bfloat16).float() on every parameter",
               transformers=transformers.__version__, torch=torch.__version__,
               prompt_len=int(prompt.shape[1]), tf_len=int(tf.shape[1])),
          open(os.path.join(out, "meta.json"), "w"), indent=1)

if hub:
    from safetensors.torch import load_file
    hf = os.path.join(hub, "hf")
    idx = json.load(open(os.path.join(hf, "model.safetensors.index.json")))
    hubt = {}
    for shard in sorted(set(idx["weight_map"].values())):
        hubt.update(load_file(os.path.join(hf, shard)))
    assert set(hubt) == set(idx["weight_map"]), "index and shards disagree"
    sd = model.state_dict()
    bad, extra, seen = [], [], set()
    for k, v in hubt.items():
        if not k.startswith("model.language_model."):
            continue
        n = "model." + k[len("model.language_model."):]
        if n not in sd:
            extra.append(n)  # e.g. stale k/v weights of KV-shared layers
            continue
        seen.add(n)
        if v.dtype != torch.bfloat16 or tuple(v.shape) != tuple(sd[n].shape) or not torch.equal(v.float(), sd[n]):
            bad.append(n)
    absent = sorted(n for n in sd if n not in seen and n != "lm_head.weight")
    print("hub check: %d text tensors match-checked, %d mismatches %s, absent from hub %s, extra (unused) %d %s"
          % (len(seen), len(bad), bad[:5], absent[:5], len(extra), extra[:3]))
    print("hub non-text tensors:", sorted(k for k in hubt if not k.startswith("model.language_model.")))
    try:
        from transformers import AutoConfig, Gemma3nTextConfig
        try:
            tc = AutoConfig.from_pretrained(hf).text_config
            print("hub config.json parsed by AutoConfig:", type(tc).__name__)
        except Exception as e:  # noqa: BLE001
            print("AutoConfig on hub config.json failed (%s: %s); using text_config directly" % (type(e).__name__, e))
            tc = Gemma3nTextConfig.from_dict(json.load(open(os.path.join(hf, "config.json")))["text_config"])
        m2, info = load(hf, config=tc, output_loading_info=True)
        print("HF load of hub layout: missing", info.get("missing_keys"), "unexpected", sorted(info.get("unexpected_keys", []))[:8])
        l2 = m2.float().eval()(input_ids=prompt, use_cache=False).logits[0].float().numpy()
        print("HF(hub bf16 checkpoint) vs bf16 reference logits: max abs diff %.3g" % np.abs(l2 - logits).max())
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        print("HF load of hub layout failed:", type(e).__name__, e)
print("wrote", out)
