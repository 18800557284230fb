#!/usr/bin/env python3
"""scripts/options_doc.py MINIAPP [-o FILE | --check FILE]: docs/options.md
from `MINIAPP -help`: the mini-app's own options (the part of -help that
miniapp/cli/help.c prints first), one table per section: option, default,
meaning. -o writes FILE (atomically); --check compares FILE with what it
would write and exits 1, naming the first differing line, when FILE is stale
(ctest docs_options runs it). Run it on the reproducible build: the text of
-help is the same in every build."""
import argparse
import os
import re
import subprocess
import sys

HEAD = """# Options

Every setting of the mini-app goes through the PETSc options database: the
command line, `-options_file FILE` (the decks in `inputs/`) or the
`PETSC_OPTIONS` environment variable. An unknown, misspelled or unused
option is an error, and so is a value that does not fit the option's type
(docs/reliability.md). `miniapp -help` lists these options first, then
PETSc's own (`-ksp_*`, `-pc_*`, `-log_view`, viewers and startup options:
the PETSc manual pages describe them).

This file is generated from `miniapp -help` by `scripts/options_doc.py`
(`scripts/options_doc.py build/reproducible/miniapp/miniapp -o
docs/options.md`); the `docs_options` test fails when it is stale, so edit
the help texts in the sources, not this file. Defaults are those of a run
without options; a deck (`inputs/*.opts`) sets its own.
"""

OPT = re.compile(r"^  (-\S+?):? <(?:now )?(.*?)(?: : (?:formerly )?.*?)?>:? ?(.*)$")
BOOL = re.compile(r"^  (-\S+?): <(\w+) : \w+> ?(.*)$")


def parse(text):
    m = re.search(r"^==== The mini-app's options.*?$(.*?)^==== PETSc's options", text, re.S | re.M)
    if not m:
        sys.exit("options_doc.py: the -help text has no mini-app part (miniapp/cli/help.c's '==== The mini-app's options' heading)")
    sections, cur = [], None
    for line in m.group(1).splitlines():
        if not line.strip() or line.startswith("----"):
            continue
        if re.match(r"^\S.*:$", line):
            cur = (line[:-1], [])
            sections.append(cur)
            continue
        b, o = BOOL.match(line), OPT.match(line)
        if cur is None or not (b or o):
            if cur and cur[1] and line.startswith("   "):  # a continued help text
                cur[1][-1][2] += " " + line.strip()
            continue
        name, default, rest = (b or o).groups()
        if b:
            default = "on" if default.upper() == "TRUE" else "off"
        rest = re.sub(r"\s*\((None|[A-Z][A-Za-z]*)?\)$", "", rest.strip())
        choice = re.search(r"\(choose one of\) (.*)$", rest)
        if choice:
            rest = rest[:choice.start()].rstrip() + ": " + ", ".join("`%s`" % c for c in choice.group(1).split())
        default = re.sub(r"^(-?\d+)\.$", r"\1", default.strip())  # PETSc prints the real 1 as "1."
        cur[1].append([name, default, rest])
    return sections


def cell(s):
    return s.replace("|", "\\|")


def render(sections):
    out = [HEAD]
    for title, opts in sections:
        out.append("## %s\n" % title)
        out.append("| option | default | meaning |")
        out.append("|---|---|---|")
        for name, default, text in opts:
            out.append("| `%s` | %s | %s |" % (name, "`%s`" % cell(default) if default else "", cell(text)))
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("miniapp")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("-o", dest="out")
    g.add_argument("--check")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([os.path.abspath(a.miniapp), "-help"], capture_output=True, text=True, env=env, cwd=os.path.dirname(os.path.abspath(__file__)))
    if p.returncode != 0:
        sys.exit("options_doc.py: %s -help exited with %d: %s" % (a.miniapp, p.returncode, (p.stderr or p.stdout).strip()[:300]))
    doc = render(parse(p.stdout))
    if a.check:
        try:
            old = open(a.check).read()
        except OSError as e:
            sys.exit("options_doc.py: --check %s: %s" % (a.check, e.strerror))
        if old != doc:
            ol, nl = old.splitlines(), doc.splitlines()
            k = next((i for i in range(min(len(ol), len(nl))) if ol[i] != nl[i]), min(len(ol), len(nl)))
            print("options_doc.py: %s is stale at line %d (regenerate: scripts/options_doc.py MINIAPP -o %s):\n  file: %s\n  -help: %s"
                  % (a.check, k + 1, a.check, ol[k] if k < len(ol) else "(end)", nl[k] if k < len(nl) else "(end)"))
            sys.exit(1)
        print("%s matches -help (%d sections, %d options)" % (a.check, doc.count("\n## "), doc.count("\n| `-")))
    elif a.out:
        tmp = "%s.tmp-%d" % (a.out, os.getpid())
        with open(tmp, "w") as f:
            f.write(doc)
        os.replace(tmp, a.out)
    else:
        sys.stdout.write(doc)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # a file that is not there, not readable: one line, no traceback
        sys.exit(f"options_doc.py: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
    except StopIteration:  # a file without the expected header
        sys.exit("options_doc.py: the input ends before its header (not the expected file)")
