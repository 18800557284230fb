#!/usr/bin/env bash
# tests/readme_tests.sh BUILD_DIR: the README's claims that the code makes:
# the default deck it describes (grid, steps, replicas) is inputs/default.opts,
# the test count it quotes is within 15% of what the three sibling builds
# register, the suite's time it quotes is dated, names its machine and is
# within the 20-minute budget, and its quoted run time of the default deck (run_seconds of the
# reproducible build) is measured again: a time more than 3x off is a
# WARNING (times depend on the machine), not a failure.
set -uo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$root/README.md
fail() { echo "FAIL: $*"; exit 1; }
text=$(tr '\n' ' ' < "$readme" | tr -s ' ')
opt() { sed -n "s/^$1[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p" "$root/inputs/default.opts" | tail -n 1; }
gx=$(opt -da_grid_x) gy=$(opt -da_grid_y) steps=$(opt -ts_max_steps) reps=$(opt -replicas)
[ "$reps" = 2 ] && words=two || words=$reps
grep -qF "runs \`inputs/default.opts\` in each (Gray-Scott, $gx x $gy, $steps steps," <<< "$text" || fail "README: the default deck is not described as $gx x $gy, $steps steps"
grep -qF "$words replicas)" <<< "$text" || fail "README: the default deck's $reps replicas are not described"
echo "ok: the default deck as described: $gx x $gy, $steps steps, $reps replicas"
quoted=$(grep -o 'about [0-9]* tests' <<< "$text" | grep -o '[0-9]*')
[ -n "$quoted" ] || fail "README: no 'about N tests'"
# the three builds test.sh makes, beside this one (the strategy-independent tests are in one of them)
n=0
for v in atomic deterministic reproducible; do
  [ -f "$build/../$v/CTestTestfile.cmake" ] || { n=; break; }
  n=$((n + $(cd "$build/../$v" && ctest -N | sed -n 's/^Total Tests: //p')))
done
if [ -n "$n" ]; then
  awk -v q="$quoted" -v n="$n" 'BEGIN { exit !(q >= 0.85 * n && q <= 1.15 * n) }' || fail "README: 'about $quoted tests', but the three builds register $n"
  echo "ok: about $quoted tests ($n in the three builds)"
else echo "note: the test count not checked (build/atomic, build/deterministic and build/reproducible are not all here)"; fi
# the suite's quoted time: with its date, the machine and whether it was quiet, and within the 20-minute budget
st=$(grep -oE 'took [0-9.]+ minutes on [0-9]{4}-[0-9]{2}-[0-9]{2} \([^)]*(quiet|busy|loaded)[^)]*\)' <<< "$text" | head -1)
[ -n "$st" ] || fail "README: no quoted suite time of the form 'took M minutes on YYYY-MM-DD (machine, quiet or busy)'"
awk -v m="$(grep -oE '[0-9.]+' <<< "$st" | head -1)" 'BEGIN { exit !(m <= 20) }' || fail "README: $st: over the suite's 20-minute budget"
echo "ok: the suite's quoted time: $st"
t=$(grep -o 'the runs [0-9.]* s (reproducible)' <<< "$text" | grep -o '[0-9.]*' | head -1)
[ -n "$t" ] || fail "README: no quoted run time of the reproducible default run"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && OPENBLAS_NUM_THREADS=1 "$build/miniapp/miniapp" -options_file "$root/inputs/default.opts" -summary s.yaml > /dev/null 2>&1) || fail "the default deck failed"
m=$(sed -n 's/^run_seconds: //p' "$tmp/s.yaml")
if awk -v a="$m" -v b="$t" 'BEGIN { exit !(a > 3 * b || 3 * a < b) }'; then echo "WARNING: README quotes $t s for the reproducible default run, measured $m s here (more than 3x off: another machine, or a busy one?)"
else echo "ok: README's $t s against $m s measured here"; fi
echo PASS
