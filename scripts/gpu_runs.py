#!/usr/bin/env python3
"""scripts/gpu_runs.py: the tables docs/gpu.md quotes from a recorded GPU run.

A run folder (docs/gpu-runs/<date>-<gpu>/) holds what scripts/gpu-lease.sh
brought back from each call: callN-summary.md (gpu-check.sh's result.md of
each group) and callN-logs.tar.gz, and kernels-*.txt (scripts/ncu_steps.py
on the kernels step's raw pages). This script makes from them, and only from
them, the tables docs/gpu.md shows between the lines
    <!-- gpu_runs.py RUN_DIR [PARTS] -->  and  <!-- end gpu_runs.py -->
(PARTS a comma list of checks, torch, kernels, sweep, bench, loop; default
checks,torch,kernels,sweep), so every figure there is the run's (a number in
the docs is a claim).

  gpu_runs.py show   RUN_DIR [PARTS] print the tables
  gpu_runs.py check  DOC [DOC ..]    fail naming each block that differs from its run
  gpu_runs.py update DOC [DOC ..]    rewrite those blocks

The tables: every check of every call with its status (sanitizer logs re-read
with gpu-check.sh's current rule, which knows racecheck's own summary line);
our train step and inference per strategy against PyTorch on the same batch
and network, with the issue's targets (the last call that ran both); the
kernels of one train step (ncu); the sweep's loop ratios. bench: the train
step per strategy and kernel set from the `bench_surrogate` checks (the last
call per case), for runs that kept no bench tables; loop: one row per sweep,
its reproducible loop against the fastest build (also the callN-sweep-*.txt
files of a sweep run by hand).
"""
import glob
import io
import os
import re
import sys
import tarfile

BEGIN = re.compile(r"^<!-- gpu_runs\.py (\S+)(?: ([a-z,]+))? -->$")
PARTS = ("checks", "torch", "kernels", "sweep", "bench", "loop")
DEFAULT_PARTS = ("checks", "torch", "kernels", "sweep")
END = "<!-- end gpu_runs.py -->"
SANITIZER_OK = re.compile(r"^========= (ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed)", re.M)
SANITIZER_SUMMARY = re.compile(r"(ERROR|RACECHECK) SUMMARY: .*")


def calls(run):
    """[(n, text of callN-summary.md)] in call order."""
    out = []
    for p in glob.glob(os.path.join(run, "call*-summary.md")):
        m = re.match(r"call(\d+)-summary\.md$", os.path.basename(p))
        if m:
            out.append((int(m.group(1)), open(p).read()))
    if not out:
        sys.exit("gpu_runs: %s: no callN-summary.md" % run)
    return sorted(out)


def checks(text):
    """[(check, status, detail)] of the result tables of one call."""
    rows = []
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(c) >= 3 and c[1] in ("pass", "fail", "skip"):
            rows.append((c[0], c[1], "|".join(c[2:]).strip()))
    return rows


def blocks(text):
    """{title: [lines]} of the '### title' code blocks of one call."""
    out, title, cur, inside = {}, None, [], False
    for line in text.splitlines():
        if line.startswith("### "):
            title, cur, inside = line[4:].strip(), [], False
        elif line.strip() == "```" and title:
            if inside:
                out[title], title = cur, None
            inside = not inside
        elif inside:
            cur.append(line)
    return out


def sanitizer_logs(run, n):
    """{log name: text} of the sanitizer logs in callN-logs.tar.gz."""
    p = os.path.join(run, "call%d-logs.tar.gz" % n)
    out = {}
    if os.path.exists(p):
        with tarfile.open(p) as t:
            for m in t.getmembers():
                b = os.path.basename(m.name)
                if m.isfile() and b.startswith("sanitizer-") and b != "sanitizer-probe.log":
                    out[b] = io.TextIOWrapper(t.extractfile(m), errors="replace").read()
    return out


def table_checks(run):
    lines = ["| call | check | status | detail |", "|---|---|---|---|"]
    for n, text in calls(run):
        logs = sanitizer_logs(run, n)
        for name, status, detail in checks(text):
            m = re.match(r"sanitizer (\w+) \((\w+)\)$", name)
            log = logs.get("sanitizer-%s-%s.log" % m.groups()) if m else None
            exited = re.match(r"exit (\d+)", detail)  # gpu-check.sh's rule needs rc 0 too: a timeout or a crash is no pass
            if log is not None and status == "fail" and SANITIZER_OK.search(log) and not (exited and exited.group(1) != "0"):
                s = SANITIZER_SUMMARY.search(log).group(0)
                status, detail = "pass (re-read)", "%s; recorded as fail by the old summary rule" % s
            m = re.match(r"kernels layers=([\d,]+)$", name)
            kt = os.path.join(run, "kernels-%s.txt" % m.group(1).replace(",", "-")) if m else None
            if kt and os.path.exists(kt) and re.search(r"atomic 0\.00 ms", detail):
                tot = {f[0]: float(f[-2]) for f in (ln.split() for ln in open(kt)) if len(f) > 4 and f[1] == "(kernels"}
                detail = "%s (re-parsed from %s: the run's parser did not know ncu's unit 'ms')" % (
                    "; ".join("%s %.2f ms" % (k, v / 1e3) for k, v in tot.items()), os.path.basename(kt))
            if len(detail) > 160:
                detail = detail[:157] + "..."
            lines.append("| %d | %s | %s | %s |" % (n, name, status, detail))
    return lines


