#!/usr/bin/env bash
# scripts/gpu-check.sh [options]: the GPU verification and measurements a
# vendor runs too (docs/gpu.md). Steps (-steps, default all):
#   device    first contact: driver and runtime CUDA versions, device 0, its
#             compute mode, one checked launch; stops here when it fails
#   test      test_surrogate_cuda: CPU and GPU train steps bitwise equal, with
#             each set of kernels (-surrogate_cuda_kernels tiled, gemm)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck on
#             that test (both kernel sets) and on a 4-step coupled run: 0 errors each
#   decks     the decks (-decks) with -surrogate_device cuda: VALID, i.e. in a
#             reproducible build the golden hashes, which are the CPU's; FOM
#   solver    the decks again with the solver's vectors on the GPU too
#             (-solver_device cuda): VALID (the golden hashes: the CPU's bits),
#             the FOM and the CG's seconds per iteration and GB/s against the
#             decks step's (solver on the CPU), the loop's vector copies
#   gpudecks  the GPU-node decks (-gpu_decks): a run cut to -short_steps steps
#             (training every step) on the CPU and on the GPU, the same state
#             and weights hashes in a reproducible build; then the deck whole on
#             the GPU: VALID, its FOM, its time (at least 60 s, the deck's
#             sizing rule), its memory bound and its hashes (the golden ones to
#             record for a deck that has none). -gpudeck_tile T cuts each deck
#             to T x T points a rank (the rehearsal)
#   submit    scripts/benchmark.sh on -submit_deck (default grayscott-medium),
#             both halves on the GPU (-tunable "-solver_device cuda"): this
#             machine's official submission, for docs/benchmark.md's table of
#             machines (logs/submission/), and that table: the submissions
#             recorded in docs/runs merged with it (logs/submission/machines.md)
#   ranks     grayscott-small on 2 GPU ranks against 1 CPU rank: same hashes
#             (with the solver step: the solver on the 2 GPUs too)
#   bench     bench_surrogate per batch (-bench_n) and network (-widths):
#             train/infer samples/s per strategy, GFLOP/s, modelled GB/s;
#             STRATEGY/gemm: with -surrogate_cuda_kernels gemm
#   torch     bench/bench_surrogate_torch.py, same batches and networks
#             (eager, deterministic, torch.compile), where PyTorch is there
#   atomic    -replicas R runs of -atomic_deck with a build whose surrogate
#             half is atomic: real GPU atomics (order seed 0) against the CPU's
#             seeded replay (seed 1): weights V_c, rel. L2, first divergent epoch;
#             then the atomic build (-sweep_root/atomic) with both halves on the
#             GPU (its solver's atomics too: the state's V_c, first divergent
#             step), and a seeded order with the solver on the GPU and on the
#             CPU: the same state hash
#   sweep     scripts/sweep.sh on -sweep_decks with the surrogate on the GPU,
#             surrogate half varied (-sweep_variants, builds under -sweep_root),
#             -sweep_repeat rounds (default 2)
#   sumstudy  miniapp-sumstudy's CUDA methods (docs/fpna-sums.md)
#   profile   Nsight Compute (ncu) on the reproducible gradient-sum kernels at the largest -bench_n
#   kernels   ncu's duration of every kernel of one timed train step per strategy
#             at the largest -bench_n, per network (scripts/ncu_steps.py)
# Results: DIR/result.md and DIR/result.yaml (-out, default out/gpu-check),
# the logs in DIR/logs/ and DIR/logs.tar.gz.
# Executables: -bin DIR is a build tree (default build/reproducible) or a
# variant folder of a packed runtime (scripts/gpu-pack.sh; source its env.sh
# first); the atomic study and the sweep take their builds beside it
# (-atomic_bin, -sweep_root). -rehearse runs every step that needs no GPU with
# the CPU backend instead (the GPU-only ones are skipped): the script's own
# test on machines without a GPU. Exit 0 when no check failed, 1 otherwise.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -uo pipefail
caller=$PWD # relative paths the caller gives are the caller's, not the repository's
callerpath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$caller" "$1" ;; esac; }
cd "$(dirname "$0")/.."
usage="usage: scripts/gpu-check.sh [-bin DIR] [-out DIR] [-steps LIST] [-decks \"D ..\"] [-np N] [-bench_n \"N ..\"] [-widths \"W ..\"]"
usage+=" [-submit_deck D] [-atomic_bin DIR] [-atomic_deck D] [-replicas R] [-sweep_root DIR] [-sweep_decks \"D ..\"] [-sweep_repeat K] [-sweep_variants A,B] [-python PY] [-timeout S] [-deadline EPOCH] [-rehearse]"
die() { echo "gpu-check: error: $*" >&2; exit 1; }
posint() { [[ $2 =~ ^[1-9][0-9]{0,8}$ ]] || die "$1 $2: must be a positive integer below 10^9"; }
allsteps="device test sanitize decks solver gpudecks submit ranks bench torch atomic sweep sumstudy profile kernels"
bin=build/reproducible out=out/gpu-check steps=$allsteps decks="grayscott-small grayscott-medium grayscott-large" np=1
bench_n="262144 4194304" widths="32,32 64,64,64" atomic_bin="" atomic_deck=grayscott-medium replicas=10
submit_deck=grayscott-medium sweep_root="" sweep_decks="grayscott-medium grayscott-large" sweep_variants=atomic-deterministic,atomic-reproducible sweep_repeat=2
gpu_decks="grayscott-gpu-large grayscott-gpu-weak" gpudeck_tile="" short_steps=2
py=python3 tmo=1800 deadline="" rehearse=0 cmdline="scripts/gpu-check.sh $*"
while [ $# -gt 0 ]; do
  [ "$1" = -rehearse ] && { rehearse=1; shift; continue; }
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -bin) bin=$(callerpath "$2") ;;
    -out) [ -n "$2" ] || die "-out: empty (name a folder)"; out=$(callerpath "$2") ;;
    -steps)
      steps=${2//,/ }
      [ -n "${steps// /}" ] || die "-steps: empty (of: ${allsteps// /,})"
      for s in $steps; do [[ " $allsteps " == *" $s "* ]] || die "-steps: unknown step '$s' (of: ${allsteps// /,})"; done ;;
    -decks) decks=${2//,/ }; [ -n "${decks// /}" ] || die "-decks: empty (name a deck of inputs/)" ;;
    -np) posint "$1" "$2"; np=$2 ;;
    -gpu_decks) gpu_decks=${2//,/ }; [ -n "${gpu_decks// /}" ] || die "-gpu_decks: empty (name a deck of inputs/)" ;;
    -gpudeck_tile) posint "$1" "$2"; gpudeck_tile=$2 ;;
    -short_steps) posint "$1" "$2"; short_steps=$2 ;;
    -submit_deck) [ -f "inputs/$2.opts" ] || die "-submit_deck $2: no inputs/$2.opts"; submit_deck=$2 ;;
    -bench_n) for n in $2; do posint "$1" "$n"; done; [ -n "${2// /}" ] || die "-bench_n: empty (batch sizes)"; bench_n=$2 ;;
    -widths) for w in $2; do [[ $w =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "-widths: '$w' is not a comma list of widths"; done; [ -n "${2// /}" ] || die "-widths: empty (hidden layer lists)"; widths=$2 ;;
    -atomic_bin) [ -n "$2" ] || die "-atomic_bin: empty"; atomic_bin=$(callerpath "$2") ;;
    -atomic_deck) atomic_deck=$2 ;;
    -replicas) posint "$1" "$2"; [ "$2" -ge 2 ] || die "-replicas $2: at least 2"; replicas=$2 ;;
    -sweep_root) [ -n "$2" ] || die "-sweep_root: empty"; sweep_root=$(callerpath "$2") ;;
    -sweep_decks) sweep_decks=${2//,/ }; [ -n "${sweep_decks// /}" ] || die "-sweep_decks: empty (name a deck of inputs/)" ;;
    -sweep_repeat) posint "$1" "$2"; sweep_repeat=$2 ;;
    -sweep_variants) [ -n "${2//[ ,]/}" ] || die "-sweep_variants: empty"; sweep_variants=$2 ;;
    -python) case $2 in */*) py=$(callerpath "$2") ;; "") die "-python: empty" ;; *) py=$2 ;; esac ;; # a path is the caller's, a name is looked up on PATH
    -timeout) posint "$1" "$2"; tmo=$2 ;;
    -deadline) [[ $2 =~ ^[1-9][0-9]{0,11}$ ]] || die "$1 $2: seconds since the epoch, a positive integer"; deadline=$2 ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  shift 2
done
on() { [[ " $steps " == *" $1 "* ]]; }
# a command's time limit: -timeout, and no later than -deadline (seconds since
# the epoch), so a caller's budget also stops the command that is running
# (a timeout around this script would leave it running: timeout runs its
# command in a process group of its own)
tmo_now() {
  local t=$tmo
  if [ -n "$deadline" ]; then
    local r=$((deadline - $(date +%s)))
    [ "$r" -lt "$t" ] && t=$r
    [ "$t" -ge 1 ] || t=1
  fi
  echo "$t"
}
for d in $decks $gpu_decks $atomic_deck $sweep_decks; do [ -f "inputs/$d.opts" ] || die "unknown deck '$d' (not in inputs/)"; done
[ -d "$bin" ] || die "-bin $bin: not a folder (build with scripts/setup.sh reproducible, or give a runtime's variant folder)"
exe() { # exe DIR NAME: the executable NAME under DIR (a build tree or a runtime folder)
  for c in "$1/$2" "$1/miniapp/$2" "$1/bench/$2" "$1/tests/surrogate/$2" "$1/bench/sumstudy/$2"; do [ -f "$c" ] && [ -x "$c" ] && { echo "$c"; return; }; done
}
app=$(exe "$bin" miniapp) tcuda=$(exe "$bin" test_surrogate_cuda) bench=$(exe "$bin" bench_surrogate) sums=$(exe "$bin" miniapp-sumstudy)
[ -n "$app" ] || die "no miniapp under $bin"
parent=$(dirname "$bin")
[ -n "$atomic_bin" ] || atomic_bin=$parent/reproducible-atomic
[ -n "$sweep_root" ] || sweep_root=$parent
if [ $rehearse = 1 ]; then dev=cpu; else
  dev=cuda
  command -v nvidia-smi > /dev/null || die "nvidia-smi not found: this machine has no NVIDIA driver (-rehearse runs the CPU parts)"
  nvidia-smi -L > /dev/null 2>&1 || die "nvidia-smi finds no GPU (-rehearse runs the CPU parts)"
fi
logs=$out/logs
mkdir -p "$out" 2> /dev/null || die "-out $out: cannot create it"
. scripts/manifest.sh
manifest_claim "$out" gpu-check.sh result.md result.yaml appendix.md logs logs.tar.gz # never a file of someone else's
rm -rf -- "$logs" "$out/logs.tar.gz" # an earlier run's logs: a step that fails now must not read them
mkdir -p "$logs" 2> /dev/null || die "-out $out: cannot create $logs"
res=$out/result.md yaml=$out/result.yaml fails=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
launch=()
[ "$np" = 1 ] || launch=(mpiexec -n "$np" --bind-to none)
per=$(( $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) / np )) # the decks' ranks share the cores
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( per > 0 ? per : 1 ))}
key() { sed -n "s/^ *$2: *//p" "$1" 2> /dev/null | head -n 1 | tr -d '"'; }
record() { # NAME pass|fail|skip DETAIL
  printf '  - {check: "%s", status: %s, detail: "%s"}\n' "$1" "$2" "${3//\"/\'}" >> "$yaml"
  printf '| %s | %s | %s |\n' "$1" "$2" "$3" >> "$res"
  echo "gpu-check: $1: $2 ($3)"
  [ "$2" != fail ] || fails=$((fails + 1))
}
table() { # TITLE FILE...: a log's table, verbatim, for the appendix of result.md
  { echo; echo "### $1"; echo; echo '```'; cat "${@:2}"; echo '```'; } >> "$out/appendix.md"
}
: > "$out/appendix.md"
if [ $rehearse = 1 ]; then devs="rehearsal: CPU backend, no GPU"
else devs=$(nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1); fi
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: \"$(hostname)\""
  echo "executables: \"$bin\""
  echo "surrogate_device: $dev"
  echo "devices:"; while IFS= read -r l; do echo "  - \"$l\""; done <<< "$devs"
  echo "checks:"
} > "$yaml"
{
  echo "# GPU check, $(date -u +%FT%TZ), $(hostname)"; echo
  echo "Command: \`$cmdline\`"; echo
  echo "Devices (index, name, memory, driver, compute capability):"; echo; echo '```'; echo "$devs"; echo '```'; echo
  echo "| check | status | detail |"; echo "|---|---|---|"
} > "$res"
gpuonly() { # STEP: true when the step may run; records a skip in a rehearsal
  on "$1" || return 1
  [ $rehearse = 0 ] && return 0
  record "$1" skip "needs a GPU (rehearsal)"
  return 1
}

