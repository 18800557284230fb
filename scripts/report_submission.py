"""scripts/report_submission.py: the benchmark's submissions (docs/benchmark.md),
for scripts/report_table.py's subcommands `submission` (the repeats of one deck
as one submission: statistics, run rules, machine and build) and `merge`
(several machines' submissions in one table). Not run on its own."""
import glob
import os
import re
import sys

import yaml

from report_checks import CV_BOUND, check_report, check_repeats, check_seal, deck_options, field, noise_why, revision_why
from report_common import NoAliasDumper, die, emit, fmt, get, load, num, parse_yaml, read_bytes, seal_why, sealed, table, verdict_of, write_text


def stats(vals):
    """mean, min, max and coefficient of variation (sample standard deviation
    / mean; None from one value: one run says nothing of the noise)."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    n, m = len(vals), sum(vals) / len(vals)
    sd = (sum((v - m) ** 2 for v in vals) / (n - 1)) ** 0.5 if n > 1 else None
    return {"mean": m, "min": min(vals), "max": max(vals), "cv": sd / m if sd is not None and m else None, "n": n}


def min_seconds(deck):
    """The run rules' minimum timed duration of a submission of DECK
    (docs/benchmark.md; scripts/benchmark.sh applies the same rule)."""
    d = str(deck or "")
    return 60.0 if d.endswith(("-medium", "-weak")) else 300.0 if d.endswith("-large") else 0.0


def build(directory, min_secs, command, system_name=None):
    """The submission of the repeats in DIRECTORY (a dict, as written), each report checked first (report_checks.py)."""
    paths = sorted(glob.glob(os.path.join(directory, "r*.yaml")), key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    paths = [p for p in paths if re.fullmatch(r"r\d+\.yaml", os.path.basename(p))]
    if not paths:
        die("%s: no repeats (r<k>.yaml)" % directory)
    names = [os.path.basename(p) for p in paths]
    if names != ["r%d.yaml" % (k + 1) for k in range(len(paths))]:  # benchmark.sh writes r1..rN: a gap is a repeat taken out
        die("%s: the repeats are not r1.yaml .. r%d.yaml (%s): one is missing" % (directory, len(paths), ", ".join(names)))
    for p in paths:  # each as its run wrote it, before any of its keys is read
        check_seal(p)
    reps = [load(p) for p in paths]
    foms = [check_report(p, r) for p, r in zip(paths, reps)]
    for p, r in zip(paths, reps):  # a report names the file it was written to: a copy of another repeat is no repeat
        if os.path.basename(str(r.get("file") or "")) != os.path.basename(p):
            die("%s: the report says it was written as %s: a copy of another report, not a repeat" % (p, r.get("file")))
    check_repeats(paths, reps)
    first = reps[0]
    decks = {r.get("deck") for r in reps}
    if len(decks) != 1:
        die("%s: the repeats ran different decks (%s)" % (directory, ", ".join(sorted(str(d) for d in decks))))
    exes = {str(r.get("command_line") or "").split(" ")[0] for r in reps}
    if len(exes) != 1:
        die("%s: the repeats ran different executables (%s)" % (directory, ", ".join(sorted(exes))))
    for key in ("build.solver_reduction", "build.surrogate_reduction", "build.compiler", "build.flags", "build.revision", "build.version", "build.petsc", "build.cuda",
                "build.deck_committed", "machine.hostname", "machine.cpu", "machine.ranks", "machine.ranks_per_node", "machine.threads", "machine.nodes", "machine.device",
                "machine.cuda_kernels", "machine.cores_online", "machine.cores_total", "machine.cpu_mhz_max", "machine.threads_per_core",
                "machine.numa_nodes", "machine.memory_gib", "machine.gpu", "machine.device_name", "machine.interconnect"):
        seen = {str(get(r, key)) for r in reps}  # one submission: one build on one machine in one layout
        if len(seen) != 1:
            die("%s: the repeats differ in %s (%s)" % (directory, key, ", ".join(sorted(seen))))
    golden = [str(get(r, "verification.golden_%s_hash" % k)) for r in reps for k in ("state", "weights")]
    valid = all(verdict_of(r) == "VALID" for r in reps) and "MISMATCH" not in golden  # a golden mismatch is never VALID: a report saying both was altered
    for p, v in zip(paths, foms):
        if v is not None and not v > 0:
            die("%s: fom.value %s is not a positive figure" % (p, get(reps[paths.index(p)], "fom.value")))
    fom = stats(foms) if None not in foms else None  # a repeat without a FOM leaves the FOM n/a (docs/benchmark.md), not the others' mean
    tps = stats([num(get(r, "timing.time_per_step")) for r in reps])
    hashes = sorted({str(get(r, "verification.state_hash")) for r in reps})
    if len(hashes) > 1 and "atomic" not in (get(first, "build.solver_reduction"), get(first, "build.surrogate_reduction")):
        die("%s: the repeats of a %s/%s build hold %d state hashes (%s): its repeats on one machine and layout give one; a report was altered or the build is broken"
            % (directory, get(first, "build.solver_reduction"), get(first, "build.surrogate_reduction"), len(hashes), ", ".join(hashes)))
    timed = sum(num(get(r, "timing.total")) for r in reps)
    least = max(min_secs, min_seconds(first.get("deck")))  # --min-seconds raises the rule, never lowers it
    noff = next(("%s: not official (%s)" % (n, r.get("official_why") or "no reason given")
                 for n, r in zip(names, reps) if r.get("official") is not True), None)
    committed = get(first, "build.deck_committed")
    why = [w for w in (noff, None if valid else "not every repeat VALID",
                       None if timed >= least else "%.3f s timed, below the minimum %g s" % (timed, least),
                       revision_why(get(first, "build.revision")),
                       None if committed is True else "build.deck_committed is %s" % committed,
                       noise_why(first["deck"], reps, get(fom, "cv"))) if w]
    runs = [{"report": n, "id": get(r, "run.id"), "start": get(r, "run.start"),
             "load_before": get(r, "run.load_before")} for n, r in zip(names, reps)]
    return {"submission_version": 1, "deck": first.get("deck"), "repeats": len(reps), "all_valid": valid,
            "official": not why, "official_why": "; ".join(why) if why else None,
            "timed_seconds": round(timed, 3), "min_timed_seconds": least,
            "command": command or first.get("command_line"),
            "fom": dict(fom, unit=get(first, "fom.unit")) if fom else None, "time_per_step": tps,
            # the repeats' golden-hash verdicts (match, MISMATCH, not applicable ...), not a hash
            "state_hashes": hashes,
            "golden_state_check": sorted({str(get(r, "verification.golden_state_hash")) for r in reps}),
            "runs": runs, "system": describe(paths, reps, system_name),
            "machine": first.get("machine"), "build": first.get("build"), "reports": names}


def describe(paths, reps, name):
    """The system in the submission (docs/benchmark.md): what a comparison of two machines needs in one place."""
    first = reps[0]
    m = first.get("machine") if isinstance(first.get("machine"), dict) else {}
    starts = sorted(str(get(r, "run.start")) for r in reps)
    return {"date": starts[0][:10], "name": name or m.get("hostname"), "cpu": m.get("cpu"),
            "cpu_mhz_max": m.get("cpu_mhz_max"), "cores": m.get("cores_total") or m.get("cores_online"),
            "threads_per_core": m.get("threads_per_core"), "numa_nodes": m.get("numa_nodes"),
            "memory_gib": m.get("memory_gib"), "gpu": m.get("gpu") or m.get("device_name"), "nodes": m.get("nodes"),
            "interconnect": m.get("interconnect") or "not described",
            "ranks_x_threads": "%s x %s" % (m.get("ranks"), m.get("threads")),
            "device": {"solver": get(first, "solver.device") or "cpu", "surrogate": m.get("device")}, "fom_unit": get(first, "fom.unit"),
            "revision": get(first, "build.revision"),
            "energy_joules": mean_energy(paths, reps, "run.energy_joules"),
            "gpu_energy_joules": mean_energy(paths, reps, "run.gpu_energy_joules")}


def mean_energy(paths, reps, key):
    """The repeats' mean of an energy KEY (joules); "not measured" where any repeat did not measure it."""
    e = [num(get(r, key)) for r in reps]
    for p, x in zip(paths, e):
        if x is not None and x < 0:
            die("%s: %s: is %s, an energy below 0" % (p, key, x))
    return "not measured" if None in e else round(sum(e) / len(e), 1)


