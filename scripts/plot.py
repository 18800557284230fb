#!/usr/bin/python3
"""Figures from a miniapp run file or a miniapp-compare file (docs/output.md).

    /usr/bin/python3 scripts/plot.py FILE.nc [-o OUTDIR]

Writes PNGs next to FILE (or into OUTDIR) and prints their paths, one a line.
A comparison file is recognised by its `pair` dimension. Reads only; the
metrics themselves come from the C code (miniapp/metrics.c), not from here.
Per-step series lie on the `step` dimension, field snapshots on `snapshot`
(their steps in `snapshot_step`), epochs on `epoch` (docs/output.md).
"""
import argparse
import os
import sys


def fail(msg):
    print(f"plot.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import netCDF4
    import numpy as np
except ImportError as e:
    fail(f"{e} (needs netCDF4 and matplotlib: apt-get install python3-netcdf4 python3-matplotlib, "
         "and run with /usr/bin/python3)")

INT_FILL = -2147483647  # NetCDF's default fill for int: a step never written


def var(ds, name):
    """A variable as a float array, NaN where it was never written."""
    if name not in ds.variables:
        fail(f"{ds.filepath()}: missing variable '{name}'")
    a = np.asarray(ds.variables[name][:], dtype=float)
    if ds.variables[name].dtype.kind == "i":
        a[a == INT_FILL] = np.nan
    return a


def series(ax, x, y, log=False, **kw):
    """Plot y(x) over its finite (and, on a log axis, positive) points; False if none."""
    ok = np.isfinite(y) & (y > 0 if log else True)
    if not ok.any():
        return False
    ax.plot(x[ok], y[ok], marker="o", markersize=3, **kw)
    return True


def note(ax, text):
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.4")


def finish(ax, log_used):
    if log_used:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")


def mark_first_divergence(axes, fds, indices):
    """Dotted vertical line at each series' first divergent step (-1: none)."""
    for k in indices:
        if fds[k] >= 0:
            for ax in axes:
                ax.axvline(fds[k], color=f"C{k}", linestyle=":", linewidth=1)


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)


def divergence_panels(axes, x, curves, xlabel, title_zero):
    """V_c, rel_l2 (log), digits against x; curves = [(label, vc, rel, digits, color)]."""
    specs = [("V_c (fraction of values with other bits)", 1, False),
             ("relative L2 difference", 2, True), ("digits of agreement (17: bitwise)", 3, False)]
    for ax, (ylabel, k, log) in zip(axes, specs):
        drawn = [series(ax, x, c[k], log=log, label=c[0], color=c[4]) for c in curves]
        if log and not any(drawn):
            note(ax, title_zero)
        ax.set_ylabel(ylabel, fontsize="small")
        finish(ax, log and any(drawn))
    axes[0].set_ylim(-0.05, 1.05)
    axes[-1].set_xlabel(xlabel)
    axes[-1].set_ylim(-0.5, 17.5)


