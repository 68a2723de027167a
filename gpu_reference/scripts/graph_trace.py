#!/usr/bin/env python3
"""Where one decode step's time goes on the GPU, from a kernel trace
(gpu_reference/tools/kernel_trace.cc) of cuda_decode_bench.

A kernel's "exposed" time is its end minus the latest end of the kernels
before it in the step: the time it adds to the chain. With programmatic
dependent launch a kernel starts while its predecessor runs, so its own
duration overstates what it costs.

  graph_trace.py TRACE.tsv [--step K] [--layer L]

--step K: the K-th forward (0 = the prefill; default 10, a graph replay of
cuda_decode_bench). --layer L: also list layer L's kernels in order.
"""
import argparse
import collections
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--layer", type=int, default=5)
    a = ap.parse_args()
    if a.step < 0:
        sys.exit(f"graph_trace.py: --step {a.step}: must be 0 or more")
    ks = []
    try:
        with open(a.trace) as f:
            for n, line in enumerate(f, 1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
                    sys.exit(f"graph_trace.py: {a.trace}:{n}: not 'start<TAB>end<TAB>name'")
                ks.append((int(parts[0]), int(parts[1]), parts[2]))
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"graph_trace.py: cannot read {a.trace}: {e}")
    ks.sort()
    starts = [i for i, k in enumerate(ks) if "embed_kernel" in k[2]]
    if a.step + 1 >= len(starts):
        sys.exit(f"graph_trace.py: {a.trace} holds {len(starts)} forwards; --step {a.step} needs one more after it")
    step = ks[starts[a.step]:starts[a.step + 1]]
    # The step ends where its LM head does; the next forward's copies and
    # host work are not the step's.
    gemvs = [i for i, k in enumerate(step) if "gemv" in k[2]]
    if not gemvs:
        sys.exit(f"graph_trace.py: {a.trace}: forward {a.step} has no GEMV kernel (not a trace of cuda_decode_bench?)")
    last = gemvs[-1]
    step = step[: last + 1]

    def short(name):
        # CUPTI gives mangled names: _ZN2n33gpu<length><name>I<template args>...
        m = re.match(r"_ZN2n33gpu(\d+)", name)
        if m:
            return name[m.end():m.end() + int(m.group(1))]
        return name.split("(")[0].replace("void ", "").split("<")[0].replace("n3::gpu::", "")

    t0, prev_end = step[0][0], step[0][0]
    rows, tot = [], collections.defaultdict(lambda: [0, 0.0, 0.0])
    for s, e, n in step:
        exposed = max(0, e - prev_end)
        rows.append((s, e, n, exposed))
        t = tot[short(n)]
        t[0] += 1
        t[1] += exposed
        t[2] += e - s
        prev_end = max(prev_end, e)
    span = prev_end - t0
    print(f"step {a.step}: {len(step)} kernels, {span / 1e3:.1f} us from the first start to the last end")
    print(f"  {'kernel':34s} {'n':>4s} {'exposed us':>11s} {'each':>6s} {'duration us':>12s} {'each':>6s}")
    for name, (c, e, d) in sorted(tot.items(), key=lambda x: -x[1][1]):
        print(f"  {name[:34]:34s} {c:4d} {e / 1e3:11.1f} {e / c / 1e3:6.2f} {d / 1e3:12.1f} {d / c / 1e3:6.2f}")
    firsts = [i for i, r in enumerate(rows) if "predict_kernel" in r[2]]
    if 0 <= a.layer < len(firsts):
        i0 = firsts[a.layer]
        i1 = firsts[a.layer + 1] if a.layer + 1 < len(firsts) else len(rows)
        print(f"layer {a.layer} in launch order (us from the step's start):")
        for s, e, n, x in rows[i0:i1]:
            print(f"  {short(n)[:34]:34s} start {(s - t0) / 1e3:8.2f} duration {(e - s) / 1e3:6.2f} exposed {x / 1e3:6.2f}")


if __name__ == "__main__":
    main()