def submission(args):
    sub = build(args.dir, args.min_seconds, args.command, args.system)
    fom, tps = sub["fom"], sub["time_per_step"]
    text = sealed(yaml.dump(sub, Dumper=NoAliasDumper, sort_keys=False))  # its last line seals it, as a report's
    sys.stdout.write(text)
    if args.out:
        write_text(args.out, text)
        md = ["# Submission: %s" % sub["deck"], "", "command: `%s`" % sub["command"], ""] + table(
            ["deck", "repeats", "official", "FOM mean [%s]" % (fom or {}).get("unit"), "FOM min", "FOM max", "FOM cv", "time/step mean [s]", "state hashes", "machine", "build"],
            [[sub["deck"], sub["repeats"], "yes" if sub["official"] else "NO", fmt(get(fom, "mean")), fmt(get(fom, "min")), fmt(get(fom, "max")), fmt(get(fom, "cv"), "%.3f"),
              "%.4g" % tps["mean"] if tps else "n/a", len(sub["state_hashes"]), "%s, %s ranks x %s threads" % (get(sub, "machine.cpu"), get(sub, "machine.ranks"), get(sub, "machine.threads")),
              "%s/%s" % (get(sub, "build.solver_reduction"), get(sub, "build.surrogate_reduction"))]])
        if sub["official_why"]:
            md += ["", "Not official: %s" % sub["official_why"]]
        write_text(args.out + ".md", "\n".join(md) + "\n")


