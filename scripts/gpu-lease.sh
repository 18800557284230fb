#!/usr/bin/env bash
# scripts/gpu-lease.sh [-runtime FILE.tar.xz] [-bin DIR] [-budget S] [-groups LIST] [-out DIR] [-rehearse]:
# scripts/gpu-check.sh inside one command of limited length (a lent GPU
# machine's call, a batch queue's short partition; docs/gpu.md). The steps run
# in groups, most important first (-groups, default all, in this order):
#   core      device, test, ranks, decks grayscott-small and -medium
#   solver    the solver on the GPU too: decks grayscott-medium and -large, solver on the CPU, then on the GPU
#   gpudecks  the GPU-node decks: 2 steps on the CPU and the GPU (same bits), then each whole on the GPU
#   submit    this machine's official submission of grayscott-medium, both halves on the GPU
#   bench     bench_surrogate, batches 262144 and 4194304, 5-32-32-1 and 5-64-64-64-1
#   torch     the PyTorch reference on the same batches and networks
#   kernels   ncu's duration of every kernel of one train step per strategy
#   sanitize  compute-sanitizer's four tools, then the Nsight Compute profile
#   large     deck grayscott-large
#   sweep     grayscott-medium over atomic, deterministic, reproducible, atomic-reproducible
#   atomic    the atomic study, 4 replicas of grayscott-medium (the surrogate half, then both halves)
#   sumstudy  the FPNA sum study's CUDA methods
# A group starts only while its estimate fits in what is left of S seconds
# (default 540) and its steps are stopped when S runs out. After each group
# every result so far is packed into DIR/gpu-check.tar.gz (default $OUT, else
# out/gpu-lease) and the results' tables into DIR/summary.md, so a cut-off
# call keeps what finished. When the device step fails nothing else runs.
# -runtime unpacks a packed runtime (scripts/gpu-pack.sh) into .runtime and
# sources its env.sh; PyTorch then runs with the library path from before
# (the runtime's libraries are Debian's, older than PyTorch's). -bin as in
# gpu-check.sh (default .runtime/bin/reproducible with -runtime, else
# build/reproducible). -rehearse: gpu-check.sh's CPU rehearsal. Exit 0 when
# no check failed and every group ran.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -uo pipefail
here=$PWD
abs() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; } # paths are the caller's
cd "$(dirname "$0")/.."
usage="usage: scripts/gpu-lease.sh [-runtime FILE.tar.xz] [-bin DIR] [-budget S] [-groups LIST] [-out DIR] [-rehearse]"
die() { echo "gpu-lease: error: $*" >&2; exit 1; }
allgroups="core solver gpudecks submit bench torch kernels sanitize large sweep atomic sumstudy"
runtime="" bin="" budget=540 groups=$allgroups dest=${OUT:-$PWD/out/gpu-lease} rehearse=()
while [ $# -gt 0 ]; do
  [ "$1" = -rehearse ] && { rehearse=(-rehearse); shift; continue; }
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -runtime) [ -f "$(abs "$2")" ] || die "-runtime $2: no such file"; runtime=$(abs "$2") ;;
    -bin) [ -n "$2" ] || die "-bin: empty"; bin=$(abs "$2") ;;
    -budget) [[ $2 =~ ^[1-9][0-9]{0,5}$ ]] || die "-budget $2: seconds, a positive integer below 10^6"; budget=$2 ;;
    -groups)
      groups=${2//,/ }
      [ -n "${groups// /}" ] || die "-groups: empty (of: ${allgroups// /,})"
      for g in $groups; do [[ " $allgroups " == *" $g "* ]] || die "-groups: unknown group '$g' (of: ${allgroups// /,})"; done ;;
    -out) [ -n "$2" ] || die "-out: empty (name a folder)"; dest=$(abs "$2") ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  shift 2