def plot_run(ds, stem, written):
    nrep = ds.dimensions["replica"].size
    step = var(ds, "step")
    name = os.path.basename(ds.filepath())

    # (a) divergence of replicas r >= 1 from replica 0, per step
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    vc, rel, dig = var(ds, "vc"), var(ds, "rel_l2"), var(ds, "digits")
    curves = [(f"replica {r}", vc[:, r], rel[:, r], dig[:, r], f"C{r}") for r in range(1, nrep)]
    divergence_panels(axes, step, curves, "time step", "rel_l2 = 0: replicas agree bit for bit")
    mark_first_divergence(axes, var(ds, "first_divergent_step"), range(1, nrep))
    if nrep == 1:
        fig.suptitle(f"{name}: only one replica, nothing to compare with replica 0")
    else:
        fig.suptitle(f"{name}: replicas against replica 0 (dotted: first divergent step)")
    save(fig, f"{stem}_divergence.png", written)

    # (b) per epoch: loss of each replica, weights V_c and rel_l2 against replica 0
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    nep = ds.dimensions["epoch"].size
    epoch = var(ds, "epoch") if nep else np.zeros(0)  # a restarted run's first epoch is not 0
    if nep == 0:
        for ax in axes:
            note(ax, "no training epochs in this run")
    else:
        loss, wvc, wrel = var(ds, "loss"), var(ds, "weights_vc"), var(ds, "weights_rel_l2")
        used = [series(axes[0], epoch, loss[:, r], log=True, label=f"replica {r}", color=f"C{r}") for r in range(nrep)]
        finish(axes[0], any(used))
        used = [series(axes[2], epoch, wrel[:, r], log=True, label=f"replica {r}", color=f"C{r}")
                for r in range(1, nrep)]
        if not any(used):
            note(axes[2], "weights agree bit for bit" if nrep > 1 else "only one replica")
        finish(axes[2], any(used))
        for r in range(1, nrep):
            series(axes[1], epoch, wvc[:, r], label=f"replica {r}", color=f"C{r}")
        finish(axes[1], False)
    axes[0].set_ylabel("training loss")
    axes[1].set_ylabel("weights V_c", fontsize="small")
    axes[2].set_ylabel("weights relative L2", fontsize="small")
    axes[2].set_xlabel("epoch")
    fig.suptitle(f"{name}: surrogate training per epoch")
    save(fig, f"{stem}_epochs.png", written)

    # (c) Krylov iterations per step, with the baselines where they were run (>= 0)
    fig, ax = plt.subplots(figsize=(8, 4))
    coupling = getattr(ds, "coupling", None)
    series(ax, step, var(ds, "ksp_its")[:, 0], label=f"replica 0 (-coupling {coupling})" if coupling else "replica 0")
    for v, label in (("ksp_its_none", "no initial guess"), ("ksp_its_extrapolation", "extrapolation 2u^n - u^(n-1)"),
                     ("ksp_its_fischer", "Fischer projection"), ("ksp_its_learned", "learned (extrapolation + network)"),
                     ("ksp_its_combined", "combined (projection over all)")):
        if v in ds.variables:
            its = var(ds, v)
            its[its < 0] = np.nan
            series(ax, step, its, label=label, linestyle="--")
    ax.set_xlabel("time step")
    ax.set_ylabel("Krylov iterations")
    finish(ax, False)
    ax.set_title(f"{name}: Krylov iterations per step")
    save(fig, f"{stem}_krylov.png", written)

    # (d) the last snapshot: each component, replica 0 | last replica | difference
    comps = [v.name for v in ds.variables.values() if v.dimensions == ("snapshot", "replica", "y", "x")]
    if not comps:
        fail(f"{ds.filepath()}: no field variables (snapshot, replica, y, x)")
    nsnap = ds.dimensions["snapshot"].size
    fig, axes = plt.subplots(len(comps), 3, figsize=(12, 3.6 * len(comps)), squeeze=False)
    if nsnap == 0:
        fig.suptitle(f"{name}: no field snapshot was written")
    else:
        k = nsnap - 1
        x, y = var(ds, "x"), var(ds, "y")
        ext = [x[0], x[-1], y[0], y[-1]] if len(x) > 1 and len(y) > 1 else None
        last = nrep - 1
        for row, c in enumerate(comps):
            f = np.asarray(ds.variables[c][k], dtype=float)
            d = f[last] - f[0]
            lim = np.nanmax(np.abs(d)) if np.isfinite(d).any() else 0.0
            lim = lim if lim > 0 else 1.0
            panels = [(f[0], f"{c}, replica 0", "viridis", None),
                      (f[last], f"{c}, replica {last}", "viridis", None),
                      (d, f"{c}: replica {last} - replica 0", "RdBu_r", lim)]
            for ax, (img, title, cmap, sym) in zip(axes[row], panels):
                kw = {"vmin": -sym, "vmax": sym} if sym else {}
                im = ax.imshow(img, origin="lower", extent=ext, cmap=cmap, aspect="auto", **kw)
                fig.colorbar(im, ax=ax)
                ax.set_title(title, fontsize="small")
        suffix = " (only one replica: difference is zero)" if nrep == 1 else ""
        fig.suptitle(f"{name}: fields at step {int(var(ds, 'snapshot_step')[k])}{suffix}")
    save(fig, f"{stem}_fields.png", written)


