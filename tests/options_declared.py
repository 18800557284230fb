#!/usr/bin/env python3
"""tests/options_declared.py MINIAPP TRAIN BENCH_SOLVER BENCH_SURROGATE SRC:
every option a program reads is judged by its declared type before any work
(miniapp/cli/optstrict.c), whatever the configuration.

The options come from what the programs say they read: every typed line of
-help (miniapp with each Krylov type and the preconditioners that work here,
bench_solver with its grid set up, surrogate-train, bench_surrogate) and
every PetscOptions*("-name") read in the project's sources. Each is given a
bad value of its type together with a "stopper", a bad value of the option
the program reads first (-threads 2000 ...), so that it fails before
anything else reads it: a declared option gives its own one line naming it,
an undeclared or wrongly typed one lets the stopper speak."""
import concurrent.futures, os, re, subprocess, sys

app, train, bsolver, bsurrogate, src = sys.argv[1:6]
env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
prog = {app: "miniapp", train: "surrogate-train", bsolver: "bench_solver", bsurrogate: "bench_surrogate"}
stopper = {app: ["-threads", "2000"], train: ["-train_batch", "0"], bsolver: ["-bench_its", "0"], bsurrogate: ["-bench_n", "0"]}
small = ["-bench_its", "1", "-bench_reps", "1", "-da_grid_x", "8", "-da_grid_y", "8"]