finish() {
  cat "$out/appendix.md" >> "$res" && rm -f "$out/appendix.md"
  tar -C "$out" -czf "$out/logs.tar.gz" logs 2> /dev/null || true
}

# First contact: the driver's and the runtime's CUDA versions, device 0, its
# compute mode and one checked launch. When the device cannot be used (a
# driver too old for the static runtime, a prohibited compute mode), one line
# and no further step.
if gpuonly device; then
  if [ -z "$tcuda" ]; then record device fail "test_surrogate_cuda not found under $bin"
  else
    probe=$(timeout 120 "$tcuda" -cuda_test_probe 2>&1); rc=$?
    probe=$(printf '%s\n' "$probe" | tail -n 1)
    if [ $rc = 0 ]; then record device pass "$probe"
    else
      record device fail "${probe:-exit $rc}"
      finish
      echo "gpu-check: error: no GPU step can run: ${probe:-test_surrogate_cuda -cuda_test_probe exited $rc}" >&2
      exit 1
    fi
  fi
fi

if gpuonly test; then
  if [ -n "$tcuda" ]; then
    for k in tiled gemm; do # both kernel sets (-surrogate_cuda_kernels)
      t="test_surrogate_cuda" l=$logs/test_cuda.log
      [ $k = tiled ] || t="test_surrogate_cuda ($k kernels)" l=$logs/test_cuda-$k.log
      timeout "$(tmo_now)" "$tcuda" -surrogate_cuda_kernels $k > "$l" 2>&1; rc=$?
      case $rc in 0) record "$t" pass "CPU and GPU bitwise equal" ;; 77) record "$t" fail "skipped: the test saw no GPU" ;; *) record "$t" fail "exit $rc, logs/$(basename "$l")" ;; esac
    done
  else record test_surrogate_cuda fail "test_surrogate_cuda not found under $bin"; fi
