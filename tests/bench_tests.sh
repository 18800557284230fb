#!/usr/bin/env bash
# tests/bench_tests.sh BUILD_DIR: smoke test of bench/bench_frameworks.py on a
# tiny batch (not a timing: the numbers are not checked, only that the
# benchmark runs, parses bench_surrogate's table and reports every row; a
# framework that is not installed must be reported as such, not guessed),
# and its argument checks. Uses /usr/bin/python3 (no JAX or PyTorch there)
# unless build/pyenv exists.
set -u
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ -x "$root/build/pyenv/bin/python" ] && py=$root/build/pyenv/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

OMP_NUM_THREADS=2 $py "$root/bench/bench_frameworks.py" --build "$build" --n 2048 --steps 1 --rounds 1 --layers 8,8 > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "bench_frameworks exited $?"; }
cat "$tmp/out"
for row in "ours atomic" "ours deterministic" "ours reproducible"; do
  grep -Eq "^$row +[0-9.]+ +[0-9.]+ +[0-9]+%" "$tmp/out" || fail "no timing row for '$row'"
done
for fw in "JAX jit" "PyTorch eager"; do
  grep -Eq "^$fw.*([0-9.]+ +[0-9.]+ +[0-9]+%|not available)" "$tmp/out" || fail "'$fw' neither timed nor reported missing"
done
grep -Eq "float peak without FMA [0-9.]+ GFLOP/s" "$tmp/out" || fail "no measured peak"
grep -Eq "reproducible / atomic +[0-9.]+" "$tmp/out" || fail "no ratio line"

# bad arguments: one line, nonzero exit
for args in "--threads 0" "--build /nonexistent"; do
  rc=0; $py "$root/bench/bench_frameworks.py" $args > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc != 0 ] || fail "exit 0 for: $args"
  [ "$(wc -l < "$tmp/e")" = 1 ] && [ ! -s "$tmp/o" ] || { cat "$tmp/o" "$tmp/e"; fail "expected one error line for: $args"; }
done
# the benchmark executables read numbers as the app does: one line, exit 1, no 32-bit wrap
for c in "$build/bench/bench_solver -bench_its 4294967297" "$build/bench/bench_surrogate -bench_n 4294967297" \
         "$build/bench/bench_surrogate -bench_n 12abc" "$build/bench/bench_surrogate -bench_n 0"; do
  rc=0; $c > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && [ ! -s "$tmp/o" ] && grep -q 'error: -bench_' "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "want exit 1 and one line for: $c (exit $rc)"; }
  echo "ok: $c -> $(cat "$tmp/e")"
done
# -threads is the miniapp's: here an unknown option, not "not an integer" (it was read before the types were checked)
rc=0; "$build/bench/bench_solver" -threads abc > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q 'error: -threads: unknown or unused option' "$tmp/e" || { cat "$tmp/e"; fail "bench_solver -threads abc: exit $rc"; }
# PETSc's viewers of the benchmarks never write over an input or a program (-log_view :b.opts replaced the options file)
printf -- '-bench_its 2\n' > "$tmp/b.opts" && cp /bin/true "$tmp/prog"
for c in "$build/bench/bench_solver -da_grid_x 16 -da_grid_y 12 -bench_reps 1 -options_file $tmp/b.opts -log_view :$tmp/b.opts" "$build/bench/bench_surrogate -bench_n 4 -log_view :$tmp/prog"; do
  rc=0; $c > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -Eq 'refusing to (overwrite an input|replace it)' "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "want a refusal for: $c (exit $rc)"; }
done
[ "$(cat "$tmp/b.opts")" = "-bench_its 2" ] && cmp -s /bin/true "$tmp/prog" || fail "a benchmark's viewer changed an input or a program"
# a tiny grid's STREAM figures are measured, not 0.0 GB/s (a single sweep of 192 values took less than the clock resolves)
for k in 1 2 3 4 5; do
  OMP_NUM_THREADS=2 "$build/bench/bench_solver" -da_grid_x 16 -da_grid_y 12 -bench_its 2 -bench_reps 1 > "$tmp/o" 2>&1 || { cat "$tmp/o"; fail "bench_solver on a 16 x 12 grid"; }
  grep -Eq '^STREAM triad [0-9]*[1-9][0-9]*\.[0-9] GB/s|^STREAM triad [0-9]*\.[0-9]*[1-9] GB/s' "$tmp/o" || { cat "$tmp/o"; fail "a 16 x 12 grid's triad: $(grep STREAM "$tmp/o")"; }
done
echo PASS
