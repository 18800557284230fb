#!/usr/bin/python3
"""scripts/report_common.py: reading miniapp -report YAML files and writing
tables, shared by report_table.py (sweeps, scaling) and report_submission.py
(benchmark submissions): numbers and keys from a report, a configuration's
repeats (Runs: minimum times, maximum FOM), Markdown tables, and --out files
written whole, never over a report read or a file that is not the user's to
lose (docs/reliability.md)."""
import datetime
import glob
import math
import os
import re
import socket
import stat
import sys

import yaml

def die(msg):
    print("report_table: error: " + msg, file=sys.stderr)
    sys.exit(1)


def num(x):
    """A number from YAML (PyYAML reads 1.0e6 without a dot as a string)."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None  # .nan (nothing measured: a restart at its last step) is missing, not a number


def get(d, path):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def find_key(d, key):
    """The first value of KEY anywhere in a nested mapping (e.g. state_hash)."""
    if isinstance(d, dict):
        if key in d:
            return d[key]
        for v in d.values():
            r = find_key(v, key)
            if r is not None:
                return r
    return None


class NoAliasLoader(yaml.SafeLoader):
    """YAML without aliases: the miniapp and the scripts write none, and a few
    kilobytes of nested aliases expand to gigabytes."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("an alias (*%s): reports and submissions hold none" % self.peek_event().anchor)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for k, _ in node.value:  # the last of two equal keys would win unseen
            key = self.construct_object(k, deep=True)
            try:
                twice = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the constructor refuses it
            if twice:
                raise yaml.YAMLError("the key %r twice in one mapping (line %d)" % (key, k.start_mark.line + 1))
        return super().construct_mapping(node, deep)


def read_bytes(path):
    """The bytes of the file PATH; one line where it is not a regular file."""
    if not os.path.isfile(path):  # a FIFO would block, a directory is no report
        die("%s: not a regular file" % path)
    with open(path, "rb") as f:
        return f.read()


def read_yaml(path):
    """(the bytes of PATH, their YAML); one line naming the file where it is not UTF-8 or not YAML."""
    raw = read_bytes(path)
    return raw, parse_yaml(path, raw)


def parse_yaml(path, raw):
    """The YAML in the bytes RAW, read from PATH (named in the one-line errors)."""
    try:
        return yaml.load(raw.decode("utf-8"), Loader=NoAliasLoader)
    except UnicodeDecodeError as e:
        die("%s: cannot read (byte %d is not UTF-8)" % (path, e.start))
    except RecursionError:
        die("%s: cannot read (nested too deep)" % path)
    except (yaml.YAMLError, ValueError) as e:  # ValueError: an integer of thousands of digits
        die("%s: cannot read (%s)" % (path, " ".join(str(e).split())))


