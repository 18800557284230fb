#!/usr/bin/env bash
# tests/gpu_check_tests.sh BUILD: scripts/gpu-check.sh rehearsed on this
# machine with the CPU backend (-rehearse), so that the one command a vendor
# runs on a GPU node has run end to end before: the decks, the GPU-node decks
# cut short, 2 ranks against 1, the benchmark, the atomic study and a sweep
# over prebuilt variants must pass, the GPU-only steps must say they were skipped, result.yaml must parse
# with one entry per check, and a failing executable must make the script
# fail. Also its argument checks. About a minute. Prints PASS.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "$1" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
has() { grep -qF -- "$2" "$1" || { cat "$1"; fail "'$2' not in $(basename "$1")"; }; }

# a variants root: this build as reproducible, atomic and reproducible-atomic
mkdir -p "$tmp/root"
for v in reproducible atomic reproducible-atomic; do ln -s "$build" "$tmp/root/$v"; done
rc=0
scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/gc" -steps device,test,decks,solver,gpudecks,ranks,bench,atomic,sweep,profile \
  -decks grayscott-small -gpudeck_tile 32 -bench_n 3000 -widths "8,8 3" -atomic_deck grayscott-small -replicas 2 \
  -sweep_decks grayscott-small -sweep_variants reproducible > "$tmp/log" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$tmp/log"; fail "rehearsal exited $rc"; }
y=$tmp/gc/result.yaml
$py - "$y" <<'PY' || fail "result.yaml"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
st = {c["check"]: c["status"] for c in d["checks"]}
want = {"device": "skip", "test": "skip", "profile": "skip", "deck grayscott-small": "pass",
        "solver on cpu: grayscott-small": "pass",
        "GPU deck grayscott-gpu-large, 2 steps: cpu vs CPU": "pass", "GPU deck grayscott-gpu-large": "skip",
        "GPU deck grayscott-gpu-weak, 2 steps: cpu vs CPU": "pass", "GPU deck grayscott-gpu-weak": "skip",
        "2 cpu ranks vs 1 CPU rank": "pass", "2 cpu ranks, solver too, vs 1 CPU rank": "pass",
        "bench_surrogate n=3000 layers=8,8": "pass",
        "bench_surrogate n=3000 layers=3": "pass", "atomic study (cpu, real atomics)": "pass",
        "atomic study (CPU, seeded replay)": "pass", "atomic study (both halves on cpu, real atomics)": "pass",
        "seeded atomics: solver on cpu vs CPU": "pass", "sweep grayscott-small": "pass"}
bad = {k: (st.get(k), v) for k, v in want.items() if st.get(k) != v}
extra = set(st) - set(want)
if bad or extra or d["surrogate_device"] != "cpu":
    print("result.yaml: wrong or missing checks", bad, "unexpected", extra, d["surrogate_device"])
    sys.exit(1)
PY
has "$tmp/gc/result.md" "| deck grayscott-small | pass | verdict VALID"
has "$tmp/gc/result.md" "| solver on cpu: grayscott-small | pass | verdict VALID"
has "$tmp/gc/result.md" "| GPU deck grayscott-gpu-weak, 2 steps: cpu vs CPU | pass | same state and weights hashes 0x"
has "$tmp/gc/result.md" "### bench_surrogate, batch 3000, hidden layers 8,8"
has "$tmp/gc/result.md" "### sweep grayscott-small (surrogate on cpu)"
tar -tzf "$tmp/gc/logs.tar.gz" > "$tmp/list"
has "$tmp/list" "logs/grayscott-small.yaml"

# the submit step: an official submission of this machine (a clean build's runs only are official)
case $("$build/miniapp/miniapp" -version 2> /dev/null | head -n 1) in
  *"-dirty)"*) echo "skip: the submit step (the build's tree is modified: no run is official)" ;;
  *)
    scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/gcs" -steps submit -submit_deck grayscott-small > "$tmp/log" 2>&1 \
      && has "$tmp/gcs/result.md" "| submission grayscott-small | pass | official" \
      && has "$tmp/gcs/result.md" "| machines compared | pass |" \
      && has "$tmp/gcs/logs/submission/machines.md" "| grayscott-medium | ci-2core-xeon-vm |" \
      && [ "$(sed -n 's/^official: //p' "$tmp/gcs/logs/submission/submission.yaml")" = true ] \
      || { cat "$tmp/log"; fail "the submit step: not an official submission"; }
    echo "ok: the submit step wrote an official submission, merged with those recorded in docs/runs" ;;
