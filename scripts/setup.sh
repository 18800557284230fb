#!/usr/bin/env bash
# scripts/setup.sh [VARIANT...]: install the Debian packages the project needs
# (only those missing), then configure and build each variant in
# build/<variant>, where VARIANT is a strategy used for both halves
# (atomic|deterministic|reproducible; default: reproducible) or
# SOLVER-SURROGATE for different ones (e.g. atomic-reproducible).
# Environment: CC, CFLAGS, CMAKE_ARGS (extra configure flags), JOBS.
# The compilers run through ccache: the variants share most of their
# translation units (kernels/, the I/O layer, the tests' tools), so the second
# and third builds take about a third of the first.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config ccache petsc-dev libopenblas-dev libnetcdf-dev libopenmpi-dev openmpi-bin netcdf-bin python3-yaml python3-netcdf4 python3-matplotlib python3-xarray"
missing=""
for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi
variants=${*:-reproducible}
launch=()
case " ${CMAKE_ARGS:-} " in
  *_COMPILER_LAUNCHER=*) ;; # the caller chose
  *) if command -v ccache > /dev/null; then # its cache in build/ccache: shared by the variants, writable wherever build/ is
       for lang in C CXX CUDA; do launch+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=env;CCACHE_DIR=$PWD/build/ccache;ccache"); done
     fi ;;
esac
for v in $variants; do
  ssolver=${v%%-*} ssurr=${v#*-}
  for s in $ssolver $ssurr; do
    case $s in atomic|deterministic|reproducible) ;; *) echo "setup: unknown variant '$v' (atomic|deterministic|reproducible, or SOLVER-SURROGATE)" >&2; exit 2 ;; esac
  done
  cmake -S . -B "build/$v" -DMINIAPP_SOLVER_REDUCTION="$ssolver" -DMINIAPP_SURROGATE_REDUCTION="$ssurr" "${launch[@]}" ${CMAKE_ARGS:-} > "build-$v.configure.log" 2>&1 \
    || { cat "build-$v.configure.log"; exit 1; }
  grep "miniapp:" "build-$v.configure.log" | sed "s/^/[$v] /"
  rm -f "build-$v.configure.log"
  # progress: the build's percentage in place on a terminal; the full log in build/<v>/build.log
  start=$SECONDS
  if [ -t 1 ]; then
    cmake --build "build/$v" -j "${JOBS:-2}" 2>&1 | tee "build/$v/build.log" \
      | awk -v v="$v" '/^\[ *[0-9]+%\]/ { p = substr($0, 2, index($0, "%") - 1) + 0; if (p != last) { printf "\r[%s] building: %3d%%", v, p; fflush(); last = p } } END { printf "\r\033[K" }'
  else
    echo "[$v] building (log: build/$v/build.log)"
    cmake --build "build/$v" -j "${JOBS:-2}" > "build/$v/build.log" 2>&1
  fi || cmake --build "build/$v" -j 1 > "build/$v/build.log" 2>&1 \
    || { cat "build/$v/build.log"; echo "setup: the build of build/$v failed (log above, in build/$v/build.log)" >&2; exit 1; }
  echo "[$v] built in $((SECONDS - start)) s"
done
