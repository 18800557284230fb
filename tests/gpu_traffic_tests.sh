#!/usr/bin/env bash
# tests/gpu_traffic_tests.sh BENCH_SURROGATE GPU_MD: the traffic-model
# figures docs/gpu.md quotes ("at the 5-32-32-1 network A KB per sample ...
# B KB in the reproducible one ...; 5-64-64-64-1: C KB and D KB") must be
# what bench_surrogate's model (train_bytes) gives now, for both networks and
# both kinds of strategy (atomic and deterministic share one figure).
set -u
bench=$1 doc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
model() { # network -> "atomic deterministic reproducible" KB per sample
  "$bench" -surrogate_device cpu -surrogate_layers "$1" -bench_n 64 -bench_steps 1 -bench_reps 1 > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "bench_surrogate exited $? for $1"; }
  sed -n 's/^traffic model of the CUDA engine (train_bytes): atomic \([0-9.]*\) KB, deterministic \([0-9.]*\) KB, reproducible \([0-9.]*\) KB.*/\1 \2 \3/p' "$tmp/out"
}
read -r a32 d32 r32 <<< "$(model 32,32)"
read -r a64 d64 r64 <<< "$(model 64,64,64)"
[ -n "$r32" ] && [ -n "$r64" ] || fail "no traffic model line from bench_surrogate"
[ "$a32" = "$d32" ] && [ "$a64" = "$d64" ] || fail "atomic and deterministic should share a figure: $a32/$d32, $a64/$d64"
text=$(tr '\n' ' ' < "$doc" | tr -s ' ')
for want in "5-32-32-1 network $a32 KB per sample and train step in the atomic and deterministic strategies, $r32 KB in the reproducible one" \
            "5-64-64-64-1: $a64 KB and $r64 KB"; do
  case "$text" in *"$want"*) echo "ok: docs/gpu.md says \"$want\"" ;; *) fail "docs/gpu.md does not say \"$want\" (the model's figures now)" ;; esac
done