esac

# a failing executable fails the check and the script
mkdir -p "$tmp/bad/reproducible"
printf '#!/bin/sh\necho "miniapp: error: broken on purpose" >&2\nexit 3\n' > "$tmp/bad/reproducible/miniapp"
chmod +x "$tmp/bad/reproducible/miniapp"
rc=0
scripts/gpu-check.sh -rehearse -bin "$tmp/bad/reproducible" -out "$tmp/gcbad" -steps decks,atomic -decks grayscott-small > "$tmp/log" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$tmp/log"; fail "a failing miniapp gave exit $rc, not 1"; }
has "$tmp/gcbad/result.md" "| deck grayscott-small | fail | exit 3"
has "$tmp/gcbad/result.md" "| atomic study | skip | no miniapp under -atomic_bin"

# -deadline stops the command that is running (a caller's budget: gpu-lease.sh)
t0=$(date +%s) rc=0
scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/gcdl" -steps decks -decks grayscott-large -deadline $((t0 + 2)) > "$tmp/log" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$tmp/log"; fail "a deck past -deadline gave exit $rc, not 1"; }
has "$tmp/gcdl/result.md" "| deck grayscott-large | fail | exit 124"
[ $(($(date +%s) - t0)) -le 30 ] || fail "-deadline: the deck ran $(($(date +%s) - t0)) s, past a 2 s deadline (the large deck takes minutes)"

# first contact without a usable GPU (this machine; or a build without CUDA):
# the device step fails with the runtime's reason and no further step runs
if ! "$build/tests/surrogate/test_surrogate_cuda" -cuda_test_probe > /dev/null 2>&1; then
  mkdir -p "$tmp/fakebin" # a driver tool that answers, as on a node whose driver is too old
  printf '#!/bin/sh\necho "0, NVIDIA stand-in, 80 GiB, 470.00, 9.0"\n' > "$tmp/fakebin/nvidia-smi" && chmod +x "$tmp/fakebin/nvidia-smi"
  rc=0
  PATH=$tmp/fakebin:$PATH scripts/gpu-check.sh -bin "$tmp/root/reproducible" -out "$tmp/gcdev" -steps device,decks -decks grayscott-small > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ $rc = 1 ] || { cat "$tmp/out" "$tmp/err"; fail "no usable device gave exit $rc, not 1"; }
  [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "no usable device: expected one error line"; }
  has "$tmp/err" "gpu-check: error: no GPU step can run:"
  has "$tmp/gcdev/result.md" "| device | fail |"
  ! grep -q "deck grayscott-small" "$tmp/gcdev/result.md" || fail "a step ran after the device step failed"
fi

# scripts/gpu-lease.sh: a group runs and its results are packed (the torch
# group: PyTorch is absent here, a skip), a group whose estimate exceeds the
# budget is not started and fails the lease, bad arguments are one line
mkdir -p "$tmp/notorch" # a python3 without PyTorch, wherever the test runs
printf '#!/bin/sh\nexit 1\n' > "$tmp/notorch/python3" && chmod +x "$tmp/notorch/python3"
rc=0
PATH=$tmp/notorch:$PATH OUT=$tmp/lease scripts/gpu-lease.sh -rehearse -bin "$tmp/root/reproducible" -budget 200 -groups torch > "$tmp/log" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$tmp/log"; fail "gpu-lease torch group exited $rc"; }
has "$tmp/lease/summary.md" "| PyTorch reference |"
tar -tzf "$tmp/lease/gpu-check.tar.gz" > "$tmp/list"
has "$tmp/list" "torch/result.yaml"
rc=0
scripts/gpu-lease.sh -rehearse -bin "$tmp/root/reproducible" -budget 20 -groups torch,core -out "$tmp/lease2" > "$tmp/log" 2>&1 || rc=$?
[ $rc = 1 ] || { cat "$tmp/log"; fail "gpu-lease with too small a budget exited $rc, not 1"; }
has "$tmp/log" "not run, out of time: torch core"
for c in "-groups warp" "-budget 0" "-runtime $tmp/nonexistent.tar.xz" "-out /proc/lease" "-budget" "-budget 9223372036854775807" "-out" "-bin $tmp/nonexistent"; do
  rc=0
  # shellcheck disable=SC2086
  scripts/gpu-lease.sh -rehearse $c > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" != 0 ] || fail "gpu-lease: exit 0 for: $c"
  if [ "$(wc -l < "$tmp/err")" != 1 ] || [ -s "$tmp/out" ]; then cat "$tmp/out" "$tmp/err"; fail "gpu-lease: expected one error line for: $c"; fi