def fnv1a64(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


SEAL = re.compile(rb'seal: "fnv1a64:([0-9a-f]{16})"\n\Z')


def seal_line(body):
    """The line that seals BODY (the bytes before it; miniapp/io/yamlfmt.h)."""
    return b'seal: "fnv1a64:%016x"\n' % fnv1a64(body)


def seal_start(raw):
    """Where the bytes RAW's last line starts when it is a seal line ("seal: ..."), else 0."""
    cut = raw.rfind(b"\nseal: ") + 1
    return cut if cut and raw.endswith(b"\n") and b"\n" not in raw[cut:-1] else 0


def seal_why(raw):
    """Why the bytes RAW (a report or a submission) are not as they were written, or None."""
    cut = seal_start(raw)
    m = SEAL.match(raw, cut) if cut else None
    if not m:
        return "no seal as its last line: not as it was written (cut short, or edited)"
    if seal_line(raw[:cut]) != raw[cut:]:
        return "is fnv1a64:%s, the bytes before it give fnv1a64:%016x: edited after it was written" % (
            m.group(1).decode(), fnv1a64(raw[:cut]))
    return None


def sealed(text):
    """TEXT (YAML) with its seal as the last line."""
    return text + seal_line(text.encode()).decode()


class NoAliasDumper(yaml.SafeDumper):
    """Writes an object met twice in full, as NoAliasLoader reads it."""

    def ignore_aliases(self, data):
        return True


def load(path):
    d = read_yaml(path)[1]
    if not isinstance(d, dict) or "timing" not in d or verdict_of(d) is None:
        die("%s: not a miniapp report (no timing or VALID/INVALID verdict)" % path)
    return d


def verdict_of(r):
    """VALID/INVALID: top-level 'verification: VALID' or 'verdict: VALID'."""
    for v in (r.get("verification"), r.get("verdict"), get(r, "verification.verdict")):
        if v in ("VALID", "INVALID"):
            return v
    return None


class Runs:
    """The repeats of one configuration: minimum times, maximum FOM."""

    def __init__(self, reports, rounds=None):
        self.reports = reports
        self.first = reports[0]
        self.rounds = rounds or {}  # round k -> its report (sweep.sh: <name>.r<k>.yaml)

    def valid(self):
        """The VALID repeats alone (None if there are none): a verdict or a
        time worth quoting comes from runs that passed verification."""
        keep = [r for r in self.reports if verdict_of(r) == "VALID"]
        if not keep:
            return None
        return Runs(keep, {k: r for k, r in self.rounds.items() if verdict_of(r) == "VALID"})

    def quoted(self):
        """The runs a table quotes: the VALID ones, or all when none is (the
        verification column then says INVALID)."""
        return self.valid() or self

    def tmin(self, f):
        vals = [v for v in (f(r) for r in self.reports) if v is not None]
        return min(vals) if vals else None

    def t(self, key):
        return self.tmin(lambda r: num(get(r, "timing." + key)))

    def solve_per_step(self):
        return self.tmin(lambda r: ratio(num(get(r, "timing.solve")), timed_steps(r)))

    def surrogate(self):
        def f(r):
            tr, pr = num(get(r, "timing.train")), num(get(r, "timing.predict"))
            if tr is None or pr is None or tr + pr <= 0:
                return None
            return tr + pr
        return self.tmin(f)

    def fom(self):
        vals = [v for v in (num(get(r, "fom.value")) for r in self.reports) if v is not None]
        return max(vals) if vals else None

    def tvals(self, key):
        return [v for v in (num(get(r, "timing." + key)) for r in self.reports) if v is not None]

    def spread(self):
        vals = [v for v in (num(get(r, "timing.time_per_step")) for r in self.reports) if v is not None]
        if len(vals) < 2 or min(vals) <= 0:
            return None
        return max(vals) / min(vals) - 1

    def verification(self):
        bad = sum(1 for r in self.reports if verdict_of(r) != "VALID")
        if not bad:
            return "VALID"
        return "INVALID" if bad == len(self.reports) else "INVALID (%d of %d)" % (bad, len(self.reports))

    def hashes(self):
        return {str(find_key(r, "state_hash")) for r in self.reports if find_key(r, "state_hash") is not None}


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def fmt(x, spec="%.4g", none="n/a"):
    return none if x is None else spec % x


def fx(r):
    return fmt(r, "%.3fx")


def collect(directory, pattern):
    """{name: Runs} from DIR/<name>.r<k>.yaml"""
    groups, names = {}, {}
    for p in sorted(glob.glob(os.path.join(directory, "*.r*.yaml"))):
        m = re.fullmatch(pattern + r"\.r(\d+)\.yaml", os.path.basename(p))
        if m:
            g, k = groups.setdefault(m.group(1), {}), int(m.groups()[-1])
            if k in g:
                die("%s: round %d of %s twice (%s and %s)" % (directory, k, m.group(1), names[(m.group(1), k)], os.path.basename(p)))
            g[k], names[(m.group(1), k)] = load(p), os.path.basename(p)
    return {k: Runs([v[i] for i in sorted(v)], v) for k, v in groups.items()}


def cpu_model(r):
    if get(r, "machine.cpu"):
        return get(r, "machine.cpu")
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def run_dates(reports):
    """The runs' own dates (report key date, UTC), first to last; the table's
    date where the reports have none."""
    ds = sorted(str(r.get("date")) for r in reports if r.get("date"))
    if not ds:
        return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z") + " (the table's; the reports have no date)"
    return ds[0] if ds[0] == ds[-1] else "%s to %s" % (ds[0], ds[-1])


def header(title, runs, args, extra, reports=None):
    r = runs.first
    cores = get(r, "machine.cores_online")  # the run's machine, not the one making the table
    if cores is None:
        cores = "%s (the table's machine)" % (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    host = get(r, "machine.hostname") or socket.gethostname()
    b = r.get("build") or {}
    lines = [
        "# %s: %s" % (title, args.deck or r.get("deck") or get(r, "problem.scenario")),
        "",
        "- machine: %s, %s, %s cores; device: solver %s, surrogate %s" % (
            host, cpu_model(r), cores, get(r, "solver.device") or "cpu", get(r, "machine.device") or "n/a"),
        "- date: %s" % run_dates(reports or runs.reports),
        "- deck: %s (scenario %s, grid %s, %s steps, %s replicas, coupling %s)" % (
            args.deck or r.get("deck"), get(r, "problem.scenario"), "x".join(str(g) for g in get(r, "problem.grid") or []) or "n/a",
            get(r, "problem.steps"), get(r, "problem.replicas"), get(r, "problem.coupling")),
        "- build: compiler %s, cuda %s" % (b.get("compiler", "n/a"), b.get("cuda", "n/a")),
    ] + extra
    if args.command:
        lines.append("- command: `%s`" % args.command)
    return lines + [""]


def cell(x):
    """X as one Markdown table cell: a bar escaped, a line break a space (a name cannot add a column or a row)."""
    return re.sub(r"[\r\n]+", " ", str(x).replace("|", "\\|"))


def table(cols, rows):
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    return out + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def check_out(args):
    """--out before any work: not one of the reports read, a writable place."""
    if not args.out:
        return
    out = os.path.realpath(args.out)
    if os.path.isdir(out):
        die("--out %s: is a directory; name a file" % args.out)
    given = [args.dir] + list(getattr(args, "more", []))
    ins = [os.path.realpath(p) for p in given]
    for d in {p if os.path.isdir(p) else os.path.dirname(p) or "." for p in given}:  # and the reports in or beside them
        ins += [os.path.realpath(q) for q in glob.glob(os.path.join(d, "*.r*.yaml")) + glob.glob(os.path.join(d, "r*.yaml"))]
    ins += [os.path.realpath(p) + ".md" for p in given if os.path.isfile(p)]  # a submission's own table
    # the folders read (a submission's, benchmark.sh's): no file of theirs is replaced, but the submission's own
    read = {os.path.realpath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in given}
    own = ("submission.yaml", "submission.yaml.md") if args.what == "submission" else ()
    for target in [args.out] + ([args.out + ".md"] if args.what == "submission" else []):
        t = os.path.realpath(target)
        if t in ins:
            die("--out %s: is one of the reports it reads (or a submission's table); name another file" % target)
        if os.path.lexists(target) and os.path.dirname(t) in read and os.path.basename(t) not in own:
            die("--out %s: is a file in a folder it reads; name a new file or one elsewhere" % target)
    d = os.path.dirname(out) or "."
    if not os.path.isdir(d) or not os.access(d, os.W_OK | os.X_OK):
        die("--out %s: cannot write in %s" % (args.out, d))
    for target in [args.out] + ([args.out + ".md"] if args.what == "submission" else []):  # what write_text would refuse, refused before anything is printed
        refuse_target(target)


def refuse_target(given):
    """A file --out may not replace: not a regular file, the file a standard stream goes to, a program,
    a write-protected file (as the C tools, docs/reliability.md). A missing file is fine."""
    path = os.path.realpath(given)
    if not os.path.exists(path):
        return
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        die("--out %s: not a regular file" % given)
    for fd in (0, 1, 2):
        try:
            s = os.fstat(fd)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            die("--out %s: is where this program's standard %s goes; refusing to replace it" % (given, ("input", "output", "error")[fd]))
    with open(path, "rb") as f:
        head = f.read(4)
    if st.st_mode & 0o111 or head.startswith(b"\x7fELF") or head.startswith(b"#!"):
        die("--out %s: is a program; refusing to replace it" % given)
    if not st.st_mode & 0o222:
        die("--out %s: is write-protected (no write permission); refusing to replace it" % given)


def timed_steps(r):
    """The steps the report's times cover (timing.timed_steps: this process's, re-done ones
    included; problem.steps in reports written before it), as time_per_step divides by."""
    t = num(get(r, "timing.timed_steps"))
    return t if t is not None else num(get(r, "problem.steps"))


def write_text(path, text):
    refuse_target(path)  # checked at the start too (check_out); again here, just before the replace
    path = os.path.realpath(path)  # through a symbolic link: its target is replaced, the link stays
    tmp = "%s.tmp-%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        die("--out %s: %s" % (path, e.strerror))


def emit(lines, args):
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        write_text(args.out, text)
