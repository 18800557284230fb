#!/usr/bin/python3
"""Figures from miniapp run files, miniapp-compare files and sweeps (docs/output.md).

    /usr/bin/python3 scripts/plot.py FILE.nc [-o OUTDIR]
    /usr/bin/python3 scripts/plot.py --overlay A.nc B.nc [C.nc ...] [--labels a,b,c] [-o OUTDIR] [--list]
    /usr/bin/python3 scripts/plot.py --sweep out/sweep/DECK [-o OUTDIR] [--list]

Writes PNGs (next to the first file, or into OUTDIR) and prints their paths,
one a line; --list prints the legend entries instead and draws nothing.
A comparison file is recognised by its `pair` dimension. Reads only: the
metrics come from the C code (miniapp/metrics.c), the sweep's ratios from
scripts/report_table.py. Per-step series lie on the `step` dimension, field
snapshots on `snapshot`, epochs on `epoch` (docs/output.md). A figure shows
only panels that hold something: what is constant (bitwise-equal replicas,
no training) is said in its title instead of drawn as an empty panel.
"""
import argparse
import os
import re
import sys


def fail(msg):
    print(f"plot.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def check_outdir(d):
    """The output directory, made if missing, before any figure is drawn."""
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        fail(f"-o {d}: cannot create the directory ({e.strerror})")
    if not os.access(d, os.W_OK | os.X_OK):
        fail(f"-o {d}: not writable")


try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import netCDF4
    import numpy as np
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator
except ImportError as e:
    fail(f"{e} (needs netCDF4 and matplotlib: apt-get install python3-netcdf4 python3-matplotlib, "
         "and run with /usr/bin/python3)")

INT_FILL = -2147483647  # NetCDF's default fill for int: a step never written
DIGITS_CAP = 17         # digits of agreement of bitwise-equal values (docs/metrics.md)
DIVERGED = 1e-2         # rel_l2 at which the overlay calls two runs visibly different
# line styles and markers that stay distinguishable where lines lie on top of each other
STYLES = [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D"), ((0, (5, 1, 1, 1)), "v"), ((0, (1, 1)), "P")]


# ---- reading ---------------------------------------------------------------

def var(ds, name):
    """A variable as a float array, NaN where it was never written."""
    if name not in ds.variables:
        fail(f"{ds.filepath()}: missing variable '{name}'")
    a = np.asarray(ds.variables[name][:], dtype=float)
    if ds.variables[name].dtype.kind == "i":
        a[a == INT_FILL] = np.nan
    return a


def open_nc(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    try:
        ds = netCDF4.Dataset(path)
    except OSError as e:
        fail(f"{path}: not a readable NetCDF file ({e.strerror or e})")
    ds.set_auto_mask(False)  # unwritten values read as their fill (NaN for doubles)
    return ds


def is_run(ds):
    return "replica" in ds.dimensions and "state_hash" in ds.variables


def attr(ds, name, default=None):
    v = getattr(ds, name, default)
    return v.decode() if isinstance(v, bytes) else v


def build_name(ds):
    """'atomic build', or 'reproducible/atomic build' (solver/surrogate) when the halves differ."""
    sol, sur = attr(ds, "solver_reduction"), attr(ds, "surrogate_reduction")
    if not sol and not sur:
        return None
    return f"{sol} build" if sol == sur else f"{sol}/{sur} build"


# ---- drawing helpers ---------------------------------------------------------

def style(k, n_points, lw0=2.6, solo=False):
    """Line style k of a family: later lines thinner, on top, markers staggered.
    solo: the only line of its panel, drawn solid and thin (noisy series read better)."""
    ls, mk = STYLES[k % len(STYLES)]
    every = max(1, n_points // 12)
    kw = dict(linestyle=ls, marker=mk, markersize=5, linewidth=max(1.0, lw0 - 0.5 * k),
              markevery=(min(every - 1, (k * every) // 3), every), zorder=2 + k, color=f"C{k}")
    if solo:
        kw.update(linestyle="-", linewidth=1.2)
    return kw


def series(ax, x, y, log=False, **kw):
    """Plot y(x) over its finite (and, on a log axis, positive) points; False if none."""
    ok = np.isfinite(y) & ((y > 0) if log else True)
    if not ok.any():
        return False
    ax.plot(x[ok], y[ok], **kw)
    return True


def note(ax, text, y=0.5):
    ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="center", color="0.35", fontsize="small")


def _pow10(v, _pos=None):
    if v <= 0:
        return ""
    e = int(np.floor(np.log10(v) + 1e-9))
    m = v / 10.0 ** e
    m = round(m) if abs(m - round(m)) < 1e-6 else m
    return rf"$10^{{{e}}}$" if m == 1 else rf"${m:g}\times10^{{{e}}}$"


def log_axis(ax, values):
    """Log y axis over the positive finite values, widened to whole decades and
    with labelled ticks: 1, 2, 5 per decade over a narrow range, every decade
    (or every few) over a wide one, so that even 1e-15..3e-15 has several."""
    v = np.concatenate([np.ravel(a) for a in values]) if values else np.zeros(0)
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return
    ax.set_yscale("log")
    # a little headroom, so that a value on a power of ten is not drawn on the frame
    a, b = int(np.floor(np.log10(v.min()) - 0.05)), int(np.ceil(np.log10(v.max()) + 0.05))
    b = max(b, a + 1)
    ax.set_ylim(10.0 ** a, 10.0 ** b)
    if b - a <= 2:
        ticks = [m * 10.0 ** e for e in range(a, b) for m in (1, 2, 5)] + [10.0 ** b]
    else:
        stride = int(np.ceil((b - a) / 8))
        ticks = [10.0 ** e for e in range(a, b + 1, stride)]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(_pow10))
    if b - a <= 8:
        ax.yaxis.set_minor_locator(FixedLocator([m * 10.0 ** e for e in range(a, b) for m in range(2, 10)]))
    else:
        ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())


def legend(ax, **kw):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", framealpha=0.85, **kw)


def interp_lin(x, xp, fp):
    """np.interp inside [xp[0], xp[-1]], continued linearly outside: np.interp clamps, which put time 0 over step -450
    on a secondary axis whose view extends past the data."""
    x = np.asarray(x, dtype=float)
    y = np.interp(x, xp, fp)
    slope = (fp[-1] - fp[0]) / (xp[-1] - xp[0])  # the mean slope (exact for time = dt x step); xp may repeat values
    y = np.where(x < xp[0], fp[0] + (x - xp[0]) * slope, y)
    return np.where(x > xp[-1], fp[-1] + (x - xp[-1]) * slope, y)


def time_axis(ax, step, time):
    """A second x axis on top with the model time, when time(step) is increasing."""
    ok = np.isfinite(step) & np.isfinite(time)
    s, t = step[ok], time[ok]
    if len(s) < 2 or np.any(np.diff(t) <= 0) or np.any(np.diff(s) <= 0):
        return
    top = ax.secondary_xaxis("top", functions=(lambda x: interp_lin(x, s, t), lambda x: interp_lin(x, t, s)))
    top.set_xlabel("model time (nondimensional)", fontsize="small")
    return top


def mark_first_divergence(axes, fds, colors):
    """Dotted vertical line at each series' first divergent step (-1: none)."""
    for f, c in zip(fds, colors):
        if np.isfinite(f) and f >= 0:
            for ax in axes:
                ax.axvline(f, color=c, linestyle=":", linewidth=1)


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


# ---- divergence (run file: replicas; compare file: pairs) --------------------

def fault_of(ds):
    """The injected fault's (step or epoch, text) from the run file's fault_* attributes, or None."""
    if attr(ds, "fault_site") is None or not attr(ds, "fault_fired", 0):
        return None
    at = attr(ds, "fault_step", -1)
    where = f"step {at}" if at is not None and at >= 0 else f"epoch {attr(ds, 'fault_epoch', '?')}"
    seen = attr(ds, "fault_first_detection_step", -1)
    return (at if at is not None and at >= 0 else None,
            f"fault: {attr(ds, 'fault_site')} of replica {attr(ds, 'fault_replica', '?')}, bit {attr(ds, 'fault_bit', '?')}, "
            f"entry {attr(ds, 'fault_entry', '?')}, at {where}" + (f"; detected at step {seen}" if seen is not None and seen >= 0 else "; not detected"))


def mark_fault(axes, fault):
    """A solid red line at the fault's step on every panel, the fault said in the top panel."""
    if not fault or fault[0] is None:
        return
    for ax in axes:
        ax.axvline(fault[0], color="red", linewidth=1.4, alpha=0.8, zorder=0)
    axes[0].annotate(fault[1], xy=(fault[0], 1.0), xycoords=("data", "axes fraction"), xytext=(4, -12), textcoords="offset points",
                     fontsize="x-small", color="darkred", va="top", bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))


def divergence_figure(path, title, step, time, curves, fds, what, written, fault=None):
    """V_c, rel_l2 (log) and digits against the step; curves = [(label, vc, rel, digits)].
    Series bitwise equal at every step are drawn at 17 digits only, with a note."""
    equal = [np.nanmax(np.nan_to_num(c[1], nan=0.0)) == 0 and np.nanmax(np.nan_to_num(c[2], nan=0.0)) == 0
             for c in curves]
    n = len(step)
    if all(equal):
        fig, ax = plt.subplots(figsize=(9, 3.6))
        for k, c in enumerate(curves):
            series(ax, step, c[3], label=f"{c[0]}: bitwise equal at every step", **style(k, n))
        ax.set_ylim(-0.5, DIGITS_CAP + 1)
        ax.set_ylabel("digits of agreement\n(17 = bitwise equal)")
        ax.set_xlabel("step")
        time_axis(ax, step, time)
        mark_fault([ax], fault)
        ax.grid(True, alpha=0.3)
        legend(ax, loc="lower right")
        fig.suptitle(f"{title}\n{what} agree bit for bit at every step (V_c = 0, relative L2 = 0)", fontsize="medium")
        save(fig, path, written)
        return
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for k, c in enumerate(curves):
        lab = c[0] + (" (bitwise equal at every step)" if equal[k] else "")
        series(axes[0], step, c[1], label=lab, **style(k, n))
        series(axes[1], step, c[2], log=True, label=lab, **style(k, n))
        series(axes[2], step, c[3], label=lab, **style(k, n))
    log_axis(axes[1], [c[2] for c in curves])
    if any(equal):
        note(axes[1], "bitwise-equal series have relative L2 = 0: not on a log axis", y=0.92)
    axes[0].set_ylim(-0.05, 1.05)
    axes[2].set_ylim(-0.5, DIGITS_CAP + 1)
    axes[0].set_ylabel("V_c: fraction of values\nwith other bits")
    axes[1].set_ylabel("relative L2 difference")
    axes[2].set_ylabel("digits of agreement\n(17 = bitwise equal)")
    axes[2].set_xlabel("step")
    time_axis(axes[0], step, time)
    mark_first_divergence(axes, fds, [f"C{k}" for k in range(len(curves))])
    mark_fault(axes, fault)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    legend(axes[2], loc="lower left")
    fig.suptitle(f"{title}\n(dotted: first step whose bits differ" + ("; red: the injected fault)" if fault else ")"), fontsize="medium")
    save(fig, path, written)


# ---- run file ----------------------------------------------------------------

def plot_run(ds, stem, written):
    nrep = ds.dimensions["replica"].size
    step, time = var(ds, "step"), var(ds, "time")
    name = os.path.basename(ds.filepath())
    build = build_name(ds)
    coupling = attr(ds, "coupling")
    who = ", ".join(s for s in (build, f"-coupling {coupling}" if coupling else None) if s)
    who = f" ({who})" if who else ""

    # (a) divergence of replicas r >= 1 from replica 0; nothing to draw with one replica
    if nrep > 1:
        vc, rel, dig = var(ds, "vc"), var(ds, "rel_l2"), var(ds, "digits")
        curves = [(f"replica {r}", vc[:, r], rel[:, r], dig[:, r]) for r in range(1, nrep)]
        divergence_figure(f"{stem}_divergence.png", f"{name}{who}: replicas against replica 0, per step",
                          step, time, curves, var(ds, "first_divergent_step")[1:], "the replicas", written, fault=fault_of(ds))

    # (b) training per epoch; a run without training (-coupling none) has no figure
    if ds.dimensions["epoch"].size:
        plot_epochs(ds, stem, name, who, nrep, written)

    # (c) Krylov iterations, cumulative, with the guesses solved side by side
    plot_krylov(ds, stem, name, who, step, time, coupling, written)

    # (d) the last snapshot
    plot_fields(ds, stem, name, who, nrep, written)

    # (e) the fields over time: pattern formation, and where the replicas part
    if ds.dimensions["snapshot"].size > 1:
        plot_fields_time(ds, stem, name, who, nrep, written)

    # (f) what the network does per step: churn and the learned guess's error (guess), the closure's error and drift
    plot_coupling(ds, stem, name, who, nrep, step, time, written)

    # (g) heat: the error against the manufactured solution at the last snapshot
    if attr(ds, "scenario") == "heat" and "u" in ds.variables:
        plot_heat_error(ds, stem, name, who, written)


def heat_exact(x, y, t):
    """The heat scenario's manufactured solution (solver/heat.c: a = pi, b = 0.3, c = 4, d = 0.2); the output test
    checks that the error it gives equals the run's own mms_error_l2."""
    return np.exp(-t) * np.sin(np.pi * x[None, :] + 0.3) * np.cos(4.0 * y[:, None] + 0.2)


def heat_error(ds, k=-1):
    """(error field u - u*, discrete L2 norm sqrt(hx hy sum e^2), step) of replica 0 at snapshot k."""
    x, y = var(ds, "x"), var(ds, "y")
    u = np.asarray(ds.variables["u"][k, 0], dtype=float)
    e = u - heat_exact(x, y, var(ds, "snapshot_time")[k])
    hx, hy = (x[1] - x[0]) if len(x) > 1 else 1.0, (y[1] - y[0]) if len(y) > 1 else 1.0
    return e, float(np.sqrt(hx * hy * np.sum(e * e))), int(var(ds, "snapshot_step")[k])


def plot_heat_error(ds, stem, name, who, written):
    e, l2, st = heat_error(ds)
    x, y = var(ds, "x"), var(ds, "y")
    lim = float(np.nanmax(np.abs(e))) or 1.0
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    im = ax.imshow(e, origin="lower", extent=[x[0], x[-1], y[0], y[-1]], cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax, shrink=0.85).set_label("u - u* (replica 0)", fontsize="small")
    ax.set_xlabel("x (unit square)"), ax.set_ylabel("y (unit square)")
    ax.set_title(f"{name}{who}\nerror against the manufactured solution at step {st}\n"
                 f"u* = exp(-t) sin(pi x + 0.3) cos(4 y + 0.2); discrete L2 error {l2:.3e}", fontsize="small")
    save(fig, f"{stem}_error.png", written)


def snapshots_shown(nsnap, most=5):
    """Up to `most` snapshot indices, evenly spread, the first and the last among them."""
    return sorted(set(int(round(i * (nsnap - 1) / (most - 1))) for i in range(most))) if nsnap > most else list(range(nsnap))


def plot_fields_time(ds, stem, name, who, nrep, written):
    comps = [v.name for v in ds.variables.values() if v.dimensions == ("snapshot", "replica", "y", "x")]
    c = comps[-1]  # grayscott: v, the pattern; heat: u
    ks = snapshots_shown(ds.dimensions["snapshot"].size)
    sstep = var(ds, "snapshot_step")
    x, y = var(ds, "x"), var(ds, "y")
    ext = [x[0], x[-1], y[0], y[-1]] if len(x) > 1 and len(y) > 1 else None
    f = np.asarray(ds.variables[c][ks], dtype=float)  # (k, replica, y, x)
    rows = 2 if nrep > 1 else 1
    fig, axes = plt.subplots(rows, len(ks), figsize=(2.9 * len(ks) + 1.2, 2.9 * rows + 1.1), squeeze=False)
    lo, hi = np.nanmin(f[:, 0]), np.nanmax(f[:, 0])
    for j, k in enumerate(ks):
        im = axes[0][j].imshow(f[j, 0], origin="lower", extent=ext, cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
        axes[0][j].set_title(f"step {int(sstep[k])}", fontsize="small")
    fig.colorbar(im, ax=list(axes[0]), shrink=0.85).set_label(f"{c}, replica 0", fontsize="small")
    if rows == 2:
        d = np.abs(f[:, nrep - 1] - f[:, 0])
        pos = d[d > 0]
        dlo, dhi = (np.log10(pos.min()), np.log10(pos.max())) if pos.size else (-17.0, -16.0)
        for j in range(len(ks)):
            with np.errstate(divide="ignore"):
                ld = np.where(d[j] > 0, np.log10(np.where(d[j] > 0, d[j], 1.0)), np.nan)
            im2 = axes[1][j].imshow(ld, origin="lower", extent=ext, cmap="magma", vmin=dlo, vmax=max(dhi, dlo + 1e-9), interpolation="nearest")
            if not np.any(d[j] > 0):
                axes[1][j].text(0.5, 0.5, "bitwise equal", transform=axes[1][j].transAxes, ha="center", va="center", fontsize="small")
        fig.colorbar(im2, ax=list(axes[1]), shrink=0.85).set_label(f"log10 |{c}: replica {nrep - 1} - replica 0|", fontsize="small")
    for ax in axes.flat:
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle(f"{name}{who}: {c} over time" + ("; bottom: where replica %d differs from replica 0 (blank: bitwise equal)" % (nrep - 1) if rows == 2 else ""),
                 fontsize="medium")
    fig.savefig(f"{stem}_fields_time.png", dpi=110)
    plt.close(fig)
    written.append(f"{stem}_fields_time.png")


def plot_coupling(ds, stem, name, who, nrep, step, time, written):
    panels = []
    if "increment_error" in ds.variables and np.isfinite(var(ds, "increment_error")).any():
        panels.append(("increment_error", "learned guess: relative error\nof the predicted increment", True))
    if nrep > 1 and "churn" in ds.variables and np.isfinite(var(ds, "churn")).any():
        panels.append(("churn", "churn: fraction of points whose\nprediction differs from replica 0's", False))
    if "closure_error" in ds.variables and np.isfinite(var(ds, "closure_error")).any():
        panels.append(("closure_error", "closure: relative error\nof the learned term", True))
        panels.append(("closure_drift", "closure: fields' relative L2\ndifference from the exact-term run", True))
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.9 * len(panels) + 1.0), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, (v, label, log) in zip(axes, panels):
        a = var(ds, v)
        if v == "churn":
            for lev, nm in (("churn_10", "by > 10% of the RMS error"), ("churn_50", "by > 50%"), ("churn", "by > 100%")):
                for r in range(1, nrep):
                    series(ax, step, 100.0 * var(ds, lev)[:, r], label=f"replica {r}, {nm}" if nrep > 2 else nm, **style(r - 1 + 3 * (lev != "churn_10") + 3 * (lev == "churn"), len(step)))
            label = label.replace("fraction", "percent")
        else:
            for r in range(nrep if v != "closure_drift" else 1):
                series(ax, step, a[:, r], log=log, label=f"replica {r}", **style(r, len(step)))
            if log:
                log_axis(ax, [a])
        ax.set_ylabel(label, fontsize="small")
        ax.grid(True, alpha=0.3)
        legend(ax, loc="best")
    axes[-1].set_xlabel("step")
    time_axis(axes[0], step, time)
    fig.suptitle(f"{name}{who}: what the network does, per step", fontsize="medium")
    save(fig, f"{stem}_coupling.png", written)


def diffmap(a_path, b_path, outdir, labels):
    """The last common snapshot of two runs (e.g. two builds): replica 0's fields and their difference."""
    a, b = open_nc(a_path), open_nc(b_path)
    for d in (a, b):
        if not is_run(d):
            fail(f"{d.filepath()}: not a miniapp run file")
    sa, sb = list(var(a, "snapshot_step").astype(int)), list(var(b, "snapshot_step").astype(int))
    common = [st for st in sa if st in sb]
    if not common:
        fail(f"{a_path} and {b_path} have no snapshot step in common")
    st = common[-1]
    comps = [v.name for v in a.variables.values() if v.dimensions == ("snapshot", "replica", "y", "x") and v.name in b.variables]
    if not comps or a.variables[comps[0]].shape[2:] != b.variables[comps[0]].shape[2:]:
        fail(f"{a_path} and {b_path}: not the same fields on the same grid")
    la, lb = labels if labels else (build_name(a) or os.path.basename(a_path), build_name(b) or os.path.basename(b_path))
    fig, axes = plt.subplots(len(comps), 3, figsize=(13.8, 3.9 * len(comps) + 0.9), squeeze=False)
    for row, c in enumerate(comps):
        fa = np.asarray(a.variables[c][sa.index(st), 0], dtype=float)
        fb = np.asarray(b.variables[c][sb.index(st), 0], dtype=float)
        d = fb - fa
        lim = np.nanmax(np.abs(d)) if np.isfinite(d).any() else 0.0
        e = int(np.floor(np.log10(lim))) if lim > 0 else 0
        lo, hi = min(np.nanmin(fa), np.nanmin(fb)), max(np.nanmax(fa), np.nanmax(fb))
        for ax, (img, title, cmap, kw, cl) in zip(axes[row], [
                (fa, f"{c}: {la}", "viridis", {"vmin": lo, "vmax": hi}, c),
                (fb, f"{c}: {lb}", "viridis", {"vmin": lo, "vmax": hi}, c),
                (d / 10.0 ** e, f"{c}: {lb} - {la}\n(max |difference| {lim:.2g}" + (", bitwise equal)" if lim == 0 else ")"), "RdBu_r",
                 {"vmin": -((lim / 10.0 ** e) or 1.0), "vmax": (lim / 10.0 ** e) or 1.0}, f"difference of {c}" + (f"  (x 1e{e})" if e else ""))]):
            im = ax.imshow(img, origin="lower", cmap=cmap, interpolation="nearest", **kw)
            fig.colorbar(im, ax=ax, shrink=0.85).set_label(cl, fontsize="small")
            ax.set_title(title, fontsize="small")
            ax.set_xlabel("x (grid points)", fontsize="small")
            ax.set_ylabel("y (grid points)", fontsize="small")
    fig.suptitle(f"replica 0 of two runs at step {st}: {os.path.basename(a_path)} and {os.path.basename(b_path)}", fontsize="medium")
    check_outdir(outdir)
    path = os.path.join(outdir, "diffmap.png")
    save(fig, path, written := [])
    print(path)


def plot_epochs(ds, stem, name, who, nrep, written):
    epoch = var(ds, "epoch")  # a restarted run's first epoch is not 0
    loss = var(ds, "loss")
    n = len(epoch)
    panels, flat = [], []
    if nrep > 1:
        vs = np.abs(loss[:, 1:] / loss[:, :1] - 1)
        wvc, wrel = var(ds, "weights_vc")[:, 1:], var(ds, "weights_rel_l2")[:, 1:]
        for data, ylabel, log, what in ((vs, "loss: |V_s| against\nreplica 0", True, "losses"),
                                        (wvc, "weights V_c: fraction\nwith other bits", False, None),
                                        (wrel, "weights: relative L2\nagainst replica 0", True, "weights")):
            if np.nanmax(np.nan_to_num(data, nan=0.0)) > 0:
                panels.append((data, ylabel, log))
            elif what:
                flat.append(f"{what} of every replica bitwise equal to replica 0's at every epoch")
    fig, axes = plt.subplots(1 + len(panels), 1, figsize=(9, 3 + 2.4 * len(panels)), sharex=True, squeeze=False)
    axes = axes[:, 0]
    # replica 0 wide and pale underneath, the others thinner on top: overlapping losses stay visible
    for r in range(nrep):
        kw = style(r, n)
        if r == 0 and nrep > 1:
            kw.update(linewidth=5, alpha=0.35, marker=None)
        series(axes[0], epoch, loss[:, r], log=True, label=f"replica {r}", **kw)
    log_axis(axes[0], [loss])
    axes[0].set_ylabel("training loss")
    for ax, (data, ylabel, log) in zip(axes[1:], panels):
        for r in range(1, nrep):
            series(ax, epoch, data[:, r - 1], log=log, label=f"replica {r}", **style(r, n, solo=nrep == 2))
        if log:
            log_axis(ax, [data])
        else:
            ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel(ylabel)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    legend(axes[0])
    axes[-1].set_xlabel("epoch")
    if "epoch_step" in ds.variables:
        time_axis_epoch(axes[0], epoch, var(ds, "epoch_step"))
    if len(flat) == 2:
        flat = ["losses and weights of every replica bitwise equal to replica 0's at every epoch"]
    sub = "; ".join(flat) if flat else ("one replica: nothing to compare" if nrep == 1 else "")
    fig.suptitle(f"{name}{who}: surrogate training per epoch" + (f"\n{sub}" if sub else ""), fontsize="medium")
    save(fig, f"{stem}_epochs.png", written)


def time_axis_epoch(ax, epoch, estep):
    ok = np.isfinite(epoch) & np.isfinite(estep)
    e, s = epoch[ok], estep[ok]
    if len(e) < 2 or np.any(np.diff(s) < 0) or s[-1] == s[0]:
        return
    top = ax.secondary_xaxis("top", functions=(lambda x: interp_lin(x, e, s), lambda x: interp_lin(x, s, e)))
    top.set_xlabel("step", fontsize="small")
    return top


GUESSES = (("ksp_its_none", "no initial guess"), ("ksp_its_extrapolation", "extrapolation 2u^n - u^(n-1)"),
           ("ksp_its_fischer", "Fischer projection"), ("ksp_its_learned", "learned (extrapolation + network)"),
           ("ksp_its_combined", "combined (projection over all)"), ("ksp_its_projection", "projection (combined without the network)"))


def plot_krylov(ds, stem, name, who, step, time, coupling, written):
    """Cumulative iterations: per-step counts of several guesses lie on top of
    each other; their running totals separate, and the gap is what a guess saves."""
    its0 = var(ds, "ksp_its")[:, 0]
    cum0 = np.cumsum(np.nan_to_num(its0, nan=0.0))
    base = []
    for v, label in GUESSES:
        if v in ds.variables:
            its = var(ds, v)
            ran = np.isfinite(its) & (its >= 0)
            if ran.any():
                base.append((v, label, np.cumsum(np.where(ran, its, 0.0))))
    none = next((b[2] for b in base if b[0] == "ksp_its_none"), None)
    # the guess that drives the run solved the run's own systems: one line, named in the run's label
    same = [b for b in base if np.array_equal(b[2], cum0)]
    base = [b for b in base if not np.array_equal(b[2], cum0)]
    fig, axes = plt.subplots(2 if none is not None and len(base) > 1 else 1, 1, figsize=(9, 7 if none is not None else 4.2),
                             sharex=True, squeeze=False)
    axes = axes[:, 0]
    n = len(step)
    own = f"the run's own solves (-coupling {coupling})" if coupling else "the run's own solves (replica 0)"
    if same:
        own = own[:-1] + f", = {same[0][1].split(' (')[0]})"
    # the run's line wide and pale underneath: the guess that drives the run lies exactly on it
    pale = dict(color="0.2", linewidth=7, alpha=0.25, zorder=1) if base else dict(color="C0", linewidth=2)
    saved0 = f", {100 * (1 - cum0[-1] / none[-1]):.0f}% fewer" if none is not None and none[-1] > 0 and not \
        any(b[0] == "ksp_its_none" for b in same) else ""
    axes[0].plot(step, cum0, label=f"{own}: {int(cum0[-1])}{saved0}", **pale)
    for k, (v, label, cum) in enumerate(base):
        kw = style(k, n, lw0=2.0)
        saved = f", {100 * (1 - cum[-1] / none[-1]):.0f}% fewer" if none is not None and v != "ksp_its_none" and none[-1] > 0 else ""
        axes[0].plot(step, cum, label=f"{label}: {int(cum[-1])}{saved}", **kw)
        if len(axes) > 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                axes[1].plot(step, np.where(none > 0, 100 * cum / none, np.nan), label=label, **kw)
    axes[0].set_ylabel("Krylov iterations,\ncumulative from the first step")
    legend(axes[0], loc="upper left", title="total iterations" if base else None, title_fontsize="small")
    if len(axes) > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            axes[1].plot(step, np.where(none > 0, 100 * cum0 / none, np.nan), color="0.2", linewidth=7, alpha=0.25, zorder=1)
        axes[1].set_ylabel("cumulative iterations,\n% of no initial guess's")
        axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("step")
    time_axis(axes[0], step, time)
    title = f"{name}{who}: Krylov iterations of replica 0's systems"
    title += "\nevery initial guess on the same systems, side by side" if base else \
        "\n(no other initial guesses were solved: -coupling guess -coupling_baselines true solves them side by side)"
    fig.suptitle(title, fontsize="medium")
    save(fig, f"{stem}_krylov.png", written)


def plot_fields(ds, stem, name, who, nrep, written):
    comps = [v.name for v in ds.variables.values() if v.dimensions == ("snapshot", "replica", "y", "x")]
    if not comps:
        fail(f"{ds.filepath()}: no field variables (snapshot, replica, y, x)")
    nsnap = ds.dimensions["snapshot"].size
    if nsnap == 0:
        fail(f"{ds.filepath()}: no field snapshot was written")
    k, last = nsnap - 1, nrep - 1
    x, y = var(ds, "x"), var(ds, "y")
    ext = [x[0], x[-1], y[0], y[-1]] if len(x) > 1 and len(y) > 1 else None
    unit = "grid points" if attr(ds, "scenario") == "grayscott" else "unit square"
    fields = {c: np.asarray(ds.variables[c][k], dtype=float) for c in comps}
    differ = nrep > 1 and any(np.any(fields[c][last] != fields[c][0]) for c in comps)
    ncol = 3 if differ else 1
    if differ:  # one row per component: replica 0 | replica last | difference
        fig, axes = plt.subplots(len(comps), 3, figsize=(13.8, 3.9 * len(comps) + 0.9), squeeze=False)
    else:       # replica 0 only, the components side by side
        fig, axes = plt.subplots(1, len(comps), figsize=(4.6 * len(comps) + 0.6, 5.0), squeeze=False)
        axes = axes.T
    for row, c in enumerate(comps):
        f = fields[c]
        panels = [(f[0], f"{c}, replica 0", "viridis", None, c)]
        if differ:
            d = f[last] - f[0]
            lim = np.nanmax(np.abs(d)) if np.isfinite(d).any() else 0.0
            e = int(np.floor(np.log10(lim))) if lim > 0 else 0  # colour bar in units of 10^e, said in its label
            panels += [(f[last], f"{c}, replica {last}", "viridis", None, c),
                       (d / 10.0 ** e, f"{c}: replica {last} - replica 0\n(max |difference| {lim:.2g})", "RdBu_r",
                        (lim / 10.0 ** e) or 1.0, f"difference of {c}" + (f"  (x 1e{e})" if e else ""))]
        lo, hi = np.nanmin(f[[0, last]]), np.nanmax(f[[0, last]])  # one colour scale for both replicas
        for ax, (img, title, cmap, sym, clabel) in zip(axes[row], panels):
            kw = {"vmin": -sym, "vmax": sym} if sym else {"vmin": lo, "vmax": hi}
            im = ax.imshow(img, origin="lower", extent=ext, cmap=cmap, aspect="equal", interpolation="nearest", **kw)
            fig.colorbar(im, ax=ax, shrink=0.85).set_label(clabel, fontsize="small")
            ax.set_title(title, fontsize="small")
            ax.set_xlabel(f"x ({unit})", fontsize="small")
            ax.set_ylabel(f"y ({unit})", fontsize="small")
    s, t = int(var(ds, "snapshot_step")[k]), var(ds, "snapshot_time")[k]
    sub = "one replica" if nrep == 1 else \
        "" if differ else f"replica {last} is bitwise equal to replica 0 here (difference 0 everywhere)"
    fig.suptitle(f"{name}{who}\nfields at step {s} (model time {t:g})" + (f"\n{sub}" if sub else ""), fontsize="medium")
    save(fig, f"{stem}_fields.png", written)


# ---- comparison file ---------------------------------------------------------

def plot_compare(ds, stem, written):
    npair = ds.dimensions["pair"].size
    name = os.path.basename(ds.filepath())
    labels = [str(n) for n in ds.variables["pair_name"][:]] if "pair_name" in ds.variables else \
        [f"pair {p}" for p in range(npair)]
    ref = attr(ds, "reference_file", "the reference")
    step = var(ds, "step")
    time = var(ds, "time") if "time" in ds.variables else np.full(len(step), np.nan)
    vc, rel, dig = var(ds, "vc"), var(ds, "rel_l2"), var(ds, "digits")
    curves = [(labels[p], vc[p], rel[p], dig[p]) for p in range(npair)]
    divergence_figure(f"{stem}_steps.png", f"{name}: replica 0 of each file against {ref}, at its snapshots",
                      step, time, curves, var(ds, "first_divergent_step"), "the files", written)

    nep = ds.dimensions["epoch"].size
    if nep == 0:  # nothing trained in common: no epoch figure
        return
    epoch = var(ds, "epoch")
    lvs, weq = np.abs(var(ds, "loss_vs")), var(ds, "weights_equal")
    fde = var(ds, "first_divergent_epoch")
    weq[weq < 0] = np.nan
    # the flag panel only when some pair's weights change from equal to differing within the run
    varies = [np.nanmin(weq[p]) != np.nanmax(weq[p]) for p in range(npair) if np.isfinite(weq[p]).any()]
    loss_drawn = np.nanmax(np.nan_to_num(lvs, nan=0.0)) > 0
    fig, axes = plt.subplots(1 + any(varies), 1, figsize=(9, 4.2 + 2.2 * any(varies)), sharex=True, squeeze=False)
    axes = axes[:, 0]
    facts = []
    for p in range(npair):
        eq = weq[p][np.isfinite(weq[p])]
        state = "weights bitwise equal at every epoch" if eq.size and eq.min() == 1 else \
            "weights differ at every epoch" if eq.size and eq.max() == 0 else \
            f"weights differ from epoch {int(fde[p])}" if np.isfinite(fde[p]) and fde[p] >= 0 else ""
        lab = f"{labels[p]}" + (f" ({state})" if state else "")
        facts.append(lab)
        if not series(axes[0], epoch, lvs[p], log=True, label=lab, **style(p, nep)):
            axes[0].plot([], [], label=lab + ": loss V_s = 0", **style(p, nep))
        if any(varies):
            series(axes[1], epoch, weq[p], label=labels[p], drawstyle="steps-post", **style(p, nep))
    if loss_drawn:
        log_axis(axes[0], [lvs])
    else:
        axes[0].set_yticks([])
        note(axes[0], "every loss equal to the reference's (V_s = 0 at every epoch)")
    axes[0].set_ylabel("loss: |V_s| against\nthe reference")
    if any(varies):
        axes[1].set_ylabel("weights bitwise\nequal (1 yes, 0 no)")
        axes[1].set_yticks([0, 1])
        axes[1].set_ylim(-0.15, 1.15)
    mark_first_divergence(axes, fde, [f"C{p}" for p in range(npair)])
    for ax in axes:
        ax.grid(True, alpha=0.3)
    legend(axes[0], loc="lower right")
    axes[-1].set_xlabel("epoch")
    fig.suptitle(f"{name}: training of each file against {ref}, per epoch\n(dotted: first epoch whose weights differ)",
                 fontsize="medium")
    save(fig, f"{stem}_epochs.png", written)


# ---- --overlay: several runs' replica 1 against replica 0 on one axes --------

def growth_fit(step, rel):
    """The growth rate of miniapp's summary and miniapp-compare (metrics_growth
    in miniapp/metrics.c, the one definition; docs/metrics.md): least-squares
    line of log10(rel_l2) against the step over the exponential window only,
    from the first point at 100x the first nonzero difference to the last one
    below 1e-2 (saturation). (slope per step, intercept, first, last step), or
    None when there is no window of 5 points spanning 2 decades, or it does
    not grow."""
    n, i = len(rel), 0
    while i < n and not (np.isfinite(rel[i]) and rel[i] > 0):
        i += 1
    if i == n:
        return None
    first = rel[i]
    while i < n and not (rel[i] >= 100 * first):
        i += 1
    xs, ys = [], []
    while i < n and np.isfinite(rel[i]) and rel[i] < 1e-2:
        if rel[i] > 0:
            xs.append(float(step[i])), ys.append(float(np.log10(rel[i])))
        i += 1
    if len(xs) < 5 or max(ys) - min(ys) < 2:
        return None
    x, y = np.array(xs), np.array(ys)
    npt, sx, sy, sxx, sxy = len(x), x.sum(), y.sum(), (x * x).sum(), (x * y).sum()
    den = npt * sxx - sx * sx
    if den == 0:
        return None
    slope = (npt * sxy - sx * sy) / den
    icpt = (sy - slope * sx) / npt
    return (slope, icpt, xs[0], xs[-1]) if slope > 0 else None


def overlay(paths, labels, outdir, list_only):
    runs = []
    for p in paths:
        ds = open_nc(p)
        if not is_run(ds):
            fail(f"{p}: not a miniapp run file (--overlay takes run files; a compare.nc is plotted on its own)")
        nrep = ds.dimensions["replica"].size
        if nrep < 2:
            fail(f"{p}: 1 replica: --overlay needs -replicas 2 or more (it draws replica 1 against replica 0)")
        coupling = attr(ds, "coupling")
        auto = ", ".join(s for s in (build_name(ds) or os.path.basename(p),
                                     f"-coupling {coupling}" if coupling else None) if s)
        runs.append(dict(path=p, label=auto, step=var(ds, "step"), time=var(ds, "time"),
                         rel=var(ds, "rel_l2")[:, 1], dig=var(ds, "digits")[:, 1],
                         fds=var(ds, "first_divergent_step")[1]))
        ds.close()
    if labels is not None:
        labels = labels.split(",")
        if len(labels) != len(runs):
            fail(f"--labels has {len(labels)} labels for {len(runs)} files")
        for r, lab in zip(runs, labels):
            r["label"] = lab
    else:
        seen = [r["label"] for r in runs]
        for r in runs:  # two files of the same build and coupling: name the files too
            if seen.count(r["label"]) > 1:
                r["label"] += f" ({os.path.basename(r['path'])})"
    for r in runs:
        r["equal"] = not np.any(np.nan_to_num(r["rel"], nan=0.0) > 0)
        r["fit"] = None if r["equal"] else growth_fit(r["step"], r["rel"])
    if list_only:
        print("\n".join(r["label"] for r in runs))
        return
    written = []
    check_outdir(outdir)
    same_time = all(np.array_equal(r["time"], runs[0]["time"], equal_nan=True) for r in runs)

    # digits of agreement: bitwise-equal runs lie at the cap, in distinct styles
    fig, ax = plt.subplots(figsize=(9.5, 5))
    for k, r in enumerate(runs):
        lab = r["label"] + (" - bitwise equal (17) at every step" if r["equal"] else "")
        series(ax, r["step"], r["dig"], label=lab, **style(k, len(r["step"])))
    ax.axhline(DIGITS_CAP, color="0.5", linewidth=0.8, zorder=1)
    ax.text(0.005, DIGITS_CAP + 0.15, "17 = bitwise equal", transform=ax.get_yaxis_transform(), fontsize="x-small",
            color="0.35", va="bottom")
    ax.set_ylim(-0.5, DIGITS_CAP + 1.5)
    ax.set_xlabel("step")
    ax.set_ylabel("digits of agreement, replica 1 vs replica 0\n(-log10 relative L2 difference)")
    if same_time:
        time_axis(ax, runs[0]["step"], runs[0]["time"])
    ax.grid(True, alpha=0.3)
    legend(ax, loc="lower left")
    ax.set_title("Digits of agreement of two replicas, per step, one line per run", fontsize="medium")
    save(fig, os.path.join(outdir, "overlay_digits.png"), written)

    # relative L2 on a log axis, with each growing run's fitted exponential
    # extended (dotted) to DIVERGED: the horizontal gap between two parallel
    # lines is how many steps earlier one run's replicas come apart
    fig, ax = plt.subplots(figsize=(9.5, 5.2))
    vals, reach = [], []
    xmax = max(np.nanmax(r["step"]) for r in runs)
    for k, r in enumerate(runs):
        kw = style(k, len(r["step"]))
        if r["equal"]:
            ax.plot([], [], label=r["label"] + ": relative L2 = 0 at every step (bitwise equal), nothing to draw", **kw)
            continue
        lab = r["label"]
        hit = r["step"][np.isfinite(r["rel"]) & (r["rel"] >= DIVERGED)]
        if hit.size:
            reach.append((hit[0], r["label"], False))
            lab += f": {DIVERGED:g} at step {int(hit[0])}"
        elif r["fit"]:
            slope, icpt, s0, s1 = r["fit"]
            s_hit = (np.log10(DIVERGED) - icpt) / slope
            reach.append((s_hit, r["label"], True))
            lab += f": {1000 * slope:.2f} decades/1000 steps, {DIVERGED:g} at step ~{s_hit:.0f} (extrapolated)"
            xs = np.array([s0, s_hit])
            ax.plot(xs, 10 ** (icpt + slope * xs), color=kw["color"], linestyle=":", linewidth=1.2, zorder=kw["zorder"])
            ax.plot([s_hit], [DIVERGED], marker="x", color=kw["color"], markersize=8, zorder=kw["zorder"])
            xmax = max(xmax, s_hit)
            vals.append([DIVERGED])
        series(ax, r["step"], r["rel"], log=True, label=lab, **kw)
        vals.append(r["rel"])
    if vals:
        log_axis(ax, vals)
        ax.axhline(DIVERGED, color="0.5", linewidth=0.8, linestyle="--", zorder=1)
    else:
        ax.set_yticks([])
        note(ax, "every run's replicas are bitwise equal at every step")
    ax.set_xlim(right=xmax * 1.02)
    measured = max(np.nanmax(r["step"]) for r in runs)
    if xmax > measured * 1.05:
        ax.axvspan(measured, xmax * 1.02, color="0.92", zorder=0)
        ax.text(measured, 0.98, "  extrapolated (dotted: fit over the second half of each run)", fontsize="x-small",
                color="0.35", va="top", transform=ax.get_xaxis_transform())
    title = "Relative L2 difference of two replicas, per step, one line per run"
    if len(reach) >= 2:
        reach.sort()
        (a, la, _), (b, lb, _) = reach[0], reach[-1]
        gap = float(f"{b - a:.2g}")  # two figures: the fits are estimates
        title += f"\n{la} reaches {DIVERGED:g} about {gap:.0f} steps before {lb}"
    ax.set_title(title, fontsize="medium")
    ax.set_xlabel("step")
    ax.set_ylabel("relative L2 difference,\nreplica 1 vs replica 0")
    ax.grid(True, alpha=0.3)
    legend(ax, loc="lower right")
    save(fig, os.path.join(outdir, "overlay_rel_l2.png"), written)
    print("\n".join(written))


# ---- --sweep: the cost of determinism from scripts/sweep.sh's reports --------

PHASES = (("solve", "solve (Krylov)"), ("features", "features"), ("predict", "predict"), ("train", "train"),
          ("baselines", "side-by-side guesses"), ("metrics", "metrics"), ("output", "output"))


def load_reports(paths):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import report_table as rt
    except ImportError as e:
        fail(f"{e} (needs PyYAML: apt-get install python3-yaml)")
    rt.die = fail
    return rt, [rt.load(p) for p in paths]


def phases(paths, labels, outdir):
    """Where each run's time goes, per step: one stacked bar per -report file (timing section)."""
    rt, reps = load_reports(paths)
    rows = []
    for p, r in zip(paths, reps):
        steps = rt.num(rt.get(r, "problem.steps"))
        t = {k: rt.num(rt.get(r, "timing." + k)) for k, _ in PHASES}
        if not steps or any(v is None for k, v in t.items() if k not in ("baselines",)):
            fail(f"{p}: not a report with timing.solve .. timing.output and problem.steps (miniapp -report)")
        b = rt.get(r, "build") or {}
        rows.append((f"{b.get('solver_reduction')}/{b.get('surrogate_reduction')}" if b else os.path.basename(p), steps, t))
    if labels:
        if len(labels) != len(rows):
            fail(f"--labels has {len(labels)} labels for {len(rows)} reports")
        rows = [(lab, st, t) for lab, (_, st, t) in zip(labels, rows)]
    fig, ax = plt.subplots(figsize=(9.5, 1.2 + 0.8 * len(rows)))
    left = np.zeros(len(rows))
    for k, (key, name) in enumerate(PHASES):
        w = np.array([1e3 * (t[key] or 0.0) / st for _, st, t in rows])
        if not w.any():
            continue
        ax.barh(range(len(rows)), w, left=left, color=f"C{k}", label=name)
        left += w
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds per step (the run's phase times over its steps)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize="small", ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(rows) < 3 else -0.2))
    ax.set_title("Where the time goes, per step (the FOM counts solve, features, predict, train)", fontsize="medium")
    check_outdir(outdir)
    path = os.path.join(outdir, "phases.png")
    save(fig, path, written := [])
    print(path)


def scaling_plot(d, outdir):
    """scripts/scaling.sh's reports np<R>-t<T>.r<k>.yaml: time per step (best of the repeats) and efficiency against
    ranks x threads, one marker per split of the cores."""
    rt, _ = load_reports([])
    if not os.path.isdir(d):
        fail(f"{d}: not a directory (scripts/scaling.sh writes out/scaling/<deck>-<mode>/)")
    runs = rt.collect(d, r"(np\d+-t\d+)")
    if "np1-t1" not in runs:
        fail(f"{d}: no 1 x 1 run (np1-t1.r<k>.yaml, written by scripts/scaling.sh)")
    weak = d.rstrip("/").endswith("-weak")
    t1 = runs["np1-t1"].t("time_per_step")
    pts = []
    for k, r in runs.items():
        R, T = (int(v) for v in re.findall(r"\d+", k))
        tp = r.t("time_per_step")
        if tp:
            pts.append((R * T, R, T, tp, t1 / (tp * (1 if weak else R * T))))
    pts.sort()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for R in sorted({p[1] for p in pts}):
        sel = [p for p in pts if p[1] == R]
        lab = f"{R} rank{'s' if R > 1 else ''} x 1, 2, 4 .. threads"
        a1.plot([p[0] for p in sel], [p[3] for p in sel], marker="o", label=lab)
        a2.plot([p[0] for p in sel], [100 * p[4] for p in sel], marker="o", label=lab)
    cores = [p[0] for p in pts]
    if not weak:
        a1.plot(cores, [t1 / c for c in cores], color="0.5", linestyle=":", label="ideal (T(1x1) / cores)")
    a1.set_xscale("log", base=2), a1.set_yscale("log")
    a2.set_xscale("log", base=2)
    a2.axhline(100, color="0.5", linestyle=":")
    a1.set_ylabel("seconds per step"), a2.set_ylabel("efficiency (%)")
    for a in (a1, a2):
        a.set_xticks(sorted(set(cores)), [str(c) for c in sorted(set(cores))])
        a.set_xlabel("cores used (ranks x threads)")
        a.grid(True, alpha=0.3, which="both")
        a.legend(fontsize="small")
    fig.suptitle(f"{'Weak' if weak else 'Strong'} scaling: {os.path.basename(d.rstrip('/'))}", fontsize="medium")
    check_outdir(outdir)
    path = os.path.join(outdir, "scaling.png")
    save(fig, path, written := [])
    print(path)


def sweep_bars(sweep_path, outdir, list_only):
    """Ratios to the atomic build from out/sweep/<deck>/<variant>.r<k>.yaml (the
    -report files scripts/sweep.sh keeps), computed as scripts/report_table.py
    computes the table: minimum time over the repeats, atomic's as the base."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import report_table as rt
    except ImportError as e:
        fail(f"{e} (--sweep needs PyYAML: apt-get install python3-yaml)")
    rt.die = fail  # its errors as plot.py's one line
    d = sweep_path if os.path.isdir(sweep_path) else os.path.dirname(sweep_path) or "."
    if not os.path.exists(sweep_path):
        fail(f"{sweep_path}: no such file or directory")
    runs = rt.collect(d, r"([a-z]+(?:-[a-z]+)?)")
    if not runs:
        fail(f"{d}: no sweep reports (<variant>.r<k>.yaml, written by scripts/sweep.sh)")
    if "atomic" not in runs:
        fail(f"{d}: no report of the atomic build (atomic.r<k>.yaml)")
    base = runs["atomic"]

    def per_step(r):
        return rt.ratio(rt.num(rt.get(r, "timing.solve")), rt.num(rt.get(r, "problem.steps")))

    def surr(r):
        tr, pr = rt.num(rt.get(r, "timing.train")), rt.num(rt.get(r, "timing.predict"))
        return tr + pr if tr is not None and pr is not None and tr + pr > 0 else None

    def loop(r):
        return rt.num(rt.get(r, "timing.time_per_step"))

    parts = [("solver half", "PETSc Krylov solves", per_step, lambda sol, sur, s: sol == s and sur == "atomic"),
             ("surrogate half", "training + inference", surr, lambda sol, sur, s: sur == s and sol == "atomic"),
             ("whole loop", "time per step", loop, lambda sol, sur, s: sol == s and sur == s)]
    bars = []  # (part, strategy, variant, ratio, lo, hi, target, verdict, valid)
    for part, _, f, match in parts:
        bv = [v for v in map(f, base.reports) if v is not None]
        for s in ("deterministic", "reproducible"):
            name = next((n for n, sol, sur in rt.VARIANTS if match(sol, sur, s)), None)
            x = runs.get(name)
            xv = [v for v in map(f, x.reports) if v is not None] if x else []
            if not xv or not bv:
                bars.append((part, s, name, None, None, None, None, "not run" if not x else "n/a", True))
                continue
            r = min(xv) / min(bv)
            lo, hi = (min(xv) / max(bv), max(xv) / min(bv)) if len(xv) > 1 or len(bv) > 1 else (None, None)
            tgt = rt.TARGETS.get(s) if part == "whole loop" else None
            bars.append((part, s, name, r, lo, hi, tgt, rt.verdict(r, tgt, lo, hi) if tgt else "",
                         x.verification() == "VALID"))
    if list_only:
        for part, s, name, r, lo, hi, tgt, verd, valid in bars:
            txt = "n/a" if r is None else f"{r:.3f}x" + (f" ({lo:.3f}x..{hi:.3f}x)" if lo is not None else "")
            extra = f" target <= {tgt:.2f}x {verd}" if tgt and r is not None else f" {verd}" if r is None else ""
            print(f"{part}: {s} ({name}) {txt}{extra}{'' if valid else ' INVALID'}")
        return
    check_outdir(outdir)
    first = base.first
    fig, ax = plt.subplots(figsize=(9.5, 5.4))
    colors = {"deterministic": "C0", "reproducible": "C1"}
    width, top = 0.36, 1.0
    for gi, (part, sub, _, _) in enumerate(parts):
        for si, s in enumerate(("deterministic", "reproducible")):
            b = next(b for b in bars if b[0] == part and b[1] == s)
            x = gi + (si - 0.5) * width
            _, _, name, r, lo, hi, tgt, verd, valid = b
            if r is None:
                ax.text(x, 0.05, f"{s}:\n{verd}", ha="center", va="bottom", fontsize="x-small", rotation=90, color="0.35")
                continue
            err = [[r - lo], [hi - r]] if lo is not None else None
            ax.bar(x, r, width * 0.92, color=colors[s], hatch=None if valid else "//", edgecolor="0.2",
                   yerr=err, capsize=4, ecolor="0.2", label=s if gi == 2 or part == "whole loop" else None)
            lab = f"{r:.2f}x" + ("" if valid else "\nINVALID")
            ytxt = (hi if hi is not None else r)
            top = max(top, ytxt, tgt or 0)
            if tgt:
                ax.plot([x - width * 0.5, x + width * 0.5], [tgt, tgt], color="k", linestyle="--", linewidth=1.3, zorder=5)
                lab += f"\ntarget <= {tgt:.2f}x:\n{verd.split(' (')[0]}"
            ax.text(x, ytxt * 1.01, lab, ha="center", va="bottom", fontsize="x-small")
    ax.axhline(1.0, color="0.3", linewidth=1, zorder=1)
    ax.text(2.6, 1.0, "atomic\n= 1", fontsize="x-small", va="center", ha="left", color="0.3")
    ax.set_xticks(range(3))
    ax.set_xticklabels([f"{p}\n({s})" for p, s, _, _ in parts])
    ax.set_xlim(-0.6, 2.85)
    ax.set_ylim(0, top * 1.25)
    ax.set_ylabel("time of the build / time of the atomic build\n(minimum over the repeats)")
    h, lb = ax.get_legend_handles_labels()
    uniq = dict(zip(lb, h))
    ax.legend(uniq.values(), [f"{k} build" for k in uniq], fontsize="small", loc="upper left")
    reps = max(len(x.reports) for x in runs.values())
    deck = os.path.basename(os.path.abspath(d))
    grid = "x".join(str(g) for g in rt.get(first, "problem.grid") or []) or "?"
    spread = "error bars: fastest against slowest repeat, both ways" if reps > 1 else "one repeat: no error bars"
    ax.set_title(f"Cost of determinism: {deck} ({rt.get(first, 'problem.scenario')} {grid}, "
                 f"{rt.get(first, 'problem.steps')} steps, coupling {rt.get(first, 'problem.coupling')})\n"
                 f"{rt.get(first, 'machine.ranks')} rank(s) x {rt.get(first, 'machine.threads')} thread(s), "
                 f"{rt.get(first, 'machine.hostname') or ''}; best of {reps} repeat(s); {spread}", fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    written = []
    save(fig, os.path.join(outdir, "cost_of_determinism.png"), written)
    print("\n".join(written))


# ---- command line ------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 1, as every other bad input
        fail(message)


def main():
    ap = Parser(description="Figures from miniapp run or comparison NetCDF files, several runs overlaid, "
                            "or a cost-of-determinism sweep (docs/output.md).")
    ap.add_argument("files", nargs="*", help="run file (miniapp) or comparison file (miniapp-compare -o); "
                                             "with --overlay, run files with 2 or more replicas")
    ap.add_argument("-o", "--outdir", help="directory for the PNGs (default: the (first) file's directory)")
    ap.add_argument("--overlay", action="store_true",
                    help="one line per file: overlay_digits.png and overlay_rel_l2.png (replica 1 vs replica 0)")
    ap.add_argument("--labels", help="--overlay: comma-separated legend labels, one per file "
                                     "(default: build and -coupling from the files' attributes)")
    ap.add_argument("--sweep", metavar="SWEEP_OUTPUT",
                    help="out/sweep/<deck>/ of scripts/sweep.sh (or a file in it): cost_of_determinism.png")
    ap.add_argument("--diffmap", action="store_true",
                    help="two run files (e.g. two builds): replica 0's fields at their last common snapshot and "
                         "the difference: diffmap.png")
    ap.add_argument("--phases", action="store_true",
                    help="-report files (miniapp -report): milliseconds per step by phase, one bar per run: phases.png")
    ap.add_argument("--scaling", metavar="SCALING_OUTPUT",
                    help="out/scaling/<deck>-<mode>/ of scripts/scaling.sh: time per step and efficiency: scaling.png")
    ap.add_argument("--list", action="store_true",
                    help="print the legend entries (--overlay) or the bars' ratios (--sweep) instead of drawing")
    args = ap.parse_args()
    if args.sweep is not None:
        if args.files or args.overlay:
            fail("--sweep takes no other files and no --overlay")
        d = args.sweep if os.path.isdir(args.sweep) else os.path.dirname(args.sweep) or "."
        sweep_bars(args.sweep, args.outdir or d, args.list)
        return
    if args.phases:
        if not args.files or args.overlay or args.diffmap:
            fail("--phases takes report files (plot.py --phases A.yaml [B.yaml ...])")
        phases(args.files, args.labels.split(",") if args.labels else None, args.outdir or os.path.dirname(args.files[0]) or ".")
        return
    if args.scaling is not None:
        if args.files:
            fail("--scaling takes no other files")
        scaling_plot(args.scaling, args.outdir or args.scaling)
        return
    if args.diffmap:
        if len(args.files) != 2 or args.overlay:
            fail("--diffmap takes two run files (plot.py --diffmap A.nc B.nc)")
        labels = args.labels.split(",") if args.labels else None
        if labels and len(labels) != 2:
            fail("--diffmap --labels: two labels, comma-separated")
        diffmap(args.files[0], args.files[1], args.outdir or os.path.dirname(args.files[0]) or ".", labels)
        return
    if args.overlay:
        if not args.files:
            fail("--overlay needs run files (plot.py --overlay A.nc B.nc [C.nc ...])")
        overlay(args.files, args.labels, args.outdir or os.path.dirname(args.files[0]) or ".", args.list)
        return
    if args.labels is not None or args.list:
        fail("--labels and --list go with --overlay, --diffmap or --sweep")
    if len(args.files) != 1:
        fail(f"expected one file, got {len(args.files)} (several runs on one axes: --overlay)")
    path = args.files[0]
    ds = open_nc(path)
    outdir = args.outdir or os.path.dirname(path) or "."
    check_outdir(outdir)
    stem = os.path.join(outdir, os.path.splitext(os.path.basename(path))[0])
    written = []
    if "pair" in ds.dimensions:
        plot_compare(ds, stem, written)
    elif is_run(ds):
        plot_run(ds, stem, written)
    else:
        fail(f"{path}: neither a miniapp run file nor a miniapp-compare file")
    ds.close()
    print("\n".join(written))


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # an unwritable or full output directory, a file that vanished: one line, no traceback
        fail(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
