#!/usr/bin/python3
"""scripts/report_table.py: tables from miniapp -report YAML files.

  report_table.py sweep DIR [--deck NAME] [--command CMD] [--out FILE]
      DIR holds <variant>.r<k>.yaml (scripts/sweep.sh): one row per variant,
      ratios to the atomic build per half and for the whole loop, targets.
  report_table.py scaling DIR --mode strong|weak [--deck NAME] [--command CMD] [--out FILE]
      DIR holds np<R>-t<T>.r<k>.yaml (scripts/scaling.sh): one row per
      ranks x threads configuration, parallel efficiency, state hash vs 1x1.
  report_table.py grid FILE
      prints the report's problem grid as "M N".
  report_table.py submission DIR [--command CMD] [--system NAME] [--out FILE]   (report_submission.py)
      DIR holds r<k>.yaml, the repeats of one deck (scripts/benchmark.sh):
      one submission (YAML: the deck, whether every repeat was VALID and
      official, the FOM's mean, min, max and coefficient of variation, the
      time per step likewise, the distinct state hashes, the machine and
      build of the first repeat) on stdout and in FILE, and a Markdown table
      in FILE.md.
  report_table.py merge SUBMISSION.yaml... [--out FILE]
      one Markdown table of several machines' submissions.

Every time is the minimum over the VALID repeats (the least disturbed run),
the FOM the maximum. The table goes to stdout and, with --out, to FILE (Markdown).
See docs/sweep.md.
"""
import argparse
import os
import re

from report_common import Runs, check_out, collect, die, emit, fmt, fx, get, header, load, ratio, table

STRATEGIES = ("atomic", "deterministic", "reproducible")
# end-to-end targets: the whole loop of the X build over the atomic build
TARGETS = {"deterministic": 1.05, "reproducible": 1.25}
# the reproducible loop over the fastest of the atomic and deterministic builds
FASTEST_TARGET = 1.10
# the sweep's seven variants: (name, solver half, surrogate half)
VARIANTS = [
    ("atomic", "atomic", "atomic"),
    ("deterministic", "deterministic", "deterministic"),
    ("reproducible", "reproducible", "reproducible"),
    ("deterministic-atomic", "deterministic", "atomic"),
    ("reproducible-atomic", "reproducible", "atomic"),
    ("atomic-deterministic", "atomic", "deterministic"),
    ("atomic-reproducible", "atomic", "reproducible"),
]


def verdict(r, target, lo=None, hi=None):
    """met / MISSED on the ratio of minimum times; with repeats, the range
    [lo, hi] of the ratio over any pairing of repeats (fastest variant run
    against slowest atomic run, and back): when it straddles the target the
    repeats cannot tell, and the verdict says "within noise"."""
    if r is None:
        return "n/a"
    if lo is not None and hi is not None and lo <= target < hi:
        return "within noise (%.3fx..%.3fx)" % (lo, hi)
    return "met" if r <= target else "MISSED"


def round_ratios(x, b, pick):
    """The ratio pick(x) / pick(b) of each round both ran: sweep.sh runs a
    round's variants one after another, so a round's pair shares the
    machine's state (a busy host slows both) where the minima of the
    repeats may come from different phases."""
    out = []
    for k in sorted(set(x.rounds) & set(b.rounds)):
        r = ratio(pick(Runs([x.rounds[k]])), pick(Runs([b.rounds[k]])))
        if r is not None:
            out.append(r)
    return out


def same_setup(directory, runs, ref, keys, ref_name, what):
    """Die unless the keys of every report match runs[ref]'s first report (a
    ratio between different problems or builds is no reading): "F: KEY is X,
    REF_NAME Y: not the same what(KEY)". Returns {variant: "S/T"} for the
    sweep variants some of whose reports come from another build than their
    name says (a test's stand-in, or a misplaced -bin): their ratios mean
    nothing and get no verdict."""
    want = {n: (sol, sur) for n, sol, sur in VARIANTS}
    first, other = runs[ref].first, {}
    for name in runs:
        for k, r in sorted(runs[name].rounds.items()):
            f = os.path.join(directory, "%s.r%d.yaml" % (name, k))
            b = (get(r, "build.solver_reduction"), get(r, "build.surrogate_reduction"))
            if name in want and None not in b and b != want[name]:
                other[name] = "%s/%s" % b
            for key in keys:
                if get(r, key) != get(first, key):
                    die("%s: %s is %s, %s %s: not the same %s" % (f, key, get(r, key), ref_name, get(first, key), what(key)))
    return other


