#!/usr/bin/env python3
"""scripts/faultstudy.py: the fault-detection study of docs/faults.md.

  faultstudy.py detect BUILD_DIR [--trials K] [--out FILE.csv]
      For every injection site and every bit position, K seeded flips (random
      entry) into one replica of a small deck, with the ABFT checks on and
      replicas beside it (2 in ordered builds; 3 in atomic ones, whose third
      gives the fault-free FPNA spread). Writes one CSV row per run and prints
      a Markdown table: detection rate by bit range, per detector, and (atomic)
      the smallest bit that stands out of the noise.
  faultstudy.py overhead BUILD_DIR [--reps N]
      The cost of the checks: the same runs with and without -fault_checks,
      interleaved, best of N each; prints the ratio of the run times.
  faultstudy.py falsealarms BUILD_DIR [--steps N]
      Long fault-free runs (solver alone and guess coupling) with the checks
      on: alarms and the worst check ratio (how close rounding came).

Needs Python 3 with PyYAML (Debian: python3-yaml)."""
import argparse
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
    wrecked = "did not converge" in p.stderr or "not finite" in p.stderr  # the run's own guards stopped it
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
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("MINIAPP_SOLVER_REDUCTION:"):
                return line.strip().split("=")[1]
    return "unknown"


def detect(a):
    app = os.path.join(a.build, "miniapp", "miniapp")
    st = strategy(a.build)
    atomic = st == "atomic"
    nrep = 3 if atomic else 2
    seed = ["-atomic_order_seed", "3"] if atomic else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for site in a.sites.split(","):
            solver = site in SOLVER_SITES
            nbits = 64 if solver else 32
            base = DECK + seed + ["-replicas", str(nrep), "-fault_checks"] + ([] if solver else GUESS)
            when = f"step={STEP}" if solver else f"epoch={EPOCH}"
            extra = ",call=3" if site in ("iterate", "operator") else (",call=1" if site == "activation" else "")
            for bit in range(nbits):
                for t in range(a.trials):
                    s = run(app, base + ["-inject", f"site={site},{when},bit={bit},entry=random,seed={t + 1}{extra}"], tmp)
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
                                 "false_alarms": f.get("false_alarms", ""), "at": when_v})
            print(f"faultstudy: {st} {site} done", file=sys.stderr)
    if a.out:
        with open(a.out + ".tmp", "w", newline="") as fo:
            w = csv.DictWriter(fo, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        os.replace(a.out + ".tmp", a.out)
    table(rows, atomic)


def table(rows, atomic):
    st = rows[0]["build"]
    print(f"\n### {st} build ({'3 replicas: reference, faulty, fault-free' if atomic else '2 replicas'}; checks on)\n")
    rep = "above noise" if atomic else "replicas"
    print(f"| site | bits | runs | crashed | checksum | {rep} | either |")
    print("|---|---|---|---|---|---|---|")
    for site in SOLVER_SITES + SURR_SITES:
        rs = [r for r in rows if r["site"] == site]
        if not rs:
            continue
        nbits = 64 if site in SOLVER_SITES else 32
        for lo, hi in BIT_RANGES[nbits]:
            b = [r for r in rs if lo <= r["bit"] <= hi and r["fired"]]
            if not b:
                continue
            ck = [r for r in b if r["checksum_step"] != "" or r["crashed"]]
            if atomic:
                rp = [r for r in b if r["noise_step"] != "" or r["noise_epoch"] != "" or r["crashed"]]
            else:
                rp = [r for r in b if r["replicas_step"] != "" or r["replicas_epoch"] != "" or r["crashed"]]
            ei = [r for r in b if r in ck or r in rp]
            cr = sum(r["crashed"] for r in b)
            pct = lambda x: f"{100.0 * len(x) / len(b):.0f}%"
            print(f"| {site} | {lo}-{hi} | {len(b)} | {cr} | {pct(ck)} | {pct(rp)} | {pct(ei)} |")
    for site in SOLVER_SITES + SURR_SITES:
        rs = [r for r in rows if r["site"] == site and r["fired"]]
        if not rs:
            continue
        def lowest(pred):
            bits = sorted({r["bit"] for r in rs if pred(r)})
            full = [b for b in bits if all(pred(r) for r in rs if r["bit"] == b)]
            return (bits[0] if bits else None, full[0] if full else None)
        ck = lowest(lambda r: r["checksum_step"] != "" or r["crashed"])
        key = ("noise_step", "noise_epoch") if atomic else ("replicas_step", "replicas_epoch")
        rp = lowest(lambda r: r[key[0]] != "" or r[key[1]] != "" or r["crashed"])
        print(f"- {site}: lowest bit ever caught by the checksum {ck[0]}, always from some bit on: {ck[1]}; by {rep}: {rp[0]} / {rp[1]}")


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
    d.add_argument("--out")
    d.add_argument("--sites", default=",".join(SOLVER_SITES + SURR_SITES))
    o = sub.add_parser("overhead")
    o.add_argument("build")
    o.add_argument("--reps", type=int, default=5)
    f = sub.add_parser("falsealarms")
    f.add_argument("build")
    f.add_argument("--steps", type=int, default=2000)
    a = p.parse_args()
    if not os.access(os.path.join(a.build, "miniapp", "miniapp"), os.X_OK):
        sys.exit(f"faultstudy: {a.build}/miniapp/miniapp: not found or not executable (build first: scripts/setup.sh)")
    {"detect": detect, "overhead": overhead, "falsealarms": falsealarms}[a.cmd](a)


if __name__ == "__main__":
    main()
