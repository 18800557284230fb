#!/usr/bin/env bash
# tests/gpu_runs_tests.sh: the GPU figures docs/gpu.md and docs/performance.md
# quote are the recorded run's (scripts/gpu_runs.py check), and the check
# fails when a quoted figure, a run file or a block's run folder is changed.
# Prints PASS.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${MINIAPP_PYTHON3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
$py scripts/gpu_runs.py check docs/gpu.md docs/performance.md || fail "the docs' GPU tables differ from the recorded runs"
# a changed figure in a generated block
mkdir -p "$tmp/docs"
sed '0,/| 262144 | 5-32-32-1 | 3, 3 | 0.92 /s//| 262144 | 5-32-32-1 | 3, 3 | 0.82 /' docs/performance.md > "$tmp/docs/p.md"
! cmp -s docs/performance.md "$tmp/docs/p.md" || fail "the test's edit did not change the doc"
! $py scripts/gpu_runs.py check "$tmp/docs/p.md" > "$tmp/out" || fail "a changed figure passed the check"
grep -q "differs from the run's files" "$tmp/out" || { cat "$tmp/out"; fail "no reason given"; }
# a block naming a run folder that does not exist
sed 's|<!-- gpu_runs.py docs/gpu-runs/2026-11-26-h100 torch,sweep -->|<!-- gpu_runs.py docs/gpu-runs/nosuch torch -->|' docs/performance.md > "$tmp/docs/q.md"
! $py scripts/gpu_runs.py check "$tmp/docs/q.md" > "$tmp/out" || fail "a missing run folder passed the check"
# a doc without a block
echo "no block" > "$tmp/docs/r.md"
! $py scripts/gpu_runs.py check "$tmp/docs/r.md" > "$tmp/out" || fail "a doc without a block passed the check"
echo PASS
