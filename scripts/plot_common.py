"""scripts/plot_common.py: what every figure of scripts/plot.py shares: reading
the NetCDF files, line styles, log axes, the model-time axis, the divergence
figure (docs/output.md)."""
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
    if not os.path.exists(path):
        fail(f"{path}: no such file")
    if not os.path.isfile(path):  # a directory, a FIFO (netCDF4 would wait on it), a device
        fail(f"{path}: not a regular file (a run file or a miniapp-compare -o file is)")
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
