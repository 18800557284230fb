#!/usr/bin/env python3
"""tests/docs_coupling.py MINIAPP DOC [FIXTURE_DIR]: every iteration count, share and start
residual docs/coupling.md quotes for the initial guesses is what the code
gives now.

It runs the four configurations the page's tables come from (the default
deck with one replica and the heat-medium deck, each with `-guess_learn
increment` and with `-guess_learn residual`, the default deck's own mode;
about 15 s on 2 cores), reads each report's `coupling: guesses:` rows and
checks:
  - the two guess tables: iterations, % saved and start residual of every
    row (the seconds are the machine's and are quoted with its date, so not
    checked);
  - the residual-mode table: projection, combined, the network's share, and
    the learned row (the projection's guess plus the unscaled correction)
    against the projection it corrects;
  - the numbers the prose around them repeats (831 = 831, 0.8% on heat,
    34% against 19%, 3.43e-9 against 3.47e-9, 12% and 1.4%, 101 iterations
    saved against 300 operator products).
Exit 1 naming every number that drifted, with the doc's text and the run's
value. Numbers are the reproducible build's (the page says so); ctest runs
this in that build only, with FIXTURE_DIR: the default deck's two reports
come from the fixture coupling_default (coupling_default_runs, which
coupling_guess_saves reads too: default.* the deck as it is, increment.*
with -guess_learn increment), the heat deck's are run here."""
import decimal
import os
import re
import subprocess
import sys
import tempfile


def fail(msgs):
    for m in msgs:
        print("docs_coupling: " + m)
    sys.exit(1)


def run(app, src, deck, extra, tmp, name, made=None):
    """The guess rows of the run's report; made: that report, already written by the same command (a fixture)."""
    rep = made or os.path.join(tmp, name + ".yaml")
    cmd = [app, "-options_file", os.path.join(src, "inputs", deck)] + extra + ["-threads", "2", "-report", rep]
    if made:
        if not os.path.isfile(made):
            fail(["%s: no such report (the fixture coupling_default: coupling_default_runs)" % made])
    else:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # exit 2 (INVALID) where the deck's golden hashes are those of the default -guess_learn: the residual mode's other trajectory
        if p.returncode != 0 and not (p.returncode == 2 and "-guess_learn" in extra and os.path.exists(rep)):
            fail(["%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-300:])])
    rows = {}
    for m in re.finditer(r"^ +(\w+): \{iterations: (\d+), saved_pct: ([0-9.]+), start_residual_geomean: ([0-9.e+-]+),", open(rep).read(), re.M):
        rows[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))
    if len(rows) != 6:
        fail(["%s: %d guess rows in the report, want 6" % (" ".join(cmd), len(rows))])
    return rows


def sig3(printed):
    """A printed 4-digit residual ("3.465e-09") to 3 digits as the prose
    writes it: the decimal text rounded half up ("3.47e-9")."""
    m, e = printed.split("e")
    q = decimal.Decimal(m).quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP)
    return "%se%d" % (q, int(e))


