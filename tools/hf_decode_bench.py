#!/usr/bin/env python3
"""HuggingFace transformers' decode speed for Gemma 3n E4B at batch 1: the
baseline docs/gpu.md sets the CUDA reference path against.

    python3 tools/hf_decode_bench.py [configs/models/gemma3n-e4b.yaml] [--new 64] [--prompt 8]

Builds Gemma3nForCausalLM from the model YAML (its keys are HF's
Gemma3nTextConfig fields), bfloat16, eager attention, random weights made on
the GPU (speed does not depend on the values), then times greedy decode with
the KV cache through generate(): the time of `new` + 1 generated tokens minus
the time of 1 (the prefill and first token), divided by `new`. Prints tok/s.
"""
import argparse
import os
import time

import torch
import yaml
from transformers import Gemma3nForCausalLM, Gemma3nTextConfig


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("config", nargs="?", default=os.path.join(here, "..", "configs", "models", "gemma3n-e4b.yaml"))
    ap.add_argument("--new", type=int, default=64, help="tokens timed")
    ap.add_argument("--prompt", type=int, default=8, help="prompt length")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()

    c = yaml.safe_load(open(a.config))
    c.pop("name", None)
    cfg = Gemma3nTextConfig(**c)
    cfg._attn_implementation = "eager"
    torch.set_grad_enabled(False)
    torch.manual_seed(0)
    t0 = time.time()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = Gemma3nForCausalLM(cfg).eval()
    torch.set_default_dtype(torch.float32)
    torch.cuda.synchronize()
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {a.config}, {params / 1e9:.2f} G parameters, bf16, eager attention, built in {time.time() - t0:.1f} s")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")

    ids = torch.randint(2, cfg.vocab_size, (1, a.prompt), device="cuda")

    def gen(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, use_cache=True)
        torch.cuda.synchronize()
        assert out.shape[1] == a.prompt + n, out.shape
        return time.perf_counter() - t

    gen(4)  # warm up
    best = None
    for _ in range(a.reps):
        t1, tn = gen(1), gen(a.new + 1)
        per = (tn - t1) / a.new
        best = per if best is None else min(best, per)
    print(f"HF transformers decode, batch 1, {a.new} tokens after a {a.prompt}-token prompt: "
          f"{1 / best:.2f} tok/s ({best * 1e3:.1f} ms/token, best of {a.reps})")


if __name__ == "__main__":
    main()
