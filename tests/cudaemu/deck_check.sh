#!/usr/bin/env bash
# tests/cudaemu/deck_check.sh CMD...: runs a miniapp command (its surrogate on
# the emulated device) with a report; passes when it exits 0, its verdict is
# VALID (golden hashes included where the build has them) and the device is
# the emulation's, its facts (driver, runtime, memory) in the report; with
# -solver_device cuda, the report's solver block says so. Prints the hashes
# and the verdict.
set -u
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
"$@" -report "$d/r.yaml" > "$d/log" 2>&1
rc=$?
grep -E "device_name|device_facts|state_hash|weights_hash|^verdict" "$d/r.yaml" 2> /dev/null || tail -n 5 "$d/log"
case " $* " in *" -solver_device cuda "*) grep -A1 "^solver:" "$d/r.yaml" | grep -q "device: cuda" || rc=1 ;; esac
[ $rc = 0 ] && grep -q "^verdict: VALID" "$d/r.yaml" && grep -q 'device_name: "cudaemu' "$d/r.yaml" && grep -q 'device_facts: "driver supports CUDA .*test launch ok"' "$d/r.yaml"
