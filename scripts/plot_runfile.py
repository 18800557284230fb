"""scripts/plot_runfile.py: the figures of one run file (divergence, training,
Krylov iterations, fields, fields over time, the network per step, the heat
error), of a comparison file, and --diffmap of two runs (scripts/plot.py)."""
from plot_common import *  # noqa: F401,F403 (numpy, matplotlib and the shared helpers)

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
    d = np.abs(f[:, nrep - 1] - f[:, 0]) if nrep > 1 else None
    # the difference row only at snapshots where the replicas differ: a bitwise-equal one is said in its title
    parted = [bool(np.any(d[j] > 0)) for j in range(len(ks))] if nrep > 1 else []
    rows = 2 if any(parted) else 1
    fig, axes = plt.subplots(rows, len(ks), figsize=(2.9 * len(ks) + 1.2, 2.9 * rows + 1.1), squeeze=False)
    lo, hi = np.nanmin(f[:, 0]), np.nanmax(f[:, 0])
    for j, k in enumerate(ks):
        im = axes[0][j].imshow(f[j, 0], origin="lower", extent=ext, cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
        eq = "\nreplicas bitwise equal" if rows == 2 and not parted[j] else ""
        axes[0][j].set_title(f"step {int(sstep[k])}{eq}", fontsize="small")
    fig.colorbar(im, ax=list(axes[0]), shrink=0.85).set_label(f"{c}, replica 0", fontsize="small")
    if rows == 2:
        pos = d[d > 0]
        dlo, dhi = np.log10(pos.min()), np.log10(pos.max())
        for j in np.flatnonzero(parted):
            with np.errstate(divide="ignore"):
                ld = np.where(d[j] > 0, np.log10(np.where(d[j] > 0, d[j], 1.0)), np.nan)
            im2 = axes[1][j].imshow(ld, origin="lower", extent=ext, cmap="magma", vmin=dlo, vmax=max(dhi, dlo + 1e-9), interpolation="nearest")
        fig.colorbar(im2, ax=list(axes[1]), shrink=0.85).set_label(f"log10 |{c}: replica {nrep - 1} - replica 0|", fontsize="small")
        for j in np.flatnonzero(np.logical_not(parted)):  # placed with the row, then removed: the rest keep their place
            axes[1][j].remove()
    for ax in [a for a in axes.flat if a in fig.axes]:
        ax.set_xticks([]), ax.set_yticks([])
    sub = "" if nrep == 1 else \
        f"; bottom: where replica {nrep - 1} differs from replica 0 (blank: bitwise equal)" if rows == 2 else \
        f"; replica {nrep - 1} bitwise equal to replica 0 at every snapshot shown"
    fig.suptitle(f"{name}{who}: {c} over time{sub}", fontsize="medium")
    fig.savefig(f"{stem}_fields_time.png", dpi=110)
    plt.close(fig)
    written.append(f"{stem}_fields_time.png")


COUPLING_PANELS = (  # variable, y label, log axis, the title's line when it is 0 at every step
    ("increment_error", "learned guess: relative error\nof the predicted increment", True,
     "learned guess: increment error 0 at every step"),
    ("churn", "churn: fraction of points whose\nprediction differs from replica 0's", False,
     "churn 0 at every step: no prediction differs from replica 0's by over 10% of the RMS error"),
    ("closure_error", "closure: relative error\nof the learned term", True,
     "closure: learned term's error 0 at every step"),
    ("closure_drift", "closure: fields' relative L2\ndifference from the exact-term run", True,
     "closure: fields equal to the exact-term run's at every step (relative L2 0)"))


def plot_coupling(ds, stem, name, who, nrep, step, time, written):
    """One panel per series the run recorded (finite somewhere); a series 0 at every step (replicas that agree, a
    closure run whose fields equal the exact-term run's) has nothing to draw on its axis: the title says it instead."""
    panels, zero, recorded = [], [], set()
    for v, label, log, what in COUPLING_PANELS:
        if v not in ds.variables or (v == "churn" and nrep < 2) or \
                (v == "closure_drift" and "closure_error" not in recorded):  # the drift goes with the closure's error
            continue
        a = var(ds, "churn_10" if v == "churn" else v)  # churn_10 >= churn_50 >= churn: the widest
        a = a[:, 1:] if v == "churn" else a[:, :1] if v == "closure_drift" else a  # the replicas its panel draws
        a = a[np.isfinite(a)]
        if a.size:
            recorded.add(v)
            if np.any(a > 0):
                panels.append((v, label, log))
            else:
                zero.append(what)
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
    sub = "".join("\n" + w for w in zero)
    fig.suptitle(f"{name}{who}: what the network does, per step{sub}", fontsize="medium")
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
    def at(d, s, c):  # replica 0's field c at step st
        return np.asarray(d.variables[c][s.index(st), 0], dtype=float)
    fields = [(c, at(a, sa, c), at(b, sb, c)) for c in comps]
    lims = [np.nanmax(np.abs(fb - fa)) if np.isfinite(fb - fa).any() else 0.0 for _, fa, fb in fields]
    ncol = 3 if any(m > 0 for m in lims) else 2  # a difference 0 everywhere is a blank panel: the titles say it
    fig, axes = plt.subplots(len(comps), ncol, figsize=(4.6 * ncol, 3.9 * len(comps) + 0.9), squeeze=False)
    for row, ((c, fa, fb), lim) in enumerate(zip(fields, lims)):
        e = int(np.floor(np.log10(lim))) if lim > 0 else 0
        lo, hi = min(np.nanmin(fa), np.nanmin(fb)), max(np.nanmax(fa), np.nanmax(fb))
        panels = [(fa, f"{c}: {la}", "viridis", {"vmin": lo, "vmax": hi}, c),
                  (fb, f"{c}: {lb}" + ("\n(equal everywhere: no difference panel)" if lim == 0 else ""),
                   "viridis", {"vmin": lo, "vmax": hi}, c)]
        if lim > 0:
            m = lim / 10.0 ** e
            panels.append(((fb - fa) / 10.0 ** e, f"{c}: {lb} - {la}\n(max |difference| {lim:.2g})", "RdBu_r",
                           {"vmin": -m, "vmax": m}, f"difference of {c}" + (f"  (x 1e{e})" if e else "")))
        elif ncol == 3:
            axes[row][2].remove()
        for ax, (img, title, cmap, kw, cl) in zip(axes[row], panels):
            im = ax.imshow(img, origin="lower", cmap=cmap, interpolation="nearest", **kw)
            fig.colorbar(im, ax=ax, shrink=0.85).set_label(cl, fontsize="small")
            ax.set_title(title, fontsize="small")
            ax.set_xlabel("x (grid points)", fontsize="small")
            ax.set_ylabel("y (grid points)", fontsize="small")
    fig.suptitle(f"replica 0 of two runs at step {st}: {os.path.basename(a_path)} and {os.path.basename(b_path)}" +
                 ("\nthe fields are equal everywhere (difference 0: no difference panels)" if ncol == 2 else ""),
                 fontsize="medium")
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
            panels.append((f[last], f"{c}, replica {last}" + ("" if lim > 0 else "\n(equal to replica 0 everywhere)"),
                           "viridis", None, c))
            if lim > 0:  # another component differs, this one not: no blank difference panel
                panels.append((d / 10.0 ** e, f"{c}: replica {last} - replica 0\n(max |difference| {lim:.2g})",
                               "RdBu_r", lim / 10.0 ** e, f"difference of {c}" + (f"  (x 1e{e})" if e else "")))
            else:
                axes[row][2].remove()
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
    nep = ds.dimensions["epoch"].size
    ep = compare_epochs(ds, labels) if nep else None  # nothing trained in common: no epoch figure
    # every loss equal and no weights flag that changes: no epoch panel holds anything, the steps figure says it
    said = "\ntraining: every loss equal to the reference's (V_s = 0 at every epoch); " + "; ".join(ep["facts"]) \
        if ep and not ep["loss_drawn"] and not ep["varies"] else ""
    curves = [(labels[p], vc[p], rel[p], dig[p]) for p in range(npair)]
    divergence_figure(f"{stem}_steps.png", f"{name}: replica 0 of each file against {ref}, at its snapshots{said}",
                      step, time, curves, var(ds, "first_divergent_step"), "the files", written)
    if ep and not said:
        plot_compare_epochs(ds, stem, name, ref, labels, ep, written)


def compare_epochs(ds, labels):
    """Per pair: |V_s| of the loss, the weights-equal flag (NaN: not compared) and the legend's fact."""
    lvs, weq = np.abs(var(ds, "loss_vs")), var(ds, "weights_equal")
    fde = var(ds, "first_divergent_epoch")
    weq[weq < 0] = np.nan
    facts = []
    for p in range(len(labels)):
        eq = weq[p][np.isfinite(weq[p])]
        state = "weights bitwise equal at every epoch" if eq.size and eq.min() == 1 else \
            "weights differ at every epoch" if eq.size and eq.max() == 0 else \
            f"weights differ from epoch {int(fde[p])}" if np.isfinite(fde[p]) and fde[p] >= 0 else ""
        facts.append(f"{labels[p]}" + (f" ({state})" if state else ""))
    # the flag panel only when some pair's weights change from equal to differing within the run
    varies = any(np.nanmin(weq[p]) != np.nanmax(weq[p]) for p in range(len(labels)) if np.isfinite(weq[p]).any())
    return dict(lvs=lvs, weq=weq, fde=fde, facts=facts, varies=varies,
                loss_drawn=bool(np.nanmax(np.nan_to_num(lvs, nan=0.0)) > 0))


def plot_compare_epochs(ds, stem, name, ref, labels, ep, written):
    epoch, nep = var(ds, "epoch"), ds.dimensions["epoch"].size
    lvs, weq, loss_drawn, varies = ep["lvs"], ep["weq"], ep["loss_drawn"], ep["varies"]
    fig, axes = plt.subplots(int(loss_drawn) + int(varies), 1, figsize=(9, 2.0 + 2.2 * (loss_drawn + varies)),
                             sharex=True, squeeze=False)
    axes = axes[:, 0]
    lax, fax = (axes[0] if loss_drawn else None), (axes[-1] if varies else None)
    for p, lab in enumerate(ep["facts"]):
        if loss_drawn and not series(lax, epoch, lvs[p], log=True, label=lab, **style(p, nep)):
            lax.plot([], [], label=lab + ": loss V_s = 0", **style(p, nep))
        if varies:
            series(fax, epoch, weq[p], label=labels[p] if loss_drawn else lab, drawstyle="steps-post", **style(p, nep))
    if loss_drawn:
        log_axis(lax, [lvs])
        lax.set_ylabel("loss: |V_s| against\nthe reference")
    if varies:
        fax.set_ylabel("weights bitwise\nequal (1 yes, 0 no)")
        fax.set_yticks([0, 1])
        fax.set_ylim(-0.15, 1.15)
    mark_first_divergence(axes, ep["fde"], [f"C{p}" for p in range(len(labels))])
    for ax in axes:
        ax.grid(True, alpha=0.3)
    legend(axes[0], loc="lower right")
    axes[-1].set_xlabel("epoch")
    sub = "" if loss_drawn else "\nevery loss equal to the reference's (V_s = 0 at every epoch)"
    fig.suptitle(f"{name}: training of each file against {ref}, per epoch{sub}\n"
                 "(dotted: first epoch whose weights differ)", fontsize="medium")
    save(fig, f"{stem}_epochs.png", written)