def plot_compare(ds, stem, written):
    npair = ds.dimensions["pair"].size
    name = os.path.basename(ds.filepath())
    labels = [str(n) for n in ds.variables["pair_name"][:]] if "pair_name" in ds.variables else \
        [f"pair {p}" for p in range(npair)]
    ref = getattr(ds, "reference_file", "the reference")
    step = var(ds, "step")

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    vc, rel, dig = var(ds, "vc"), var(ds, "rel_l2"), var(ds, "digits")
    curves = [(labels[p], vc[p], rel[p], dig[p], f"C{p}") for p in range(npair)]
    divergence_panels(axes, step, curves, "time step", "rel_l2 = 0: every file agrees bit for bit")
    mark_first_divergence(axes, var(ds, "first_divergent_step"), range(npair))
    fig.suptitle(f"{name}: against {ref} per step (dotted: first divergent step)")
    save(fig, f"{stem}_steps.png", written)

    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    nep = ds.dimensions["epoch"].size
    epoch = var(ds, "epoch") if nep else np.zeros(0)
    if nep == 0:
        for ax in axes:
            note(ax, "no common training epochs")
    else:
        lvs, weq = var(ds, "loss_vs"), var(ds, "weights_equal")
        used = [series(axes[0], epoch, np.abs(lvs[p]), log=True, label=labels[p], color=f"C{p}") for p in range(npair)]
        if not any(used):
            note(axes[0], "losses agree exactly (V_s = 0)")
        finish(axes[0], any(used))
        for p in range(npair):
            w = weq[p].copy()
            w[w < 0] = np.nan
            series(axes[1], epoch, w, label=labels[p], color=f"C{p}", drawstyle="steps-post")
        finish(axes[1], False)
    axes[0].set_ylabel("|V_s| of the loss")
    axes[1].set_ylabel("weights bitwise equal (1/0)")
    axes[1].set_ylim(-0.1, 1.1)
    axes[1].set_xlabel("epoch")
    fig.suptitle(f"{name}: against {ref} per epoch")
    save(fig, f"{stem}_epochs.png", written)


def main():
    ap = argparse.ArgumentParser(description="Figures from a miniapp run or comparison NetCDF file.")
    ap.add_argument("file", help="run file (miniapp) or comparison file (miniapp-compare -o)")
    ap.add_argument("-o", "--outdir", help="directory for the PNGs (default: the file's directory)")
    args = ap.parse_args()
    if not os.path.isfile(args.file):
        fail(f"{args.file}: no such file")
    try:
        ds = netCDF4.Dataset(args.file)
    except OSError as e:
        fail(f"{args.file}: not a readable NetCDF file ({e.strerror or e})")
    ds.set_auto_mask(False)  # unwritten values read as their fill (NaN for doubles)
    outdir = args.outdir or os.path.dirname(args.file) or "."
    os.makedirs(outdir, exist_ok=True)
    stem = os.path.join(outdir, os.path.splitext(os.path.basename(args.file))[0])
    written = []
    if "pair" in ds.dimensions:
        plot_compare(ds, stem, written)
    elif "replica" in ds.dimensions and "state_hash" in ds.variables:
        plot_run(ds, stem, written)
    else:
        fail(f"{args.file}: neither a miniapp run file nor a miniapp-compare file")
    ds.close()
    print("\n".join(written))


if __name__ == "__main__":
    main()
