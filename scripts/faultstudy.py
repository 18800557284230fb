#!/usr/bin/env python3
"""scripts/faultstudy.py: the fault-detection study of docs/faults.md.

  faultstudy.py detect BUILD_DIR [--trials K] [--out FILE.csv] [--jobs J]
      For every injection site and every bit position, K seeded flips (random
      entry) into one replica of a small deck, with the ABFT checks on and
      replicas beside it (2 in ordered builds; 3 in atomic ones, whose third
      gives the fault-free FPNA spread). Writes one CSV row per run and prints
      a Markdown table: detection rate by bit range, per detector, and (atomic)
      the smallest bit that stands out of the noise.
  faultstudy.py compare EXACT.csv ATOMIC.csv
      Two detect CSVs side by side (an ordered build's exact replica detector
      and the atomic build's noise detector): detection rate per site and bit
      range with its 95% Wilson interval; a row where the atomic detector
      beats the exact one beyond both intervals is flagged (and the exit
      status is 1): a noisy detector cannot see more than an exact one.
  faultstudy.py overhead BUILD_DIR [--reps N]
      The cost of the checks: the same runs with and without -fault_checks,
      interleaved, best of N each; prints the ratio of the run times.
  faultstudy.py falsealarms BUILD_DIR [--steps N]
      Long fault-free runs (solver alone and guess coupling) with the checks
      on: alarms and the worst check ratio (how close rounding came).

Needs Python 3 with PyYAML (Debian: python3-yaml)."""
import argparse
import concurrent.futures
import csv
import os
import subprocess
import sys
import tempfile
import time

import yaml

SOLVER_SITES = ["state", "iterate", "operator"]
SURR_SITES = ["gradient", "weight", "activation"]
DECK = ["-scenario", "grayscott", "-da_grid_x", "32", "-da_grid_y", "32", "-ts_max_steps", "40"]
GUESS = ["-coupling", "guess", "-coupling_baselines", "0", "-train_epochs", "2"]
STEP, EPOCH = 10, 16  # when the fault strikes (step 10 produces state 10; epoch 16 is during step 9)
BIT_RANGES = {64: [(0, 25), (26, 43), (44, 51), (52, 62), (63, 63)], 32: [(0, 11), (12, 19), (20, 22), (23, 30), (31, 31)]}


