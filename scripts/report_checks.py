"""scripts/report_checks.py: what a submission (report_submission.py) checks in
each report before it counts it, and recomputes rather than believes
(docs/benchmark.md, "What a submission checks"): every key it reads has the
type it should (a malformed report is one line, never a traceback), the
official flag agrees with the report's own reasons and its build, the FOM and
the time per step agree with the report's timings and the deck's size, and a
repeat is a run of its own (its run identity and timings are no other's).
Also the noise rules. Not run on its own."""
import datetime
import math
import os
import re

from report_common import die, get, num, read_bytes, seal_why, timed_steps, verdict_of

# the noise rules (docs/benchmark.md, run rules): the FOM's coefficient of variation over the repeats at most
# CV_BOUND, and the 1-minute load average before each repeat at most LOAD_SHARE x the node's online cores, plus,
# after the first repeat, the ranks per node x threads that the previous repeat itself leaves in that average
CV_BOUND = 0.05
LOAD_SHARE = 0.5
TIMING_KEYS = ("total", "solve", "features", "predict", "train")
FOM_UNIT = "Mpoint-steps/s"
# the shipped decks beside the scripts, in the source tree and an install prefix alike
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "inputs")


def kind_of(x):
    if isinstance(x, (list, dict)):
        return "a list" if isinstance(x, list) else "a mapping"
    return "missing" if x is None else repr(x)


def field(p, r, path, kind, need=True):
    """The value at PATH of report R (file P), of KIND: "str", "bool", "num", "int", "dict", "list"; None where
    it is missing and not needed; else one line naming the file and the field."""
    x = get(r, path)
    if x is None and not need:
        return None
    ok = {"str": isinstance(x, str), "bool": isinstance(x, bool), "dict": isinstance(x, dict),
          "list": isinstance(x, list), "num": num(x) is not None,
          "int": isinstance(x, int) and not isinstance(x, bool)}[kind]
    if not ok:
        want = {"str": "a string", "bool": "true or false", "dict": "a mapping", "list": "a list", "num": "a number",
                "int": "a whole number"}[kind]
        die("%s: %s: is %s, want %s" % (p, path, kind_of(x), want))
    return num(x) if kind == "num" else x


def revision_why(rev):
    """Why a build of revision REV gives no official result, or None."""
    if not isinstance(rev, str) or not rev or rev == "unknown":
        return "build.revision %s: the revision is unknown" % rev
    if rev.endswith("-dirty"):
        return "build.revision %s: built from a modified source tree" % rev
    return None


def deck_options(deck):
    """{-name: value} of the shipped deck file DECK ({} when there is none)."""
    path = os.path.join(INPUTS, "%s.opts" % deck)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", deck) or not os.path.isfile(path):
        return {}
    opts = {}
    with open(path) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if w and w[0].startswith("-"):
                opts[w[0]] = " ".join(w[1:]).strip('"')
    return opts


def deck_size(deck):
    """What the shipped deck file sets of the problem's size:
    {problem.grid: [x, y], problem.steps, problem.replicas}."""
    opts, out = deck_options(deck), {}
    try:
        if "-da_grid_x" in opts and "-da_grid_y" in opts:
            out["problem.grid"] = [int(opts["-da_grid_x"]), int(opts["-da_grid_y"])]
        if "-ts_max_steps" in opts:
            out["problem.steps"] = int(opts["-ts_max_steps"])
        if "-replicas" in opts:
            out["problem.replicas"] = int(opts["-replicas"])
    except ValueError:
        return {}
    return out


def run_options(text):
    """{-name: value} of the report's options ("-name value -name ...", as PETSc lists them)."""
    opts, name = {}, None
    for tok in str(text or "").split():
        if tok.startswith("-") and not re.fullmatch(r"-[0-9.]+([eE][-+]?[0-9]+)?", tok):
            name = tok
            opts[name] = ""
        elif name:
            opts[name] = (opts[name] + " " + tok).strip()
    return opts


