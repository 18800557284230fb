#!/usr/bin/python3
"""Figures from miniapp run files, miniapp-compare files and sweeps (docs/output.md).

    /usr/bin/python3 scripts/plot.py FILE.nc [-o OUTDIR]
    /usr/bin/python3 scripts/plot.py --overlay A.nc B.nc [C.nc ...] [--labels a,b,c] [-o OUTDIR] [--list]
    /usr/bin/python3 scripts/plot.py --sweep out/sweep/DECK [-o OUTDIR] [--list]

Writes PNGs (next to the first file, or into OUTDIR) and prints their paths,
one a line; --list prints the legend entries instead and draws nothing.
A comparison file is recognised by its `pair` dimension. Reads only: the
metrics come from the C code (miniapp/io/metrics.c), the sweep's ratios from
scripts/report_table.py. Per-step series lie on the `step` dimension, field
snapshots on `snapshot`, epochs on `epoch` (docs/output.md). A figure shows
only panels that hold something: what is constant (bitwise-equal replicas,
no training) is said in its title instead of drawn as an empty panel.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_common import *  # noqa: E402,F401,F403 (the shared helpers; the tests import them from here)
from plot_runfile import *  # noqa: E402,F401,F403 (one run file, a comparison file, --diffmap)
from plot_multi import *  # noqa: E402,F401,F403 (--overlay, --phases, --scaling, --sweep)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 1, as every other bad input
        fail(message)


def main():
    ap = Parser(description="Figures from miniapp run or comparison NetCDF files, several runs overlaid, "
                            "or a cost-of-determinism sweep (docs/output.md).")
    ap.add_argument("files", nargs="*", help="run file (miniapp) or comparison file (miniapp-compare -o); "
                                             "with --overlay, run files with 2 or more replicas")
    ap.add_argument("-o", "--outdir", help="directory for the PNGs (default: the (first) file's directory)")
    ap.add_argument("--overlay", action="store_true",
                    help="one line per file: overlay_digits.png and overlay_rel_l2.png (replica 1 vs replica 0)")
    ap.add_argument("--labels", help="--overlay: comma-separated legend labels, one per file "
                                     "(default: build and -coupling from the files' attributes)")
    ap.add_argument("--sweep", metavar="SWEEP_OUTPUT",
                    help="out/sweep/<deck>/ of scripts/sweep.sh (or a file in it): cost_of_determinism.png")
    ap.add_argument("--diffmap", action="store_true",
                    help="two run files (e.g. two builds): replica 0's fields at their last common snapshot and "
                         "the difference: diffmap.png")
    ap.add_argument("--phases", action="store_true",
                    help="-report files (miniapp -report): milliseconds per step by phase, one bar per run: phases.png")
    ap.add_argument("--scaling", metavar="SCALING_OUTPUT",
                    help="out/scaling/<deck>-<mode>/ of scripts/scaling.sh: time per step and efficiency: scaling.png")
    ap.add_argument("--list", action="store_true",
                    help="print the legend entries (--overlay), the bars' ratios (--sweep) or the bars' labels (--phases) "
                         "instead of drawing")
    args = ap.parse_args()
    if args.sweep is not None:
        if args.files or args.overlay:
            fail("--sweep takes no other files and no --overlay")
        d = args.sweep if os.path.isdir(args.sweep) else os.path.dirname(args.sweep) or "."
        sweep_bars(args.sweep, args.outdir or d, args.list)
        return
    if args.phases:
        if not args.files or args.overlay or args.diffmap:
            fail("--phases takes report files (plot.py --phases A.yaml [B.yaml ...])")
        phases(args.files, args.labels.split(",") if args.labels else None,
               args.outdir or os.path.dirname(args.files[0]) or ".", args.list)
        return
    if args.scaling is not None:
        if args.files:
            fail("--scaling takes no other files")
        scaling_plot(args.scaling, args.outdir or args.scaling)
        return
    if args.diffmap:
        if len(args.files) != 2 or args.overlay:
            fail("--diffmap takes two run files (plot.py --diffmap A.nc B.nc)")
        labels = args.labels.split(",") if args.labels else None
        if labels and len(labels) != 2:
            fail("--diffmap --labels: two labels, comma-separated")
        diffmap(args.files[0], args.files[1], args.outdir or os.path.dirname(args.files[0]) or ".", labels)
        return
    if args.overlay:
        if not args.files:
            fail("--overlay needs run files (plot.py --overlay A.nc B.nc [C.nc ...])")
        overlay(args.files, args.labels, args.outdir or os.path.dirname(args.files[0]) or ".", args.list)
        return
    if args.labels is not None or args.list:
        fail("--labels and --list go with --overlay, --diffmap, --phases or --sweep")
    if len(args.files) != 1:
        fail(f"expected one file, got {len(args.files)} (several runs on one axes: --overlay)")
    path = args.files[0]
    ds = open_nc(path)
    outdir = args.outdir or os.path.dirname(path) or "."
    check_outdir(outdir)
    stem = os.path.join(outdir, os.path.splitext(os.path.basename(path))[0])
    written = []
    if "pair" in ds.dimensions:
        plot_compare(ds, stem, written)
    elif is_run(ds):
        plot_run(ds, stem, written)
    else:
        fail(f"{path}: neither a miniapp run file nor a miniapp-compare file")
    ds.close()
    print("\n".join(written))


if __name__ == "__main__":
    try:
        main()
    except OSError as e:  # an unwritable or full output directory, a file that vanished: one line, no traceback
        fail(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
