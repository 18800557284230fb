#!/usr/bin/env bash
# tests/cudaemu/planted_tests.sh PLANTED: the emulation catches what it claims.
set -u
p=$1
fail() { echo "FAIL: $*"; exit 1; }
for s in 1 2 3 4 5; do CUDAEMU_SEED=$s "$p" good > /dev/null || fail "the correct sum failed (seed $s)"; done
bad=0
for s in 1 2 3 4 5 6 7 8; do CUDAEMU_SEED=$s "$p" race > /dev/null 2>&1 || bad=$((bad + 1)); done
[ $bad -gt 0 ] || fail "a missing __syncthreads gave the right sum under 8 thread orders"
echo "ok: missing barrier: a wrong sum under $bad of 8 thread orders"
out=$("$p" divergent 2>&1); [ $? = 3 ] && echo "$out" | grep -q 'divergent __syncthreads' || fail "divergent barrier not reported: $out"
echo "ok: $out"
out=$("$p" oob 2>&1); rc=$?; [ $rc = 3 ] && echo "$out" | grep -q 'outside every allocation' || fail "out-of-bounds read not reported (exit $rc): $out"
echo "ok: $out"
out=$("$p" memcpy 2>&1); [ $? = 3 ] && echo "$out" | grep -q 'cudaMemcpy of 516 bytes' || fail "oversized memcpy not reported: $out"
echo "ok: $out"
out=$("$p" empty 2>&1); [ "$out" = "invalid configuration argument" ] || fail "an empty grid launched: $out"
echo "ok: an empty grid is cudaErrorInvalidConfiguration"
echo PASS