def rows(block, first):
    """{first word: fields} of a table printed in a code block."""
    return {ln.split()[0]: ln.split() for ln in block if ln.split() and ln.split()[0] in first}


def table_torch(run):
    """Ours against PyTorch: the last call that holds both tables per case."""
    have = {}
    for n, text in calls(run):
        b = blocks(text)
        for title, blk in b.items():
            m = re.match(r"bench_surrogate, batch (\d+), hidden layers ([\d,]+)$", title)
            if m:
                have.setdefault(m.groups(), {})["ours"] = (n, blk)
            m = re.match(r"PyTorch, batch (\d+), hidden layers ([\d,]+)$", title)
            if m and any("host step ms" in ln for ln in blk):
                have.setdefault(m.groups(), {})["torch"] = (n, blk)
    lines = ["| batch | network | call | ours: atomic / deterministic / reproducible ms | reproducible / atomic (<= 1.25) "
             "| PyTorch eager / deterministic / compile ms, host batch | eager / our deterministic (>= 2) | compile / our deterministic (>= 1) "
             "| inference, ours / eager, host batch, M samples/s (>= 2x) |",
             "|---|---|---|---|---|---|---|---|---|"]
    verdict = lambda v, t: "%.2f %s" % (v, "met" if v >= t else "not met")
    for (n, w), d in sorted(have.items(), key=lambda kv: (int(kv[0][0]), kv[0][1])):
        if "ours" not in d or "torch" not in d:
            continue
        o = rows(d["ours"][1], ("atomic", "deterministic", "reproducible"))
        t = rows(d["torch"][1], ("default", "deterministic", "compile"))
        if len(o) < 3 or "default" not in t:
            continue
        ms = {k: float(v[1]) for k, v in o.items()}
        inf = float(o["deterministic"][6])
        host = {k: float(v[5]) for k, v in t.items() if len(v) >= 7 and v[5] != "-"}
        hinf = float(t["default"][6])
        r = ms["reproducible"] / ms["atomic"]
        lines.append("| %s | 5-%s-1 | %s | %.2f / %.2f / %.2f | %.2f %s | %s | %s | %s | %.0f / %.0f: %s |" % (
            n, w.replace(",", "-"), "%d, %d" % (d["ours"][0], d["torch"][0]), ms["atomic"], ms["deterministic"], ms["reproducible"],
            r, "met" if r <= 1.25 else "not met", " / ".join("%.2f" % host[k] for k in ("default", "deterministic", "compile") if k in host),
            verdict(host["default"] / ms["deterministic"], 2.0),
            verdict(host["compile"] / ms["deterministic"], 1.0) if "compile" in host else "n/a",
            inf / 1e6, hinf / 1e6, verdict(inf / hinf, 2.0)))
    # runs with -surrogate_cuda_kernels gemm rows beside the tiled ones (bench_surrogate on a GPU, from 2026-11-26 on)
    gemm = []
    for (n, w), d in sorted(have.items(), key=lambda kv: (int(kv[0][0]), kv[0][1])):
        o = rows(d.get("ours", (0, []))[1], ("atomic", "deterministic", "reproducible", "atomic/gemm", "deterministic/gemm", "reproducible/gemm"))
        if len(o) < 6:
            continue
        ms = {k: float(v[1]) for k, v in o.items()}
        t = rows(d["torch"][1], ("default",)) if "torch" in d else {}
        host = float(t["default"][5]) if "default" in t and len(t["default"]) >= 7 and t["default"][5] != "-" else None
        r = ms["reproducible/gemm"] / ms["atomic/gemm"]
        gemm.append("| %s | 5-%s-1 | %d | %.2f / %.2f / %.2f | %.2f %s | %s | %s |" % (
            n, w.replace(",", "-"), d["ours"][0], ms["atomic/gemm"], ms["deterministic/gemm"], ms["reproducible/gemm"], r, "met" if r <= 1.25 else "not met",
            " / ".join("%.2f" % (ms[s + "/gemm"] / ms[s]) for s in ("atomic", "deterministic", "reproducible")),
            verdict(host / ms["deterministic/gemm"], 2.0) if host else "n/a"))
    if gemm:
        lines += ["", "With `-surrogate_cuda_kernels gemm`, timed in the same runs:", "",
                  "| batch | network | call | gemm: atomic / deterministic / reproducible ms | reproducible / atomic (<= 1.25) "
                  "| gemm / tiled: atomic / deterministic / reproducible | eager / our deterministic (>= 2) |",
                  "|---|---|---|---|---|---|---|"] + gemm
    return lines


