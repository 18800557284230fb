#!/usr/bin/env bash
# scripts/gpu-built.sh EXE...: each executable holds CUDA device code (an
# .nv_fatbin section), and the miniapp and test_surrogate_cuda hold the
# CUDA surrogate backend. gpu-pack.sh calls it so that a build whose CUDA
# configuration failed, or that was configured without it, is never packed
# for the GPU machine. Exit 1 with one line naming the first
# executable that lacks it.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -u
[ $# -ge 1 ] || { echo "usage: gpu-built.sh EXE..." >&2; exit 2; }
for e in "$@"; do
  [ -f "$e" ] || { echo "gpu-built.sh: $e: no such file" >&2; exit 1; }
  readelf -SW "$e" 2> /dev/null | grep -q '\.nv_fatbin' || { echo "gpu-built.sh: $e holds no CUDA device code (built without CUDA)" >&2; exit 1; }
  case "$(basename "$e")" in
    miniapp | test_surrogate_cuda)
      nm "$e" 2> /dev/null | grep -q ' T mlp_cuda_predict$' || { echo "gpu-built.sh: $e has no CUDA surrogate backend" >&2; exit 1; } ;;
  esac
done
