#!/usr/bin/env python3
"""The figure of a miniapp-sumstudy summary CSV (docs/fpna-sums.md).

    /usr/bin/python3 scripts/sumstudy_plot.py sumstudy.csv [-o sumstudy.png]

One panel per distribution: max and median |V_s| against N, log-log, one
colour per method, with the least-squares line of log10 max|V_s| on log10 N
(over the N where max|V_s| > 0, as the tool fits it) and its alpha in the
legend. Writes the PNG (default: the CSV's name with .png) and prints its path.
Reads only; V_s itself comes from the C tool.
"""
import argparse
import csv
import os
import sys


def fail(msg):
    print(f"sumstudy_plot.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError as e:
    fail(f"{e} (needs numpy and matplotlib: apt-get install python3-matplotlib, and run with /usr/bin/python3)")

COLORS = {"element": "tab:red", "block": "tab:blue", "omp": "tab:orange", "omp-block": "tab:cyan",
          "cuda-element": "tab:purple", "cuda-block": "tab:green", "cuda-tree": "tab:olive", "cuda-cub": "tab:brown"}
U = 2.0 ** -53
BLOCKED = {"block", "omp-block", "cuda-block", "cuda-tree"}  # methods summing fixed blocks first


def read(path):
    """(settings from the '# key=value' header, rows as dicts)."""
    try:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    settings = {}
    for line in lines:
        if line.startswith("#"):
            for word in line[1:].split():
                if "=" in word:
                    k, v = word.split("=", 1)
                    settings[k] = v
    rows = list(csv.DictReader(line for line in lines if line and not line.startswith("#")))
    need = {"method", "dist", "n", "max_abs_vs", "q50_abs_vs"}
    if not rows or not need <= set(rows[0]):
        fail(f"{path}: not a miniapp-sumstudy summary (needs the columns {', '.join(sorted(need))})")
    return settings, rows


def fit(n, y):
    """alpha, beta, standard error of alpha: least squares of log10 y on log10 n over y > 0."""
    ok = y > 0
    if ok.sum() < 2:
        return None
    x, ly = np.log10(n[ok]), np.log10(y[ok])
    alpha, b0 = np.polyfit(x, ly, 1)
    r = ly - (b0 + alpha * x)
    se = np.sqrt(r @ r / (len(x) - 2) / ((x - x.mean()) @ (x - x.mean()))) if len(x) > 2 else float("nan")
    return alpha, 10.0 ** b0, se


def main():
    ap = argparse.ArgumentParser(description="plot a miniapp-sumstudy summary CSV")
    ap.add_argument("csv")
    ap.add_argument("-o", dest="png", help="output PNG (default: CSV name with .png)")
    a = ap.parse_args()
    png = a.png or os.path.splitext(a.csv)[0] + ".png"
    if os.path.realpath(png) == os.path.realpath(a.csv):  # the figure would replace its data
        fail(f"-o {png}: is the input CSV; name another file")
    if os.path.isdir(png):
        fail(f"-o {png}: is a directory; name a file")
    png = os.path.realpath(png)  # a link keeps pointing at the figure: its target is replaced, not the link
    settings, rows = read(a.csv)

    def num(r, k):
        try:
            return float(r[k])
        except ValueError:
            return float("nan")

    dists = list(dict.fromkeys(r["dist"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, axes = plt.subplots(1, len(dists), figsize=(7.2 * len(dists), 7.4), squeeze=False, sharey=True)
    block = int(settings.get("block", "0") or 0)  # the block method's (-block)
    app_block = int(settings.get("app_block", "1024") or 0)  # omp-block's and the CUDA tiles' 
    for ax, dist in zip(axes[0], dists):
        for m in methods:
            sel = sorted((r for r in rows if r["dist"] == dist and r["method"] == m), key=lambda r: num(r, "n"))
            if not sel:
                continue
            n = np.array([num(r, "n") for r in sel])
            mx = np.array([num(r, "max_abs_vs") for r in sel])
            med = np.array([num(r, "q50_abs_vs") for r in sel])
            c = COLORS.get(m, "black")
            f = fit(n, mx)
            # Block methods: below 3 blocks the block order cannot act (docs/fpna-sums.md),
            # so their line is fitted over N > 2B, as the tool's *_from_3_blocks fit.
            b = block if m == "block" else app_block
            fb = fit(n[n > 2 * b], mx[n > 2 * b]) if b and m in BLOCKED else None
            label = f"{m}: max"
            if fb:
                label += f", α = {fb[0]:.2f} ± {fb[2]:.2f} for N > {2 * b}" + (f" (all N: {f[0]:.2f})" if f else "")
            elif f:
                label += f", α = {f[0]:.2f} ± {f[2]:.2f}"
            # zeros cannot sit on a log axis: NaN breaks the line there
            ax.plot(n, np.where(mx > 0, mx, np.nan), "o-", color=c, lw=1.6, ms=4, label=label)
            ax.plot(n, np.where(med > 0, med, np.nan), "s--", color=c, lw=1.0, ms=3, mfc="none", alpha=0.8)
            ff, lo = (fb, 2 * b) if fb else (f, 0)
            if ff:
                nn = n[(mx > 0) & (n > lo)]
                nn = np.array([nn.min(), nn.max()])
                ax.plot(nn, ff[1] * nn ** ff[0], ":", color=c, lw=1.2)
        ax.axhline(U, color="0.5", lw=0.8, ls="-.")
        ax.text(12, U * 1.15, "u = 2^-53", color="0.4", fontsize=8)
        if block:
            ax.axvline(block, color="0.5", lw=0.8, ls="-.")
            ax.text(block * 1.1, 0.02, f"block = {block}", color="0.4", fontsize=8, rotation=90,
                    transform=ax.get_xaxis_transform())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N (summands)")
        ax.set_title(f"{dist} data" + (" (on [0, 1))" if dist == "uniform" else " (standard)" if dist == "normal" else ""))
        ax.grid(True, which="major", alpha=0.3)
        ax.plot([], [], "s--", color="0.4", lw=1.0, ms=3, mfc="none", label="dashed, hollow: median |V_s| (same colours)")
        ax.plot([], [], ":", color="0.4", lw=1.2, label="dotted: least-squares fit of max|V_s| = β N^α")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=1, frameon=False)
    axes[0][0].set_ylabel("|V_s| = |1 - |S / S_ref||  (solid: max over arrays x orders)")
    fig.suptitle(f"Scalar variability of sums: reference {settings.get('reference', '?')}, "
                 f"{settings.get('arrays', '?')} arrays x {settings.get('orders', '?')} orders per N, "
                 f"{settings.get('threads', '?')} threads", fontsize=11)
    fig.tight_layout()
    tmp = f"{png}.partial-{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, png)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(f"{png}: {e.strerror}")
    print(png)


if __name__ == "__main__":
    main()
