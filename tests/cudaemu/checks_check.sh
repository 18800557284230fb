#!/usr/bin/env bash
# tests/cudaemu/checks_check.sh MINIAPP_EMU: the surrogate's ABFT checks on the
# emulated device (the CUDA references k_cksums and k_abs, mlp_cuda.cu, ran in
# no test): fault-free with -fault_checks, VALID and no alarm; a weight flip,
# caught by the checksum in the step it happens; with the solver on the device
# too, its operator checks run there: no alarm, no vector copied in the loop,
# the CPU solver's hashes and worst check ratio; and a flip in each of the
# solver's sites (operator, state, iterate) is made on the device with the
# CPU's record, exit status and state (in the atomic build the state flip
# among 3 replicas, whose distances the noise detector compares). Prints PASS.
set -u
app=$1
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
fkey() { sed -n "/^fault:/,/^[a-z]/s/^  $2: *//p" "$1" | head -1 | tr -d '"'; }
g=(-scenario grayscott -da_grid_x 48 -da_grid_y 40 -coupling guess -coupling_baselines 0 -ts_max_steps 4 -surrogate_device cuda -fault_checks -atomic_order_seed 1)
"$app" "${g[@]}" -summary "$d/ok.yaml" > "$d/ok.log" 2>&1 || { tail -n 5 "$d/ok.log"; fail "fault-free run with checks: exit $?"; }
grep -q '^surrogate_device: cuda' "$d/ok.yaml" || fail "the surrogate did not run on the emulated device"
[ "$(fkey "$d/ok.yaml" alarms)" = 0 ] || { sed -n '/^fault:/,$p' "$d/ok.yaml"; fail "a fault-free run raised alarms on the emulated device"; }
# the solver on the device too: its operator checksums there, on the same bits (the same run, the same worst ratio)
"$app" "${g[@]}" -solver_device cuda -summary "$d/dev.yaml" > "$d/dev.log" 2>&1 || { tail -n 5 "$d/dev.log"; fail "fault-free run with checks, solver on the device: exit $?"; }
key() { sed -n "s/^$2: *//p" "$1" | head -n 1; }
[ "$(fkey "$d/dev.yaml" alarms)" = 0 ] || fail "the solver on the emulated device: a fault-free run raised alarms"
atomic=0
[ "$(key "$d/ok.yaml" solver_reduction)" = atomic ] && atomic=1
[ "$(key "$d/dev.yaml" device_loop_vector_copies)" = 0 ] \
  || fail "the operator's checks on the device copied $(key "$d/dev.yaml" device_loop_vector_copies) vectors in the loop"
for k in state_hash weights_hash; do
  [ "$(key "$d/dev.yaml" $k)" = "$(key "$d/ok.yaml" $k)" ] || fail "the solver on the device: $k differs"
done
[ "$(fkey "$d/dev.yaml" worst_check_ratio)" = "$(fkey "$d/ok.yaml" worst_check_ratio)" ] \
  || fail "the operator's checks on the device: worst ratio $(fkey "$d/dev.yaml" worst_check_ratio), on the CPU $(fkey "$d/ok.yaml" worst_check_ratio)"
# a flip in the solver's sites with its vectors on the device: made there (one entry crosses), the CPU's record,
# exit status and state, no vector copied in the loop
for site in site=operator,step=2,bit=55,entry=100,call=3 site=state,step=2,bit=60,entry=7 site=iterate,step=3,bit=58,entry=300,call=2; do
  # the atomic build's noise detector compares 3 replicas' states (on the device where they are)
  r=() && [ $atomic = 1 ] && [ "${site%%,*}" = site=state ] && r=(-replicas 3)
  for sd in cpu cuda; do
    "$app" "${g[@]}" "${r[@]}" -solver_device $sd -inject $site -summary "$d/i-$sd.yaml" > "$d/i-$sd.log" 2>&1
    echo $? > "$d/i-$sd.rc"
  done
  [ "$(fkey "$d/i-cuda.yaml" fired)" = true ] || fail "$site on the device: the flip did not fire"
  cmp -s "$d/i-cpu.rc" "$d/i-cuda.rc" && [ "$(key "$d/i-cpu.yaml" state_hash)" = "$(key "$d/i-cuda.yaml" state_hash)" ] \
    && diff <(sed -n '/^fault:/,/^[a-z]/p' "$d/i-cpu.yaml") <(sed -n '/^fault:/,/^[a-z]/p' "$d/i-cuda.yaml") > /dev/null \
    || fail "$site: the solver on the device and on the CPU differ (exit, state or the fault's record)"
  [ "$(key "$d/i-cuda.yaml" device_loop_vector_copies)" = 0 ] || fail "$site on the device: vectors copied in the loop"
done
"$app" "${g[@]}" -inject site=weight,epoch=2,bit=29,entry=7 -summary "$d/f.yaml" > "$d/f.log" 2>&1
rc=$?
[ $rc = 2 ] && [ "$(fkey "$d/f.yaml" detected_by_checksum_step)" != null ] && [ "$(fkey "$d/f.yaml" detected_by_checksum_step)" != "" ] || { sed -n '/^fault:/,$p' "$d/f.yaml"; fail "a weight flip on the emulated device: exit $rc, not caught by the checksum"; }
echo "worst check ratio fault-free $(fkey "$d/ok.yaml" worst_check_ratio); the flip caught at step $(fkey "$d/f.yaml" detected_by_checksum_step)"
echo PASS
