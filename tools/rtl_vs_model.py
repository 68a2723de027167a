#!/usr/bin/env python3
"""Side by side: a run with RTL units against the run on the timing model alone.

    tools/rtl_vs_model.py RTL.json MODEL.json [--top N]

Both files are `n3 sim --backend systemc --stats` reports of the same model,
prompt and hardware (one with `--rtl ...`, one without). Prints the totals,
each program run, each layer and the N operators with the most cycles in the
RTL run, each with the RTL run's cycles, the model's, and (model - rtl) / rtl,
the sign convention of the `rtl gemv:` / `rtl dma:` summaries. The layer and
operator figures are the stats' attribution of unit time (docs/timing.md,
"Statistics"), so they sum over units and can exceed the run's wall cycles.
"""
import argparse
import json
import sys


def load(path):
    try:
        with open(path) as f:
            j = json.load(f)
        for key in ("total_cycles", "runs", "layers", "operators"):
            if key not in j:
                raise ValueError(f"no '{key}': not an n3 sim --stats report")
        return j
    except (OSError, ValueError) as e:
        sys.stderr.write(f"rtl_vs_model: {path}: {e}\n")
        sys.exit(2)


def row(name, rtl, model, width):
    rel = (model - rtl) / rtl * 100 if rtl else 0.0
    print(f"  {name:<{width}} {rtl:>16,.0f} {model:>16,.0f} {rel:>+9.3f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rtl")
    ap.add_argument("model")
    ap.add_argument("--top", type=int, default=15, help="operators to list (by the RTL run's cycles)")
    a = ap.parse_args()
    if a.top < 0:
        sys.stderr.write("rtl_vs_model: --top must be 0 or more\n")
        sys.exit(2)
    r, m = load(a.rtl), load(a.model)
    if r.get("hw") != m.get("hw"):
        sys.stderr.write(f"rtl_vs_model: the runs are of different hardware ({r.get('hw')} vs {m.get('hw')})\n")
        sys.exit(2)
    rp = [x["program"] for x in r["runs"]]
    if rp != [x["program"] for x in m["runs"]]:
        sys.stderr.write("rtl_vs_model: the runs ran different programs: not the same model and prompt\n")
        sys.exit(2)
    w = 44
    print(f"  {'':<{w}} {'rtl run':>16} {'model alone':>16} {'model-rtl':>10}")
    row("total cycles", r["total_cycles"], m["total_cycles"], w)
    print("programs:")
    for i, (x, y) in enumerate(zip(r["runs"], m["runs"])):
        row(f"{i} {x['program']}", x["cycles"], y["cycles"], w)

    def key(k):
        return (0, int(k)) if k.isdigit() else (1, k)

    print("layers (unit cycles attributed to each layer):")
    for k in sorted(set(r["layers"]) | set(m["layers"]), key=key):
        row(k, r["layers"].get(k, 0.0), m["layers"].get(k, 0.0), w)
    print(f"operators (the {a.top} with the most cycles in the rtl run):")
    ops = sorted(set(r["operators"]) | set(m["operators"]), key=lambda k: -r["operators"].get(k, 0.0))
    for k in ops[: a.top]:
        row(k[:w], r["operators"].get(k, 0.0), m["operators"].get(k, 0.0), w)


if __name__ == "__main__":
    main()
