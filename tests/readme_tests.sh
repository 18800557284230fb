#!/usr/bin/env bash
# tests/readme_tests.sh BUILD_DIR: the README's claims that the code makes:
# the default deck it describes (grid, steps, replicas) is inputs/default.opts,
# the test count it quotes is within 15% of what the three sibling builds
# register, the suite's time it quotes is dated, names its machine and is
# within the 20-minute budget, and its quoted run time of the default deck (run_seconds of the
# reproducible build) is measured again: a time more than 3x off is a
# WARNING (times depend on the machine), not a failure; and run.sh's closing
# text (scripts/run_text.sh) on that run's summary prints only its values.
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
# run.sh's closing text (scripts/run_text.sh) on this run's summary, as both builds' (the atomic lines then read the
# reproducible run's values): every key it reads is in the summary, and every number it prints is the value of one
mkdir "$tmp/out" && cp "$tmp/s.yaml" "$tmp/out/reproducible.yaml" && cp "$tmp/s.yaml" "$tmp/out/atomic.yaml"
"$root/scripts/run_text.sh" "$tmp/out" > "$tmp/text" || fail "scripts/run_text.sh failed on the default run's summary"
/usr/bin/python3 - "$root/scripts/run_text.sh" "$tmp/text" "$tmp/s.yaml" <<'PY' || fail "run.sh's text prints what its runs did not measure"
import re, sys
script, text, summary = (open(a).read() for a in sys.argv[1:])
vals = {}  # key -> its values (a list's items)
for m in re.finditer(r"^(\w+): *(.*)$", summary, re.M):
    if m.group(2).strip("[]\" "):  # an empty value prints nothing
        vals[m.group(1)] = {t.strip().strip('"') for t in m.group(2).strip("[]").split(",")}
used = set(re.findall(r"\$\(r (\w+)\)", script)) | set(re.findall(r"\$\(key (?:reproducible|atomic) (\w+)", script))
used |= {"ksp_iterations_total_" + v for v in ("extrapolation", "projection")}  # the learned row's base, ${base}
missing = sorted(k for k in used if k not in vals)
assert used and not missing, "run_text.sh reads keys the summary lacks or leaves empty: %s" % missing
values = set().union(*(vals[k] for k in used))  # a number the text prints must be one of these keys' values
body = re.sub(r"replica [01]\b", "replica", text)  # the replicas' names
nums = re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])", body)
bad = sorted(set(n for n in nums if n not in values and "-" + n not in values))  # a negative share: "N% more"
assert nums and not bad, "numbers in run.sh's text that are no value of the summary keys it reads: %s" % bad
print("ok: run.sh's text: %d numbers, each the value of one of the %d summary keys it reads" % (len(nums), len(used)))
PY
echo PASS