done

# scripts/ncu_steps.py (step kernels): an ncu raw page in ms, as an H100 run
# wrote it; each strategy's timed step is the kernels after its warm-up's
# k_adam up to its own; a report without 6 or 12 k_adam, or in an unknown
# unit, fails; strategies 4-6 (12 k_adam: a GPU's bench) are the same with
# the other kernels of the gradient sums, named by the suffix
{
  echo '"ID","Process ID","Kernel Name","Grid Size","gpu__time_duration.sum"'
  echo '"","","","","ms"'
  i=0
  for s in 1 2 3 4 5 6; do
    for step in warm timed; do
      j=1
      for k in "k_forward(const float *, int)" "gradsum_float_kernel(int, int)" "k_adam(int, float *)"; do
        d=$([ $step = warm ] && echo 9.5 || echo "0.$s$j"); echo "\"$i\",\"7\",\"$k\",\"(9, 1, 1)\",\"$d\""; i=$((i + 1)) j=$((j + 1))
      done
    done
    echo "\"$i\",\"7\",\"k_output(int)\",\"(1, 1, 1)\",\"1,000.5\""; i=$((i + 1))
  done
} > "$tmp/ncu6.csv"
$py scripts/ncu_steps.py "$tmp/ncu6.csv" > "$tmp/ncu.txt" || { cat "$tmp/ncu.txt"; fail "ncu_steps.py on a good report of 6 strategies"; }
# a strategy's timed kernels last 0.<strategy><kernel> ms: 0.11 + 0.12 + 0.13 ms for atomic
for want in "atomic (kernels of the step) 3 360.0 " "deterministic (kernels of the step) 3 660.0 " "reproducible gradsum_float_kernel 1 320.0 " "atomic/gemm (kernels of the step) 3 1260.0 " "reproducible/gemm k_adam 1 630.0 "; do
  tr -s ' ' < "$tmp/ncu.txt" | grep -qF "$want" || { cat "$tmp/ncu.txt"; fail "ncu_steps.py: no line '$want'"; }
done
# 3 strategies (a CPU-less count cannot happen, but an older bench's report): no 4th
awk -F'"' 'NR <= 2 || $2 < 21' "$tmp/ncu6.csv" > "$tmp/ncu.csv"
$py scripts/ncu_steps.py "$tmp/ncu.csv" /tiled > "$tmp/ncu.txt" || { cat "$tmp/ncu.txt"; fail "ncu_steps.py on a good report of 3 strategies"; }
! grep -q "/tiled" "$tmp/ncu.txt" || { cat "$tmp/ncu.txt"; fail "ncu_steps.py: strategies 4-6 in a report of 3"; }
tr -s ' ' < "$tmp/ncu.txt" | grep -qF "reproducible (kernels of the step) 3 960.0 " || { cat "$tmp/ncu.txt"; fail "ncu_steps.py: 3 strategies"; }
grep -v '"k_adam' "$tmp/ncu.csv" > "$tmp/ncu5.csv"
! $py scripts/ncu_steps.py "$tmp/ncu5.csv" > "$tmp/ncu.txt" 2>&1 || fail "ncu_steps.py accepted a report without its 6 k_adam"
# not an ncu page at all (bytes that are no text, a header alone): one line, no traceback
printf '\377\376' > "$tmp/bin.csv"; head -n 1 "$tmp/ncu6.csv" > "$tmp/hdr.csv"
for f in bin hdr; do
  rc=0; $py scripts/ncu_steps.py "$tmp/$f.csv" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "ncu_steps.py on $f.csv: exit $rc, not one line"; }