# the options a submitter may change (miniapp/io/freeopts.h, FREE_DECK; docs/benchmark.md): a deck may set them
TUNABLE = {"-threads", "-surrogate_device", "-solver_device", "-surrogate_device_id", "-surrogate_cuda_kernels", "-surrogate_view",
           "-output", "-output_every", "-summary", "-report", "-report_anonymize", "-progress", "-progress_interval",
           "-checkpoint", "-checkpoint_every", "-restart", "-options_file", "-options_file_yaml", "-skip_petscrc",
           "-help", "-history", "-ksp_fpnacg_fuse", "-no_signal_handler"}


def same_option(name, a, b):
    cg = ("cg", "fpnacg")  # the CG implementations give the same bits (docs/benchmark.md, may be changed)
    return a == b or (name == "-ksp_type" and a in cg and b in cg)


def when(p, r, key):
    """The time KEY of report R (file P): an ISO 8601 date and time in UTC, as the program writes it
    (2026-12-03T07:50:31Z); else one line naming the file and the field."""
    x = get(r, key)
    try:
        t = datetime.datetime.fromisoformat(x.replace("Z", "+00:00")) if isinstance(x, str) and x.endswith("Z") else None
    except ValueError:
        t = None
    if t is None:
        die("%s: %s: is %s, want a UTC date and time (YYYY-MM-DDTHH:MM:SSZ)" % (p, key, kind_of(x)))
    return t


def elapsed(p, r):
    """Seconds from the report's run.start to its date."""
    return (when(p, r, "date") - when(p, r, "run.start")).total_seconds()


def check_seal(p):
    """Die where the file P is not as the program that sealed it wrote it (before any of its keys is read)."""
    why = seal_why(read_bytes(p))
    if why:
        die("%s: seal: %s" % (p, why))