def sweep(args):
    runs = collect(args.dir, r"([a-z]+(?:-[a-z]+)?)")
    if "atomic" not in runs:
        die("%s: no report of the atomic build (atomic.r<k>.yaml)" % args.dir)
    other = same_setup(args.dir, runs, "atomic", ("problem.scenario", "problem.grid", "problem.steps", "problem.replicas", "problem.coupling", "machine.ranks", "machine.threads"),
                       "atomic.r%d.yaml's" % min(runs["atomic"].rounds), lambda key: "run")
    # times, ratios and verdicts from the VALID repeats (all repeats, and no verdict, where none is VALID)
    q = {name: x.quoted() for name, x in runs.items()}
    ok = {name: x.valid() is not None and name not in other for name, x in runs.items()}
    base = q["atomic"]
    b_solve, b_surr, b_loop = base.solve_per_step(), base.surrogate(), base.t("time_per_step")
    counts = sorted({len(x.reports) for x in q.values()})
    nrep = "%d" % counts[0] if len(counts) == 1 else "%d to %d" % (counts[0], counts[-1])
    dropped = sum(len(runs[n].reports) - len(q[n].reports) for n in runs)

    def why(name):
        return "%s INVALID" % name if name not in other else "%s built %s" % (name, other[name])

    def bad(name):
        return "" if ok[name] and ok["atomic"] else " (%s)" % why("atomic" if not ok["atomic"] else name)

    rows, summary = [], []
    for name, sol, sur in VARIANTS:
        if name not in runs:
            continue
        x = q[name]
        r_sol = ratio(x.solve_per_step(), b_solve) if sur == "atomic" else None
        r_sur = ratio(x.surrogate(), b_surr) if sol == "atomic" else None
        r_tot = ratio(x.t("time_per_step"), b_loop) if sol == sur else None  # the loop's own work (FOM basis)
        tgt = TARGETS.get(sol) if sol == sur else None  # None for atomic
        xv, bv = x.tvals("time_per_step"), base.tvals("time_per_step")
        lo = min(xv) / max(bv) if xv and bv and max(bv) > 0 else None
        hi = max(xv) / min(bv) if xv and bv and min(bv) > 0 else None
        rows.append([name, sol, sur, fmt(x.t("time_per_step")), fmt(x.fom()), runs[name].verification(),
                     fmt(x.solve_per_step()), fx(r_sol) if sur == "atomic" else "",
                     fmt(x.surrogate()), fx(r_sur) if sol == "atomic" else "",
                     fmt(x.t("total")), fx(r_tot) if sol == sur else "",
                     fmt(None if x.spread() is None else 100 * x.spread(), "%.1f%%", "")])
        if sol != "atomic" and sur == "atomic":
            summary.append(("solver half", sol, name, r_sol, None, None, None))
        if sur != "atomic" and sol == "atomic":
            summary.append(("surrogate half", sur, name, r_sur, None, None, None))
        if sol == sur and sol != "atomic":
            summary.append(("whole loop", sol, name, r_tot, tgt, lo, hi))
    out = header("Cost of determinism", base, args,
                 ["- runs: %s rank(s) x %s thread(s); every time is the minimum of %s repeat(s) of its variant, rounds interleaved%s" % (
                     get(base.first, "machine.ranks"), get(base.first, "machine.threads"), nrep,
                     "; %d INVALID repeat(s) left out of the times and ratios" % dropped if dropped else "")],
                 [r for x in runs.values() for r in x.reports])
    out += table(["variant", "solver", "surrogate", "time/step [s]", "FOM [%s]" % (get(base.first, "fom.unit") or "Mpoint-steps/s"),
                  "verification", "solve/step [s]", "solver ratio", "train+predict [s]", "surrogate ratio",
                  "total [s]", "loop ratio", "spread"], rows)
    order = {"solver half": 0, "surrogate half": 1, "whole loop": 2}
    summary.sort(key=lambda s: (order[s[0]], STRATEGIES.index(s[1])))
    verdicts = {}
    for p, st, v, r, t, lo, hi in summary:
        if t:
            verdicts[st] = "n/a%s" % bad(v) if bad(v) else verdict(r, t, lo, hi)
    out += ["", "Ratios to the atomic build (time of the variant / time of `atomic`; < 1 is faster):", ""]
    out += table(["part", "strategy", "variant", "ratio", "target", "verdict"],
                 [[p, st, v, fx(r) + bad(v), "<= %.2fx" % t if t else "", verdicts[st] if t else ""] for p, st, v, r, t, lo, hi in summary])
    # against the fastest of the two non-reproducible builds, per part: on a CPU the atomic build's solver is
    # the slow one (its operator scatter-adds with OpenMP atomics, docs/sweep.md), so atomic alone flatters
    fast, fast_verdict = [], None
    for part, pick, cands, targets in (("solver half", lambda x: x.solve_per_step(), ("atomic", "deterministic-atomic"), ("deterministic-atomic", "reproducible-atomic")),
                                       ("surrogate half", lambda x: x.surrogate(), ("atomic", "atomic-deterministic"), ("atomic-deterministic", "atomic-reproducible")),
                                       ("whole loop", lambda x: x.t("time_per_step"), ("atomic", "deterministic"), ("deterministic", "reproducible"))):
        have = [(pick(q[c]), c) for c in cands if c in runs and ok[c] and pick(q[c])]
        lack = [why(c) if c in runs else c + " not run" for c in cands if c not in runs or not ok[c]]
        if not have:
            if part == "whole loop" and "reproducible" in runs:
                fast_verdict = "target: reproducible <= %.2fx the fastest build end to end: n/a (%s)" % (FASTEST_TARGET, ", ".join(lack))
            continue
        best, who = min(have)
        for v in targets:
            if v not in runs or not pick(q[v]):
                continue
            # the ratio of the minima over the rounds both ran (with VALID runs), and those rounds' own ratios
            common = sorted(set(q[v].rounds) & set(q[who].rounds)) if v != who else []
            if common:
                xr, br = Runs([q[v].rounds[k] for k in common]), Runs([q[who].rounds[k] for k in common])
                r, rr = ratio(pick(xr), pick(br)), round_ratios(q[v], q[who], pick)
            else:
                r, rr = ratio(pick(q[v]), best), []
            span = "%.3fx..%.3fx" % (min(rr), max(rr)) if len(rr) > 1 else ""
            tgt = FASTEST_TARGET if (part, v) == ("whole loop", "reproducible") else None
            if not tgt:
                vd = ""
            elif not ok[v]:
                vd = "n/a (%s)" % why(v)
            elif lack:
                vd = "n/a (%s)" % ", ".join(lack)
            else:
                vd = verdict(r, tgt, min(rr), max(rr)) if len(rr) > 1 else verdict(r, tgt)
            who_s = who + ("; %s" % ", ".join(lack) if lack else "")
            fast.append([part, v, who_s, fx(r) + (" (%s)" % why(v) if not ok[v] else ""), span, "<= %.2fx" % tgt if tgt else "", vd])
            if tgt:
                fast_verdict = "target: reproducible <= %.2fx the fastest build (%s) end to end: %s (%s; rounds %s%s)" % (
                    tgt, who_s, vd, fx(r), span or "n/a", "" if not common else ", %d paired" % len(common))
    if fast:
        out += ["", "Ratios to the fastest of atomic and deterministic, per part (ratio of the minima over the rounds both",
                "ran; then the range of the ratios of the runs of one round, which ran one after the other: when it",
                "straddles the target, the machine's noise cannot tell):", ""]
        out += table(["part", "variant", "fastest", "ratio", "per round", "target", "verdict"], fast)
    missing = [n for n, _, _ in VARIANTS if n not in runs]
    if missing:
        out += ["", "Not run: " + ", ".join(missing)]
    if other:
        out += ["", "Not the build their names say (their ratios mean nothing): " + ", ".join(
            "%s (built %s)" % (n, b) for n, b in sorted(other.items()))]
    emit(out, args)
    for st, t in TARGETS.items():
        x = next((x for x in summary if x[0] == "whole loop" and x[1] == st), None)
        print("target: %s <= %.2fx atomic end to end: %s (%s)" % (st, t, verdicts.get(st, "n/a"), fx(x[3] if x else None)))
    if fast_verdict:
        print(fast_verdict)