fi

if gpuonly sanitize; then
  # a short coupled run that must end VALID (exit 0): the default deck has no
  # golden hashes, which a deck cut to 4 steps would miss (exit 2)
  short=(-options_file inputs/default.opts -ts_max_steps 4 -replicas 1 -surrogate_device cuda)
  # the tool on the one-kernel probe first: where it cannot reach the device
  # (one of the machine runtimes), a skip, not a failure of our code
  if command -v compute-sanitizer > /dev/null && ! { [ -n "$tcuda" ] && compute-sanitizer --tool memcheck --error-exitcode 99 "$tcuda" -cuda_test_probe > "$logs/sanitizer-probe.log" 2>&1 && grep -q "ERROR SUMMARY: 0 errors" "$logs/sanitizer-probe.log"; }; then
    record compute-sanitizer skip "cannot run here: $(grep -m1 -iE 'error|fail|not supported' "$logs/sanitizer-probe.log" 2>/dev/null || echo "no summary on the probe"), logs/sanitizer-probe.log"
  elif command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck synccheck initcheck; do
      for what in test gemm app; do # gemm: the test with -surrogate_cuda_kernels gemm (shared memory, barriers)
        case $what in test) cmd=("$tcuda" -cuda_test_big_n 9000) ;; gemm) cmd=("$tcuda" -cuda_test_big_n 9000 -surrogate_cuda_kernels gemm) ;; *) cmd=("$app" "${short[@]}") ;; esac
        [ -n "${cmd[0]}" ] || continue
        log=$logs/sanitizer-$tool-$what.log
        timeout "$(tmo_now)" compute-sanitizer --tool $tool --error-exitcode 99 "${cmd[@]}" > "$log" 2>&1; rc=$?
        # racecheck ends with its own summary line (RACECHECK SUMMARY: N hazards
        # displayed (E errors, W warnings)), the other tools with ERROR SUMMARY;
        # and the program under the tool must succeed (exit 0; 99: the tool's errors)
        sum=$(grep -m1 -oE '(ERROR|RACECHECK) SUMMARY: .*' "$log" || echo "no summary")
        if [ $rc = 0 ] && grep -qE "^========= (ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed)" "$log"; then record "sanitizer $tool ($what)" pass "$sum"
        else record "sanitizer $tool ($what)" fail "exit $rc, $sum, logs/$(basename "$log")"; fi
      done
    done
  else record compute-sanitizer fail "not on PATH"; fi
