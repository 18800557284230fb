#!/usr/bin/env bash
# tests/gpu_runs_tests.sh: the GPU figures docs/gpu.md and the run folders'
# READMEs (docs/gpu-runs/*/README.md) quote are the recorded run's (scripts/gpu_runs.py check), and the check
# fails when a quoted figure, a run file or a block's run folder is changed.
# Prints PASS.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${MINIAPP_PYTHON3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
$py scripts/gpu_runs.py check docs/gpu.md docs/gpu-runs/*/README.md || fail "the docs' GPU tables differ from the recorded runs"
# a changed figure in a generated block
mkdir -p "$tmp/docs"
first=docs/gpu-runs/2026-11-26-h100/README.md
sed '0,/| 262144 | 5-32-32-1 | 3, 3 | 0.92 /s//| 262144 | 5-32-32-1 | 3, 3 | 0.82 /' $first > "$tmp/docs/p.md"
! cmp -s $first "$tmp/docs/p.md" || fail "the test's edit did not change the doc"
! $py scripts/gpu_runs.py check "$tmp/docs/p.md" > "$tmp/out" || fail "a changed figure passed the check"
grep -q "differs from the run's files" "$tmp/out" || { cat "$tmp/out"; fail "no reason given"; }
# a block naming a run folder that does not exist
sed 's|<!-- gpu_runs.py docs/gpu-runs/2026-11-26-h100 -->|<!-- gpu_runs.py docs/gpu-runs/nosuch torch -->|' $first > "$tmp/docs/q.md"
! cmp -s $first "$tmp/docs/q.md" || fail "the test's edit of the block's run folder did not change the doc"
! $py scripts/gpu_runs.py check "$tmp/docs/q.md" > "$tmp/out" || fail "a missing run folder passed the check"
# a doc without a block
echo "no block" > "$tmp/docs/r.md"
! $py scripts/gpu_runs.py check "$tmp/docs/r.md" > "$tmp/out" || fail "a doc without a block passed the check"
# a run with the GEMM-style rows (bench_surrogate on a GPU times both kernel sets): their table, six kernel columns
run=$tmp/run && mkdir -p "$run"
cat > "$run/call1-summary.md" <<'MD'
### bench_surrogate, batch 4096, hidden layers 32,32

```
strategy          step ms train samp/s  vs atomic   GFLOP/s   %peak infer samp/s  vs atomic   GFLOP/s
atomic               2.00        1e+06      1.000       1.0      1%        4e+06      1.000       1.0
deterministic        2.10        1e+06      1.050       1.0      1%        4e+06      1.000       1.0
reproducible         3.00        1e+06      1.500       1.0      1%        4e+06      1.000       1.0
atomic/gemm          1.00        1e+06      1.000       1.0      1%        4e+06      1.000       1.0
deterministic/gemm   1.05        1e+06      1.050       1.0      1%        4e+06      1.000       1.0
reproducible/gemm    1.20        1e+06      1.200       1.0      1%        4e+06      1.000       1.0
```

### PyTorch, batch 4096, hidden layers 32,32

```
mode                step ms   train samp/s vs default   infer samp/s  host step ms   host infer/s  compiles
default               2.000      1.000e+06      1.000      1.000e+06         4.200      2.000e+06         0
```
MD
printf 'strategy kernel launches total us share\n' > "$run/kernels-32-32.txt"
for s in atomic deterministic reproducible atomic/gemm deterministic/gemm reproducible/gemm; do
  printf '%s k_adam 1 10.0 50.0%%\n%s (kernels of the step) 2 20.0 100.0%%\n' "$s" "$s" >> "$run/kernels-32-32.txt"
done
$py scripts/gpu_runs.py show "$run" > "$tmp/show" || { cat "$tmp/show"; fail "show on a run with gemm rows"; }
for want in "| 4096 | 5-32-32-1 | 1 | 1.00 / 1.05 / 1.20 | 1.20 met | 0.50 / 0.50 / 0.40 | 4.00 met |" \
            "| kernel | atomic | deterministic | reproducible | atomic/gemm | deterministic/gemm | reproducible/gemm |"; do
  grep -qF -- "$want" "$tmp/show" || { cat "$tmp/show"; fail "gpu_runs.py show: no line '$want'"; }
done
# the bench and loop parts: the bench_surrogate checks' step times (the last call per case), and one row per
# sweep, from a summary's sweep block and from a callN-sweep-*.txt file
cat >> "$run/call1-summary.md" <<'MD'

| check | status | detail |
|---|---|---|
| bench_surrogate n=4096 layers=32,32 | pass | atomic 2.00 ms (x1.000); deterministic 2.10 ms (x1.050); reproducible 3.00 ms (x1.500); atomic/gemm 1.00 ms (x1.000); deterministic/gemm 1.05 ms (x1.050); reproducible/gemm 1.20 ms (x1.200);  |
MD
cat > "$run/call2-summary.md" <<'MD'
| bench_surrogate n=4096 layers=32,32 | pass | atomic 4.00 ms (x1.000); deterministic 4.00 ms (x1.000); reproducible 4.40 ms (x1.100); atomic/gemm 1.00 ms (x1.000); deterministic/gemm 1.00 ms (x1.000); reproducible/gemm 1.50 ms (x1.500);  |

### sweep grayscott-small (surrogate on cuda)

```
- runs: 1 rank(s) x 4 thread(s); every time is the minimum of 2 repeat(s) of its variant, rounds interleaved
| variant | solver | surrogate | time/step [s] | FOM [Mpoint-steps/s] | verification | solve/step [s] | solver ratio | train+predict [s] | surrogate ratio | total [s] | loop ratio | spread |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
| atomic | atomic | atomic | 0.03 | 1 | VALID | 0.02 | 1.000x | 0.2 | 1.000x | 9 | 1.000x | 1% |
| deterministic | deterministic | deterministic | 0.01 | 3 | VALID | 0.005 |  | 0.2 |  | 3 | 0.333x | 1% |
| reproducible | reproducible | reproducible | 0.012 | 2.5 | VALID | 0.006 |  | 0.3 |  | 3.6 | 0.400x | 1% |
| part | variant | fastest | ratio | per round | target | verdict |
|---|---|---|---|---|---|---|
| whole loop | reproducible | deterministic | 1.200x | 1.150x..1.250x | <= 1.10x | MISSED |
```
MD
{ echo "# Cost of determinism: grayscott-tiny"; sed -n '/^- runs/,/^| whole loop/p' "$run/call2-summary.md" | sed 's/4 thread/2 thread/; s/| 0.012 |/| 0.011 |/; s/1.200x | 1.150x..1.250x | <= 1.10x | MISSED/1.100x | 1.050x..1.150x | <= 1.10x | within noise/'; } > "$run/call2-sweep-t2.txt"
$py scripts/gpu_runs.py show "$run" bench,loop > "$tmp/show" || { cat "$tmp/show"; fail "show bench,loop"; }
for want in "| 4096 | 5-32-32-1 | 2 | 4.00 / 4.00 / 4.40 | 1.10 met | 1.00 / 1.00 / 1.50 | 1.50 not met |" \
            "| 2 | grayscott-small (surrogate on cuda) | 1 x 4 | deterministic: 0.01 | 0.012 | 1.200x | 1.150x..1.250x | MISSED |" \
            "| 2 | grayscott-tiny (call2-sweep-t2.txt) | 1 x 2 | deterministic: 0.01 | 0.011 | 1.100x | 1.050x..1.150x | within noise |"; do
  grep -qF -- "$want" "$tmp/show" || { cat "$tmp/show"; fail "gpu_runs.py show: no line '$want'"; }
done
grep -qF "| 4096 | 5-32-32-1 | 1 | 2.00 / 2.10 / 3.00 |" "$tmp/show" && { cat "$tmp/show"; fail "the bench part took call 1's row, not the last call's"; }
rm "$run/call2-summary.md" "$run/call2-sweep-t2.txt"
! $py scripts/gpu_runs.py show "$run" bench,nosuch > "$tmp/out" 2>&1 || fail "show with an unknown part passed"
# a run whose files are not gpu-check's (a corrupt logs archive, a time that is no number): one line, no traceback
echo "not gzip" > "$run/call1-logs.tar.gz"
printf '| sanitizer memcheck (test) | fail | x |\n' >> "$run/call1-summary.md"
rc=0; $py scripts/gpu_runs.py show "$run" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "not as gpu-check.sh writes it" "$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "gpu_runs.py on a corrupt archive: exit $rc"; }
rm "$run/call1-logs.tar.gz"; sed -i 's/^atomic               2.00 /atomic               x.xx /' "$run/call1-summary.md"
rc=0; $py scripts/gpu_runs.py show "$run" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/out" "$tmp/err"; fail "gpu_runs.py on a time that is no number: exit $rc"; }
echo PASS
