#!/usr/bin/env python3
"""Plots of an `n3 estimate --sweep` CSV: decode tok/s (every context in the
CSV) and prefill tok/s against each swept key, one line per combination of
the other swept keys, each with its roofline (the simulated phase's binding
resource at its peak rate) dashed in the same colour.

    python3 tools/plot_estimate.py sweep.csv plots/

Writes plots/<key>.png per swept key (docs/estimating.md), atomically as
n3's other outputs: every plot is drawn into a unique temporary in OUT_DIR
(mkstemp: O_CREAT | O_EXCL, never following a symlink), and only when all
are drawn is each renamed over its name; on any error the temporaries are
removed and no plot is written. Without matplotlib
(Debian: python3-matplotlib, in bootstrap.sh) it says so and writes nothing.
"""
import csv
import itertools
import os
import signal
import sys
import tempfile


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
    for key in keys:
        # The name becomes a file name in OUT_DIR: nothing that leaves it or hides.
        if not key or "/" in key or "\0" in key or key.startswith("."):
            sys.exit(f"plot_estimate: {sys.argv[1]}: column {key[:60]!r} is not a plain key name")
    os.makedirs(sys.argv[2], exist_ok=True)
    # SIGTERM (n3 estimate stopped, a batch system's timeout) unwinds through
    # the finally below like SIGINT's KeyboardInterrupt: no temporary stays.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    drawn = []  # (temporary, final name)
    try:
        for key in keys:
            drawn.append(draw(plt, rows, keys, phases, key, sys.argv[2]))
        for tmp, out in drawn:
            os.replace(tmp, out)
            print(out)
    finally:
        for tmp, _ in drawn:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    return 0


def draw(plt, rows, keys, phases, key, out_dir):
    """One key's figure, saved into a fresh temporary beside its final name;
    returns (temporary, final name). The temporary is removed if saving fails."""
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
    out = os.path.join(out_dir, key + ".png")
    fd, tmp = tempfile.mkstemp(prefix="." + key + ".png.", suffix=".tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=100)
        # mkstemp makes 0600; a plot is an ordinary file (0666 less the umask).
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
    except BaseException:
        os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    return tmp, out


if __name__ == "__main__":
    # One line, not a traceback: a CSV that does not parse as figures, a
    # folder that cannot be written, a full disk. main()'s finally has already
    # removed every temporary; n3 estimate adds that the CSV stands.
    try:
        sys.exit(main())
    except (Exception, KeyboardInterrupt) as e:
        what = " ".join(str(e).split())[:200] or type(e).__name__
        print(f"plot_estimate: {sys.argv[1] if len(sys.argv) > 1 else ''}: {type(e).__name__}: {what}",
              file=sys.stderr)
        sys.exit(1)