def table(doc, after):
    """The rows of the first table after the line starting with `after`."""
    i = doc.index(after)
    rows = []
    for line in doc[i:].split("\n")[1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set(cells[0]) <= set("-") and cells[0] not in ("guess",) and not cells[0].startswith("deck"):
                rows.append(cells)
        elif rows:
            break
    return rows


def main():
    if len(sys.argv) not in (3, 4):
        print("usage: tests/docs_coupling.py MINIAPP docs/coupling.md [FIXTURE_DIR]")
        return 2
    app, docpath = sys.argv[1], sys.argv[2]
    fix = sys.argv[3] if len(sys.argv) > 3 else None  # the default deck's reports made by coupling_default_runs
    src = os.path.dirname(os.path.dirname(os.path.abspath(docpath)))
    doc = open(docpath).read()
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        d = run(app, src, "default.opts", ["-replicas", "1", "-guess_learn", "increment"], tmp, "default_increment",
                fix and os.path.join(fix, "increment.report.yaml"))
        h = run(app, src, "heat-medium.opts", [], tmp, "heat")
        dr = run(app, src, "default.opts", ["-replicas", "1"], tmp, "default", fix and os.path.join(fix, "default.report.yaml"))
        hr = run(app, src, "heat-medium.opts", ["-guess_learn", "residual"], tmp, "heat_residual")

    names = {"none": "none", "extrapolation": "extrapolation", "fischer": "fischer", "learned": "learned",
             "combined (drives the run)": "combined", "projection (combined without the network)": "projection",
             "projection": "projection"}
    for title, got in (("**Default deck**", d), ("**Heat deck**", h)):
        rows = table(doc, title)
        if len(rows) != 6:
            bad.append("%s: %d table rows, want 6" % (title, len(rows)))
        for cells in rows:
            g = names.get(cells[0])
            if g is None:
                bad.append("%s: unknown row '%s'" % (title, cells[0]))
                continue
            its, pct, res = got[g]
            want = (str(its), pct, res)
            if tuple(cells[1:4]) != want:
                bad.append("%s row %s: the doc has %s, the run %s" % (title, cells[0], " | ".join(cells[1:4]), " | ".join(want)))

    rows = table(doc, "| deck, `-guess_learn residual`")
    want_rows = {"default": dr, "heat-medium": hr}
    if len(rows) != 2:
        bad.append("residual table: %d rows, want 2" % len(rows))
    share = {}
    for cells in rows:
        if cells[0] not in want_rows:
            bad.append("residual table: unknown row '%s'" % cells[0])
            continue
        r = want_rows[cells[0]]
        comb, proj, learned = r["combined"][0], r["projection"][0], r["learned"][0]
        share[cells[0]] = 100.0 * (proj - comb) / proj
        vs = 100.0 * (proj - learned) / proj
        got = [str(proj), str(comb), "%.1f%% fewer" % share[cells[0]], "%d, %.1f%% %s" % (learned, abs(vs), "fewer" if vs >= 0 else "more")]
        have = [cells[1], cells[2], cells[3].replace("**", ""), cells[4]]
        for k, (a, b) in enumerate(zip(have, got)):
            if a != b:
                bad.append("residual table row %s, column %d: the doc has '%s', the run '%s'" % (cells[0], k + 2, a, b))

    prose = re.sub(r"\s+", " ", doc)
    heat_gain = 100.0 * (h["projection"][0] - h["combined"][0]) / h["projection"][0]
    lpct, xpct = float(d["learned"][1]), float(d["extrapolation"][1])
    claims = [
        ("nothing on Gray-Scott (%d = %d), %.1f%% on heat (%d against %d)" % (d["combined"][0], d["projection"][0], heat_gain, h["combined"][0], h["projection"][0]),
         r"nothing on Gray-Scott \(\d+ = \d+\), [0-9.]+% on heat \(\d+ against \d+\)"),
        ("(%.0f%% against %.0f%% saved)" % (lpct, xpct), r"\(\d+% against \d+% saved\)"),
        ("%s with the network, %s without" % (sig3(d["combined"][2]), sig3(d["projection"][2])), r"[0-9.]+e-\d+ with the network, [0-9.]+e-\d+ without"),
        ("a 5-point stencil network can learn: %.0f%% fewer iterations" % share.get("default", -1), r"a 5-point stencil network can learn: \d+% fewer iterations"),
        ("the network adds %.1f%%" % share.get("heat-medium", -1), r"the network adds [0-9.]+%"),
        ("(300 products against %d iterations saved" % (dr["projection"][0] - dr["combined"][0]), r"\(\d+ products against \d+ iterations saved"),
    ]
    for want, pat in claims:
        found = re.findall(pat, prose)
        if len(found) != 1:
            bad.append("the text '%s' (as the run says it) is found %d times in the doc's form '%s'" % (want, len(found), pat))
        elif found[0] != want:
            bad.append("the doc says '%s', the run '%s'" % (found[0], want))
    if bad:
        fail(bad)
    print("docs_coupling: %s holds the runs' numbers (4 runs, 2 guess tables, the residual table, 6 sentences)" % docpath)
    return 0


if __name__ == "__main__":
    sys.exit(main())