def table_kernels(run):
    lines = []
    for p in sorted(glob.glob(os.path.join(run, "kernels-*.txt"))):
        net = os.path.basename(p)[len("kernels-"):-4]
        per, tot = {}, {}
        for ln in open(p).read().splitlines()[1:]:
            f = ln.split()
            if len(f) < 5:
                continue
            if f[1] == "(kernels":
                tot[f[0]] = float(f[-2])
            else:
                per.setdefault(f[1], {})[f[0]] = float(f[-2])
        strat = tuple(dict.fromkeys(f[0] for f in (ln.split() for ln in open(p).read().splitlines()[1:]) if len(f) >= 5))  # 3, or 6 with /gemm
        lines += ["", "Network 5-%s-1 (%s), us per train step:" % (net, os.path.basename(p)), "",
                  "| kernel | %s |" % " | ".join(strat), "|---|%s" % ("---|" * len(strat))]
        for k in sorted(per, key=lambda k: -max(per[k].values())):
            lines.append("| %s | %s |" % (k, " | ".join("%.0f" % per[k][s] if s in per[k] else "" for s in strat)))
        lines.append("| all kernels of the step | %s |" % " | ".join("%.0f" % tot.get(s, 0) for s in strat))
    return lines


def table_sweep(run):
    lines = []
    for n, text in calls(run):
        for title, blk in blocks(text).items():
            if title.startswith("sweep "):
                lines += ["", "Call %d, %s:" % (n, title), "", "```"] + blk + ["```"]
    return lines


def table_bench(run):
    """The bench_surrogate checks' step times, the last call per (batch, network)."""
    have = {}
    for n, text in calls(run):
        for name, status, detail in checks(text):
            m = re.match(r"bench_surrogate n=(\d+) layers=([\d,]+)$", name)
            if m and status == "pass":
                have[m.groups()] = (n, {k: float(v) for k, v in re.findall(r"([a-z/]+) ([\d.]+) ms", detail)})
    gemm = any("atomic/gemm" in ms for _, ms in have.values())
    lines = ["| batch | network | call | atomic / deterministic / reproducible ms | reproducible / atomic (<= 1.25) |"
             + (" gemm: atomic / deterministic / reproducible ms | reproducible / atomic, gemm (<= 1.25) |" if gemm else ""),
             "|---|---|---|---|---|" + ("---|---|" if gemm else "")]
    for (b, w), (n, ms) in sorted(have.items(), key=lambda kv: (int(kv[0][0]), kv[0][1])):
        cols = []
        for suf in ("", "/gemm") if gemm else ("",):
            k = [s + suf for s in ("atomic", "deterministic", "reproducible")]
            if all(x in ms for x in k):
                r = ms[k[2]] / ms[k[0]]
                cols += [" / ".join("%.2f" % ms[x] for x in k), "%.2f %s" % (r, "met" if r <= 1.25 else "not met")]
            else:
                cols += ["n/a", "n/a"]
        lines.append("| %s | 5-%s-1 | %d | %s |" % (b, w.replace(",", "-"), n, " | ".join(cols)))
    return lines if len(lines) > 2 else []


def sweeps(run):
    """[(call, title, lines)] of the sweeps: the summaries' sweep blocks, then callN-sweep-*.txt."""
    out = []
    for n, text in calls(run):
        out += [(n, t, b) for t, b in blocks(text).items() if t.startswith("sweep ")]
    for p in sorted(glob.glob(os.path.join(run, "call*-sweep-*.txt"))):
        m = re.match(r"call(\d+)-sweep-.*\.txt$", os.path.basename(p))
        lines = open(p).read().splitlines()
        deck = next((ln.split(": ", 1)[1] for ln in lines if ln.startswith("# Cost of determinism: ")), None)
        if m and deck:
            out.append((int(m.group(1)), "sweep %s (%s)" % (deck, os.path.basename(p)), lines))
    return out


