#!/usr/bin/env bash
# tests/cudaemu/solver_device_check.sh MINIAPP MINIAPP_EMU MPIEXEC DECKS_DIR:
# the solver's vectors on the emulated device (-solver_device cuda) against
# the CPU run of the same configuration: the same state and weights hashes
# (every build: the CPU's bits; the atomic build with a seeded order), VALID,
# the device said in the summary with its host<->device copies; on 1 rank
# (the operator and the CG iteration on the device) and 2 ranks (the halo
# through the host), Gray-Scott and heat, the surrogate on the CPU (the GPU
# surrogate's deterministic order is its own) and, in the reproducible build,
# on the emulated device too; in the atomic build, unseeded, the device's own
# atomics make two block orders (CUDAEMU_SEED) give two states. Uncoupled,
# on 1, 2 and 3 ranks, the loop copies no vector (device_loop_vector_copies
# 0: the whole step on the device, the halo as edge strips, heat's two
# replicas compared there), while closure mode, whose error reads the state
# on the host, is counted. On 1 and 2
# ranks the coupling's phases (features, targets, correction, predictions,
# training) keep the batch on the device: the loop copies no vector either,
# and in the reproducible build, with both on the device, the coupling's
# copies are the same for 4 and 6 steps. A restart crosses devices both ways with the uninterrupted run's
# hashes; -solver_device auto takes the emulated device, and the real
# miniapp of a build without a usable device refuses -solver_device cuda in
# one line and falls back to the CPU under auto; a device that fails mid-run
# ends the run in one line, exit 1, no summary written.
set -u
app=$1 emu=$2 mpiexec=$3 decks=$4
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
key() { sed -n "s/^$2: *//p" "$1" | head -n 1; }
one() { # name, ranks, deck args... (CUDAEMU_SEED: the device's block order, from the environment)
  local name=$1 np=$2
  shift 2
  local launch=()
  [ "$np" -gt 1 ] && launch=("$mpiexec" --oversubscribe -n "$np")
  "${launch[@]}" "$app" "$@" -summary "$t/$name.cpu.yaml" > "$t/$name.cpu.log" 2>&1 || { tail -n 3 "$t/$name.cpu.log"; fail "$name: the CPU run failed"; }
  "${launch[@]}" "$emu" "$@" -solver_device cuda "${devonly[@]}" -summary "$t/$name.dev.yaml" > "$t/$name.dev.log" 2>&1 \
    || { tail -n 3 "$t/$name.dev.log"; fail "$name: the device run failed"; }
  for k in state_hash weights_hash; do
    [ "$(key "$t/$name.cpu.yaml" $k)" = "$(key "$t/$name.dev.yaml" $k)" ] \
      || fail "$name: $k $(key "$t/$name.dev.yaml" $k) on the device, $(key "$t/$name.cpu.yaml" $k) on the CPU"
  done
  # with replicas: their comparison with replica 0 (the device's where the states are) as the CPU's
  diff <(grep '^replica_' "$t/$name.cpu.yaml") <(grep '^replica_' "$t/$name.dev.yaml") > /dev/null \
    || fail "$name: the replicas' metrics differ between the CPU and the device"
  [ "$(key "$t/$name.dev.yaml" verification)" = VALID ] || fail "$name: the device run is not VALID"
  [ "$(key "$t/$name.dev.yaml" solver_device)" = cuda ] && [ "$(key "$t/$name.cpu.yaml" solver_device)" = cpu ] \
    || fail "$name: solver_device not said"
  c=$(key "$t/$name.dev.yaml" device_vector_copies)
  [ "$c" -gt 0 ] && [ "$(key "$t/$name.cpu.yaml" device_vector_copies)" = 0 ] || fail "$name: device_vector_copies $c"
  cc=$(key "$t/$name.dev.yaml" coupling_vector_copies) lc=$(key "$t/$name.dev.yaml" device_loop_vector_copies)
  [ "$cc" -le 2 ] || fail "$name: the coupling's phases copied $cc vectors between host and device"
  # the loop copies none (a seeded atomic scatter too: the device adds in the drawn order)
  [ "$lc" = 0 ] || fail "$name: the loop copied $lc vectors between host and device"
  echo "$name, $np rank(s): state_hash $(key "$t/$name.dev.yaml" state_hash) on both, $c host<->device copies," \
    "$lc in the loop, $cc by the coupling"
}
for d in grayscott-small heat-small; do # shorter than the decks: their golden hashes do not apply
  grep -v -e '^-golden' -e '^-deck_name' "$decks/$d.opts" > "$t/$d.opts"
