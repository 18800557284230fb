#!/usr/bin/env python3
"""scripts/labnumbers.py: holds every number the teaching lab quotes to what
the code produces. The manifest (docs/lab/numbers.py) lists, per quoted
number, the doc, its text in context, the lab run that makes it, how to read
it from the run's files and its printed format; this script runs those runs
(each once, the lab's own commands at full length) and compares.

  labnumbers.py check  BUILD   run, then fail naming every number that drifted
  labnumbers.py update BUILD   run, then rewrite the drifted numbers in the docs
  labnumbers.py lint           no runs: every context found once, every decimal
                               number of the docs' prose held or declared unheld

BUILD is the reproducible build directory; its siblings with the same prefix
(build/reproducible -> build/atomic, build/deterministic) are the other two.
Options: --full (also the 9000-step background run and other long controls;
without it their numbers at steps a shorter lab run also reaches are read from
that run, the rest are reported as not checked), --jobs N (runs side by side,
default 2, each with OMP_NUM_THREADS=1: every quoted run is seeded or ordered,
so its bits do not depend on the thread count), --keep DIR (run there and keep
the outputs), --reuse DIR (read the outputs a --keep run left; no runs).
Exit: 0 every number matches, 1 a mismatch or a broken manifest, 77 skipped.
"""
import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB = os.path.join(ROOT, "docs", "lab")
NUM = r"(-?(?:0x[0-9a-f]+|[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)|VALID|INVALID|true|false)"


# ---- formats: the doc's own spellings -------------------------------------

def _exp(s):  # 2.1e-09 -> 2.1e-9
    return re.sub(r"e([-+])0*([0-9])", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), s)


def f(n):
    return lambda v: f"{v:.{n}f}"


def e(n):
    return lambda v: _exp(f"{v:.{n - 1}e}")


def g(n):  # n significant digits in plain decimals: 0.19, 0.010, 98, 5.2
    return lambda v: f"{v:#.{n}g}".rstrip(".")


def pct(n):
    return lambda v: g(n)(100.0 * v)


def i(v):  # an integer; a value with a fraction prints as it is, so that it cannot match
    return str(int(v)) if float(v) == int(v) else repr(v)


def s(v):
    return str(v)


def low(v):
    return str(v).lower()


# ---- runs -------------------------------------------------------------------

class Job:
    """A lab section's ```sh lines (figures and the sweep left out), or an
    extra command a question asks for; runs once, in the scratch view."""
    def __init__(self, name, section=None, cmd=None, full_only=False, expect=10):
        self.name, self.section, self.cmd, self.full_only, self.expect = name, section, cmd, full_only, expect
        self.seconds, self.error, self.ran = None, None, False

    def lines(self, labtext):
        if self.cmd:
            return [self.cmd]
        out, sec, inblock = [], None, False
        for line in labtext.splitlines():
            if inblock:
                if line.startswith("```"):
                    inblock = False
                elif sec and sec.startswith(self.section):
                    t = line.strip()  # figures, the sweep and display-only lines make no number
                    if re.match(r"(scripts/(setup|sweep)\.sh|grep|tail|sed|awk)\b", t) or re.search(r"scripts/plot\.py\b", t):
                        continue
                    out.append(re.sub(r"\s*&\s*$", "", line))  # the background run runs in the foreground here
            elif line.startswith("```sh"):
                inblock = True
            elif line.startswith("## "):
                sec = line[3:].strip()
        if not out:
            raise SystemExit(f"FAIL: manifest: no commands found in the lab section '{self.section}'")
        return out

    # value getters bound to this job
    def nc(self, path, var, **kw):
        return Value(self, path, ("nc", var, kw))

    def yaml(self, path, key, *index):
        return Value(self, path, ("yaml", key, index))

    def csv(self, path, col, **where):
        return Value(self, path, ("csv", col, where))

    def stdout(self, regex):
        return Value(self, None, ("stdout", regex, None))

    def text(self, path, regex):
        return Value(self, path, ("text", regex, None))


