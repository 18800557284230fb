#!/usr/bin/env python3
"""tests/docs_fpna_sums.py SUMSTUDY DOC: every seeded number docs/fpna-sums.md
quotes is what miniapp-sumstudy gives now.

It runs the three commands the page's figures come from (about 70 s on one
core; the seeded methods do not depend on the thread count or the machine):
  - the full default with -methods element,block: the "Measured" table's
    element and block rows (alpha and its s.e., beta, R^2, median alpha),
    the sentence on N = 10^7 (maxima, medians and their ratios) and the
    numbers the reading of the block method repeats;
  - -reference deterministic over 512 .. 1e6: the table of what the blocks
    make random (max|V_s|, zeros of 100, the element method beside it);
  - -orders 5 over 10 uniform arrays at 1e4, 1e5, 1e6: the spread table's
    element, block and one-thread omp columns;
and checks the CUDA methods' figures against the recorded H100 run
(docs/gpu-runs/2026-11-27-h100/call1-summary.md).
The omp rows and the two-thread omp columns are the hardware's order (the
page dates them); they are not rerun. Exit 1 naming every number that
drifted, with the doc's text and the run's value."""
import csv
import decimal
import io
import os
import re
import subprocess
import sys
import tempfile

errors = []


def half_up(printed, places):
    """Printed text rounded half up, as a reader rounds it ("4.65e-15" to 2 significant digits is 4.7e-15)."""
    d = decimal.Decimal(printed)
    if places.startswith("e"):  # significant digits in scientific form
        sig = int(places[1:])
        m, e = ("%.*e" % (12, d)).split("e")
        q = decimal.Decimal(m).quantize(decimal.Decimal(1).scaleb(-(sig - 1)), rounding=decimal.ROUND_HALF_UP)
        if abs(q) >= 10:
            q, e = q / 10, int(e) + 1
            q = q.quantize(decimal.Decimal(1).scaleb(-(sig - 1)), rounding=decimal.ROUND_HALF_UP)
        return "%se%d" % (q, int(e))
    return str(d.quantize(decimal.Decimal(1).scaleb(-int(places)), rounding=decimal.ROUND_HALF_UP))


