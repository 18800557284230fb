#!/usr/bin/env bash
# tests/cudaemu/checks_check.sh MINIAPP_EMU: the surrogate's ABFT checks on the
# emulated device (the CUDA references k_cksums and k_abs, mlp_cuda.cu, ran in
# no test): fault-free with -fault_checks, VALID and no alarm; a weight flip,
# caught by the checksum in the step it happens. Prints PASS.
set -u
app=$1
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
fkey() { sed -n "/^fault:/,/^[a-z]/s/^  $2: *//p" "$1" | head -1 | tr -d '"'; }
g=(-scenario grayscott -da_grid_x 48 -da_grid_y 40 -coupling guess -coupling_baselines 0 -ts_max_steps 4 -surrogate_device cuda -fault_checks -atomic_order_seed 1)
"$app" "${g[@]}" -summary "$d/ok.yaml" > "$d/ok.log" 2>&1 || { tail -n 5 "$d/ok.log"; fail "fault-free run with checks: exit $?"; }
grep -q '^surrogate_device: cuda' "$d/ok.yaml" || fail "the surrogate did not run on the emulated device"
[ "$(fkey "$d/ok.yaml" alarms)" = 0 ] || { sed -n '/^fault:/,$p' "$d/ok.yaml"; fail "a fault-free run raised alarms on the emulated device"; }
"$app" "${g[@]}" -inject site=weight,epoch=2,bit=29,entry=7 -summary "$d/f.yaml" > "$d/f.log" 2>&1
rc=$?
[ $rc = 2 ] && [ "$(fkey "$d/f.yaml" detected_by_checksum_step)" != null ] && [ "$(fkey "$d/f.yaml" detected_by_checksum_step)" != "" ] || { sed -n '/^fault:/,$p' "$d/f.yaml"; fail "a weight flip on the emulated device: exit $rc, not caught by the checksum"; }
echo "worst check ratio fault-free $(fkey "$d/ok.yaml" worst_check_ratio); the flip caught at step $(fkey "$d/f.yaml" detected_by_checksum_step)"
echo PASS