def merge(args):
    rows, seen, loaded = [], {}, []
    for p in [args.dir] + list(args.more):
        raw = read_bytes(p)
        real = os.path.realpath(p)
        if real in seen:  # its row twice would count one submission as two results
            die("%s: the same file as %s" % (p, seen[real]))
        seen[real] = p
        d = parse_yaml(p, raw)
        if not isinstance(d, dict) or type(d.get("submission_version")) is not int or d["submission_version"] != 1:
            die("%s: not a submission (report_table.py submission writes them)" % p)
        why = seal_why(raw)
        if why:
            die("%s: seal: %s" % (p, why))
        for q, e in loaded:
            if e == d:
                die("%s: the same submission as %s (a copy)" % (p, q))
        loaded.append((p, d))
        checked = check_submission(p, d)
        f = d.get("fom") or {}
        rows.append([d.get("deck"), get(d, "system.name") or get(d, "machine.hostname"), system(d),
                     "%s x %s" % (get(d, "machine.ranks"), get(d, "machine.threads")), get(d, "machine.nodes") or 1,
                     get(d, "system.interconnect") or "not described",
                     "solver %s, surrogate %s" % (get(d, "system.device.solver") or "cpu", get(d, "machine.device")),
                     "%s/%s" % (get(d, "build.solver_reduction"), get(d, "build.surrogate_reduction")),
                     get(d, "build.revision") or "n/a", run_date(d), d.get("repeats"),
                     "yes" if d.get("official") else "NO",
                     fmt(num(f.get("mean"))), f.get("unit") or "n/a", fmt(num(f.get("cv")), "%.3f"),
                     *[e if e is not None else "not measured" for e in (get(d, "system.energy_joules"),
                                                                          get(d, "system.gpu_energy_joules"))],
                     len(d.get("state_hashes") or []), checked])
    out = table(["deck", "system", "machine", "ranks x threads", "nodes", "interconnect", "device", "build", "revision",
                 "date", "repeats", "official", "FOM mean", "FOM unit", "FOM cv", "energy [J]", "GPU energy [J]",
                 "state hashes", "checked"], rows)
    emit(out, args)