def run(exe, args, timeout=120):
    p = subprocess.run([exe] + args, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def classify(line):
    """(name, type, choices) of one option line of PETSc's -help, or None."""
    m = re.match(r"  -([A-Za-z][A-Za-z0-9_]*)(.*)$", line)  # two blanks: PetscOptions*() lines
    if not m or re.search(r"\b(ascii|binary|draw|socket|saws)\[", line):
        return None
    name, rest = m.groups()
    if re.match(r": <(TRUE|FALSE) : (TRUE|FALSE)>", rest):
        return name, "bool", None
    m = re.match(r" <now (.*?) : formerly (.*?)>(:?) (.*)$", rest)
    if m:
        now, text = m.group(1), m.group(4)
        c = re.search(r"\(choose one of\) (.*?) \(", text)
        if c:
            return name, "choice", c.group(1).split()
        if "(one of)" in text:
            return name, "choice", None
        return (name, "int", None) if re.fullmatch(r"-?\d+", now) else None
    if re.match(r" <[^<>:]* : [^<>]*>:", rest):
        return name, "real", None
    m = re.match(r" <([^<>: ]+)>:", rest)
    if m:
        return name, "ints" if re.fullmatch(r"-?\d+(,-?\d+)*", m.group(1)) else "reals", None
    return None


# what the programs say they read
configs = [(app, [])]
rc, out, _ = run(app, ["-help"])
ksps = re.search(r"-ksp_type <now \S+ : formerly \S+>: Krylov method \(one of\) (.*?) \(KSPSetType\)", out)
assert ksps, "miniapp -help lists no Krylov types"
# fetidp solves on a MATIS operator through PCBDDC, whose ~60 options
# (-fetidp_bddc_pc_bddc_*) are not declared: it cannot run on this solver's
# shell operator. Its own -ksp_fetidp_* are.
configs += [(app, ["-ksp_type", k]) for k in ksps.group(1).split() if k != "fetidp"]
configs += [(app, ["-pc_type", p]) for p in ("none", "jacobi", "bjacobi")]
configs += [(bsolver, small), (train, ["-train_steps", "0"]), (bsurrogate, ["-bench_n", "64", "-bench_steps", "1", "-bench_reps", "1"])]
want = {}  # (exe, name) -> (type, choices, where)
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    for (exe, args), (rc, out, err) in zip(configs, pool.map(lambda c: run(c[0], c[1] + ["-help"]), configs)):
        assert rc == 0, f"{prog[exe]} {' '.join(args)} -help: exit {rc}\n{err}"
        for line in out.splitlines():
            c = classify(line)
            if c:
                want.setdefault((exe, c[0]), (c[1], c[2], f"{prog[exe]} -help {' '.join(args)}"))
kinds = {"Int": "int", "IntArray": "ints", "Real": "real", "Scalar": "real", "RealArray": "reals", "Bool": "bool", "EList": "choice", "Enum": "choice"}
readers = {"miniapp/tools/bench_solver.c": [bsolver], "miniapp/tools/bench_surrogate.c": [bsurrogate],
           "miniapp/tools/surrogate_train.c": [train]}
nsrc = 0
sources = [(d, f"{sub}/{f}".lstrip("/")) for d in ("solver", "surrogate", "miniapp", "bench")
           for sub in ("", "cli", "io", "loop", "tools") if os.path.isdir(os.path.join(src, d, sub))
           for f in sorted(os.listdir(os.path.join(src, d, sub))) if f.endswith(".c")]
for d, f in sources:
    rel = f"{d}/{f}"
    text = open(os.path.join(src, rel)).read()
    reads = re.findall(r"PetscOptions(?:Get)?(Int|IntArray|Real|RealArray|Scalar|Bool|EList|Enum)\(\s*(?:NULL,\s*NULL,\s*)?\"-([A-Za-z0-9_]+)\"", text)
    reads += re.findall(r"Cli(Int|Real)\(\s*PetscOptionsObject,\s*\"-([A-Za-z0-9_]+)\"", text)  # the range readers (miniapp/cli/cli.h)
    for kind, name in reads:
        exes = readers.get(rel, [app] + ([train, bsurrogate] if d == "surrogate" else [bsolver] if d == "solver" else []))
        for exe in exes:
            want.setdefault((exe, name), (kinds[kind], None, rel))
            nsrc += 1
assert nsrc > 40, f"only {nsrc} option reads found in {src}: the scan is broken"

bad = {"int": ("4294967297", r"-{n} 4294967297: does not fit a 32-bit integer \(largest 2147483647\)"),
       "ints": ("1,4294967297", r"-{n} 1,4294967297: entry 4294967297 does not fit a 32-bit integer \(largest 2147483647\)"),
       "real": ("abc", r"-{n} abc: not a number"),
       "reals": ("1,abc", r"-{n} 1,abc: entry abc not a number"),
       "bool": ("maybe", r"-{n} maybe: not a true/false value \(use 1, 0, true, false, yes, no, on or off\)"),
       "choice": ("", r"-{n}: given without a value \((needs one of (?P<list>[^()]*)|see -help for the choices)\)")}


def check(item):
    (exe, name), (kind, choices, where) = item
    value, regex = bad[kind]
    stop = stopper[exe] if stopper[exe][0] != f"-{name}" else []
    rc, out, err = run(exe, [f"-{name}", value] + stop)
    lines = [l for l in err.splitlines() if l.strip()]
    m = re.fullmatch(f"{re.escape(prog[exe])}: error: " + regex.format(n=re.escape(name)), lines[0]) if len(lines) == 1 else None
    if rc != 1 or not m:
        return f"{prog[exe]} -{name} '{value}' ({kind}, from {where}): exit {rc}, stderr: {err.strip()[:300]!r}"
    if choices and m.group("list") is not None and m.group("list").split(", ") != [c.lower() for c in choices]:
        return f"{prog[exe]} -{name}: the message lists {m.group('list')}, -help lists {' '.join(choices)}"
    return None


with concurrent.futures.ThreadPoolExecutor(4) as pool:  # each run mostly waits for MPI's start
    problems = [p for p in pool.map(check, sorted(want.items())) if p]
counts = {}
for (exe, _), (kind, _, _) in want.items():
    counts[prog[exe]] = counts.get(prog[exe], 0) + 1
print(f"{len(want)} typed options checked ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