def check_report(p, r):
    """Die on a malformed report or one that contradicts itself; return its FOM (None where it has none)."""
    deck = field(p, r, "deck", "str")
    official = field(p, r, "official", "bool")
    why = field(p, r, "official_why", "str", need=False)
    field(p, r, "file", "str")
    field(p, r, "build", "dict")
    field(p, r, "machine", "dict")
    for k in ("ranks", "threads"):
        field(p, r, "machine." + k, "int")
    rev = field(p, r, "build.revision", "str", need=False)
    for k in ("id", "start", "host"):
        field(p, r, "run." + k, "str")
    field(p, r, "run.pid", "int")
    if not re.fullmatch(r"[0-9a-f]{32}", get(r, "run.id")):
        die("%s: run.id: is %r, want 32 hex digits" % (p, get(r, "run.id")))
    for k in TIMING_KEYS:
        if field(p, r, "timing." + k, "num") < 0:
            die("%s: timing.%s: is %s, a time below 0" % (p, k, get(r, "timing." + k)))
    grid = field(p, r, "problem.grid", "list")
    if len(grid) != 2 or any(not isinstance(g, int) or isinstance(g, bool) or g <= 0 for g in grid):
        die("%s: problem.grid: is %s, want [M, N]" % (p, grid))
    field(p, r, "problem.replicas", "int")
    steps = timed_steps(r)
    if steps is None or steps < 0 or steps != int(steps):
        die("%s: timing.timed_steps: is %s, want a whole number of steps" % (p, kind_of(get(r, "timing.timed_steps"))))
    for k in ("timing.time_per_step", "run.energy_joules", "run.gpu_energy_joules"):
        x = get(r, k)  # an energy may be "not measured", a time .nan (nothing timed)
        if x is not None and x != "not measured" and not (isinstance(x, float) and math.isnan(x)):
            field(p, r, k, "num")
    binding = get(r, "machine.binding")
    if isinstance(binding, list) and len(binding) != get(r, "machine.ranks"):
        die("%s: machine.ranks: is %s, with machine.binding listing %d ranks" % (p, get(r, "machine.ranks"), len(binding)))
    nthreads = run_options(get(r, "options")).get("-threads", "")
    if nthreads.isdigit() and int(nthreads) > 0 and int(nthreads) != get(r, "machine.threads"):
        die("%s: machine.threads: is %s, the run's options give -threads %s" % (p, get(r, "machine.threads"), nthreads))
    field(p, r, "fom", "dict")
    if field(p, r, "fom.unit", "str") != FOM_UNIT:
        die("%s: fom.unit: is %r, the program's FOM is in %s" % (p, get(r, "fom.unit"), FOM_UNIT))
    v = get(r, "fom.value")  # .nan: the run timed no step (a restart at its last step)
    fom = None if isinstance(v, float) and math.isnan(v) else field(p, r, "fom.value", "num", need=False)
    if official:  # the flag against the report's own reasons and build
        committed = get(r, "build.deck_committed")
        bad = ("official_why %s" % why if why else
               "modified_options %s" % get(r, "modified_options") if get(r, "modified_options") else
               "verdict %s" % verdict_of(r) if verdict_of(r) != "VALID" else
               "deck %s" % deck if deck == "custom" else
               revision_why(rev) or (None if committed is True else "build.deck_committed %s" % str(committed).lower()))
        if bad:
            die("%s: official: true, but %s: the report contradicts itself (altered?)" % (p, bad))
        written = deck_options(deck)
        if not written:
            die("%s: deck: %r is not a shipped deck (inputs/), yet official" % (p, deck))
        ran = run_options(get(r, "options"))
        extra = sorted(set(ran) - set(written) - TUNABLE)
        if extra:  # the deck as written plus what a submitter may change: nothing else
            die("%s: options: %s is neither the deck %s's nor one a submitter may change, yet official"
                % (p, extra[0], deck))
        field(p, r, "verification", "dict")
        repro = all(get(r, "build.%s_reduction" % h) == "reproducible" for h in ("solver", "surrogate"))
        for name, key in (("-golden_state_hash", "state_hash"), ("-golden_weights_hash", "weights_hash")):
            got, said = get(r, "verification." + key), get(r, "verification.golden_" + key)
            if repro and name in written and said not in ("match", "MISMATCH"):  # the build whose bits any machine gives
                die("%s: verification.golden_%s: is %s, yet a reproducible build checks the deck %s's golden hash"
                    % (p, key, kind_of(said), deck))
            # a true mismatch makes the submission not official (report_submission.py); a verdict that
            # contradicts the hash beside it was altered
            if name in written and (got == written[name]) != (said == "match"):
                die("%s: verification.%s: is %s (golden_%s %s), the deck %s's golden hash is %s: the verdict contradicts the hash"
                    % (p, key, got, key, said, deck, written[name]))
        for name, want in written.items():  # the deck as written: each of its options with its value
            if name not in TUNABLE and (name not in ran or not same_option(name, ran[name], want)):
                die("%s: options: %s is %s, the deck %s's %s: not the deck as written, yet official"
                    % (p, name, ran.get(name, "not given"), deck, want or "(set)"))
        size = {"problem.replicas": 1, **deck_size(deck)}  # a deck without -replicas runs one
        tile, ranks = written.get("-weak_tile"), get(r, "machine.ranks")
        if tile is not None:  # the weak deck: one T x T tile per rank
            t = int(tile)
            if not isinstance(ranks, int) or any(int(g) % t for g in grid) or \
                    (int(grid[0]) // t) * (int(grid[1]) // t) != ranks:
                die("%s: problem.grid: is %s, the deck %s's is one %s x %s tile for each of machine.ranks %s, yet official"
                    % (p, grid, deck, t, t, ranks))
        for key, want in size.items():
            if get(r, key) != want:
                die("%s: %s: is %s, the deck %s's is %s: not the deck's problem, yet official"
                    % (p, key, get(r, key), deck, want))
    work = sum(num(get(r, "timing." + k)) for k in ("solve", "features", "predict", "train"))
    total, wall = num(get(r, "timing.total")), elapsed(p, r)
    # date: whole seconds, written after the run; run.start: before the set-up, which timing.total leaves out
    if total < work - 2e-6 or total > wall + 2.0 or wall < -1.0 or wall > 2 * total + 120:
        die("%s: timing.total: is %s, but its parts take %.6f s and the run %.1f s from run.start to date"
            % (p, get(r, "timing.total"), work, wall))
    units = float(grid[0]) * float(grid[1]) * steps * get(r, "problem.replicas")
    if fom is None and work > 0 and steps > 0:
        die("%s: fom.value: is %s, yet its timings time %g steps in %g s" % (p, get(r, "fom.value"), steps, work))
    if fom is not None:  # to the printed digits: timings and FOM with 6 decimals
        want = units / work / 1e6 if work > 0 else None
        tol = None if want is None else want * (2e-6 / work) / max(1 - 2e-6 / work, 1e-12) + 5e-7 + 1e-9 * want
        if want is None or abs(fom - want) > tol:
            die("%s: fom.value: is %s, its timings give %s (%g points x %g steps x %s replicas / %g s of solve, "
                "features, predict, train / 1e6)" % (p, get(r, "fom.value"), "none" if want is None else "%.6f" % want,
                                                     float(grid[0]) * float(grid[1]), steps, get(r, "problem.replicas"),
                                                     work))
    tps = num(get(r, "timing.time_per_step"))
    if tps is not None and steps > 0 and abs(tps - work / steps) > 1e-6 * tps + 2e-6 / steps:
        die("%s: timing.time_per_step: is %s, its timings give %.6e"
            % (p, get(r, "timing.time_per_step"), work / steps))
    return fom


def check_repeats(paths, reps):
    """A repeat is a run: no two reports share a run identity, a start or their timings, and each starts after
    the one before it ended (benchmark.sh runs r1, r2, ... one after the other)."""
    ids, starts, times = {}, {}, {}
    for p, r in zip(paths, reps):
        name = os.path.basename(p)
        who = (get(r, "run.start"), get(r, "run.host"), get(r, "run.pid"))
        for seen, key, what in ((ids, get(r, "run.id"), "run.id"), (starts, who, "run.start, run.host and run.pid"),
                                (times, tuple(num(get(r, "timing." + k)) for k in TIMING_KEYS), "timing")):
            if key in seen:
                die("%s: %s is %s's: a copy of %s, not a repeat" % (p, what, seen[key], seen[key]))
            seen[key] = name
    for k in range(1, len(reps)):  # date: the end's whole seconds, so the next start is not before it (0.1 s: clocks)
        if (when(paths[k], reps[k], "run.start") - when(paths[k - 1], reps[k - 1], "date")).total_seconds() < -0.1:
            die("%s: run.start: is %s, before %s ended (%s): not the repeat after it"
                % (paths[k], get(reps[k], "run.start"), os.path.basename(paths[k - 1]), get(reps[k - 1], "date")))


def noise_why(deck, reps, cv):
    """Why the repeats fail the noise rules, or None. The rules hold for the decks with a minimum duration
    (medium, weak, large); the small decks' runs are the smoke tests and lessons, seconds long."""
    if not deck.endswith(("-medium", "-weak", "-large")):
        return None
    if len(reps) > 1 and (cv is None or cv > CV_BOUND):
        return "FOM coefficient of variation %s above the bound %.2f" % ("n/a" if cv is None else "%.3f" % cv, CV_BOUND)
    for k, r in enumerate(reps):
        load, cores = get(r, "run.load_before"), num(get(r, "machine.cores_online"))
        if not isinstance(load, list) or not load or num(load[0]) is None or cores is None:
            return "repeat %d: no load average before it (run.load_before) or no machine.cores_online" % (k + 1)
        total = num(get(r, "machine.cores_total"))
        if num(load[0]) < 0 or cores < 1 or (total is not None and cores > total):
            return "repeat %d: run.load_before %s with machine.cores_online %g of cores_total %s: not a load reading" % (
                k + 1, load[0], cores, get(r, "machine.cores_total"))
        own = (num(get(r, "machine.ranks_per_node")) or 1) * (num(get(r, "machine.threads")) or 1) if k else 0
        bound = LOAD_SHARE * cores + own
        if num(load[0]) > bound:
            return "repeat %d: load average %s before it, above the bound %g (%.2f x %g cores%s)" % (
                k + 1, load[0], bound, LOAD_SHARE, cores, " + the previous repeat's %g" % own if own else "")
    return None