def scaling(args):
    runs = collect(args.dir, r"(np\d+-t\d+)")
    if not runs:
        die("%s: no reports np<R>-t<T>.r<k>.yaml" % args.dir)
    conf = {k: tuple(int(v) for v in re.findall(r"\d+", k)) for k in runs}
    keys = sorted(runs, key=lambda k: (conf[k][0] * conf[k][1], conf[k][0]))
    if "np1-t1" not in runs:
        die("%s: no 1 x 1 run (np1-t1.r<k>.yaml)" % args.dir)
    same_setup(args.dir, runs, "np1-t1", ("build.solver_reduction", "build.surrogate_reduction") + (  # one build; in strong scaling one problem too
        ("problem.scenario", "problem.grid", "problem.steps", "problem.replicas") if args.mode == "strong" else ()),
        "the 1 x 1 run's", lambda key: key.split(".")[0])
    full = runs
    runs = {k: x.quoted() for k, x in runs.items()}  # times from the VALID repeats where there are any
    base = runs["np1-t1"]
    t1, h1 = base.t("time_per_step"), base.hashes()
    b = base.first.get("build") or {}
    promised = b.get("solver_reduction") == "reproducible" and b.get("surrogate_reduction") == "reproducible"
    rows = []
    for k in keys:
        x = runs[k]
        R, T = conf[k]
        tp = x.t("time_per_step")
        eff = ratio(t1, tp * (R * T if args.mode == "strong" else 1)) if tp else None
        if args.mode == "weak" and k != "np1-t1":
            same = "n/a (grid differs)"
        elif not h1 or not x.hashes():
            same = "n/a (no state_hash)"
        else:
            same = "yes" if x.hashes() == h1 and len(h1) == 1 else ("NO" if promised else "no")
        rows.append([R, T, "x".join(str(g) for g in get(x.first, "problem.grid") or []) or "n/a",
                     fmt(tp), fmt(x.fom()), fmt(None if eff is None else 100 * eff, "%.0f%%"),
                     full[k].verification(), same])
    counts = sorted({len(r.reports) for r in runs.values()})
    out = header("%s scaling" % args.mode.capitalize(), base, args, [
        "- variant: solver %s, surrogate %s; every time is the minimum of %s VALID repeat(s) (all repeats where none is VALID)" % (
            b.get("solver_reduction"), b.get("surrogate_reduction"), "%d" % counts[0] if len(counts) == 1 else "%d to %d" % (counts[0], counts[-1])),
        "- efficiency: %s" % ("T(1x1) / (ranks x threads x T)" if args.mode == "strong" else
                              "T(1x1) / T, grid grown with ranks x threads (x doubled, then y)"),
        "- state hash = 1x1: the final state's bits equal the 1 x 1 run's (%s)" % (
            "promised by this build" if promised else "promised only by the reproducible build")])
    out += table(["ranks", "threads", "grid", "time/step [s]", "FOM [%s]" % (get(base.first, "fom.unit") or "Mpoint-steps/s"),
                  "efficiency", "verification", "state hash = 1x1"], rows)
    emit(out, args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["sweep", "scaling", "grid", "submission", "merge"])
    ap.add_argument("dir", help="directory of reports (sweep, scaling, submission), one report (grid) or the first submission (merge)")
    ap.add_argument("more", nargs="*", help="merge: further submissions")
    ap.add_argument("--mode", choices=["strong", "weak"], default="strong")
    ap.add_argument("--deck", default="")
    ap.add_argument("--command", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--system", default="", help="submission: the system's name (default: the report's hostname)")
    ap.add_argument("--min-seconds", type=float, default=0.0, help="submission: the deck's minimum timed duration (run rules)")
    args = ap.parse_args()
    check_out(args)
    if args.what == "grid":
        g = get(load(args.dir), "problem.grid")
        if not g or len(g) != 2:
            die("%s: no problem.grid [M, N]" % args.dir)
        print(int(g[0]), int(g[1]))
    elif args.what == "sweep":
        sweep(args)
    elif args.what in ("submission", "merge"):
        import report_submission  # scripts/report_submission.py: the benchmark's submissions
        getattr(report_submission, args.what)(args)
    else:
        scaling(args)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # a file that cannot be read: one line, no traceback
        die("%s%s" % (e.filename + ": " if e.filename else "", e.strerror or e))
    except RecursionError:  # a value nested thousands deep
        die("malformed input: a report or submission nested too deep")
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError) as e:  # a key of an unforeseen type
        die("malformed input: a report or submission holds a value of the wrong type (%s: %s)" % (type(e).__name__, e))