def system(d):
    """The machine in a few words: CPU (frequency), cores, SMT, NUMA nodes, memory, GPU."""
    m = d.get("machine") if isinstance(d.get("machine"), dict) else {}
    parts = [str(m.get("cpu") or "unknown CPU")]
    if num(m.get("cpu_mhz_max")):
        parts[0] += " @ %.2f GHz" % (num(m["cpu_mhz_max"]) / 1000)
    for key, spec in (("cores_online", "%s cores"), ("threads_per_core", "SMT %s"), ("numa_nodes", "%s NUMA"),
                      ("memory_gib", "%s GiB")):
        if m.get(key) is not None:
            parts.append(spec % m[key])
    if m.get("gpu"):
        parts.append(str(m["gpu"]))
    return ", ".join(parts)


def run_date(d):
    starts = sorted(str(r.get("start")) for r in d.get("runs") or [] if isinstance(r, dict) and r.get("start"))
    return starts[0][:10] if starts else str(get(d, "system.date") or "n/a")[:10]


def check_submission(p, d):
    """Die where a submission contradicts itself or its reports (when they are beside it: recomputed whole).
    Returns what was checked: "reports" or "file only" (the reports are not beside it)."""
    d = dict(d)
    for key, kind in (("deck", "str"), ("repeats", "int"), ("official", "bool"), ("all_valid", "bool"),
                      ("timed_seconds", "num"), ("min_timed_seconds", "num"), ("runs", "list"), ("reports", "list"),
                      ("state_hashes", "list"), ("system", "dict"), ("machine", "dict"), ("build", "dict")):
        d[key] = field(p, d, key, kind)
    for key, kind in (("command", "str"), ("system.name", "str"), ("system.interconnect", "str"), ("fom.unit", "str"),
                      ("machine.ranks", "int"), ("machine.threads", "int"), ("machine.nodes", "int"),
                      ("build.solver_reduction", "str"), ("build.surrogate_reduction", "str")):
        field(p, d, key, kind, need=False)
    if d.get("time_per_step") is not None:
        field(p, d, "time_per_step", "dict")
        field(p, d, "time_per_step.mean", "num")
    for key in ("system.energy_joules", "system.gpu_energy_joules"):
        e = get(d, key)
        if e is not None and e != "not measured" and (num(e) is None or num(e) < 0 or isinstance(e, str)):
            die("%s: %s: is %r, want joules (0 or more) or \"not measured\"" % (p, key, e))
    if not d["repeats"] == len(d["runs"]) == len(d["reports"]):
        die("%s: repeats: is %d, with %d runs and %d reports listed" % (p, d["repeats"], len(d["runs"]), len(d["reports"])))
    for r in d["reports"]:
        if not isinstance(r, str) or not re.fullmatch(r"r\d+\.yaml", r):
            die("%s: reports: %r is not a repeat's name (r<k>.yaml)" % (p, r))
    if d.get("fom") is not None:
        field(p, d, "fom", "dict")
        lo, mean, hi = (field(p, d, "fom." + k, "num") for k in ("min", "mean", "max"))
        if not lo - 1e-12 * abs(lo) <= mean <= hi + 1e-12 * abs(hi):  # the mean of equal values may round past them
            die("%s: fom: min %s, mean %s, max %s are not in order" % (p, lo, mean, hi))
        field(p, d, "fom.cv", "num", need=False)
    if get(d, "fom.cv") is not None and num(get(d, "fom.cv")) < 0:
        die("%s: fom.cv: is %s, a coefficient of variation below 0" % (p, get(d, "fom.cv")))
    if d.get("fom") is not None and not num(get(d, "fom.min")) > 0:
        die("%s: fom.min: is %s, not a positive figure" % (p, get(d, "fom.min")))
    shown = "%s x %s" % (get(d, "machine.ranks"), get(d, "machine.threads"))
    if get(d, "system.ranks_x_threads") != shown:
        die("%s: system.ranks_x_threads: is %s, machine gives %s" % (p, get(d, "system.ranks_x_threads"), shown))
    least = min_seconds(d["deck"])
    if d["min_timed_seconds"] < least:
        die("%s: min_timed_seconds: is %s, the deck's minimum is %g" % (p, d["min_timed_seconds"], least))
    if d["official"]:
        cv, short = num(get(d, "fom.cv")), d["timed_seconds"] < d["min_timed_seconds"]
        ruled = d["deck"].endswith(("-medium", "-weak", "-large"))  # noise rules (report_checks.py)
        noisy = ruled and d["repeats"] > 1 and (cv is None or cv > CV_BOUND)
        atomic = "atomic" in (get(d, "build.solver_reduction"), get(d, "build.surrogate_reduction"))
        bad = ("all_valid false" if not d["all_valid"] else
               "repeats %d" % d["repeats"] if d["repeats"] < 1 else
               "deck %s, not a shipped deck" % d["deck"] if not deck_options(d["deck"]) else
               "build.deck_committed %s" % get(d, "build.deck_committed") if get(d, "build.deck_committed") is not True else
               "golden_state_check %s" % get(d, "golden_state_check") if "MISMATCH" in (d.get("golden_state_check") or []) else
               "%d state_hashes from a build without atomics" % len(d["state_hashes"]) if len(d["state_hashes"]) > 1 and not atomic else
               "timed_seconds %s below %s" % (d["timed_seconds"], d["min_timed_seconds"]) if short else
               "official_why %s" % d.get("official_why") if d.get("official_why") else
               revision_why(get(d, "build.revision")) or
               ("fom.cv %s above the noise bound %.2f" % (cv, CV_BOUND) if noisy else None))
        if bad:
            die("%s: official: true, but %s: the submission contradicts itself (altered?)" % (p, bad))
    here = os.path.dirname(os.path.realpath(p))  # a link to a submission: its reports are beside its target
    beside = [q for q in glob.glob(os.path.join(here, "r*.yaml")) if re.fullmatch(r"r\d+\.yaml", os.path.basename(q))]
    present = [os.path.lexists(os.path.join(here, r)) for r in d["reports"]]
    if not beside and not any(present):
        return "file only"
    if not all(present):  # some beside it: the set was cut, not moved
        die("%s: reports: %d of the %d listed are not beside it" % (p, present.count(False), len(present)))
    again = build(here, d["min_timed_seconds"], d.get("command"), get(d, "system.name"))
    diff = differ({k: v for k, v in d.items() if k != "seal"}, again, "")  # every key, the table's columns among them, none beside them
    if diff:
        die("%s: %s: is %s, its reports give %s" % (p, diff[0], diff[1], diff[2]))
    return "reports"


def differ(a, b, path):
    """(key path, A's value, B's) where A and B first differ below PATH (numbers to 1e-9 relative), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = list(b) + [k for k in a if k not in b]
        return next((q for q in (differ(a.get(k), b.get(k), "%s.%s" % (path, k) if path else str(k)) for k in keys) if q), None)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((q for q in (differ(x, y, "%s[%d]" % (path, i)) for i, (x, y) in enumerate(zip(a, b))) if q), None)
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    if numbers and num(a) is not None and num(b) is not None:
        return None if abs(num(a) - num(b)) <= 1e-9 * abs(num(b)) else (path, a, b)
    return None if type(a) is type(b) and a == b else (path, a, b)
