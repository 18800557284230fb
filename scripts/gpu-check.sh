#!/usr/bin/env bash
# scripts/gpu-check.sh [-bin DIR] [-out DIR] [-decks "D1 D2 .."] [-timeout S]:
# the GPU verification a vendor runs too (issue 10; docs/gpu.md). On a machine
# with an NVIDIA GPU it
#   1. records the device (name, memory, driver, compute capability);
#   2. runs the CUDA test (test_surrogate_cuda: CPU and GPU bitwise equal);
#   3. runs compute-sanitizer memcheck, racecheck, synccheck and initcheck on
#      that test and on a short coupled run (0 errors each);
#   4. runs the decks (default grayscott-small, -medium, -large) with
#      -surrogate_device cuda: VALID, i.e. in a reproducible build the golden
#      hashes, which are the CPU's;
#   5. compares a 2-rank GPU run with the 1-rank CPU run (same hashes in a
#      reproducible build);
#   6. runs bench_surrogate on the GPU (512x512 and 2048x2048 batches) and,
#      where PyTorch is installed, bench/bench_surrogate_torch.py;
# and writes DIR/result.md and DIR/result.yaml (default out/gpu-check).
# Executables: -bin DIR is a build tree (build/reproducible, the default) or
# the bin/ of a packed runtime (../shared/tools/pack-runtime; source its
# env.sh first). Exit 0 when every check passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/gpu-check.sh [-bin DIR] [-out DIR] [-decks \"D1 D2 ..\"] [-timeout SECONDS]"
die() { echo "gpu-check: error: $*" >&2; exit 1; }
bin=build/reproducible out=out/gpu-check decks="grayscott-small grayscott-medium grayscott-large" tmo=1800
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -bin) bin=$2 ;;
    -out) out=$2 ;;
    -decks) decks=$2 ;;
    -timeout) [[ $2 =~ ^[1-9][0-9]*$ ]] || die "-timeout $2: must be a positive integer"; tmo=$2 ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  shift 2
done
for d in $decks; do [ -f "inputs/$d.opts" ] || die "-decks: unknown deck '$d'"; done
exe() { # the executable $1 under $bin (a build tree or a runtime's bin/), else on PATH
  for c in "$bin/$1" "$bin/miniapp/$1" "$bin/surrogate/$1" "$bin/tests/surrogate/$1"; do [ -x "$c" ] && { echo "$c"; return; }; done
  command -v "$1" 2> /dev/null || true
}
app=$(exe miniapp) tcuda=$(exe test_surrogate_cuda) bench=$(exe bench_surrogate)
[ -n "$app" ] || die "no miniapp under $bin (build with CUDA: scripts/setup.sh reproducible; or -bin a runtime's bin/)"
command -v nvidia-smi > /dev/null || die "nvidia-smi not found: this machine has no NVIDIA driver"
nvidia-smi -L > /dev/null 2>&1 || die "nvidia-smi finds no GPU"
mkdir -p "$out" || die "cannot create $out"
res=$out/result.md yaml=$out/result.yaml fails=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
key() { sed -n "s/^ *$2: *//p" "$1" | head -n 1 | tr -d '"'; }
record() { # NAME pass|fail DETAIL
  printf '  - {check: %s, status: %s, detail: "%s"}\n' "$1" "$2" "${3//\"/\'}" >> "$yaml"
  printf '| %s | %s | %s |\n' "$1" "$2" "$3" >> "$res"
  echo "gpu-check: $1: $2 ($3)"
  [ "$2" = pass ] || fails=$((fails + 1))
}
dev=$(nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1)
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "executables: $(dirname "$app")"
  echo "devices:"; while IFS= read -r l; do echo "  - \"$l\""; done <<< "$dev"
  echo "checks:"
} > "$yaml"
{
  echo "# GPU check, $(date -u +%FT%TZ), $(hostname)"; echo
  echo "Devices (index, name, memory, driver, compute capability):"; echo; echo '```'; echo "$dev"; echo '```'; echo
  echo "| check | status | detail |"; echo "|---|---|---|"
} > "$res"

# 2. the CUDA test
if [ -n "$tcuda" ]; then
  timeout "$tmo" "$tcuda" > "$out/test_cuda.log" 2>&1; rc=$?
  case $rc in 0) record test_surrogate_cuda pass "CPU and GPU bitwise equal" ;; 77) record test_surrogate_cuda fail "skipped: the test saw no GPU" ;; *) record test_surrogate_cuda fail "exit $rc, $out/test_cuda.log" ;; esac