done
sed '2s/"ms"/"furlong"/' "$tmp/ncu.csv" > "$tmp/ncuu.csv"
! $py scripts/ncu_steps.py "$tmp/ncuu.csv" > "$tmp/ncu.txt" 2>&1 || fail "ncu_steps.py accepted an unknown unit"

# a results folder holding files gpu-check.sh did not write: refused, nothing touched (the user's
# appendix.md was deleted, logs/ and result.md replaced); the same for gpu-lease.sh's two files;
# a re-run into its own folder replaces its own results
mkdir -p "$tmp/ud/logs" && echo notes > "$tmp/ud/appendix.md" && echo mine > "$tmp/ud/logs/cpu1.yaml"
rc=0; scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/ud" -steps device > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && grep -q "holds appendix.md, which no earlier run of gpu-check.sh wrote" "$tmp/err" || { cat "$tmp/err"; fail "gpu-check wrote into a folder with the user's files"; }
[ "$(cat "$tmp/ud/appendix.md") $(cat "$tmp/ud/logs/cpu1.yaml")" = "notes mine" ] && [ ! -e "$tmp/ud/result.md" ] || fail "gpu-check changed the user's folder"
for k in 1 2; do scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/own" -steps device > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "gpu-check into its own folder, run $k"; }; done
mkdir -p "$tmp/ul" && echo mine > "$tmp/ul/summary.md"
rc=0; scripts/gpu-lease.sh -rehearse -bin "$tmp/root/reproducible" -budget 200 -groups torch -out "$tmp/ul" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/ul/summary.md")" = mine ] || { cat "$tmp/err"; fail "gpu-lease replaced the user's summary.md"; }
# relative -atomic_bin and -sweep_root are the caller's (they were the repository's: skip, fail)
rc=0; (cd "$tmp" && ln -sfn root/reproducible ab && "$OLDPWD"/scripts/gpu-check.sh -rehearse -bin root/reproducible -out gcrel -steps atomic -atomic_bin ab -atomic_deck grayscott-small -replicas 2) > "$tmp/log" 2>&1 || rc=$?
! grep -q "no miniapp under -atomic_bin" "$tmp/gcrel/result.md" || { cat "$tmp/gcrel/result.md"; fail "a relative -atomic_bin was not the caller's"; }
# a deck that fails now is not read through the report of an earlier run into the same folder
scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" -out "$tmp/gcz" -steps decks -decks grayscott-small > /dev/null 2>&1 || fail "the small deck failed"
rc=0; scripts/gpu-check.sh -rehearse -bin "$tmp/bad/reproducible" -out "$tmp/gcz" -steps decks -decks grayscott-small > /dev/null 2>&1 || rc=$?
has "$tmp/gcz/result.md" "| deck grayscott-small | fail | exit 3, verdict none"

# bad arguments: one line, nonzero exit
for c in "-steps decks,warp" "-widths 3,,4" "-replicas 1" "-np 0" "-bench_n 1e6" "-decks nosuch" "-bin $tmp/nonexistent" "-out /proc/gc" "-sweep_decks nosuch" "-out" "-decks" "-bench_n" "-widths" "-np 99999999999999999999"; do
  rc=0
  # shellcheck disable=SC2086
  scripts/gpu-check.sh -rehearse -bin "$tmp/root/reproducible" $c > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" != 0 ] || fail "exit 0 for: $c"
  if [ "$(wc -l < "$tmp/err")" != 1 ] || [ -s "$tmp/out" ]; then cat "$tmp/out" "$tmp/err"; fail "expected one error line for: $c"; fi
done
echo PASS