fi

if on decks; then
  for d in $decks; do
    rm -f "$logs/$d.yaml" # a run that fails before its report must not be read through an older one
    timeout "$(tmo_now)" "${launch[@]}" "$app" -options_file "inputs/$d.opts" -surrogate_device $dev -report "$logs/$d.yaml" > "$logs/$d.log" 2>&1; rc=$?
    v=$(key "$logs/$d.yaml" verdict) g=$(key "$logs/$d.yaml" golden_state_hash)
    detail="verdict ${v:-none}, golden state hash ${g:-none}, FOM $(key "$logs/$d.yaml" value) Mpoint-steps/s, $np rank(s), total $(key "$logs/$d.yaml" total) s"
    if [ $rc = 0 ] && [ "$v" = VALID ]; then record "deck $d" pass "$detail"; else record "deck $d" fail "exit $rc, $detail, logs/$d.log"; fi
  done
fi

if on solver; then
  for d in $decks; do
    r=$logs/$d-solver.yaml
    rm -f "$r"
    timeout "$(tmo_now)" "${launch[@]}" "$app" -options_file "inputs/$d.opts" -surrogate_device $dev -solver_device $dev -report "$r" > "$logs/$d-solver.log" 2>&1; rc=$?
    v=$(key "$r" verdict) g=$(key "$r" golden_state_hash) c=$(key "$r" loop_vector_copies)
    detail="verdict ${v:-none}, golden state hash ${g:-none}, FOM $(key "$r" value) Mpoint-steps/s (solver on the CPU: $(key "$logs/$d.yaml" value)), CG $(key "$r" seconds_per_iteration) s/iteration at $(key "$r" achieved_gbs) GB/s (CPU: $(key "$logs/$d.yaml" seconds_per_iteration) s), ${c:-?} vector copies in the loop, $np rank(s), total $(key "$r" total) s"
    if [ $rc = 0 ] && [ "$v" = VALID ]; then record "solver on $dev: $d" pass "$detail"; else record "solver on $dev: $d" fail "exit $rc, $detail, logs/$d-solver.log"; fi
  done
fi