def table_loop(run):
    """One row per sweep: the reproducible loop against the fastest of atomic and deterministic."""
    lines = ["| call | sweep | ranks x threads | fastest: time/step [s] | reproducible time/step [s] "
             "| reproducible / fastest (<= 1.10) | per round | verdict |", "|---|---|---|---|---|---|---|---|"]
    for n, title, blk in sweeps(run):
        cells = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in blk if ln.startswith("| ")]
        step = {c[0]: c[3] for c in cells if len(c) >= 12}
        fast = [c for c in cells if len(c) >= 4 and c[:2] == ["whole loop", "reproducible"] and c[2] != "reproducible"]
        rt = re.search(r"(\d+) rank\(s\) x (\d+) thread\(s\)", "\n".join(blk))
        if not fast or fast[0][2] not in step or "reproducible" not in step or not rt:
            continue
        f = fast[0] + ["", "", ""]
        lines.append("| %d | %s | %s x %s | %s: %s | %s | %s | %s | %s |" % (
            n, title[len("sweep "):], rt.group(1), rt.group(2), f[2], step[f[2]], step["reproducible"], f[3], f[4], f[6]))
    return lines if len(lines) > 2 else []


def show(run, parts=DEFAULT_PARTS):
    out = []
    if "checks" in parts:
        out += ["Every check of the run (gpu-check.sh's result tables):", ""] + table_checks(run)
    if "torch" in parts:
        out += ["", "Our train step and inference against PyTorch, same batch and network (host batch: "
                "the batch copied from page-locked host memory every step, as in the coupled loop; ours always is):", ""] + table_torch(run)
    k = table_kernels(run) if "kernels" in parts else []
    if k:
        out += ["", "Where a train step's time goes at the largest batch (ncu, gpu__time_duration per kernel):"] + k
    s = table_sweep(run) if "sweep" in parts else []
    if s:
        out += ["", "The coupled loop with the surrogate on the GPU (scripts/sweep.sh):"] + s
    b = table_bench(run) if "bench" in parts else []
    if b:
        out += ["", "The train step per strategy (`bench_surrogate`'s checks; the batch copied from page-locked host memory every step):", ""] + b
    lp = table_loop(run) if "loop" in parts else []
    if lp:
        out += ["", "The coupled loop, reproducible against the fastest build (each sweep's best repeats; per round: "
                "the range of the ratios of the runs of one round):", ""] + lp
    return out[1:] if out and out[0] == "" else out


def blocks_in(doc):
    """[(begin line index, end line index, run dir)] of the doc's generated blocks."""
    lines, out, open_ = open(doc).read().split("\n"), [], None
    for i, ln in enumerate(lines):
        m = BEGIN.match(ln)
        if m:
            open_ = (i, m.group(1), tuple((m.group(2) or ",".join(DEFAULT_PARTS)).split(",")))
        elif ln == END and open_:
            out.append((open_[0], i, open_[1], open_[2]))
            open_ = None
    return lines, out


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) < 3 or argv[1] not in ("show", "check", "update"):
        sys.exit(__doc__.strip().split("\n\n")[2])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if argv[1] == "show":
        parts = tuple(argv[3].split(",")) if len(argv) > 3 else DEFAULT_PARTS
        if set(parts) - set(PARTS):
            sys.exit("gpu_runs.py: no part %s (parts: %s)" % (",".join(sorted(set(parts) - set(PARTS))), ",".join(PARTS)))
        print("\n".join(show(argv[2], parts)))
        return 0
    bad = 0
    for doc in argv[2:]:
        lines, found = blocks_in(doc)
        if not found:
            print("gpu_runs: %s: no '<!-- gpu_runs.py RUN_DIR -->' block" % doc)
            bad += 1
        for b, e, run, parts in reversed(found):
            if not os.path.isdir(os.path.join(root, run)) or set(parts) - set(PARTS):
                print("gpu_runs: %s: block '%s %s': no such run folder or part (parts: %s)" % (doc, run, ",".join(parts), ",".join(PARTS)))
                bad += 1
                continue
            want = show(os.path.join(root, run), parts)
            if lines[b + 1:e] != want:
                if argv[1] == "check":
                    print("gpu_runs: %s: the block of %s differs from the run's files (scripts/gpu_runs.py update %s)" % (doc, run, doc))
                    bad += 1
                else:
                    lines[b + 1:e] = want
        if argv[1] == "update":
            open(doc, "w").write("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except OSError as e:  # a file that is not there, not readable: one line, no traceback
        sys.exit(f"gpu_runs.py: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
    except StopIteration:  # a file without the expected header
        sys.exit("gpu_runs.py: the input ends before its header (not the expected file)")
    except (IndexError, KeyError, ValueError, ZeroDivisionError, UnicodeDecodeError, tarfile.TarError, EOFError) as e:  # a run file not as gpu-check.sh writes it
        sys.exit(f"gpu_runs.py: a file of the run is not as gpu-check.sh writes it ({type(e).__name__}: {' '.join(str(e).split())})")
