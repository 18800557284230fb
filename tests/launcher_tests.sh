#!/usr/bin/env bash
# tests/launcher_tests.sh BUILD: scripts/sweep.sh and scripts/scaling.sh on a
# prebuilt miniapp (-bin), their ranks started through -launcher (%n: the
# rank count) with oversubscribed Open MPI ranks on this machine: the same
# code path as "srun -n %n" on a cluster (docs/benchmark.md). The reports
# must say how many ranks ran, and the tables must be written under -out.
# A -launcher without %n is refused by scaling.sh with one line.
set -euo pipefail
build=$1
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$tmp/root/atomic" && ln -s "$(cd "$build" && pwd)/miniapp/miniapp" "$tmp/root/atomic/miniapp"
launcher="mpiexec --oversubscribe -n %n"
scripts/sweep.sh grayscott-small -np 4 -threads 1 -repeat 1 -variants atomic -bin "$tmp/root" -launcher "$launcher" -out "$tmp/sweep" > "$tmp/sweep.log" 2>&1 ||
  { cat "$tmp/sweep.log"; fail "sweep.sh with -launcher failed"; }
grep -q "^ *ranks: 4" "$tmp/sweep/grayscott-small/atomic.r1.yaml" || fail "sweep: the report does not say 4 ranks"
[ -s "$tmp/sweep/grayscott-small/table.md" ] || fail "sweep: no table under -out"
echo "ok: sweep.sh on 4 ranks through -launcher '$launcher'"
scripts/scaling.sh grayscott-small strong -max-ranks 2 -max-threads 1 -bin "$build" -launcher "$launcher" -out "$tmp/scaling" > "$tmp/scaling.log" 2>&1 ||
  { cat "$tmp/scaling.log"; fail "scaling.sh with -launcher failed"; }
ranks="1 2"; [ "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -ge 2 ] || ranks=1 # scaling.sh keeps ranks x threads within the cores
for r in $ranks; do grep -q "^ *ranks: $r\$" "$tmp/scaling/grayscott-small-strong/np$r-t1.r1.yaml" || fail "scaling: np$r report does not say $r ranks"; done
[ -s "$tmp/scaling/grayscott-small-strong/table.md" ] || fail "scaling: no table under -out"
echo "ok: scaling.sh on 1 and 2 ranks through -launcher '$launcher'"
# weak scaling: the grown grids' runs clear the deck's golden hashes (-golden_state_hash none; it passed "", refused since)
if [ "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" -ge 2 ]; then
  scripts/scaling.sh grayscott-small weak -max-ranks 1 -max-threads 2 -bin "$build" -out "$tmp/scaling" > "$tmp/weak.log" 2>&1 || { cat "$tmp/weak.log"; fail "scaling.sh weak failed"; }
  grep -q '^ *grid: \[' "$tmp/scaling/grayscott-small-weak/np1-t2.r1.yaml" && [ -s "$tmp/scaling/grayscott-small-weak/table.md" ] || fail "scaling weak: no 1 x 2 report or no table"
  scripts/scaling.sh heat-small weak -max-ranks 1 -max-threads 2 -bin "$build" -out "$tmp/scaling" > "$tmp/weakh.log" 2>&1 || { cat "$tmp/weakh.log"; fail "scaling.sh weak failed on a deck without a network"; }
  echo "ok: scaling.sh weak on 1 x 1 and 1 x 2 (grayscott-small, heat-small)"
fi
out=$(scripts/scaling.sh grayscott-small -bin "$build" -launcher "srun" -out "$tmp/x" 2>&1) && fail "scaling.sh took a -launcher without %n"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == "scaling: error: -launcher 'srun': must contain %n"* ]] || fail "scaling.sh: expected one line for a -launcher without %n, got: $out"
[ ! -e "$tmp/x" ] || fail "scaling.sh created -out before refusing its arguments"
echo "ok: $out"
echo PASS