def run(tool, args, tmp, name):
    out = os.path.join(tmp, name + ".csv")
    p = subprocess.run([tool] + args + ["-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("docs_fpna_sums: %s %s: exit %d: %s" % (tool, " ".join(args), p.returncode, p.stderr.strip()[-300:]))
    rows = {}
    with open(out) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            rows[(r["method"], r["dist"], int(r["n"]))] = r
    return rows, p.stdout


def fits(yaml_text):
    """{(method, key): {field: printed text}} from the run's 'fits:' lines."""
    out = {}
    method = None
    for line in yaml_text.splitlines():
        m = re.match(r"^  ([\w-]+):\s*$", line)
        if m:
            method = m.group(1)
            continue
        m = re.match(r"^    (\w+): \{(.*)\}", line)
        if m and method:
            out[(method, m.group(1))] = dict(kv.split(": ", 1) for kv in m.group(2).split(", ") if ": " in kv and not kv.startswith("n:"))
    return out


def ratio_line(yaml_text, dist):
    m = re.search(r"^element_over_block:.*\n  uniform: (\S+)\n  normal: (\S+)", yaml_text, re.M)
    return m.group(1 if dist == "uniform" else 2)


def expect(what, doc_text, value):
    if doc_text != value:
        errors.append("%s: the page says %s, the run gives %s" % (what, doc_text, value))


def table_after(doc, heading):
    """The rows (lists of cells) of the first Markdown table after the line starting with heading."""
    lines = doc[doc.index(heading):].splitlines()
    rows, started = [], False
    for line in lines:
        s = line.strip()
        if s.startswith("|"):
            started = True
            if not s.startswith("|---"):
                rows.append([c.strip() for c in s.strip("|").split("|")])
        elif started:
            break
    return rows[1:]  # without the header


def sci(v):
    return half_up("%.6e" % float(v), "e2")


def main():
    tool, docpath = sys.argv[1], sys.argv[2]
    doc = open(docpath).read()
    with tempfile.TemporaryDirectory() as tmp:
        full, fy = run(tool, ["-methods", "element,block", "-threads", "1"], tmp, "full")
        det, _ = run(tool, ["-reference", "deterministic", "-methods", "element,block", "-threads", "1", "-n", "512,1000,1024,1025,1536,2048,2049,3072,4096,8192,16384,1e5,1e6"], tmp, "det")
        spr, _ = run(tool, ["-methods", "element,block,omp", "-threads", "1", "-orders", "5", "-arrays", "10", "-dist", "uniform", "-n", "1e4,1e5,1e6"], tmp, "spread")
    f = fits(fy)

    # the Measured table: element and block rows
    rows = table_after(doc, "## Measured (full default")
    keys = {("element", "uniform", "10..1e7"): ("element", "uniform"), ("element", "normal", "10..1e7"): ("element", "normal"),
            ("block", "uniform", "10..1e7"): ("block", "uniform"), ("block", "uniform", "2154..1e7 (3+ blocks)"): ("block", "uniform_from_3_blocks"),
            ("block", "normal", "10..1e7"): ("block", "normal"), ("block", "normal", "2154..1e7"): ("block", "normal_from_3_blocks")}
    seen = 0
    for r in rows:
        k = keys.get((r[0], r[1], r[2]))
        if not k:
            continue
        seen += 1
        g = f.get(k)
        if g is None:
            errors.append("the run has no fit %s %s" % k)
            continue
        name = "Measured table, %s %s %s" % (r[0], r[1], r[2])
        expect(name + ", alpha +- s.e.", r[3].replace("*", ""), "%s +- %s" % (g["alpha"], g["alpha_se"]))
        expect(name + ", beta", r[4], sci(g["beta"]))
        expect(name + ", R^2", r[5], g["r2"])
        expect(name + ", median alpha", r[6], g["alpha_median"])
    if seen != len(keys):
        errors.append("the Measured table has %d of its %d element and block rows" % (seen, len(keys)))

    # At N = 10^7
    top = 10000000
    mx = {(m, d): sci(full[(m, d, top)]["max_abs_vs"]) for m in ("element", "block") for d in ("uniform", "normal")}
    md = {(m, d): sci(full[(m, d, top)]["q50_abs_vs"]) for m in ("element", "block") for d in ("uniform", "normal")}
    rmed = {d: "%.0f" % (float(full[("element", d, top)]["q50_abs_vs"]) / float(full[("block", d, top)]["q50_abs_vs"])) for d in ("uniform", "normal")}
    said = "At N = 10^7, max|V_s|: element %s (uniform) and %s (normal),\nblock %s and %s: **%sx and %sx** smaller; the medians\n%s / %s and %s / %s: **%sx and %sx**." % (
        mx[("element", "uniform")], mx[("element", "normal")], mx[("block", "uniform")], mx[("block", "normal")], ratio_line(fy, "uniform"), ratio_line(fy, "normal"),
        md[("element", "uniform")], md[("block", "uniform")], md[("element", "normal")], md[("block", "normal")], rmed["uniform"], rmed["normal"])
    if said not in doc:
        m = re.search(r"At N = 10\^7, max\|V_s\|:.*?\*\*\.", doc, re.S)
        errors.append("the N = 10^7 sentence: the page says %r, the run gives %r" % (m.group(0) if m else None, said))

    # the reading of the block method repeats them
    u, u3 = f[("block", "uniform")], f[("block", "uniform_from_3_blocks")]
    for text, what in ((
        "Measured at 10^7: %s and %s on the medians, %sx and %sx on the noisier\n   maxima; the slope above 3 blocks is %s (uniform; %s on the median" % (
            rmed["uniform"] + "x", rmed["normal"] + "x", half_up(ratio_line(fy, "uniform"), "0"), half_up(ratio_line(fy, "normal"), "0"), half_up(u3["alpha"], "2"), half_up(u3["alpha_median"], "2")),
        "point 1's figures"), (
        "uniform max\n   %s at N = 1000, %s at N = 2154 with the exact reference) and\n   only regains the N = 1000 value near N = 10^6 (%s)" % (
            sci(full[("block", "uniform", 1000)]["max_abs_vs"]), sci(full[("block", "uniform", 2154)]["max_abs_vs"]), sci(full[("block", "uniform", 1000000)]["max_abs_vs"])),
        "point 2's figures"), (
        "meaningless alpha = %s for the\n   block method (R^2 %s)" % (half_up(u["alpha"], "2"), half_up(u["r2"], "2")), "point 3's figures")):
        if text not in doc:
            errors.append("%s: the run gives %r, not on the page" % (what, text))

    # what the blocks make random (reference deterministic)
    rows = table_after(doc, "| N (blocks) | what is random |")
    seen = 0
    for r in rows:
        ns = [int(float(x)) for x in re.sub(r"\s*\([0-9-]+\)$", "", r[0]).split(", ")]
        got_el = ", ".join(sci(det[("element", "uniform", n)]["max_abs_vs"]) for n in ns)
        expect("blocks table, N = %s, element" % r[0], r[3], got_el)
        blk = [det[("block", "uniform", n)] for n in ns]
        if all(float(b["max_abs_vs"]) == 0 for b in blk):
            want = "**0 (100 of 100)**, for normal data too"
            if not all(int(det[("block", d, n)]["zeros"]) == 100 for n in ns for d in ("uniform", "normal")):
                want = "(not every sum exact)"
        else:
            vals = ", ".join(sci(b["max_abs_vs"]) for b in blk)
            if len(set(vals.split(", "))) == 1 and len(ns) > 1:
                vals = vals.split(", ")[0]
            want = "%s (%s)" % (vals, ", ".join(b["zeros"] for b in blk))
        expect("blocks table, N = %s, block" % r[0], r[2], want)
        seen += 1
    if seen < 6:
        errors.append("the blocks table has %d rows, want 6" % seen)

    # the spread table: element, omp on one thread, block
    rows = table_after(doc, "| N | element | omp, 1 thread |")
    for r in rows:
        n = int(float(r[0]))
        for col, m in ((1, "element"), (2, "omp"), (5, "block")):
            v = float(spr[(m, "uniform", n)]["spread"])
            expect("spread table, N = %s, %s" % (r[0], m), r[col], "0" if v == 0 else sci(v))
    if len(rows) != 3:
        errors.append("the spread table has %d rows, want 3" % len(rows))

    # the GPU methods: the recorded H100 run's figures (docs/gpu-runs/)
    rec = os.path.join(os.path.dirname(os.path.abspath(docpath)), "gpu-runs", "2026-11-27-h100", "call1-summary.md")
    g = fits(open(rec).read())
    said = ("uniform data: `cuda-element` %s (median %s), the N^(1/2) law of the\nCPU's `element` order; `cuda-block` %s (%s from 3 blocks);\n"
            "`cuda-tree` %s and `cuda-cub` %s: each fixed tree rounds the same\nway at every N (`cuda-tree`'s max|V_s| is %s at all three)") % (
        g[("cuda-element", "uniform")]["alpha"], g[("cuda-element", "uniform")]["alpha_median"], g[("cuda-block", "uniform")]["alpha"],
        g[("cuda-block", "uniform_from_3_blocks")]["alpha"], g[("cuda-tree", "uniform")]["alpha"], g[("cuda-cub", "uniform")]["alpha"], g[("cuda-tree", "uniform")]["beta"])
    if said not in doc:
        errors.append("the GPU methods' figures: %s gives %r, not on the page" % (os.path.relpath(rec, os.path.dirname(docpath)), said))
    if g[("cuda-tree", "uniform")]["r2"] != "null":
        errors.append("the recorded cuda-tree fit has a spread (r2 %s): its max|V_s| is not the same at every N" % g[("cuda-tree", "uniform")]["r2"])

    for e in errors:
        print("docs_fpna_sums: " + e)
    if errors:
        sys.exit(1)
    print("docs_fpna_sums: every seeded number of %s is the run's" % os.path.basename(docpath))


if __name__ == "__main__":
    main()
