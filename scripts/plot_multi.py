"""scripts/plot_multi.py: figures over several runs or reports: --overlay
(with the growth fit), --phases, --scaling and --sweep (scripts/plot.py)."""
from plot_common import *  # noqa: F401,F403 (numpy, matplotlib and the shared helpers)

# ---- --overlay: several runs' replica 1 against replica 0 on one axes --------

SATURATION, GROWTH_POINTS, GROWTH_DECADES, GROWTH_STEADY, GROWTH_SPREAD = 1e-2, 8, 2.0, 2.0, 1.0  # metrics.h
GROWTH_WHY = ("too few points", "rises under 2 decades", "rate not steady", "points off its line")


def _judge(x, y):
    """metrics.c's judge(): how far the window (x, y = log10 rel) gets through
    the conditions (0 too short .. 4 one exponential), with its line."""
    if len(x) < GROWTH_POINTS or not x[-1] > x[0]:
        return 0, None
    xm, h = 0.5 * (x[0] + x[-1]), 0.5 * (x[-1] - x[0])
    u = (x - xm) / h
    u2 = u * u
    s0, s1, s2, s3, s4 = float(len(u)), u.sum(), u2.sum(), (u2 * u).sum(), (u2 * u2).sum()
    t0, t1, t2 = y.sum(), (u * y).sum(), (u2 * y).sum()
    dl = s0 * s2 - s1 * s1
    if not dl > 0:
        return 0, None
    c1 = (s0 * t1 - s1 * t0) / dl
    c0 = (t0 - c1 * s1) / s0
    if not 2 * c1 >= GROWTH_DECADES:  # the rise along the line
        return 1, None
    a = np.array([[s0, s1, s2], [s1, s2, s3], [s2, s3, s4]])
    q = np.linalg.solve(a, np.array([t0, t1, t2]))  # the parabola's coefficients
    e0, e1 = q[1] - 2 * q[2], q[1] + 2 * q[2]  # its slopes at the two ends
    if not (min(e0, e1) > 0 and max(e0, e1) <= GROWTH_STEADY * min(e0, e1)):
        return 2, None
    if not np.all(np.abs(y - (c0 + c1 * u)) <= GROWTH_SPREAD):
        return 3, None
    rate = c1 / h
    return 4, (rate, c0 - rate * xm)


def growth_window(step, rel, floor=0.0):
    """The growth rate of miniapp's summary and miniapp-compare (metrics_growth
    in miniapp/io/metrics.c, the one definition; docs/metrics.md): the
    least-squares line of log10(rel_l2) against the step over the longest
    window that ends where the record ends (before its first point at 1e-2 or
    not finite), holds no point below floor, has 8 points, rises 2 decades
    along its line, grows steadily (the parabola's end slopes positive and
    within a factor 2) and keeps every point within a decade of its line.
    Returns ((slope per step, intercept, first step, last step), None), or
    (None, why) when no window qualifies."""
    step, rel = np.asarray(step, dtype=float), np.asarray(rel, dtype=float)
    n, i = len(rel), 0
    while i < n and not (np.isfinite(rel[i]) and rel[i] > 0):
        i += 1
    if i == n:
        return None, "no difference"
    first, end = n, i
    while end < n and np.isfinite(rel[end]) and rel[end] < SATURATION:
        if rel[end] < floor:
            first = n  # the window holds no point below the floor
        elif first == n and rel[end] > 0:
            first = end
        end += 1
    if end == i:
        return None, "saturated"
    if first == n:
        return None, "below the floor"  # its last points, at least
    keep = np.arange(n)[first:end]
    keep = keep[rel[keep] > 0]
    x, y = step[keep], np.log10(rel[keep])
    best = 0
    for a in range(0, len(x) - GROWTH_POINTS + 1):  # the longest window first
        v, line = _judge(x[a:], y[a:])
        best = max(best, v)
        if line:
            return (line[0], line[1], float(x[a]), float(x[-1])), None
    return None, GROWTH_WHY[best]


def growth_fit(step, rel, floor=0.0):
    """growth_window's line, or None."""
    return growth_window(step, rel, floor)[0]