if on gpudecks; then
  for d in $gpu_decks; do
    cut=() # the deck's own grid, or -gpudeck_tile's
    if [ -n "$gpudeck_tile" ]; then
      if grep -q '^-weak_tile' "inputs/$d.opts"; then cut=(-weak_tile "$gpudeck_tile"); else cut=(-da_grid_x "$gpudeck_tile" -da_grid_y "$gpudeck_tile"); fi
    fi
    short=(-options_file "inputs/$d.opts" "${cut[@]}" -ts_max_steps "$short_steps" -train_every 1)
    rm -f "$logs/$d-cpu.yaml" "$logs/$d-dev.yaml" "$logs/$d.yaml"
    timeout "$(tmo_now)" "${launch[@]}" "$app" "${short[@]}" -solver_device cpu -surrogate_device cpu -summary "$logs/$d-cpu.yaml" > "$logs/$d-cpu.log" 2>&1; rc1=$?
    timeout "$(tmo_now)" "${launch[@]}" "$app" "${short[@]}" -solver_device $dev -surrogate_device $dev -summary "$logs/$d-dev.yaml" > "$logs/$d-dev.log" 2>&1; rc=$?
    hc="$(key "$logs/$d-cpu.yaml" state_hash) $(key "$logs/$d-cpu.yaml" weights_hash)" hg="$(key "$logs/$d-dev.yaml" state_hash) $(key "$logs/$d-dev.yaml" weights_hash)"
    t="GPU deck $d, $short_steps steps: $dev vs CPU"
    if [ $rc1 != 0 ]; then record "$t" fail "the CPU run: exit $rc1, $(grep -m1 'error:' "$logs/$d-cpu.log"), logs/$d-cpu.log"
    elif [ $rc != 0 ]; then record "$t" fail "exit $rc, $(grep -m1 'error:' "$logs/$d-dev.log"), logs/$d-dev.log"
    elif [ "$(key "$logs/$d-cpu.yaml" solver_reduction)" != reproducible ]; then record "$t" pass "not a reproducible build: hashes not compared ($hg vs $hc)"
    elif [ "$hc" = "$hg" ] && [ "$hc" != " " ]; then record "$t" pass "same state and weights hashes $hg, $(key "$logs/$d-dev.yaml" device_loop_vector_copies) vector copies in the loop"
    else record "$t" fail "$dev $hg, CPU $hc"; fi
    if [ $rehearse = 1 ]; then record "GPU deck $d" skip "the whole deck needs a GPU (rehearsal)"; continue; fi
    timeout "$(tmo_now)" "${launch[@]}" "$app" -options_file "inputs/$d.opts" "${cut[@]}" -report "$logs/$d.yaml" > "$logs/$d.log" 2>&1; rc=$?
    r=$logs/$d.yaml v=$(key "$logs/$d.yaml" verdict) tt=$(key "$logs/$d.yaml" total)
    detail="verdict ${v:-none}, FOM $(key "$r" value) Mpoint-steps/s, total ${tt:-?} s, $np rank(s), memory at least $(sed -n 's/^ *memory_at_least_gib_per_rank: *//p' "$r" | head -n 1) GiB a rank, state hash $(key "$r" state_hash), weights hash $(key "$r" weights_hash), golden $(key "$r" golden_state_hash)"
    if [ $rc != 0 ] || [ "$v" != VALID ]; then record "GPU deck $d" fail "exit $rc, $detail, $(grep -m1 'error:' "$logs/$d.log"), logs/$d.log"
    elif [ -z "$gpudeck_tile" ] && ! awk -v t="${tt:-0}" 'BEGIN { exit !(t >= 60) }'; then record "GPU deck $d" fail "shorter than the 60 s it is sized for: $detail"
    else record "GPU deck $d" pass "$detail"; fi
  done
fi

if on submit; then
  log=$logs/submit.log s=$logs/submission/submission.yaml
  timeout "$(tmo_now)" scripts/benchmark.sh "$submit_deck" -bin "$bin" -repeat 3 -tunable "-solver_device $dev" -python "$py" \
    -out "$logs/submission" > "$log" 2>&1; rc=$?
  detail="FOM mean $(sed -n '/^fom:/,/^[a-z]/s/^  mean: //p' "$s" 2> /dev/null), cv $(sed -n '/^fom:/,/^[a-z]/s/^  cv: //p' "$s" 2> /dev/null), $(key "$s" repeats) repeats"
  if [ $rc = 0 ] && [ "$(key "$s" official)" = true ]; then record "submission $submit_deck" pass "official, $detail"
  else record "submission $submit_deck" fail "exit $rc, official $(key "$s" official), $(grep -m1 'error:' "$log"), logs/submit.log"; fi
  # this machine beside the submissions recorded in docs/runs: docs/benchmark.md's table of machines
  recs=(docs/runs/*/submission.yaml) m=$logs/submission/machines.md
  if [ ! -e "${recs[0]}" ] || [ ! -e "$s" ]; then record "machines compared" skip "no recorded submission in docs/runs, or none here"
  elif "$py" scripts/report_table.py merge "${recs[@]}" "$s" > "$m" 2> "$logs/machines.log"; then
    record "machines compared" pass "$(( ${#recs[@]} + 1 )) submissions in one table: logs/submission/machines.md"
    { echo; echo "### machines (scripts/report_table.py merge docs/runs/*/submission.yaml and this one)"; cat "$m"; } >> "$res"
  else record "machines compared" fail "report_table.py merge: $(head -n 1 "$logs/machines.log")"; fi
