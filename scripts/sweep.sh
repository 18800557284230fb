#!/usr/bin/env bash
# scripts/sweep.sh DECK [-np N] [-threads T] [-repeat K] [-variants A,B,..] [-bin ROOT] [-args "OPTS"]
#                 [-launcher CMD] [-python PY] [-out DIR]: the cost of
# determinism. Builds (scripts/setup.sh) the seven variants
#   atomic deterministic reproducible                 (both halves the same)
#   deterministic-atomic reproducible-atomic          (the solver half varies)
#   atomic-deterministic atomic-reproducible          (the surrogate half varies)
# runs DECK (inputs/DECK.opts, or a path to an options file) with each of them
# in K interleaved rounds (default 2; round k runs all seven), keeps the best
# of the K times, and prints the table of times, FOM, verification and ratios
# to the atomic build, with the end-to-end targets (deterministic <= 1.05x,
# reproducible <= 1.25x). Reports and table.md in out/sweep/<deck>/.
# -variants runs a subset (e.g. atomic,reproducible: two builds instead of
# seven); atomic is always among them (the ratios' base).
# -bin ROOT runs prebuilt variants, ROOT/<variant>/ holding miniapp (a packed
# runtime) or miniapp/miniapp (a build tree), and builds nothing; -args adds
# options to every run (e.g. "-surrogate_device cuda", as scripts/gpu-check.sh does);
# -out DIR puts the reports in DIR/<deck> instead of out/sweep/<deck>.
# -launcher CMD starts the N ranks (%n in CMD becomes N), e.g.
# "srun -n %n" or "mpiexec -n %n --hostfile hosts"; default mpiexec, with
# Open MPI's flags only when it is Open MPI (scripts/launch.sh). -python PY
# makes the table (default: python3 on PATH).
# Defaults: 1 rank, threads = cores / ranks. Environment: CMAKE_ARGS, JOBS
# (passed to setup.sh). docs/sweep.md explains the columns.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
manifest_caller=$PWD # relative paths the caller gives are the caller's
cd "$(dirname "$0")/.."
usage="usage: scripts/sweep.sh DECK [-np N] [-threads T] [-repeat K] [-variants A,B,..] [-bin ROOT] [-args \"OPTS\"] [-launcher CMD] [-python PY] [-out DIR]"
die() { echo "sweep: error: $*" >&2; exit 1; }
cmd="${CMAKE_ARGS:+CMAKE_ARGS=$(printf '%q' "$CMAKE_ARGS") }scripts/sweep.sh$(printf ' %q' "$@")" # as it can be run again
[ $# -ge 1 ] || die "$usage"
deck=$1; shift
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) # the cores this process may use (nproc alone obeys OMP_NUM_THREADS)
np=1 threads="" repeat=2 root="" extra="" outdir=out/sweep launcher="" py=python3
all="atomic deterministic reproducible deterministic-atomic reproducible-atomic atomic-deterministic atomic-reproducible"
variants=$all
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -np) np=$2 ;;
    -threads) threads=$2 ;;
    -repeat) repeat=$2 ;;
    -variants)
      variants=atomic
      for v in ${2//,/ }; do
        [[ " $all " == *" $v "* ]] || die "-variants: unknown variant '$v' (one of: ${all// /,})"
        [[ " $variants " == *" $v "* ]] || variants="$variants $v"
      done
      shift 2
      continue ;;
    -bin) root=$(cd "$manifest_caller" && CDPATH= cd -- "$2" 2> /dev/null && pwd) || die "-bin $2: not a folder"; shift 2; continue ;;
    -args) extra=$2; shift 2; continue ;;
    -out) outdir=$(cd "$manifest_caller" && case $2 in /*) printf '%s' "$2" ;; *) printf '%s/%s' "$PWD" "$2" ;; esac); shift 2; continue ;;
    -launcher) [ -n "$2" ] || die "-launcher: empty"; launcher=$2; shift 2; continue ;;
    -python) py=$2; shift 2; continue ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 $2: must be a positive integer"
  shift 2
done
command -v "$py" > /dev/null || die "-python $py: not found"
"$py" -c "import yaml" 2> /dev/null || die "-python $py: has no PyYAML (Debian: python3-yaml)"
if [[ $deck == /* ]]; then dpath=$deck; else dpath=$manifest_caller/$deck; fi # a file the caller names, else a deck of inputs/
if [ -f "$dpath" ]; then opts=$dpath; else opts=inputs/$deck.opts; fi
[ -f "$opts" ] || die "unknown deck '$deck' (not a file; inputs/ has: $(cd inputs && ls -- *.opts | sed 's/\.opts$//' | paste -sd ' '))"
name=$(basename "$opts" .opts)
threads=${threads:-$(( cores / np > 0 ? cores / np : 1 ))}
dir=$outdir/$name
mkdir -p "$dir" 2> /dev/null || die "-out $outdir: cannot create $dir"
. scripts/manifest.sh
. scripts/launch.sh
manifest_begin "$dir" sweep.sh # replaces only the files an earlier sweep wrote here, and only if this one ends well

# Build: setup.sh configures and builds; an existing build directory only
# needs the (incremental) build, unless CMAKE_ARGS asks for a new configure.
# With -bin the variants are prebuilt: find each one's miniapp.
declare -A exe
for v in $variants; do
  if [ -n "$root" ]; then
    for c in "$root/$v/miniapp" "$root/$v/miniapp/miniapp"; do [ -f "$c" ] && [ -x "$c" ] && exe[$v]=$c; done
    [ -n "${exe[$v]:-}" ] || die "-bin $root: no $v/miniapp or $v/miniapp/miniapp there"
    continue
  fi
  echo "sweep: building $v"
  manifest_add "build-$v.log"
  build_variant "$v" "$dir/build-$v.log" || die "build of $v failed (log: $dir/build-$v.log)"
  exe[$v]=build/$v/miniapp/miniapp
done

# Run: K rounds, each running every variant once, side by side.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch_set "$np" "$threads" "$cores" "$launcher"
for k in $(seq "$repeat"); do
  for v in $variants; do
    rc=0
    manifest_add "$v.r$k.yaml"; manifest_add "$v.r$k.log"
    read -r -a extra_args <<< "$extra" # -args: words split on blanks, never globbed
    manifest_run "${launch[@]}" "${exe[$v]}" -options_file "$opts" -threads "$threads" -deck_name "$name" "${extra_args[@]}" \
      -report "$dir/$v.r$k.yaml" > "$dir/$v.r$k.log" 2>&1 || rc=$?
    case $rc in
      0 | 2) echo "sweep: round $k/$repeat $v: $(sed -n 's/^ *total: //p' "$dir/$v.r$k.yaml") s, $([ $rc = 0 ] && echo VALID || echo INVALID)" ;;
      *) die "$v (round $k) exited with $rc: $(grep -m1 'error:' "$dir/$v.r$k.log" || tail -n 1 "$dir/$v.r$k.log")" ;;
    esac
  done
done
echo
manifest_add table.md
"$py" scripts/report_table.py sweep "$dir" --deck "$name" --command "$cmd" --out "$dir/table.md"
manifest_end
echo "sweep: table in $dir/table.md, reports and logs in $dir/"
