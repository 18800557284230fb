#!/usr/bin/env bash
# scripts/golden.sh DECK...: (maintainers) run each deck in the reproducible
# build and record its state_hash and weights_hash as the deck's golden
# values (-golden_state_hash / -golden_weights_hash lines in inputs/DECK.opts).
# Only do this when a change of the numerics is intended; say so in the commit.
# The build is brought up to date first; a deck is rewritten only after a
# VALID run (a failing run leaves it as it was).
# Environment: NP (MPI ranks, default 1): the hashes must not depend on it.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
usage() { echo "usage: scripts/golden.sh DECK... (decks: $(cd "$(dirname "$0")/../inputs" && ls *.opts | sed 's/\.opts$//' | tr '\n' ' '))" >&2; exit "$1"; }
[ $# -gt 0 ] || usage 2
case $1 in -h|--help) usage 0 ;; -*) echo "golden: unknown option $1" >&2; usage 2 ;; esac
cd "$(dirname "$0")/.."
for d in "$@"; do [ -f "inputs/$d.opts" ] || { echo "golden: no deck inputs/$d.opts" >&2; exit 1; }; done
app=build/reproducible/miniapp/miniapp
if [ -d build/reproducible ]; then cmake --build build/reproducible -j"$(nproc)" > /dev/null; else scripts/setup.sh reproducible; fi
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
trap '[ -z "${f:-}" ] || rm -f -- "$f.golden-tmp" "$f.golden-err"' EXIT # an interrupted run leaves no pieces; the deck is replaced last, whole
for d in "$@"; do
  f=$(realpath -- "inputs/$d.opts") # a deck that is a link: its target is rewritten, the link stays
  { grep -v '^-golden_\(state\|weights\)_hash' "$f" || true; } > "$f.golden-tmp" # a deck of hashes alone leaves nothing: not an error
  launch=(); [ "${NP:-1}" = 1 ] || launch=(mpiexec -n "$NP")
  rc=0; out=$("${launch[@]}" $app -options_file "$f.golden-tmp" -repeat_check 0 2> "$f.golden-err") || rc=$?
  why=$(grep -m1 'error:' "$f.golden-err" || true); rm -f "$f.golden-err"
  s=$(sed -n 's/^state_hash: "\(.*\)"/\1/p' <<< "$out") w=$(sed -n 's/^weights_hash: "\(.*\)"/\1/p' <<< "$out")
  if [ $rc = 2 ] || { [ $rc = 0 ] && ! grep -q '^verification: VALID' <<< "$out"; }; then
    rm -f "$f.golden-tmp"; echo "golden: $d is not VALID ($(sed -n 's/^verification_detail: //p' <<< "$out" | head -1)); deck left unchanged" >&2; exit 1
  fi
  [ $rc = 0 ] || { rm -f "$f.golden-tmp"; echo "golden: $d failed (exit $rc${why:+: $why}); deck left unchanged" >&2; exit 1; }
  echo "-golden_state_hash $s" >> "$f.golden-tmp"
  [ -n "$w" ] && echo "-golden_weights_hash $w" >> "$f.golden-tmp"
  mv "$f.golden-tmp" "$f"
  echo "$d: state $s weights ${w:-none}"
done