fi

if on ranks; then
  run2=(-options_file inputs/grayscott-small.opts)
  rm -f "$logs/cpu1.yaml" "$logs/dev2.yaml" # an earlier call's into the same folder are not this one's
  timeout "$(tmo_now)" "$app" "${run2[@]}" -surrogate_device cpu -summary "$logs/cpu1.yaml" > "$logs/cpu1.log" 2>&1; rc1=$?
  timeout "$(tmo_now)" mpiexec -n 2 "$app" "${run2[@]}" -surrogate_device $dev -summary "$logs/dev2.yaml" > "$logs/dev2.log" 2>&1; rc=$?
  hc="$(key "$logs/cpu1.yaml" state_hash) $(key "$logs/cpu1.yaml" weights_hash)" hg="$(key "$logs/dev2.yaml" state_hash) $(key "$logs/dev2.yaml" weights_hash)"
  if [ $rc1 != 0 ]; then record "2 $dev ranks vs 1 CPU rank" fail "the 1-rank CPU reference: exit $rc1, logs/cpu1.log"
  elif [ $rc != 0 ]; then record "2 $dev ranks vs 1 CPU rank" fail "exit $rc, logs/dev2.log"
  elif [ "$(key "$logs/cpu1.yaml" solver_reduction)" != reproducible ]; then record "2 $dev ranks vs 1 CPU rank" pass "not a reproducible build: hashes not compared ($hg vs $hc)"
  elif [ "$hc" = "$hg" ] && [ "$hc" != " " ]; then record "2 $dev ranks vs 1 CPU rank" pass "same state and weights hashes $hg"
  else record "2 $dev ranks vs 1 CPU rank" fail "$dev $hg, CPU $hc"; fi
  if on solver; then # both halves on 2 GPU ranks, the halo through the host: the same bits in a reproducible build
    rm -f "$logs/dev2s.yaml"
    timeout "$(tmo_now)" mpiexec -n 2 "$app" "${run2[@]}" -surrogate_device $dev -solver_device $dev -summary "$logs/dev2s.yaml" > "$logs/dev2s.log" 2>&1; rc=$?
    hs="$(key "$logs/dev2s.yaml" state_hash) $(key "$logs/dev2s.yaml" weights_hash)"
    if [ $rc != 0 ]; then record "2 $dev ranks, solver too, vs 1 CPU rank" fail "exit $rc, logs/dev2s.log"
    elif [ "$(key "$logs/cpu1.yaml" solver_reduction)" != reproducible ]; then record "2 $dev ranks, solver too, vs 1 CPU rank" pass "not a reproducible build: hashes not compared ($hs vs $hc)"
    elif [ "$hc" = "$hs" ] && [ "$hc" != " " ]; then record "2 $dev ranks, solver too, vs 1 CPU rank" pass "same state and weights hashes $hs, $(key "$logs/dev2s.yaml" device_loop_vector_copies) vector copies in the loop"
    else record "2 $dev ranks, solver too, vs 1 CPU rank" fail "$dev $hs, CPU $hc"; fi
  fi
fi

