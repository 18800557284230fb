"""scripts/report_submission.py: the benchmark's submissions (docs/benchmark.md),
for scripts/report_table.py's subcommands `submission` (the repeats of one deck
as one submission: statistics, run rules, machine and build) and `merge`
(several machines' submissions in one table). Not run on its own."""
import glob
import os
import re
import sys

import yaml

from report_common import die, emit, fmt, get, load, num, table, verdict_of, write_text


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
    return 60.0 if d.endswith("-medium") else 300.0 if d.endswith("-large") else 0.0


def submission(args):
    paths = sorted(glob.glob(os.path.join(args.dir, "r*.yaml")), key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    paths = [p for p in paths if re.fullmatch(r"r\d+\.yaml", os.path.basename(p))]
    if not paths:
        die("%s: no repeats (r<k>.yaml)" % args.dir)
    names = [os.path.basename(p) for p in paths]
    if names != ["r%d.yaml" % (k + 1) for k in range(len(paths))]:  # benchmark.sh writes r1..rN: a gap is a repeat taken out
        die("%s: the repeats are not r1.yaml .. r%d.yaml (%s): one is missing" % (args.dir, len(paths), ", ".join(names)))
    reps = [load(p) for p in paths]
    for p, r in zip(paths, reps):  # a report names the file it was written to: a copy of another repeat is no repeat
        if os.path.basename(str(r.get("file") or "")) != os.path.basename(p):
            die("%s: the report says it was written as %s: a copy of another report, not a repeat" % (p, r.get("file")))
    first = reps[0]
    decks = {r.get("deck") for r in reps}
    if len(decks) != 1:
        die("%s: the repeats ran different decks (%s)" % (args.dir, ", ".join(sorted(str(d) for d in decks))))
    exes = {str(r.get("command_line") or "").split(" ")[0] for r in reps}
    if len(exes) != 1:
        die("%s: the repeats ran different executables (%s)" % (args.dir, ", ".join(sorted(exes))))
    for key in ("build.solver_reduction", "build.surrogate_reduction", "build.compiler", "build.flags", "build.revision", "build.version", "build.petsc", "build.cuda",
                "machine.hostname", "machine.cpu", "machine.ranks", "machine.threads", "machine.device", "machine.cuda_kernels"):
        seen = {str(get(r, key)) for r in reps}  # one submission: one build on one machine in one layout
        if len(seen) != 1:
            die("%s: the repeats differ in %s (%s)" % (args.dir, key, ", ".join(sorted(seen))))
    golden = [str(get(r, "verification.golden_state_hash")) for r in reps]
    valid = all(verdict_of(r) == "VALID" for r in reps) and "MISMATCH" not in golden  # a golden mismatch is never VALID: a report saying both was altered
    official = all(r.get("official") is True for r in reps)
    foms = [num(get(r, "fom.value")) for r in reps]
    for p, v in zip(paths, foms):
        if v is not None and not v > 0:
            die("%s: fom.value %s is not a positive figure" % (p, get(reps[paths.index(p)], "fom.value")))
    fom = stats(foms) if None not in foms else None  # a repeat without a FOM leaves the FOM n/a (docs/benchmark.md), not the others' mean
    tps = stats([num(get(r, "timing.time_per_step")) for r in reps])
    hashes = sorted({str(get(r, "verification.state_hash")) for r in reps})
    if len(hashes) > 1 and "atomic" not in (get(first, "build.solver_reduction"), get(first, "build.surrogate_reduction")):
        die("%s: the repeats of a %s/%s build hold %d state hashes (%s): its repeats on one machine and layout give one; a report was altered or the build is broken"
            % (args.dir, get(first, "build.solver_reduction"), get(first, "build.surrogate_reduction"), len(hashes), ", ".join(hashes)))
    timed = sum(num(get(r, "timing.total")) or 0.0 for r in reps)
    least = max(args.min_seconds, min_seconds(first.get("deck")))  # --min-seconds raises the rule, never lowers it
    enough = timed >= least
    sub = {"submission_version": 1, "deck": first.get("deck"), "repeats": len(reps), "all_valid": valid, "official": official and valid and enough,
           "timed_seconds": round(timed, 3), "min_timed_seconds": least,
           "command": args.command or first.get("command_line"),
           "fom": dict(fom, unit=get(first, "fom.unit")) if fom else None, "time_per_step": tps,
           "state_hashes": hashes, "golden_state_check": sorted({str(get(r, "verification.golden_state_hash")) for r in reps}),  # the repeats' golden-hash verdicts (match, MISMATCH, not applicable ...), not a hash
           "machine": first.get("machine"), "build": first.get("build"), "reports": [os.path.basename(p) for p in paths]}
    text = yaml.safe_dump(sub, sort_keys=False)
    sys.stdout.write(text)
    if args.out:
        write_text(args.out, text)
        md = ["# Submission: %s" % sub["deck"], "", "command: `%s`" % sub["command"], ""] + table(
            ["deck", "repeats", "official", "FOM mean [%s]" % (sub["fom"] or {}).get("unit"), "FOM min", "FOM max", "FOM cv", "time/step mean [s]", "state hashes", "machine", "build"],
            [[sub["deck"], sub["repeats"], "yes" if sub["official"] else "NO", fmt(get(fom, "mean")), fmt(get(fom, "min")), fmt(get(fom, "max")), fmt(get(fom, "cv"), "%.3f"),
              "%.4g" % tps["mean"] if tps else "n/a", len(hashes), "%s, %s ranks x %s threads" % (get(first, "machine.cpu"), get(first, "machine.ranks"), get(first, "machine.threads")),
              "%s/%s" % (get(first, "build.solver_reduction"), get(first, "build.surrogate_reduction"))]])
        write_text(args.out + ".md", "\n".join(md) + "\n")


def merge(args):
    rows, seen, loaded = [], {}, []
    for p in [args.dir] + list(args.more):
        if not os.path.isfile(p):  # a FIFO would block
            die("%s: not a regular file" % p)
        real = os.path.realpath(p)
        if real in seen:  # its row twice would count one submission as two results
            die("%s: the same file as %s" % (p, seen[real]))
        seen[real] = p
        try:
            with open(p) as f:
                d = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            die("%s: cannot read (%s)" % (p, str(e).splitlines()[0]))
        if not isinstance(d, dict) or d.get("submission_version") != 1:
            die("%s: not a submission (report_table.py submission writes them)" % p)
        for q, e in loaded:
            if e == d:
                die("%s: the same submission as %s (a copy)" % (p, q))
        loaded.append((p, d))
        f = d.get("fom") or {}
        rows.append([d.get("deck"), get(d, "machine.hostname"), get(d, "machine.cpu"), "%s x %s" % (get(d, "machine.ranks"), get(d, "machine.threads")),
                     "%s/%s" % (get(d, "build.solver_reduction"), get(d, "build.surrogate_reduction")), d.get("repeats"), "yes" if d.get("official") else "NO",
                     fmt(num(f.get("mean"))), fmt(num(f.get("cv")), "%.3f"), len(d.get("state_hashes") or [])])
    out = table(["deck", "host", "cpu", "ranks x threads", "build", "repeats", "official", "FOM mean", "FOM cv", "state hashes"], rows)
    emit(out, args)
