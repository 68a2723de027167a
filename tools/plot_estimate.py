#!/usr/bin/env python3
"""Plots of an `n3 estimate --sweep` CSV: decode tok/s (every context in the
CSV) and prefill tok/s against each swept key, one line per combination of
the other swept keys, each with its roofline (the simulated phase's binding
resource at its peak rate) dashed in the same colour.

    python3 tools/plot_estimate.py sweep.csv plots/

Writes plots/<key>.png per swept key (docs/estimating.md). Without matplotlib
(Debian: python3-matplotlib, in bootstrap.sh) it says so and writes nothing.
"""
import csv
import itertools
import os
import sys


def numeric(v):
    """Numbers sort as numbers (4 before 16), names (kv.policy) after them, by name."""
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_estimate.py SWEEP.csv OUT_DIR")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's package lives with Debian's python; another python3 first on
        # PATH (pyenv, a venv) does not see it.
        debian = "/usr/bin/python3"
        if os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian):
            os.execv(debian, [debian] + sys.argv)
        print("plot_estimate: matplotlib is not installed (apt-get install python3-matplotlib); no plots written",
              file=sys.stderr)
        return 0
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_estimate: {sys.argv[1]}: no rows")
    cols = list(rows[0].keys())
    # Swept keys are the hardware file's section.key names, between "point" and the figures.
    keys = [c for c in cols[1:] if "." in c]
    phases = [(c, c.replace("_tok_s", "_roofline_tok_s")) for c in cols
              if c.endswith("_tok_s") or "_tok_s@" in c]
    phases = [(s, r) for s, r in phases if s.startswith(("decode_tok_s", "prefill_tok_s")) and r in cols]
    os.makedirs(sys.argv[2], exist_ok=True)
    for key in keys:
        others = [k for k in keys if k != key]
        # A key of names (numerics.kv_format=f16,int8) is placed at 0, 1, ... and labelled.
        values = sorted({r[key] for r in rows}, key=numeric)
        categorical = any(numeric(v)[0] for v in values)

        def xpos(v):
            return values.index(v) if categorical else float(v)
        fig, axes = plt.subplots(1, len(phases), figsize=(6 * len(phases), 4.5), squeeze=False)
        for ax, (sim, roof) in zip(axes[0], phases):
            groups = sorted({tuple(r[k] for k in others) for r in rows}, key=lambda g: [numeric(v) for v in g])
            colours = itertools.cycle(plt.rcParams["axes.prop_cycle"].by_key()["color"])
            for g, colour in zip(groups, colours):
                # Points without the figure (not simulated: an empty cell) are left out.
                pts = sorted(((xpos(r[key]), float(r[sim]), float(r[roof])) for r in rows
                              if tuple(r[k] for k in others) == g and r[sim] != ""))
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, g)) or "simulated"
                ax.plot(xs, [p[1] for p in pts], "o-", color=colour, label=label)
                ax.plot(xs, [p[2] for p in pts], "--", color=colour, alpha=0.6)
            ax.set_xlabel(key)
            if categorical:
                ax.set_xticks(range(len(values)))
                ax.set_xticklabels(values)
            ax.set_ylabel(sim.replace("_", " ") + " (solid: simulated, dashed: roofline)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(f"n3 estimate sweep: tok/s against {key}")
        fig.tight_layout()
        out = os.path.join(sys.argv[2], key + ".png")
        fig.savefig(out, dpi=100)
        plt.close(fig)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
