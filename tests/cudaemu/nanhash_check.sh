#!/usr/bin/env bash
# tests/cudaemu/nanhash_check.sh MINIAPP_EMU: a run whose network weights become
# NaN (an exponent flip; the run stops INVALID, exit 2) hashes its weights
# alike on the CPU and on the emulated device, in the reproducible build where
# every number is the same bits on both. The hash took each NaN's sign and
# payload, which IEEE 754 leaves to the hardware and the operand order: the
# two differed (kernels/hashrng.h). Prints PASS.
set -u
app=$1
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
key() { sed -n "s/^  $2: *\"\(0x[0-9a-f]*\)\"/\1/p" "$1" | head -1; }
g=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -coupling guess -threads 1 -ts_max_steps 6 -inject site=weight,epoch=2,bit=30,entry=5)
for dev in cpu cuda; do
  rc=0; "$app" "${g[@]}" -surrogate_device $dev -report "$d/$dev.yaml" > "$d/$dev.log" 2>&1 || rc=$?
  [ $rc = 2 ] && grep -q "non-finite value in its weights" "$d/$dev.log" || { tail -n 3 "$d/$dev.log"; fail "-surrogate_device $dev: exit $rc, not stopped on the non-finite weights"; }
done
a=$(key "$d/cpu.yaml" weights_hash) b=$(key "$d/cuda.yaml" weights_hash)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "non-finite weights hash $a on the CPU, $b on the emulated device"
[ "$(key "$d/cpu.yaml" state_hash)" = "$(key "$d/cuda.yaml" state_hash)" ] || fail "the states differ"
echo "weights hash $a on both"
echo PASS