def run(app, args, tmp):
    out = os.path.join(tmp, "s.yaml")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([app] + args + ["-summary", out], capture_output=True, text=True)
    wrecked = "not finite" in p.stderr or "10 rollbacks" in p.stderr  # the run's own guards stopped it
    if p.returncode not in (0, 2) and not wrecked:
        sys.exit(f"faultstudy: {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    if p.returncode not in (0, 2):  # a flip that wrecks the solve or the training: stopped by the run's own guards
        return {"crashed": True}
    with open(out) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    s = docs[-1]
    s["crashed"] = False
    return s


def strategy(build):
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        sys.exit(f"faultstudy: {build}: no CMakeCache.txt (not a build directory of this project: scripts/setup.sh makes build/<strategy>)")
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("MINIAPP_SOLVER_REDUCTION:"):
                return line.strip().split("=")[1]
    return "unknown"


def in_order(fn, items, jobs):
    """fn over items, at most jobs at a time, the results in the items' order. A
    failure (fn raises, e.g. run's sys.exit) starts nothing more: the runs already
    going finish (at most jobs - 1), then it is raised."""
    results, running, todo = [None] * len(items), {}, iter(enumerate(items))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        def start_next():
            for i, x in todo:
                running[pool.submit(fn, x)] = i
                return

        for _ in range(jobs):
            start_next()
        while running:
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in done:
                results[running.pop(f)] = f.result()
                start_next()
    return results


def detect(a):
    if a.jobs < 1 or a.trials < 1:
        sys.exit(f"faultstudy: --jobs {a.jobs} --trials {a.trials}: each must be at least 1")
    app = os.path.join(a.build, "miniapp", "miniapp")
    st = strategy(a.build)
    atomic = st == "atomic"
    nrep = 3 if atomic else 2
    seed = ["-atomic_order_seed", str(a.seed)] if atomic else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for site in a.sites.split(","):
            solver = site in SOLVER_SITES
            nbits = 64 if solver else 32
            base = DECK + seed + ["-replicas", str(nrep), "-fault_checks"] + ([] if solver else GUESS)
            when = f"step={STEP}" if solver else f"epoch={EPOCH}"
            extra = ",call=3" if site in ("iterate", "operator") else (",call=1" if site == "activation" else "")
            todo = [(bit, t) for bit in (range(nbits) if a.bits is None else [b for b in a.bits if b < nbits]) for t in range(a.trials)]

            def one(job):  # each run in its own folder, so that --jobs runs them side by side
                bit, t = job
                return run(app, base + ["-inject", f"site={site},{when},bit={bit},entry=random,seed={t + 1}{extra}"], tempfile.mkdtemp(dir=tmp))

            done = in_order(one, todo, a.jobs)  # the rows do not depend on --jobs
            for (bit, t), s in zip(todo, done):
                f = s.get("fault", {}) if not s["crashed"] else {}
                when_v = STEP if solver else EPOCH

                def lat(key):
                    v = f.get(key)
                    return "" if v is None else v

                rows.append({"build": st, "site": site, "bit": bit, "trial": t, "crashed": int(s["crashed"]),
                             "fired": int(bool(f.get("fired", s["crashed"]))),
                             "old": f.get("old_value", ""), "new": f.get("new_value", ""),
                             "checksum_step": lat("detected_by_checksum_step"),
                             "replicas_step": lat("detected_by_replicas_step"), "replicas_epoch": lat("detected_by_replicas_epoch"),
                             "noise_step": lat("detected_above_noise_step"), "noise_epoch": lat("detected_above_noise_epoch"),
                             "solvecheck_step": lat("detected_by_solve_check_step"),
                             "false_alarms": f.get("false_alarms", ""), "at": when_v})
            print(f"faultstudy: {st} {site} done", file=sys.stderr)
    if a.out:
        tmp = f"{a.out}.tmp-{os.getpid()}"
        try:
            with open(tmp, "w", newline="") as fo:
                w = csv.DictWriter(fo, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
            os.replace(tmp, a.out)
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            sys.exit(f"faultstudy: --out {a.out}: {e.strerror}")
    table(rows, atomic)


def caught(r, atomic):
    """(checksum, replica detector, solve check) for one run: did each see the fault?"""
    ck = r["checksum_step"] != ""
    if atomic:
        rp = r["noise_step"] != "" or r["noise_epoch"] != ""
    else:
        rp = r["replicas_step"] != "" or r["replicas_epoch"] != ""
    sc = r["solvecheck_step"] != "" or bool(r["crashed"])
    return ck, rp, sc


def wilson(k, n, z=1.96):
    """95% Wilson score interval of a rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / d
    return (max(0.0, c - h), min(1.0, c + h))


def groups(rows):
    """(site, lo, hi, fired runs) per site and bit range."""
    for site in SOLVER_SITES + SURR_SITES:
        rs = [r for r in rows if r["site"] == site]
        nbits = 64 if site in SOLVER_SITES else 32
        for lo, hi in BIT_RANGES[nbits]:
            b = [r for r in rs if lo <= int(r["bit"]) <= hi and int(r["fired"])]
            if b:
                yield site, lo, hi, b


def table(rows, atomic):
    st = rows[0]["build"]
    print(f"\n### {st} build ({'3 replicas: every replica against its nearest other one' if atomic else '2 replicas'}; checks on)\n")
    rep = "above noise" if atomic else "replicas"
    print(f"| site | bits | runs | solve check | checksum | {rep} (95% interval) | any |")
    print("|---|---|---|---|---|---|---|")
    for site, lo, hi, b in groups(rows):
        c = [caught(r, atomic) for r in b]
        n = len(b)
        k = [sum(x[i] for x in c) for i in range(3)]
        ei = sum(any(x) for x in c)
        lo95, hi95 = wilson(k[1], n)
        pct = lambda x: f"{100.0 * x / n:.0f}%"
        print(f"| {site} | {lo}-{hi} | {n} | {pct(k[2])} | {pct(k[0])} | {pct(k[1])} ({100 * lo95:.0f}-{100 * hi95:.0f}%) | {pct(ei)} |")
    for site in SOLVER_SITES + SURR_SITES:
        rs = [r for r in rows if r["site"] == site and int(r["fired"])]
        if not rs:
            continue

        def lowest(pred):
            bits = sorted({int(r["bit"]) for r in rs if pred(r)})
            full = [b for b in bits if all(pred(r) for r in rs if int(r["bit"]) >= b)]
            return (bits[0] if bits else None, full[0] if full else None)
        ck = lowest(lambda r: caught(r, atomic)[0])
        rp = lowest(lambda r: caught(r, atomic)[1])
        print(f"- {site}: lowest bit caught by the checksum {ck[0]}, every bit from {ck[1]} on; by {rep}: {rp[0]} / {rp[1]}")


def load(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"faultstudy: {path}: {e.strerror}")
    if not rows or "site" not in rows[0] or "solvecheck_step" not in rows[0]:
        sys.exit(f"faultstudy: {path}: not a CSV written by 'faultstudy.py detect --out'")
    return rows


def compare(a):
    exact, noisy = load(a.exact), load(a.atomic)
    if noisy[0]["build"] != "atomic" or exact[0]["build"] == "atomic":
        sys.exit("faultstudy: compare EXACT.csv ATOMIC.csv: the first from a deterministic or reproducible build, the second from the atomic one")
    ge = {(s, lo): b for s, lo, hi, b in groups(exact)}
    bad = 0
    print(f"| site | bits | exact replicas: rate (95% interval), runs | atomic above noise: rate (95% interval), runs | atomic beyond exact? |")
    print("|---|---|---|---|---|")
    for site, lo, hi, b in groups(noisy):
        e = ge.get((site, lo))
        if not e:
            continue
        ke, kn = sum(caught(r, False)[1] for r in e), sum(caught(r, True)[1] for r in b)
        ie, iN = wilson(ke, len(e)), wilson(kn, len(b))
        beyond = iN[0] > ie[1]  # the atomic interval lies wholly above the exact one
        bad += beyond
        print(f"| {site} | {lo}-{hi} | {100 * ke / len(e):.0f}% ({100 * ie[0]:.0f}-{100 * ie[1]:.0f}%), {len(e)} | {100 * kn / len(b):.0f}% ({100 * iN[0]:.0f}-{100 * iN[1]:.0f}%), {len(b)} | {'YES' if beyond else 'no'} |")
    print(f"\nrows where the noisy detector beats the exact one beyond both 95% intervals: {bad}")
    sys.exit(1 if bad else 0)


def overhead(a):
    app = os.path.join(a.build, "miniapp", "miniapp")
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in (("solver (grayscott 128^2, 100 steps)", ["-scenario", "grayscott", "-da_grid_x", "128", "-da_grid_y", "128", "-ts_max_steps", "100"]),
                           ("guess coupling (grayscott 64^2, 60 steps)", ["-scenario", "grayscott", "-da_grid_x", "64", "-da_grid_y", "64", "-ts_max_steps", "60"] + GUESS)):
            best = {False: [], True: []}
            for _ in range(a.reps):
                for on in (False, True):
                    t0 = time.perf_counter()
                    s = run(app, args + (["-fault_checks"] if on else []), tmp)
                    best[on].append(time.perf_counter() - t0)
                    assert s.get("verification") == "VALID", s.get("verification_detail")
            off, on = min(best[False]), min(best[True])
            spread = max(best[True]) / min(best[False])
            print(f"{name}: checks off {off:.3f} s, on {on:.3f} s (best of {a.reps}): ratio {on / off:.3f} (worst/best {spread:.3f})")


def falsealarms(a):
    app = os.path.join(a.build, "miniapp", "miniapp")
    st = strategy(a.build)
    seed = ["-atomic_order_seed", "3"] if st == "atomic" else []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in (("solver", ["-scenario", "grayscott", "-da_grid_x", "64", "-da_grid_y", "64", "-ts_max_steps", str(a.steps)]),
                           ("guess", ["-scenario", "grayscott", "-da_grid_x", "48", "-da_grid_y", "48", "-ts_max_steps", str(a.steps // 4)] + GUESS),
                           ("heat", ["-scenario", "heat", "-da_grid_x", "64", "-da_grid_y", "64", "-ts_max_steps", str(a.steps)])):
            s = run(app, args + seed + ["-replicas", "2", "-fault_checks"], tmp)
            f = s["fault"]
            print(f"| {st} | {name} | {args[-1] if name != 'guess' else a.steps // 4} | {f['operator_checks']} | {f['alarms']} | {f['worst_check_ratio']:.2e} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("detect")
    d.add_argument("build")
    d.add_argument("--trials", type=int, default=3)
    d.add_argument("--seed", type=int, default=3, help="the atomic build's -atomic_order_seed")
    d.add_argument("--out")
    d.add_argument("--jobs", type=int, default=1, help="runs at a time (the results do not depend on it)")
    d.add_argument("--sites", default=",".join(SOLVER_SITES + SURR_SITES))
    d.add_argument("--bits", type=lambda t: [int(x) for x in t.split(",")], help="only these bit positions (a quick check), e.g. 0,30,62")
    o = sub.add_parser("overhead")
    o.add_argument("build")
    o.add_argument("--reps", type=int, default=5)
    c = sub.add_parser("compare")
    c.add_argument("exact")
    c.add_argument("atomic")
    f = sub.add_parser("falsealarms")
    f.add_argument("build")
    f.add_argument("--steps", type=int, default=2000)
    a = p.parse_args()
    if a.cmd == "detect" and a.out:  # the CSV's place, before hours of runs
        d = os.path.dirname(os.path.abspath(a.out))
        if os.path.isdir(a.out) or not os.path.isdir(d) or not os.access(d, os.W_OK | os.X_OK):
            sys.exit(f"faultstudy: --out {a.out}: cannot write a file there")
    if a.cmd == "detect" and not 1 <= a.trials <= 1000:
        sys.exit(f"faultstudy: --trials {a.trials}: must be in [1, 1000]")
    if a.cmd == "detect" and any(x not in SOLVER_SITES + SURR_SITES for x in a.sites.split(",")):
        sys.exit(f"faultstudy: --sites {a.sites}: each must be one of {','.join(SOLVER_SITES + SURR_SITES)}")
    if a.cmd == "detect" and a.bits is not None and not all(0 <= b <= 63 for b in a.bits):
        sys.exit(f"faultstudy: --bits: each must be in [0, 63]")
    if a.cmd == "detect" and a.bits is not None and not any(b < (64 if x in SOLVER_SITES else 32) for x in a.sites.split(",") for b in a.bits):
        sys.exit(f"faultstudy: --bits {','.join(map(str, a.bits))}: no site of --sites {a.sites} has such a bit (surrogate sites hold 32)")
    if a.cmd == "overhead" and not 1 <= a.reps <= 1000:
        sys.exit(f"faultstudy: --reps {a.reps}: must be in [1, 1000]")
    if a.cmd == "falsealarms" and not 4 <= a.steps <= 1000000:
        sys.exit(f"faultstudy: --steps {a.steps}: must be in [4, 1000000] (fewer runs no guess step: no check to count)")
    if a.cmd == "compare":
        compare(a)
    if not os.access(os.path.join(a.build, "miniapp", "miniapp"), os.X_OK):
        sys.exit(f"faultstudy: {a.build}/miniapp/miniapp: not found or not executable (build first: scripts/setup.sh)")
    {"detect": detect, "overhead": overhead, "falsealarms": falsealarms}[a.cmd](a)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # one line, no traceback
        sys.exit(f"faultstudy: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
