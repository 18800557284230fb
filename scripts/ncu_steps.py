#!/usr/bin/env python3
"""scripts/ncu_steps.py RAW.csv [SUFFIX]: where a GPU train step's time goes, per strategy.

RAW.csv is `ncu --import R.ncu-rep --csv --page raw` of a report collected with
`--metrics gpu__time_duration.sum` over `bench_surrogate -surrogate_device cuda
-bench_steps 1 -bench_reps 1` (scripts/gpu-check.sh -steps kernels). That run
trains each strategy twice, a warm-up step and the timed one, and every train
step ends with one Adam kernel (k_adam): the kernels between the strategy's
first and second k_adam are its timed train step. On a GPU bench_surrogate
times the three strategies again with the other train-step kernels
(-surrogate_cuda_kernels: "/gemm" after the default tiled ones, "/tiled"
after gemm; SUFFIX says which, default /gemm). Prints, per strategy, each
kernel's launches and summed duration and the step's kernel total; the rest
of bench_surrogate's step time is host work and host-device copies. Exit 1
when the report does not hold the 6 or 12 k_adam launches of 3 or 6
strategies x 2 steps.
"""
import csv
import sys

UNITS = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}
STRATEGIES = ("atomic", "deterministic", "reproducible")


def kernels(path):
    """(short kernel name, microseconds) per launch, in launch order."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    head = rows.index(next(r for r in rows if "Kernel Name" in r and "gpu__time_duration.sum" in r))
    cols = rows[head]
    name, dur = cols.index("Kernel Name"), cols.index("gpu__time_duration.sum")
    u = rows[head + 1][dur].strip()  # the raw page's second row holds the units
    if u not in UNITS:
        sys.exit("ncu_steps: %s: unknown unit '%s' of gpu__time_duration.sum" % (path, u))
    unit, body = UNITS[u], rows[head + 2:]
    out = []
    for r in body:
        if len(r) <= max(name, dur):
            continue
        try:
            us = float(r[dur].replace(",", "")) * unit
        except ValueError:
            continue
        out.append((r[name].split("(")[0].split("<")[0].strip(), us))
    return out


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[0])
    ks = kernels(sys.argv[1])
    adam = [i for i, (n, _) in enumerate(ks) if n == "k_adam"]
    if len(adam) not in (6, 12):
        print("ncu_steps: %d k_adam launches, not 6 or 12 (3 or 6 strategies x warm-up and timed step): no per-step split" % len(adam), file=sys.stderr)
        return 1
    suffix = sys.argv[2] if len(sys.argv) == 3 else "/gemm"
    names = STRATEGIES + tuple(s + suffix for s in STRATEGIES)
    print("%-14s %-34s %9s %12s %7s" % ("strategy", "kernel", "launches", "total us", "share"))
    for s, name in enumerate(names[:len(adam) // 2]):
        step = ks[adam[2 * s] + 1: adam[2 * s + 1] + 1]
        tot = sum(us for _, us in step)
        per = {}
        for n, us in step:
            c, t = per.get(n, (0, 0.0))
            per[n] = (c + 1, t + us)
        for n, (c, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
            print("%-14s %-34s %9d %12.1f %6.1f%%" % (name, n, c, t, 100.0 * t / tot if tot else 0.0))
        print("%-14s %-34s %9d %12.1f %6.1f%%" % (name, "(kernels of the step)", len(step), tot, 100.0))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:  # a file that is not there, not readable: one line, no traceback
        sys.exit(f"ncu_steps.py: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
    except StopIteration:  # a file without the expected header
        sys.exit("ncu_steps.py: the input ends before its header (not the expected file)")
    except (IndexError, KeyError, ValueError, UnicodeDecodeError, csv.Error) as e:  # a page that is not ncu's raw CSV: one line
        sys.exit(f"ncu_steps.py: {sys.argv[1] if len(sys.argv) > 1 else 'the input'}: not an ncu raw page as expected ({type(e).__name__}: {' '.join(str(e).split())})")