def growth_floor(ds):
    """The floor the summary uses for this run file: the Krylov relative
    tolerance of a run coupled through a learned guess (its `settings`
    attribute, `ksp_tolerances: rtol ...`), else 0."""
    if attr(ds, "coupling") != "guess":
        return 0.0
    m = re.search(r"ksp_tolerances: *([0-9.eE+-]+)", attr(ds, "settings") or "")
    return float(m.group(1)) if m else 1e-10  # files without it: the solver's default rtol


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
                         fds=var(ds, "first_divergent_step")[1], floor=growth_floor(ds)))
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
        r["fit"], r["why"] = (None, "no difference") if r["equal"] else growth_window(r["step"], r["rel"], r["floor"])
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
    # every run bitwise equal: relative L2 is 0 throughout, nothing on a log axis; said here instead of drawn
    none = all(r["equal"] for r in runs)
    ax.set_title("Digits of agreement of two replicas, per step, one line per run" +
                 ("\nevery run's replicas bitwise equal at every step (relative L2 = 0: no overlay_rel_l2.png)"
                  if none else ""),
                 fontsize="medium")
    save(fig, os.path.join(outdir, "overlay_digits.png"), written)
    if none:
        print("\n".join(written))
        return

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
        else:  # no exponential window: no forecast either
            lab += f": growth not measurable ({r['why']})"
        series(ax, r["step"], r["rel"], log=True, label=lab, **kw)
        vals.append(r["rel"])
    log_axis(ax, vals)
    ax.axhline(DIVERGED, color="0.5", linewidth=0.8, linestyle="--", zorder=1)
    ax.set_xlim(right=xmax * 1.02)
    measured = max(np.nanmax(r["step"]) for r in runs)
    if xmax > measured * 1.05:
        ax.axvspan(measured, xmax * 1.02, color="0.92", zorder=0)
        ax.text(measured, 0.98, "  extrapolated (dotted: the line fitted over each run's exponential window)",
                fontsize="x-small",
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
        import report_common as rc
    except ImportError as e:
        fail(f"{e} (needs PyYAML: apt-get install python3-yaml)")
    rc.die = fail
    return rc, [rc.load(p) for p in paths]


def phases(paths, labels, outdir, list_only=False):
    """Where each run's time goes, per step: one stacked bar per -report file (timing section)."""
    rc, reps = load_reports(paths)
    rows = []
    for p, r in zip(paths, reps):
        steps = rc.timed_steps(r)  # the steps the times cover
        t = {k: rc.num(rc.get(r, "timing." + k)) for k, _ in PHASES}
        if not steps or any(v is None for k, v in t.items() if k not in ("baselines",)):
            fail(f"{p}: not a report with timing.solve .. timing.output and problem.steps (miniapp -report)")
        b = rc.get(r, "build") or {}
        rows.append((f"{b.get('solver_reduction')}/{b.get('surrogate_reduction')}" if b else os.path.basename(p), steps, t))
    if labels:
        if len(labels) != len(rows):
            fail(f"--labels has {len(labels)} labels for {len(rows)} reports")
        rows = [(lab, st, t) for lab, (_, st, t) in zip(labels, rows)]
    else:  # two runs of one build: their file names tell them apart
        names = [lab for lab, _, _ in rows]
        rows = [(f"{lab} ({os.path.basename(p)})" if names.count(lab) > 1 else lab, st, t)
                for p, (lab, st, t) in zip(paths, rows)]
    if list_only:
        print("\n".join(lab for lab, _, _ in rows))
        return
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
    rc, _ = load_reports([])
    if not os.path.isdir(d):
        fail(f"{d}: not a directory (scripts/scaling.sh writes out/scaling/<deck>-<mode>/)")
    runs = rc.collect(d, r"(np\d+-t\d+)")
    if "np1-t1" not in runs:
        fail(f"{d}: no 1 x 1 run (np1-t1.r<k>.yaml, written by scripts/scaling.sh)")
    g1 = rc.get(runs["np1-t1"].reports[0], "problem.grid")  # weak scaling grows the grid with the cores (the folder may be renamed)
    weak = any(rc.get(x, "problem.grid") != g1 for r in runs.values() for x in r.reports) or d.rstrip("/").endswith("-weak")
    t1 = runs["np1-t1"].quoted().t("time_per_step")  # as the table: the VALID repeats
    pts = []
    for k, r in runs.items():
        R, T = (int(v) for v in re.findall(r"\d+", k))
        tp = r.quoted().t("time_per_step")
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
        import report_common as rc
        import report_table as rt
    except ImportError as e:
        fail(f"{e} (--sweep needs PyYAML: apt-get install python3-yaml)")
    rc.die = rt.die = fail  # their errors as plot.py's one line
    d = sweep_path if os.path.isdir(sweep_path) else os.path.dirname(sweep_path) or "."
    if not os.path.exists(sweep_path):
        fail(f"{sweep_path}: no such file or directory")
    runs = rc.collect(d, r"([a-z]+(?:-[a-z]+)?)")
    if not runs:  # named as given: a file's folder ("." for a.nc) is not what the user typed
        where = sweep_path if os.path.isdir(sweep_path) else f"{sweep_path} (its folder {d})"
        fail(f"{where}: no sweep reports (<variant>.r<k>.yaml, written by scripts/sweep.sh)")
    if "atomic" not in runs:
        fail(f"{d}: no report of the atomic build (atomic.r<k>.yaml)")
    base = runs["atomic"].quoted()  # as the table: the VALID repeats (all where none is)
    other = rt.same_setup(d, runs, "atomic", (), "", str)  # variants run from another build than their name says: no verdict

    def per_step(r):
        return rc.ratio(rc.num(rc.get(r, "timing.solve")), rc.timed_steps(r))

    def surr(r):
        tr, pr = rc.num(rc.get(r, "timing.train")), rc.num(rc.get(r, "timing.predict"))
        return tr + pr if tr is not None and pr is not None and tr + pr > 0 else None

    def loop(r):
        return rc.num(rc.get(r, "timing.time_per_step"))

    parts = [("solver half", "PETSc Krylov solves", per_step, lambda sol, sur, s: sol == s and sur == "atomic"),
             ("surrogate half", "training + inference", surr, lambda sol, sur, s: sur == s and sol == "atomic"),
             ("whole loop", "time per step", loop, lambda sol, sur, s: sol == s and sur == s)]
    bars = []  # (part, strategy, variant, ratio, lo, hi, target, verdict, valid)
    for part, _, f, match in parts:
        bv = [v for v in map(f, base.reports) if v is not None]
        for s in ("deterministic", "reproducible"):
            name = next((n for n, sol, sur in rt.VARIANTS if match(sol, sur, s)), None)
            x = runs[name].quoted() if name in runs else None
            xv = [v for v in map(f, x.reports) if v is not None] if x else []
            if not xv or not bv:
                bars.append((part, s, name, None, None, None, None, "not run" if not x else "n/a", True))
                continue
            r = min(xv) / min(bv)
            lo, hi = (min(xv) / max(bv), max(xv) / min(bv)) if len(xv) > 1 or len(bv) > 1 else (None, None)
            tgt = rt.TARGETS.get(s) if part == "whole loop" else None
            ok = runs[name].valid() is not None and runs["atomic"].valid() is not None and name not in other and "atomic" not in other
            bars.append((part, s, name, r, lo, hi, tgt, (rt.verdict(r, tgt, lo, hi) if ok else "n/a (INVALID or another build)") if tgt else "",
                         runs[name].verification() == "VALID"))
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
    grid = "x".join(str(g) for g in rc.get(first, "problem.grid") or []) or "?"
    spread = "error bars: fastest against slowest repeat, both ways" if reps > 1 else "one repeat: no error bars"
    ax.set_title(f"Cost of determinism: {deck} ({rc.get(first, 'problem.scenario')} {grid}, "
                 f"{rc.get(first, 'problem.steps')} steps, coupling {rc.get(first, 'problem.coupling')})\n"
                 f"{rc.get(first, 'machine.ranks')} rank(s) x {rc.get(first, 'machine.threads')} thread(s), "
                 f"{rc.get(first, 'machine.hostname') or ''}; best of {reps} repeat(s); {spread}", fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    written = []
    save(fig, os.path.join(outdir, "cost_of_determinism.png"), written)
    print("\n".join(written))


# ---- command line ------------------------------------------------------------
