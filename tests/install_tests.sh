#!/usr/bin/env bash
# tests/install_tests.sh BUILD_DIR: cmake --install into a fresh prefix; the
# installed executables run an installed deck VALID, read from another
# working directory (no source tree on the way), and report the license.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake --install "$build" --prefix "$tmp/p" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
share=$tmp/p/share/fpna-miniapp
for f in bin/miniapp bin/miniapp-compare bin/surrogate-train bin/bench_solver bin/bench_surrogate share/fpna-miniapp/LICENSE \
         share/fpna-miniapp/inputs/grayscott-small.opts share/fpna-miniapp/scripts/plot.py share/fpna-miniapp/docs/benchmark.md; do
  [ -e "$tmp/p/$f" ] || fail "not installed: $f"
done
mkdir "$tmp/work" && cd "$tmp/work" || fail "no work directory"
"$tmp/p/bin/miniapp" -options_file "$share/inputs/grayscott-small.opts" -threads 1 -report r.yaml > out.txt 2> err.txt || { cat err.txt; fail "the installed miniapp failed on the installed deck"; }
grep -q '^verdict: VALID' r.yaml && grep -q '^official: true' r.yaml && grep -q 'license: BSD-2-Clause' r.yaml || { grep -E 'verdict|official|license' r.yaml; fail "the installed run is not VALID, official and licensed"; }
"$tmp/p/bin/bench_solver" -bench_its 1 -bench_reps 1 -da_grid_x 64 -da_grid_y 64 > bench.txt 2>&1 || { cat bench.txt; fail "the installed bench_solver failed"; }
echo "PASS: installed to $tmp/p, deck grayscott-small VALID and official from $tmp/work"