done
start=$SECONDS
export PMIX_MCA_pcompress_base_silence_warning=1 # the packed Open MPI's PMIx finds no zlib plugin of its own version there
mkdir -p "$dest" 2> /dev/null || die "-out $dest: cannot create it"
. scripts/manifest.sh
manifest_claim "$dest" gpu-lease.sh summary.md gpu-check.tar.gz # the folder may hold the caller's files: never one of those
work=$(mktemp -d) || die "no temporary folder"
trap 'rm -rf "$work"' EXIT
py=$work/python3 # PyTorch with the library path of before the runtime
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec python3 "$@"\n' "${LD_LIBRARY_PATH:-}" > "$py" && chmod +x "$py"
if [ -n "$runtime" ]; then
  mkdir -p .runtime && tar -C .runtime -xJf "$runtime" || die "-runtime $runtime: cannot unpack it into .runtime"
  # shellcheck disable=SC1091 # written by pack-runtime
  source .runtime/env.sh
  [ -n "$bin" ] || bin=.runtime/bin/reproducible
fi
[ -n "$bin" ] || bin=build/reproducible
[ -d "$bin" ] || die "-bin $bin: not a folder (a build tree or a runtime's variant folder)"

est() { # GROUP: seconds it takes on an H100 machine, generously
  case $1 in core) echo 90 ;; solver) echo 150 ;; gpudecks) echo 300 ;; submit) echo 100 ;; bench) echo 60 ;; torch) echo 120 ;; kernels) echo 90 ;; sanitize) echo 150 ;; large) echo 120 ;;
    sweep) echo 200 ;; atomic) echo 180 ;; sumstudy) echo 60 ;; esac
}
args() { # GROUP: gpu-check.sh's arguments
  case $1 in
    core) echo "-steps device,test,ranks,decks -decks grayscott-small,grayscott-medium" ;;
    solver) echo "-steps decks,solver -decks grayscott-medium,grayscott-large" ;;
    gpudecks) echo "-steps gpudecks" ;;
    submit) echo "-steps submit -submit_deck grayscott-medium" ;;
    bench) echo "-steps bench" ;;
    torch) echo "-steps torch" ;;
    kernels) echo "-steps kernels" ;;
    sanitize) echo "-steps sanitize,profile" ;;
    large) echo "-steps decks -decks grayscott-large" ;;
    sweep) echo "-steps sweep -sweep_decks grayscott-medium -sweep_variants deterministic,reproducible,atomic-reproducible" ;;
    atomic) echo "-steps atomic -replicas 4" ;;
    sumstudy) echo "-steps sumstudy" ;;
  esac
}
pack() {
  tar -C "$work" -czf "$dest/gpu-check.tar.gz" --exclude=python3 . 2> /dev/null
  for g in $groups; do [ -f "$work/$g/result.md" ] && { cat "$work/$g/result.md"; echo; }; done > "$dest/summary.md"
}
left() { echo $((budget - (SECONDS - start))); }
fails=0 skipped="" nodev=""
for g in $groups; do
  if [ "$(left)" -lt "$(est "$g")" ]; then skipped+=" $g"; continue; fi
  t=$(( $(left) - 5 ))
  echo "gpu-lease: group $g ($(left) s left)"
  # each of gpu-check's commands ends by the deadline; the timeout around it
  # is a backstop for the script itself
  # shellcheck disable=SC2046 # the group's argument list
  timeout "$((t + 3))" scripts/gpu-check.sh "${rehearse[@]}" -bin "$bin" -out "$work/$g" -python "$py" -timeout "$t" -deadline "$(( $(date +%s) + t ))" $(args "$g") \
    > "$work/$g.log" 2>&1
  rc=$?
  grep '^gpu-check: ' "$work/$g.log"
  [ $rc = 0 ] || fails=$((fails + 1))
  [ $rc != 124 ] || echo "gpu-lease: group $g stopped at the budget"
  pack
  if grep -q '"device", status: fail' "$work/$g/result.yaml" 2> /dev/null; then
    echo "gpu-lease: error: the device step failed; no further group runs" >&2
    nodev=${groups#*"$g"}
    break
  fi
done
[ -z "$skipped" ] || echo "gpu-lease: not run, out of time:$skipped"
[ -z "${nodev// /}" ] || echo "gpu-lease: not run, no usable device:$nodev"
echo "gpu-lease: $(( SECONDS - start )) s; $fails group(s) with failed checks; results in $dest/summary.md and $dest/gpu-check.tar.gz"
[ $fails = 0 ] && [ -z "$skipped" ] && [ -z "${nodev// /}" ]
