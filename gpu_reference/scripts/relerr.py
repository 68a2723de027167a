#!/usr/bin/env python3
"""Per-tensor relative error of a dump against a reference dump, the bar of the
CUDA path in reference numerics (docs/gpu.md):

    relerr.py CANDIDATE_DUMP REFERENCE_DUMP [--bar 1e-5]

For every tensor of CANDIDATE: max|cand - ref| / max|ref| (NaN anywhere or a
missing tensor fails). Prints one line per tensor above bar/10 and the worst;
exit 0 when every tensor is within the bar, 1 otherwise.
"""
import json
import sys

import numpy as np


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    bar = float(sys.argv[sys.argv.index("--bar") + 1]) if "--bar" in sys.argv else 1e-5
    if "--bar" in sys.argv:
        args.remove(sys.argv[sys.argv.index("--bar") + 1])
    cand, ref = args
    mc = json.load(open(f"{cand}/manifest.json"))
    mr = {t["name"]: t for t in json.load(open(f"{ref}/manifest.json"))["tensors"]}
    worst, worst_name, bad = 0.0, "", 0
    for t in mc["tensors"]:
        a = np.load(f"{cand}/{t['file']}").astype(np.float64)
        r = mr.get(t["name"])
        if r is None:
            print(f"{t['name']}: missing from the reference")
            bad += 1
            continue
        b = np.load(f"{ref}/{r['file']}").astype(np.float64)
        if a.shape != b.shape or not np.isfinite(a).all() or not np.isfinite(b).all():
            print(f"{t['name']}: shape {a.shape} vs {b.shape} or non-finite values")
            bad += 1
            continue
        m = np.abs(b).max()
        e = np.abs(a - b).max() / (m if m > 0 else 1.0)
        if e > bar / 10:
            print(f"{t['name']}: {e:.3g}")
        if e > bar:
            bad += 1
        if e >= worst:
            worst, worst_name = e, t["name"]
    print(f"summary: {'OK' if bad == 0 else 'FAIL'} {len(mc['tensors'])} tensors, worst max|cand-ref|/max|ref| = "
          f"{worst:.3g} ({worst_name}), bar {bar:g}, {bad} above")
    sys.exit(0 if bad == 0 else 1)


if __name__ == "__main__":
    main()