if on bench; then
  if [ -n "$bench" ]; then
    for n in $bench_n; do
      for w in $widths; do
        log=$logs/bench-$n-${w//,/-}.log
        timeout "$(tmo_now)" "$bench" -surrogate_device $dev -surrogate_layers "$w" -bench_n "$n" -bench_steps 5 -bench_reps 3 > "$log" 2>&1; rc=$?
        if [ $rc = 0 ]; then
          record "bench_surrogate n=$n layers=$w" pass "$(awk '$1 ~ /^(atomic|deterministic|reproducible)(\/gemm|\/tiled)?$/ {printf "%s %s ms (x%s); ", $1, $2, $4}' "$log")"
          table "bench_surrogate, batch $n, hidden layers $w" <(grep -vE '^(#|Surrogate)' "$log")
        else record "bench_surrogate n=$n layers=$w" fail "exit $rc, logs/$(basename "$log")"; fi
      done
    done
  else record bench_surrogate fail "bench_surrogate not found under $bin"; fi
fi

if on torch; then
  tdev=$([ $rehearse = 1 ] && echo cpu || echo cuda)
  if ! "$py" -c "import torch, sys; sys.exit(0 if '$tdev' == 'cpu' or torch.cuda.is_available() else 1)" 2> /dev/null; then
    record "PyTorch reference" skip "$py has no PyTorch$([ "$tdev" = cuda ] && echo " with CUDA")"
  else
    for n in $bench_n; do
      for w in $widths; do
        log=$logs/torch-$n-${w//,/-}.log
        timeout "$(tmo_now)" "$py" bench/bench_surrogate_torch.py --device $tdev --n "$n" --layers "$w" --steps 10 > "$log" 2>&1; rc=$?
        if [ $rc = 0 ]; then
          record "PyTorch n=$n layers=$w" pass "$(awk '$1 ~ /^(default|deterministic|compile)$/ {if ($2 == "unavailable:") printf "%s unavailable; ", $1; else if ($6 == "-") printf "%s %s ms; ", $1, $2; else printf "%s %s ms (host batch %s ms, %s compiles timed); ", $1, $2, $6, $8}' "$log")"
          table "PyTorch, batch $n, hidden layers $w" "$log"
        else record "PyTorch n=$n layers=$w" fail "exit $rc, logs/$(basename "$log")"; fi
      done
    done
  fi
fi

if on atomic; then
  aapp=$(exe "$atomic_bin" miniapp)
  if [ -z "$aapp" ]; then record "atomic study" skip "no miniapp under -atomic_bin $atomic_bin (a build whose surrogate half is atomic, e.g. reproducible-atomic)"
  else
    for who in dev cpu; do
      if [ $who = dev ]; then o=(-surrogate_device $dev -atomic_order_seed 0); else o=(-surrogate_device cpu -atomic_order_seed 1); fi
      timeout "$(tmo_now)" "$aapp" -options_file "inputs/$atomic_deck.opts" -replicas "$replicas" -coupling_baselines false "${o[@]}" -summary "$logs/atomic-$who.yaml" > "$logs/atomic-$who.log" 2>&1; rc=$?
      label=$([ $who = dev ] && echo "$dev, real atomics" || echo "CPU, seeded replay")
      if [ $rc = 0 ] || [ $rc = 2 ]; then
        record "atomic study ($label)" pass "$atomic_deck, $replicas replicas, $(key "$logs/atomic-$who.yaml" surrogate_reduction) surrogate: weights V_c $(key "$logs/atomic-$who.yaml" replica_final_weights_vc); rel. L2 $(key "$logs/atomic-$who.yaml" replica_final_weights_rel_l2); first divergent epoch $(key "$logs/atomic-$who.yaml" replica_first_divergent_epoch)"
      else record "atomic study ($label)" fail "exit $rc, logs/atomic-$who.log"; fi
    done
  fi
  # both halves: the atomic build with the solver on the device too (its sums' and face fluxes' atomics), then a
  # seeded order, whose replay the device makes as the CPU does: the same state
  bapp=$(exe "$sweep_root/atomic" miniapp) ad=(-options_file "inputs/$atomic_deck.opts" -coupling_baselines false)
  if [ -z "$bapp" ]; then record "atomic study (both halves)" skip "no miniapp under $sweep_root/atomic"
  else
    timeout "$(tmo_now)" "$bapp" "${ad[@]}" -replicas "$replicas" -solver_device "$dev" -surrogate_device "$dev" \
      -atomic_order_seed 0 -summary "$logs/atomic-both.yaml" > "$logs/atomic-both.log" 2>&1; rc=$?
    b=$logs/atomic-both.yaml
    if [ $rc = 0 ] || [ $rc = 2 ]; then
      record "atomic study (both halves on $dev, real atomics)" pass "$atomic_deck, $replicas replicas: state V_c $(key "$b" replica_final_vc); rel. L2 $(key "$b" replica_final_rel_l2); first divergent step $(key "$b" replica_first_divergent_step); weights V_c $(key "$b" replica_final_weights_vc)"
    else record "atomic study (both halves on $dev, real atomics)" fail "exit $rc, logs/atomic-both.log"; fi
    for sd in "$dev" cpu; do
      timeout "$(tmo_now)" "$bapp" "${ad[@]}" -solver_device "$sd" -surrogate_device cpu -atomic_order_seed 3 \
        -summary "$logs/seeded-$sd.yaml" > "$logs/seeded-$sd.log" 2>&1
    done
    h1=$(key "$logs/seeded-$dev.yaml" state_hash) h2=$(key "$logs/seeded-cpu.yaml" state_hash)
    if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then record "seeded atomics: solver on $dev vs CPU" pass "order seed 3: state hash $h1 on both"
    else record "seeded atomics: solver on $dev vs CPU" fail "state hash ${h1:-none} on $dev, ${h2:-none} on the CPU (logs/seeded-*.log)"; fi
  fi
fi

if on sweep; then
  for d in $sweep_decks; do
    log=$logs/sweep-$d.log
    timeout "$(tmo_now)" scripts/sweep.sh "$d" -bin "$sweep_root" -variants "$sweep_variants" -repeat "$sweep_repeat" -args "-surrogate_device $dev" -out "$logs/sweep" > "$log" 2>&1; rc=$?
    if [ $rc = 0 ] && [ -f "$logs/sweep/$d/table.md" ]; then
      record "sweep $d" pass "surrogate on $dev; variants atomic,$sweep_variants; table below"
      table "sweep $d (surrogate on $dev)" "$logs/sweep/$d/table.md"
    else record "sweep $d" fail "exit $rc: $(grep -m1 'error' "$log" || tail -n 1 "$log")"; fi
  done
fi

if gpuonly sumstudy; then
  if [ -n "$sums" ]; then
    timeout "$(tmo_now)" "$sums" -methods cuda-element,cuda-block,cuda-tree,cuda-cub -n 1e3,1e5,1e7 -arrays 20 -o "$logs/sumstudy.csv" > "$logs/sumstudy.log" 2>&1; rc=$?
    if [ $rc = 0 ]; then record sumstudy pass "CUDA methods; table below"; table "miniapp-sumstudy, CUDA methods" "$logs/sumstudy.log"
    else record sumstudy fail "exit $rc, logs/sumstudy.log"; fi
  else record sumstudy skip "miniapp-sumstudy not found under $bin"; fi
fi

if gpuonly profile; then
  nmax=$(printf '%s\n' $bench_n | sort -n | tail -n 1)
  if ! command -v ncu > /dev/null; then record profile skip "ncu (Nsight Compute) not on PATH"
  elif [ -z "$bench" ]; then record profile fail "bench_surrogate not found under $bin"
  elif ! { [ -n "$tcuda" ] && ncu --section SpeedOfLight --kernel-name k_probe "$tcuda" -cuda_test_probe > "$logs/ncu-probe.log" 2>&1 && grep -q "k_probe" "$logs/ncu-probe.log" && ! grep -q "==ERROR==" "$logs/ncu-probe.log"; }; then
    record profile skip "ncu cannot run here: $(grep -m1 -E '==ERROR==|==WARNING==' "$logs/ncu-probe.log" 2>/dev/null || echo "the probe's kernel was not profiled"), logs/ncu-probe.log"
  else
    # the reproducible strategy's own kernels (row maxima and integer bins of
    # the weight gradients; max search and bins of the loss and the
    # checks), selected by name: bench_surrogate runs atomic, deterministic and
    # reproducible in turn, so a fixed launch window lands on whichever
    # strategy its count happens to reach
    timeout "$(tmo_now)" ncu --section SpeedOfLight --kernel-name "regex:^gradsum_(rowmax|gbins|absmax|bins)_kernel$" --launch-count 40 "$bench" -surrogate_device cuda -bench_n "$nmax" -bench_steps 1 -bench_reps 1 > "$logs/ncu.log" 2>&1; rc=$?
    if [ $rc = 0 ]; then
      record profile pass "ncu SpeedOfLight of the reproducible gradient sums, batch $nmax: per kernel in the appendix, whole in logs/ncu.log"
      table "ncu SpeedOfLight: kernel, duration, throughputs" <(grep -E '^  [A-Za-z_].*\(|Duration|Memory Throughput|Compute \(SM\) Throughput' "$logs/ncu.log" | head -n 200)
    else record profile fail "exit $rc, logs/ncu.log"; fi
  fi
fi

if gpuonly kernels; then
  nmax=$(printf '%s\n' $bench_n | sort -n | tail -n 1)
  if ! command -v ncu > /dev/null; then record kernels skip "ncu (Nsight Compute) not on PATH"
  elif [ -z "$bench" ]; then record kernels fail "bench_surrogate not found under $bin"
  else
    for w in $widths; do
      r=$logs/kernels-${w//,/-}
      timeout "$(tmo_now)" ncu --metrics gpu__time_duration.sum -o "$r" -f "$bench" -surrogate_device cuda -surrogate_layers "$w" -bench_n "$nmax" -bench_steps 1 -bench_reps 1 > "$r.log" 2>&1; rc=$?
      [ $rc != 0 ] || { ncu --import "$r.ncu-rep" --csv --page raw > "$r.csv" 2>> "$r.log"; rc=$?; }
      [ $rc != 0 ] || { "$py" scripts/ncu_steps.py "$r.csv" > "$r.txt" 2>> "$r.log"; rc=$?; }
      if [ $rc = 0 ]; then
        record "kernels layers=$w" pass "batch $nmax: $(awk '$2 == "(kernels" {printf "%s %.2f ms; ", $1, $7 / 1000}' "$r.txt")"
        table "kernels of one train step, batch $nmax, hidden layers $w (ncu gpu__time_duration)" "$r.txt"
      else record "kernels layers=$w" fail "exit $rc, logs/$(basename "$r").log"; fi
      rm -f "$r.ncu-rep"
    done
  fi
fi

finish
echo; echo "gpu-check: $fails check(s) failed; results in $res and $yaml"
[ $fails = 0 ]