done
"$app" -ts_max_steps 0 -coupling none -summary "$t/b.yaml" > /dev/null 2>&1 || fail "the build's summary"
seed=() devonly=() # devonly: options of the device run alone
[ "$(key "$t/b.yaml" solver_reduction)" = atomic ] && seed=(-atomic_order_seed 5)
CUDAEMU_SEED=1 one gs 1 -options_file "$t/grayscott-small.opts" -ts_max_steps 5 -surrogate_device cpu "${seed[@]}"
CUDAEMU_SEED=2 one heat 1 -options_file "$t/heat-small.opts" -ts_max_steps 3 -surrogate_device cpu "${seed[@]}"
CUDAEMU_SEED=3 one gs2 2 -options_file "$t/grayscott-small.opts" -ts_max_steps 3 -surrogate_device cpu "${seed[@]}"
if [ ${#seed[@]} -gt 0 ]; then # the seeded scatter on 2 ranks with Dirichlet edges; two replicas that differ
  CUDAEMU_SEED=1 one heat2 2 -options_file "$t/heat-small.opts" -ts_max_steps 2 -surrogate_device cpu "${seed[@]}" \
    -replicas 2
  v=$(sed -n 's/^replica_final_vc: \[[^,]*, *//p' "$t/heat2.dev.yaml")
  [ -n "$v" ] && [ "$v" != "0.000000e+00]" ] || fail "heat2: the seeded replicas did not differ (replica_final_vc: ${v:-missing})"
  echo "heat2: replica 1's final V_c $v, the same on the CPU"
fi
for run in gs:1 heat:1 gs:3 heat:2; do # uncoupled: no vector crosses in the loop (2+ ranks: edge strips only)
  d=${run%:*} np=${run#*:}
  [ $d = gs ] && deck=grayscott-small || deck=heat-small
  grep -v -e '^-train' -e '^-surrogate' -e '^-coupling' "$t/$deck.opts" > "$t/$deck-none.opts"
  # two replicas: their states compared on the device every step
  [ $run = heat:1 ] && echo "-replicas 2" >> "$t/$deck-none.opts"
  if [ ${#seed[@]} -gt 0 ]; then # atomic: the device's own order (the seeded one is compared with the CPU above)
    launch=() && [ "$np" -gt 1 ] && launch=("$mpiexec" --oversubscribe -n "$np")
    CUDAEMU_SEED=$np "${launch[@]}" "$emu" -options_file "$t/$deck-none.opts" -ts_max_steps 4 -coupling none -solver_device cuda \
      -summary "$t/$d-none$np.dev.yaml" > "$t/$d-none$np.log" 2>&1 || { tail -n 3 "$t/$d-none$np.log"; fail "$d-none$np failed"; }
    [ "$(key "$t/$d-none$np.dev.yaml" verification)" = VALID ] || fail "$d, uncoupled, $np rank(s): not VALID"
  else CUDAEMU_SEED=$np one $d-none$np "$np" -options_file "$t/$deck-none.opts" -ts_max_steps 4 -coupling none; fi
  c=$(key "$t/$d-none$np.dev.yaml" device_loop_vector_copies)
  [ "$c" = 0 ] || fail "$d, uncoupled, $np rank(s): $c vector copies in the loop on the device, not 0"
done
# the counter sees a host access in the loop: closure mode's error reads the state on the host each step
"$emu" -options_file "$t/grayscott-small.opts" -ts_max_steps 2 -coupling closure -surrogate_device cpu -solver_device cuda \
  -summary "$t/closure.yaml" > "$t/closure.log" 2>&1 || { tail -n 3 "$t/closure.log"; fail "closure on the device failed"; }
c=$(key "$t/closure.yaml" device_loop_vector_copies)
[ "${c:-0}" -gt 0 ] || fail "closure mode reads the state on the host in its loop, yet device_loop_vector_copies is ${c:-missing}"
echo "closure: $c vector copies in the loop (its error is computed on the host): the counter counts"
# a device that fails mid-run (the emulation refuses the operator's launch): one line, exit 1, no summary
k=vc_stencil_kernel && [ ${#seed[@]} -gt 0 ] && k=vc_seeded_kernel
err=$(CUDAEMU_FAIL_LAUNCH=$k "$emu" -options_file "$t/grayscott-small.opts" -ts_max_steps 2 -surrogate_device cpu \
  -solver_device cuda "${seed[@]}" -summary "$t/failed.yaml" 2>&1 > /dev/null); rc=$?
[ $rc = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "^miniapp: error: CUDA error " && [ ! -e "$t/failed.yaml" ] \
  || { echo "$err"; fail "a launch the device refuses mid-run: not one line, exit 1 and no summary (exit $rc)"; }
echo "a refused launch of $k mid-run: $err"
# a restart across devices: 3 steps on one, the rest on the other, the uninterrupted CPU run's hashes (gs.cpu.yaml)
gsr=(-options_file "$t/grayscott-small.opts" -surrogate_device cpu "${seed[@]}")
for way in cpu-dev dev-cpu; do
  [ $way = cpu-dev ] && { first=$app second=$emu sd=(-solver_device cuda) fd=(); } || { first=$emu second=$app fd=(-solver_device cuda) sd=(); }
  "$first" "${gsr[@]}" "${fd[@]}" -ts_max_steps 3 -checkpoint "$t/$way.ck" > "$t/$way.1.log" 2>&1 || { tail -n 3 "$t/$way.1.log"; fail "$way: the first part failed"; }
  "$second" "${gsr[@]}" "${sd[@]}" -ts_max_steps 5 -restart "$t/$way.ck" -summary "$t/$way.yaml" > "$t/$way.2.log" 2>&1 \
    || { tail -n 3 "$t/$way.2.log"; fail "$way: the restart failed"; }
  for k in state_hash weights_hash; do
    [ "$(key "$t/$way.yaml" $k)" = "$(key "$t/gs.cpu.yaml" $k)" ] || fail "restart $way: $k differs from the uninterrupted run's"
  done
done
echo "a restart from the CPU on the device, and the reverse: the uninterrupted run's hashes"
if [ ${#seed[@]} -gt 0 ]; then # atomic, unseeded: the device's own order of the operator's and the sums' atomics
  for s in 1 2; do
    CUDAEMU_SEED=$s "$emu" -options_file "$t/grayscott-small.opts" -ts_max_steps 3 -surrogate_device cpu -solver_device cuda \
      -summary "$t/race$s.yaml" > "$t/race$s.log" 2>&1 || { tail -n 3 "$t/race$s.log"; fail "unseeded device run $s failed"; }
    [ "$(key "$t/race$s.yaml" verification)" = VALID ] || fail "unseeded device run $s is not VALID"
  done
  [ "$(key "$t/race1.yaml" state_hash)" != "$(key "$t/race2.yaml" state_hash)" ] \
    || fail "the unseeded atomic device runs of two block orders gave the same state hash"
  echo "atomic, unseeded: state_hash $(key "$t/race1.yaml" state_hash) and $(key "$t/race2.yaml" state_hash) (block orders 1, 2)"
fi
if [ "$(key "$t/b.yaml" surrogate_reduction)" = reproducible ]; then
  devonly=(-surrogate_device cuda) # against the CPU's surrogate: the same bits in this build
  one gs-both 1 -options_file "$t/grayscott-small.opts" -ts_max_steps 4 -surrogate_device cpu
  "$emu" -options_file "$t/grayscott-small.opts" -ts_max_steps 6 -solver_device cuda -surrogate_device cuda \
    -summary "$t/gs-both6.yaml" > "$t/gs-both6.log" 2>&1 \
    || { tail -n 3 "$t/gs-both6.log"; fail "gs-both, 6 steps, failed"; }
  c4=$(key "$t/gs-both.dev.yaml" coupling_vector_copies) c6=$(key "$t/gs-both6.yaml" coupling_vector_copies)
  [ -n "$c4" ] && [ "$c4" = "$c6" ] \
    || fail "gs-both: the coupling's vector copies grow with the steps: $c4 in 4, $c6 in 6"
  echo "gs-both: the coupling's vector copies $c4 in 4 steps and in 6 (the batch stays on the device)"
fi
out=$("$app" -options_file "$decks/grayscott-small.opts" -ts_max_steps 1 -solver_device cuda 2>&1); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "error: -solver_device cuda: " \
  || { echo "$out"; fail "-solver_device cuda without a usable device: not one line and exit 1"; }
out=$("$emu" -scenario grayscott -da_grid_x 4096 -da_grid_y 4096 -ts_max_steps 1 -coupling none -solver_device cuda 2>&1); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "needs at least .* GiB of device memory a rank" \
  || { echo "$out"; fail "a grid beyond the emulated device's 1 GiB: not refused in one line before it allocates"; }
"$emu" -options_file "$t/grayscott-small.opts" -ts_max_steps 1 -solver_device auto -summary "$t/auto.yaml" > /dev/null 2>&1 \
  && [ "$(key "$t/auto.yaml" solver_device)" = cuda ] || fail "-solver_device auto did not take the emulated device"
"$app" -options_file "$t/grayscott-small.opts" -ts_max_steps 1 -solver_device auto -summary "$t/auto.yaml" > "$t/auto.log" 2>&1 \
  && [ "$(key "$t/auto.yaml" solver_device)" = cpu ] && grep -q "^# solver: no usable CUDA device" "$t/auto.log" \
  || { cat "$t/auto.log"; fail "-solver_device auto without a device: not the CPU with a line saying why"; }
echo "PASS: the solver on the emulated device gives the CPU's bits; without a device: $out"