else record test_surrogate_cuda fail "test_surrogate_cuda not found under $bin"; fi

# 3. sanitizers
short=(-options_file inputs/grayscott-small.opts -ts_max_steps 4 -surrogate_device cuda)
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck synccheck initcheck; do
    for what in test app; do
      if [ $what = test ]; then cmd=("$tcuda"); else cmd=("$app" "${short[@]}"); fi
      [ -n "${cmd[0]}" ] || continue
      log=$out/sanitizer-$tool-$what.log
      timeout "$tmo" compute-sanitizer --tool $tool "${cmd[@]}" > "$log" 2>&1
      if grep -q "ERROR SUMMARY: 0 errors" "$log"; then record "sanitizer $tool ($what)" pass "0 errors"
      else record "sanitizer $tool ($what)" fail "$(grep -m1 'ERROR SUMMARY' "$log" || echo "no summary"), $log"; fi
    done
  done
else record compute-sanitizer fail "not on PATH"; fi

# 4. the decks on the GPU
for d in $decks; do
  timeout "$tmo" "$app" -options_file "inputs/$d.opts" -surrogate_device cuda -report "$out/$d.yaml" > "$out/$d.log" 2>&1; rc=$?
  v=$(key "$out/$d.yaml" verdict) g=$(key "$out/$d.yaml" golden_state_hash)
  if [ $rc = 0 ] && [ "$v" = VALID ]; then record "deck $d" pass "VALID; golden state hash: $g; FOM $(key "$out/$d.yaml" value) $(key "$out/$d.yaml" unit)"
  else record "deck $d" fail "exit $rc, verdict ${v:-none}, golden: ${g:-?}, $out/$d.log"; fi
done

# 5. 2 GPU ranks against 1 CPU rank
run2=(-options_file inputs/grayscott-small.opts)
"$app" "${run2[@]}" -surrogate_device cpu -summary "$out/cpu1.yaml" > "$out/cpu1.log" 2>&1
mpiexec -n 2 "$app" "${run2[@]}" -surrogate_device cuda -summary "$out/gpu2.yaml" > "$out/gpu2.log" 2>&1; rc=$?
hc="$(key "$out/cpu1.yaml" state_hash) $(key "$out/cpu1.yaml" weights_hash)" hg="$(key "$out/gpu2.yaml" state_hash) $(key "$out/gpu2.yaml" weights_hash)"
if [ "$(key "$out/cpu1.yaml" solver_reduction)" != reproducible ]; then record "2 GPU ranks vs 1 CPU rank" pass "not a reproducible build: hashes not compared ($hg vs $hc)"
elif [ $rc = 0 ] && [ "$hc" = "$hg" ]; then record "2 GPU ranks vs 1 CPU rank" pass "same state and weights hashes $hg"
else record "2 GPU ranks vs 1 CPU rank" fail "exit $rc; GPU $hg, CPU $hc"; fi

# 6. benchmarks (figures, not pass/fail on time)
if [ -n "$bench" ]; then
  for n in 262144 4194304; do
    timeout "$tmo" "$bench" -surrogate_device cuda -bench_n $n -bench_steps 5 -bench_reps 3 > "$out/bench-$n.log" 2>&1; rc=$?
    if [ $rc = 0 ]; then record "bench_surrogate n=$n" pass "$(grep -E '^(atomic|deterministic|reproducible) ' "$out/bench-$n.log" | awk '{printf "%s %s ms; ", $1, $2}')"
    else record "bench_surrogate n=$n" fail "exit $rc, $out/bench-$n.log"; fi
  done
else record bench_surrogate fail "bench_surrogate not found under $bin"; fi
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  python3 bench/bench_surrogate_torch.py > "$out/torch.log" 2>&1 && record "PyTorch reference" pass "$(grep -E '^(default|deterministic) ' "$out/torch.log" | awk '{printf "%s %s ms; ", $1, $2}')" ||
    record "PyTorch reference" fail "$out/torch.log"
fi
echo; echo "gpu-check: $fails check(s) failed; results in $res and $yaml"
[ $fails = 0 ]
