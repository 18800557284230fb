#!/usr/bin/env bash
# scripts/gpu-pack.sh [-arch SM] [-variants "V .."] [-out DIR]: build the
# variants with CUDA for one GPU architecture (default 90: H100 and H200) in
# build/gpu/<variant>, then pack them, with the shared libraries they load
# (PETSc, Open MPI, NetCDF, OpenBLAS; the CUDA runtime is linked statically),
# into DIR (default .runtime) and DIR.tar.xz: a runtime for a GPU machine that
# has the NVIDIA driver but none of the project's libraries (docs/gpu.md).
# DIR/bin/<variant>/ holds miniapp, bench_surrogate, test_surrogate_cuda and
# miniapp-sumstudy; on the GPU machine:
#   mkdir -p .runtime && tar -C .runtime -xJf .runtime.tar.xz && source .runtime/env.sh
#   scripts/gpu-check.sh -bin .runtime/bin/reproducible
# Default variants: the reproducible build (checks, decks, benchmarks), the
# reproducible-atomic one (the atomic study: only the surrogate's sums vary)
# atomic, atomic-deterministic, atomic-reproducible (the sweep of the
# surrogate half; atomic also the atomic study of both halves) and
# deterministic (gpu-lease.sh's sweep of whole builds). Needs nvcc and the pack-runtime tool (PACK_RUNTIME,
# default ../shared/tools/pack-runtime). Environment: JOBS.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
caller=$PWD # relative paths the caller gives are the caller's, not the repository's
callerpath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$caller" "$1" ;; esac; }
cd "$(dirname "$0")/.."
usage="usage: scripts/gpu-pack.sh [-arch SM] [-variants \"V ..\"] [-out DIR]"
die() { echo "gpu-pack: error: $*" >&2; exit 1; }
arch=90 variants="reproducible reproducible-atomic atomic atomic-deterministic atomic-reproducible deterministic" out=.runtime
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -arch) [[ $2 =~ ^[1-9][0-9]+[a-z]?$ ]] || die "-arch $2: a CUDA architecture number such as 90"; arch=$2 ;;
    -variants)
      for v in $2; do
        [[ $v =~ ^(atomic|deterministic|reproducible)(-(atomic|deterministic|reproducible))?$ ]] || die "-variants: unknown variant '$v' (STRATEGY or SOLVER-SURROGATE)"
      done
      variants=$2 ;;
    -out) out=${2%/}; [ -n "$out" ] || die "-out $2: names no folder"; out=$(callerpath "$out") ;; # DIR/ would pack DIR/.tar.xz into itself
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  shift 2
done
parent=$(dirname "$out")
[ -d "$parent" ] && [ -w "$parent" ] || die "-out $out: $parent is not a writable folder"
pack=${PACK_RUNTIME:-../shared/tools/pack-runtime}
[ -x "$pack" ] || die "pack-runtime not found at $pack (set PACK_RUNTIME)"
command -v nvcc > /dev/null || die "nvcc not on PATH: the CUDA toolkit is needed to build for the GPU"
exes="miniapp/miniapp bench/bench_surrogate tests/surrogate/test_surrogate_cuda bench/sumstudy/miniapp-sumstudy"
for v in $variants; do
  b=build/gpu/$v
  echo "gpu-pack: building $v for sm_$arch in $b"
  mkdir -p "$b"
  { cmake -S . -B "$b" -DMINIAPP_SOLVER_REDUCTION="${v%%-*}" -DMINIAPP_SURROGATE_REDUCTION="${v#*-}" -DCMAKE_CUDA_ARCHITECTURES="$arch" &&
    cmake --build "$b" -j "${JOBS:-2}"; } > "$b/gpu-pack.log" 2>&1 || die "the build of $v failed (log: $b/gpu-pack.log)"
  for e in $exes; do [ -x "$b/$e" ] || die "$b/$e was not built"; done
  # the executables themselves, not a cache option that stays ON when CUDA configuration failed
  # shellcheck disable=SC2086 # a list of paths
  scripts/gpu-built.sh $(for e in $exes; do echo "$b/$e"; done) || die "$b was built without CUDA (log: $b/gpu-pack.log)"
done
first=build/gpu/${variants%% *}
# shellcheck disable=SC2086 # a list of paths
"$pack" "$out" $(for e in $exes; do echo "$first/$e"; done) > /dev/null
for e in $exes; do rm -f "$out/bin/$(basename "$e")"; done
for v in $variants; do
  mkdir -p "$out/bin/$v"
  for e in $exes; do cp "build/gpu/$v/$e" "$out/bin/$v/"; done
done
tar -C "$out" -cJf "$out.tar.xz" .
echo "gpu-pack: $out ($(du -sh "$out" | cut -f1)), $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1)); variants: $variants"
