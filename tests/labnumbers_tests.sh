#!/usr/bin/env bash
# tests/labnumbers_tests.sh BUILD_DIR: every number the teaching lab quotes
# (docs/lab/README.md and answers.md) must be what the code produces now.
#
# How: docs/lab/numbers.py (the manifest) lists each quoted number by its
# text in context, the lab section (or question) whose commands make it, how
# to read it from the run's summary YAML, NetCDF file, CSV or output, and
# its printed format; scripts/labnumbers.py runs those commands once each
# (the lab's own, at full length, two side by side), reads every number and
# fails naming each one that drifted, with the doc's text and the run's
# value. It also fails when a context is no longer found once, or when the
# prose carries a decimal number or percentage that the manifest neither
# holds nor declares unheld (with a reason): a new number cannot slip in
# unchecked.
#
# Why a manifest and not numbers generated into the doc: the lab is read by
# students and lecturers as prose; placeholders or generated tables would
# make it a template that only reads well after a build step, and most
# numbers sit inside sentences that state a claim about them. The manifest
# keeps the doc as it reads, and `scripts/labnumbers.py update BUILD`
# rewrites the drifted numbers in place when the code changes on purpose (the
# prose around them must then be reread: a number is a claim).
#
# Tolerance: exact (the printed text) for everything the miniapp prints; a
# relative tolerance only for the sum study's normal data, which depend on
# the CPU's choice of glibc's log (docs/lab/numbers.py says why).
#
# Time: about 1.5 minutes on 2 quiet cores. The 9000-step background run and
# the 9000-step no-coupling control (about 7 more minutes of one core) run
# only with LABNUMBERS_FULL=1; without them the wrap-up's numbers at steps
# 100 and 1000 are read from exercise 2's 1000-step run of the same deck
# (the same bits: --full checks that too) and the rest are listed as not
# checked. BUILD_DIR is the reproducible build; its siblings with the same
# prefix are the other two. A missing build or Python module: exit 77.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ $# -ge 1 ] || { echo "usage: tests/labnumbers_tests.sh BUILD_DIR (the reproducible build)"; exit 1; }
. "$src/tests/lab_common.sh"
lab_builds "$1"
[ -x $py ] && $py -c 'import netCDF4, numpy, yaml' 2> /dev/null \
  || { echo "SKIP: $py with netCDF4, numpy and yaml is needed (Debian: python3-netcdf4 python3-yaml)"; exit 77; }
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
full=(); [ "${LABNUMBERS_FULL:-0}" = 1 ] && full=(--full)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$py "$src/scripts/labnumbers.py" check "$bdir" "${full[@]}" --keep "$tmp/run"
