#!/usr/bin/env bash
# scripts/golden.sh DECK...: (maintainers) run each deck in the reproducible
# build and record its state_hash and weights_hash as the deck's golden
# values (-golden_state_hash / -golden_weights_hash lines in inputs/DECK.opts).
# Only do this when a change of the numerics is intended; say so in the commit.
# Environment: NP (MPI ranks, default 1): the hashes must not depend on it.
set -euo pipefail
cd "$(dirname "$0")/.."
app=build/reproducible/miniapp/miniapp
[ -x $app ] || scripts/setup.sh reproducible
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for d in "$@"; do
  f=inputs/$d.opts
  [ -f "$f" ] || { echo "golden: no deck $f" >&2; exit 1; }
  sed -i '/^-golden_\(state\|weights\)_hash/d' "$f"
  out=$(mpiexec -n "${NP:-1}" $app -options_file "$f" -repeat_check 0)
  s=$(sed -n 's/^state_hash: "\(.*\)"/\1/p' <<< "$out") w=$(sed -n 's/^weights_hash: "\(.*\)"/\1/p' <<< "$out")
  grep -q '^verification: VALID' <<< "$out" || { echo "golden: $d is not VALID" >&2; exit 1; }
  echo "-golden_state_hash $s" >> "$f"
  [ -n "$w" ] && echo "-golden_weights_hash $w" >> "$f"
  echo "$d: state $s weights ${w:-none}"
done
