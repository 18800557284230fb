# scripts/launch.sh, sourced by sweep.sh and scaling.sh: how a variant is
# built and how a run of R ranks is started.
#   build_variant V LOG  builds build/V: an existing build directory only needs
#     the (incremental) build, unless CMAKE_ARGS asks for a new configure
#     (scripts/setup.sh); 1 on failure, the output in LOG.
#   launch_set R T CORES [LAUNCHER]  sets the array `launch`:
#     LAUNCHER given (-launcher): its words, with %n replaced by R, e.g.
#       "srun -n %n --cpu-bind=cores" or "mpiexec -n %n --hostfile hosts";
#     else one rank: no launcher; else `mpiexec -n R`, with Open MPI's
#       --oversubscribe when R x T exceeds CORES and --bind-to none when T > 1
#       (it binds a rank to one core by default), and only when mpiexec is
#       Open MPI's (MPICH's and the vendors' take neither flag).
launch_set() {
  local r=$1 t=$2 cores=$3 l=${4:-}
  launch=()
  if [ -n "$l" ]; then
    read -r -a launch <<< "${l//%n/$r}"
    return 0
  fi
  [ "$r" -gt 1 ] || return 0
  launch=(mpiexec -n "$r")
  if mpiexec --version 2> /dev/null | grep -q "Open MPI\|OpenRTE"; then
    [ $((r * t)) -le "$cores" ] || launch+=(--oversubscribe)
    [ "$t" = 1 ] || launch+=(--bind-to none)
  fi
}

build_variant() {
  if [ -f "build/$1/CMakeCache.txt" ] && [ -z "${CMAKE_ARGS:-}" ]; then
    cmake --build "build/$1" -j "${JOBS:-2}" > "$2" 2>&1
  else
    scripts/setup.sh "$1" > "$2" 2>&1
  fi
}