class Value:
    """One number read from a job's outputs; short: (job, path) of a shorter
    lab run that reaches the same step with the same bits (used without --full)."""
    def __init__(self, job, path, how, fn=None, desc=None, short=None):
        self.job, self.path, self.how, self.fn, self.desc, self.short = job, path, how, fn, desc, short

    def then(self, fn, desc):
        return Value(self.job, self.path, self.how, fn, desc, self.short)

    def or_short(self, job, path):
        return Value(self.job, self.path, self.how, self.fn, self.desc, (job, path))

    def describe(self):
        kind, a, b = self.how
        where = {"nc": lambda: f"{a}{_kw(b)} in {self.path}", "yaml": lambda: f"{a}{list(b) if b else ''} in {self.path}",
                 "csv": lambda: f"{a} where {_kw(b)} in {self.path}", "stdout": lambda: f"/{a}/ on the output of {self.job.name}",
                 "text": lambda: f"/{a}/ in {self.path}"}[kind]()
        return (self.desc + " of " if self.desc else "") + where

    def _read(self, ctx, job, path):
        raw = ctx.read(job, path, self.how)
        return self.fn(raw) if self.fn else raw

    def get(self, ctx):
        if self.job.ran:
            v = self._read(ctx, self.job, self.path)
            if self.short and self.short[0].ran:  # both ran: they must agree on the shared steps
                w = self._read(ctx, *self.short)
                if not (v == w or (v != v and w != w)):
                    raise ValueError(f"{self.short[1]} gives {w}, {self.path} {v}: they must share these steps bit for bit")
            return v
        if self.short and self.short[0].ran:
            return self._read(ctx, *self.short)
        return NotRun(self.job)


class Derived(Value):
    """A value computed from others (fn gets their values, in order)."""
    def __init__(self, desc, fn, *values):
        self.desc, self.fn, self.values = desc, fn, values

    def describe(self):
        return f"{self.desc} from " + "; ".join(v.describe() for v in self.values)

    def then(self, fn, desc):
        return Derived(desc, fn, self)

    def get(self, ctx):
        got = [v.get(ctx) for v in self.values]
        miss = [x for x in got if isinstance(x, NotRun)]
        return miss[0] if miss else self.fn(*got)


class NotRun:
    def __init__(self, job):
        self.job = job


def _kw(d):
    return "[" + ", ".join(f"{k}={v}" for k, v in d.items()) + "]" if d else ""


class Context:
    """The scratch view of the repository and the readers of its files."""
    def __init__(self, view, logs):
        self.view, self.logs, self.cache = view, logs, {}

    def _open(self, path, kind):
        key = (kind, path)
        if key not in self.cache:
            full = os.path.join(self.view, path)
            if kind == "nc":
                import netCDF4
                ds = netCDF4.Dataset(full)
                ds.set_auto_mask(False)
                self.cache[key] = ds
            elif kind == "yaml":
                import yaml
                self.cache[key] = yaml.safe_load(open(full))
            else:
                rows = [l for l in open(full) if not l.startswith("#")]
                head = rows[0].strip().split(",")
                self.cache[key] = [dict(zip(head, r.strip().split(","))) for r in rows[1:]]
        return self.cache[key]

    def read(self, job, path, how):
        kind, a, b = how
        if kind in ("stdout", "text"):
            f = os.path.join(self.logs, job.name + ".log") if kind == "stdout" else os.path.join(self.view, path)
            m = re.search(a, open(f).read(), re.M)
            if not m:
                raise LookupError(f"/{a}/ not found in {f}")
            return m.group(1)
        if kind == "yaml":
            v = self._open(path, "yaml")
            for k in a.split("."):
                v = v[k]
            for k in b:
                v = v[k]
            return v
        if kind == "csv":
            rows = [r for r in self._open(path, "csv") if all(r[k] == str(x) for k, x in b.items())]
            if len(rows) != 1:
                raise LookupError(f"{len(rows)} rows of {path} match {b}")
            return float(rows[0][a])
        ds = self._open(path, "nc")
        v = ds[a]
        idx = []
        for dim in v.dimensions:
            if dim == "step" and "step" in b:
                steps = list(ds["step"][:])
                idx.append(steps.index(b["step"]))
            elif dim == "epoch" and "epoch" in b:
                idx.append(list(ds["epoch"][:]).index(b["epoch"]))
            elif dim == "replica":
                idx.append(b.get("replica", 1))
            elif dim == "hash_strlen":
                pass
            else:
                idx.append(slice(None))
        x = v[tuple(idx)]
        return x.item() if hasattr(x, "ndim") and x.ndim == 0 else x


def run_jobs(jobs, labtext, view, logs, nworkers, full):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def one(job):
        script = "set -euo pipefail\n" + "\n".join(job.lines(labtext)) + "\n"
        t0 = time.time()
        with open(os.path.join(logs, job.name + ".log"), "w") as log:
            rc = subprocess.run(["bash", "-c", script], cwd=view, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        job.seconds = time.time() - t0
        if rc:
            job.error = f"exit {rc} (log: {os.path.join(logs, job.name + '.log')})"
        else:
            job.ran = True
        print(f"  {job.seconds:7.1f} s  {job.name}{'  FAILED: ' + job.error if job.error else ''}", flush=True)

    todo = [j for j in jobs if full or not j.full_only]
    todo.sort(key=lambda j: -j.expect)  # longest first: two workers finish together
    with cf.ThreadPoolExecutor(max_workers=nworkers) as pool:
        list(pool.map(one, todo))


# ---- the docs: where each number is ---------------------------------------

def sections(text):
    """(name, start, end) of every '## ' section."""
    heads = [(m.group(1).strip(), m.start()) for m in re.finditer(r"^## (.+)$", text, re.M)]
    return [(n, s0, heads[k + 1][1] if k + 1 < len(heads) else len(text)) for k, (n, s0) in enumerate(heads)]


def prose_mask(text):
    """text with code blocks and inline code blanked (same length)."""
    t = re.sub(r"```.*?```", lambda m: " " * len(m.group(0)), text, flags=re.S)
    return re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), t)


