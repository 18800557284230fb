#!/usr/bin/env python3
"""tests/docs_faults.py BUILD_DIR DOC: docs/faults.md's detection tables for
this build's strategy are what the code measures now.

  - The study: `faultstudy.py detect BUILD_DIR --trials 2` (every site and
    bit, two seeded flips each: 576 short runs, two at a time: a few minutes on 2 cores),
    its table and its "lowest bit caught" lines against those the page gives
    under "**Reproducible build**" or "**Atomic build**" (the deterministic
    build has no table of its own: the page says it behaves as the
    reproducible one, and faults_replicas tests that).
  - The surrogate checks in detail: `test_surrogate_faults -faults_trials 20`
    (a few seconds), this strategy's gradient and activation columns of the
    page's table ("flagged / weights differ", every bit of a row's range),
    and its sentence that weight flips were flagged and changed the weights
    at every bit.
The runs are seeded, so every cell must be the same. Exit 1 naming every
row that drifted, with the page's and the run's."""
import os
import re
import subprocess
import sys
import tempfile


def table(text, start):
    """The data rows of the first table after the line holding start, and the six 'lowest bit' lines after it."""
    lines = text[text.index(start):].splitlines()
    rows, bullets, started = [], [], False
    for line in lines[1:]:
        if line.startswith("|"):
            started = True
            if not line.startswith("|---") and not line.startswith("| site "):
                rows.append(line.strip())
        elif started and line.startswith("- ") and "lowest bit" in line:
            bullets.append(line.strip())
        elif started and bullets and not line.startswith("- "):
            break
    return rows, bullets


def rate(x):
    """A rate as the page writes it: 0, 1 or .40."""
    v = round(float(x) * 100)
    return "0" if v == 0 else "1" if v == 100 else ".%02d" % v


def surrogate_checks(build, doc):
    """This strategy's columns of the surrogate-checks table against test_surrogate_faults; (strategy, errors)."""
    exe = os.path.join(build, "tests", "surrogate", "test_surrogate_faults")
    p = subprocess.run([exe, "-faults_trials", "20"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("docs_faults: %s -faults_trials 20: exit %d: %s" % (exe, p.returncode, (p.stdout + p.stderr).strip()[-400:]))
    strategy = re.search(r"^surrogate reduction: (\w+)", p.stdout, re.M).group(1)
    got = {}  # bit -> {site: (checks, weights)}
    for line in p.stdout.splitlines():
        m = re.match(r"^ +(\d+)" + r" +([0-9.]+) / ([0-9.]+) / [0-9.]+" * 3 + r"\s*$", line)
        if m:
            v = m.groups()
            got[int(v[0])] = {"gradient": (v[1], v[2]), "weight": (v[3], v[4]), "activation": (v[5], v[6])}
    errors = []
    if sorted(got) != list(range(32)):
        return strategy, ["test_surrogate_faults printed rates for bits %s, want 0-31" % sorted(got)]
    lines = doc[doc.index("| bit | gradient, reproducible |"):].splitlines()
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    cols = [(i, c.split(", ")[0]) for i, c in enumerate(head) if c.endswith(", " + strategy)]
    if not cols:
        errors.append("the surrogate-checks table has no column of the %s build" % strategy)
    rows = 0
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        lo, _, hi = cells[0].partition("-")
        rows += 1
        for b in range(int(lo), int(hi or lo) + 1):
            for i, site in cols:
                r = "%s / %s" % tuple(rate(x) for x in got[b][site])
                if r != cells[i]:
                    errors.append("surrogate checks, bit %d, %s (row %s): the page says %s, the run gives %s" % (b, head[i], cells[0], cells[i], r))
    if rows < 5:
        errors.append("the surrogate-checks table has %d rows" % rows)
    if "Weight flips were flagged, and changed the weights, for every bit 0-31 in\nevery build." not in doc:
        errors.append("the page no longer says that weight flips were flagged and changed the weights at every bit")
    for b in range(32):
        if got[b]["weight"] != ("1.00", "1.00"):
            errors.append("surrogate checks, weight bit %d: flagged %s, weights changed %s; the page says every bit, always" % (b, *got[b]["weight"]))
    return strategy, errors


def main():
    build, docpath = sys.argv[1], sys.argv[2]
    doc = open(docpath).read()
    strategy, errors = surrogate_checks(build, doc)
    print("docs_faults: surrogate checks of the %s build: %s" % (strategy, "%d difference(s)" % len(errors) if errors else "every cell is the run's"))
    if strategy == "deterministic":  # no study table of its own
        for e in errors:
            print("docs_faults: " + e)
        sys.exit(1 if errors else 0)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    study = os.path.join(src, "scripts", "faultstudy.py")
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, study, "detect", build, "--trials", "2", "--jobs", "2", "--out", os.path.join(tmp, "d.csv")], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("docs_faults: faultstudy.py detect %s: exit %d: %s" % (build, p.returncode, p.stderr.strip()[-400:]))
    head = [line for line in p.stdout.splitlines() if line.startswith("### ")]
    if not head:
        sys.exit("docs_faults: faultstudy.py printed no table:\n" + p.stdout[-400:])
    if head[0].split()[1] != strategy:  # "### reproducible build (...)"
        sys.exit("docs_faults: %s: the study ran a %s build, the surrogate test a %s one" % (build, head[0].split()[1], strategy))
    start = {"reproducible": "**Reproducible build**", "atomic": "**Atomic build**"}[strategy]
    drows, dbul = table(doc, start)
    rrows, rbul = table(p.stdout, head[0])
    if len(drows) != len(rrows) or len(dbul) != len(rbul):
        errors.append("the page has %d rows and %d lines for the %s build, the run %d and %d" % (len(drows), len(dbul), strategy, len(rrows), len(rbul)))
    for d, r in zip(drows + dbul, rrows + rbul):
        if d != r:
            errors.append("%s build: the page says\n    %s\n  the run gives\n    %s" % (strategy, d, r))
    for e in errors:
        print("docs_faults: " + e)
    if errors:
        print("docs_faults: regenerate with `scripts/faultstudy.py detect %s --trials 2` (and `faultstudy.py compare` for the table of both)" % build)
        sys.exit(1)
    print("docs_faults: the %s build's study: %d rows and %d lines, every one the run's" % (strategy, len(rrows), len(rbul)))


if __name__ == "__main__":
    main()