def locate(text, section, context):
    """Spans of the numbers marked {} in context, found once in the section."""
    secs = [x for x in sections(text) if x[0].startswith(section)]
    if len(secs) != 1:
        return None, f"section '{section}' found {len(secs)} times"
    _, a, b = secs[0]
    parts = context.split("{}")
    pat = NUM.join(r"\s+".join(re.escape(w) for w in re.split(r"\s+", p)) if p.strip() else (r"\s+" if p else "") for p in parts)
    hits = list(re.finditer(pat, text[a:b]))
    if len(hits) != 1:
        return None, f"context found {len(hits)} times in section '{section}' (must be once): {context!r}"
    m = hits[0]
    return ([(a + m.start(k), a + m.end(k)) for k in range(1, len(parts))], (a + m.start(), a + m.end())), None


def load_manifest():
    import importlib.util
    spec = importlib.util.spec_from_file_location("labnumbers_manifest", os.path.join(LAB, "numbers.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["labnumbers"] = sys.modules[__name__]
    spec.loader.exec_module(mod)
    return mod


def lint(man, docs):
    """Contexts found once; every decimal number or percentage of the prose
    held by an entry or declared unheld. Returns the list of problems."""
    bad, covered = [], {d: [] for d in docs}
    for q in man.NUMBERS:
        spans, err = locate(docs[q.doc], q.section, q.context)
        if err:
            bad.append(f"{q.doc}: {err}")
            continue
        if len(spans[0]) != len(q.values):
            bad.append(f"{q.doc}: {q.context!r} marks {len(spans[0])} numbers, the manifest gives {len(q.values)} values")
        q.spans = spans[0]
        covered[q.doc].append(spans[1])
    for doc, section, context, _why in man.UNHELD:
        spans, err = locate(docs[doc], section, context.replace("{}", "{}"))
        if err:
            bad.append(f"{doc}: unheld entry: {err}")
        else:
            covered[doc].append(spans[1])
    for doc, text in docs.items():
        prose = prose_mask(text)
        for name, a, b in sections(text):
            if name.startswith(man.IGNORE_SECTIONS):
                covered[doc].append((a, b))
        for m in re.finditer(r"(?<![\w.-])[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+|%)|(?<![\w.])[0-9]*\.[0-9]+", prose):
            if re.fullmatch(r"1e-?[0-9]+", m.group(0)):
                continue  # a power of ten: a parameter (rtol), a threshold or an order of magnitude
            if not any(x <= m.start() and m.end() <= y for x, y in covered[doc]):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{doc}:{line}: the number {m.group(0)} is neither held by docs/lab/numbers.py nor declared unheld there")
    return bad


# ---- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["check", "update", "lint"])
    ap.add_argument("build", nargs="?")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep")
    ap.add_argument("--reuse")
    a = ap.parse_args()
    if a.jobs < 1:
        sys.exit(f"labnumbers: error: --jobs {a.jobs}: at least 1")
    if a.reuse and not os.path.isdir(os.path.join(a.reuse, ".logs")):  # a folder no --keep run left: nothing would be checked
        sys.exit(f"labnumbers: error: --reuse {a.reuse}: no .logs folder there (the outputs of a --keep run)")
    man = load_manifest()
    docs = {d: open(os.path.join(LAB, d)).read() for d in man.DOCS}
    problems = lint(man, docs)
    for p in problems:
        print("FAIL:", p)
    if a.mode == "lint":
        print(f"{'FAIL' if problems else 'PASS'}: {sum(len(q.values) for q in man.NUMBERS)} numbers held, "
              f"{len(man.UNHELD)} declared unheld")
        return 1 if problems else 0
    if problems:
        return 1
    labtext = docs["README.md"]
    if a.reuse:
        view = os.path.abspath(a.reuse)
        for j in man.JOBS:
            j.ran = os.path.exists(os.path.join(view, ".logs", j.name + ".done"))
    else:
        if not a.build:
            ap.error("check/update need BUILD (the reproducible build directory)")
        bdir = os.path.abspath(a.build)
        if not bdir.endswith("reproducible"):
            print(f"SKIP: {bdir} is not a reproducible build directory")
            return 77
        prefix = bdir[: -len("reproducible")]
        for v in ("atomic", "deterministic", "reproducible"):
            for exe in ("miniapp/miniapp", "bench/sumstudy/miniapp-sumstudy"):
                if not os.access(prefix + v + "/" + exe, os.X_OK):
                    print(f"SKIP: {prefix + v}/{exe} is missing (the lab needs the three builds)")
                    return 77
        view = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="labnumbers.")
        os.makedirs(os.path.join(view, "build"), exist_ok=True)
        os.makedirs(os.path.join(view, "out", "lab"), exist_ok=True)
        for d in ("scripts", "inputs", "docs"):
            if not os.path.lexists(os.path.join(view, d)):
                os.symlink(os.path.join(ROOT, d), os.path.join(view, d))
        for v in ("atomic", "deterministic", "reproducible"):
            if not os.path.lexists(os.path.join(view, "build", v)):
                os.symlink(prefix + v, os.path.join(view, "build", v))
        os.makedirs(os.path.join(view, ".logs"), exist_ok=True)
        print(f"labnumbers: running the lab's runs in {view} ({a.jobs} side by side{', --full' if a.full else ''})", flush=True)
        t0 = time.time()
        run_jobs(man.JOBS, labtext, view, os.path.join(view, ".logs"), a.jobs, a.full)
        print(f"  {time.time() - t0:7.1f} s  all runs", flush=True)
        for j in man.JOBS:
            if j.ran:
                open(os.path.join(view, ".logs", j.name + ".done"), "w").close()
    ctx = Context(view, os.path.join(view, ".logs"))
    failed = [j for j in man.JOBS if j.error]
    nok, drift, unchecked, edits = 0, [], [], {d: [] for d in docs}
    for q in man.NUMBERS:
        for (lo, hi), val, fmt in zip(q.spans, q.values, q.fmts):
            quoted = docs[q.doc][lo:hi]
            try:
                v = val.get(ctx)
            except Exception as ex:  # a missing file or key is a broken link, not a skip
                drift.append(f"{q.doc} [{q.section}] {q.context!r}: cannot read {val.describe()}: {ex}")
                continue
            if isinstance(v, NotRun):
                why = v.job.error or ("runs with --full only" if v.job.full_only else "not run")
                unchecked.append(f"{q.doc} [{q.section}] {q.context!r}: {quoted} ({v.job.name} {why})")
                continue
            fresh = fmt(v)
            ok = fresh == quoted if q.tol is None else _close(quoted, v, q.tol)
            if ok:
                nok += 1
            else:
                tol = "exact" if q.tol is None else f"relative tolerance {q.tol:g}"
                drift.append(f"{q.doc} [{q.section}] {q.context!r}: the doc says {quoted}, the run gives {fresh} "
                             f"({val.describe()}; {tol})")
                edits[q.doc].append((lo, hi, fresh))
    for j in failed:
        print(f"FAIL: run {j.name} failed: {j.error}")
    for u in unchecked:
        print(f"not checked: {u}")
    for d in drift:
        print(f"FAIL: {d}")
    if a.mode == "update":
        for doc, ed in edits.items():
            text = docs[doc]
            for lo, hi, new in sorted(ed, reverse=True):
                text = text[:lo] + new + text[hi:]
            if ed:
                open(os.path.join(LAB, doc), "w").write(text)
                print(f"updated {len(ed)} numbers in docs/lab/{doc}")
        return 1 if failed else 0
    none = nok == 0 and not drift  # nothing was compared: no PASS
    print(f"{'FAIL' if drift or failed or none else 'PASS'}: {nok} numbers match their runs, {len(drift)} drifted, "
          f"{len(unchecked)} not checked{' (need --full)' if unchecked and not a.full and not a.reuse else ''}")
    return 1 if drift or failed or none else 0


def _close(quoted, v, tol):
    try:
        q = float(quoted)
    except ValueError:
        return False
    return abs(q - v) <= tol * abs(v)


class Q:
    """Numbers quoted in one context: each {} in context is one of values,
    printed with fmt; tol None: the printed text must be the same (EXACT),
    else a relative tolerance on the value."""
    def __init__(self, doc, section, context, values, fmt, tol=None):
        self.doc, self.section, self.context, self.tol = doc, section, context, tol
        self.values = values if isinstance(values, (list, tuple)) else [values]
        self.fmts = fmt if isinstance(fmt, (list, tuple)) else [fmt] * len(self.values)
        if len(self.fmts) != len(self.values):
            raise SystemExit(f"FAIL: manifest: {context!r} has {len(self.values)} values and {len(self.fmts)} formats")


if __name__ == "__main__":
    sys.exit(main())
