#!/usr/bin/env bash
# scripts/scaling.sh DECK [strong|weak] [-max-ranks R] [-max-threads T]
#                   [-variant V] [-repeat K] [-bin DIR] [-launcher CMD]
#                   [-python PY] [-out DIR]
# Runs DECK (inputs/DECK.opts, or a path) for every ranks x threads pair of
# powers of two with ranks <= R, threads <= T and ranks x threads <= cores
# (nproc; R and T default to the core count).
#   strong: the deck as it is; efficiency = T(1x1) / (ranks x threads x T).
#   weak:   the grid grows with p = ranks x threads, doubling x, then y, then
#           x ... (p = 2: 2M x N, p = 4: 2M x 2N, p = 8: 4M x 2N), so the
#           points per core stay constant for p a power of two;
#           efficiency = T(1x1) / T.
# Build: V (default reproducible, via scripts/setup.sh; CMAKE_ARGS honoured),
# or -bin DIR: a prebuilt miniapp (DIR/miniapp, DIR/bin/miniapp or a build
# tree's DIR/miniapp/miniapp), nothing built. -launcher CMD starts R ranks
# with %n in CMD replaced by R (e.g. "srun -n %n", "mpiexec -n %n --hostfile
# hosts"); default mpiexec with Open MPI's flags only for Open MPI
# (scripts/launch.sh). -python PY makes the table (default python3 on PATH).
# Each time is the best of K runs (default 1). Reports and table.md in
# OUT/<deck>-<mode>/ (OUT: -out, default out/scaling), with
# whether the final state_hash equals the 1 x 1 run's (the reproducible
# build promises it in strong scaling). docs/sweep.md explains the columns.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
manifest_caller=$PWD # relative paths the caller gives are the caller's
cd "$(dirname "$0")/.."
usage="usage: scripts/scaling.sh DECK [strong|weak] [-max-ranks R] [-max-threads T] [-variant V] [-repeat K] [-bin DIR] [-launcher CMD] [-python PY] [-out DIR]"
die() { echo "scaling: error: $*" >&2; exit 1; }
cmd="${CMAKE_ARGS:+CMAKE_ARGS=$(printf '%q' "$CMAKE_ARGS") }scripts/scaling.sh$(printf ' %q' "$@")" # as it can be run again
[ $# -ge 1 ] || die "$usage"
deck=$1; shift
mode=strong
if [ $# -gt 0 ] && [[ $1 != -* ]]; then mode=$1; shift; fi
[[ $mode =~ ^(strong|weak)$ ]] || die "mode '$mode': strong or weak ($usage)"
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) # the cores this process may use (nproc alone obeys OMP_NUM_THREADS)
maxr=$cores maxt=$cores variant=reproducible repeat=1 bin="" launcher="" py=python3 outdir=out/scaling
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -bin) bin=$(cd "$manifest_caller" && CDPATH= cd -- "$2" 2> /dev/null && pwd) || die "-bin $2: not a folder"; shift 2; continue ;;
    -launcher) [[ $2 == *%n* ]] || die "-launcher '$2': must contain %n, the rank count of each run (e.g. \"srun -n %n\")"; launcher=$2; shift 2; continue ;;
    -python) py=$2; shift 2; continue ;;
    -out) outdir=$(cd "$manifest_caller" && case $2 in /*) printf '%s' "$2" ;; *) printf '%s/%s' "$PWD" "$2" ;; esac); shift 2; continue ;;
    -max-ranks) maxr=$2 ;;
    -max-threads) maxt=$2 ;;
    -repeat) repeat=$2 ;;
    -variant) variant=$2 ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  [ "$1" = -variant ] || [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 $2: must be a positive integer"
  shift 2
done
[[ $variant =~ ^(atomic|deterministic|reproducible)(-(atomic|deterministic|reproducible))?$ ]] \
  || die "unknown variant '$variant' (atomic|deterministic|reproducible, or SOLVER-SURROGATE)"
if [[ $deck == /* ]]; then dpath=$deck; else dpath=$manifest_caller/$deck; fi # a file the caller names, else a deck of inputs/
if [ -f "$dpath" ]; then opts=$dpath; else opts=inputs/$deck.opts; fi
[ -f "$opts" ] || die "unknown deck '$deck' (not a file; inputs/ has: $(cd inputs && ls -- *.opts | sed 's/\.opts$//' | paste -sd ' '))"
name=$(basename "$opts" .opts)
command -v "$py" > /dev/null || die "-python $py: not found"
"$py" -c "import yaml" 2> /dev/null || die "-python $py: has no PyYAML (Debian: python3-yaml)"
app=build/$variant/miniapp/miniapp
if [ -n "$bin" ]; then
  app=""
  for c in "$bin/miniapp/miniapp" "$bin/bin/miniapp" "$bin/miniapp"; do [ -f "$c" ] && [ -x "$c" ] && { app=$c; break; }; done
  [ -n "$app" ] || die "-bin $bin: no miniapp, bin/miniapp or miniapp/miniapp there"
fi
dir=$outdir/$name-$mode
mkdir -p "$dir" 2> /dev/null || die "-out $outdir: cannot create $dir"
. scripts/manifest.sh
. scripts/launch.sh
manifest_begin "$dir" scaling.sh # replaces only the files an earlier scaling run wrote here, and only if this one ends well
manifest_add build.log

if [ -z "$bin" ]; then
  echo "scaling: building $variant"
  build_variant "$variant" "$dir/build.log" || die "build of $variant failed (log: $dir/build.log)"
else
  echo "scaling: prebuilt $app" > "$dir/build.log"
fi

# ranks x threads pairs, 1 x 1 first (the reference)
configs=""
for ((p = 1; p <= cores; p *= 2)); do
  for ((r = 1; r <= p && r <= maxr; r *= 2)); do
    [ $((p / r)) -le "$maxt" ] && configs+=" $r:$((p / r))"
  done
done
# the deck's grid (weak scaling grows it); else the 1 x 1 report's
grid() { sed -n "s/^ *-da_grid_$1[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "$opts" | tail -n 1; }
gx=$(grid x) gy=$(grid y)

export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for k in $(seq "$repeat"); do
  for c in $configs; do
    r=${c%:*} t=${c#*:} p=$((${c%:*} * ${c#*:})) fx=1 fy=1
    extra=()
    if [ "$mode" = weak ] && [ "$p" -gt 1 ]; then
      if [ -z "$gx" ] || [ -z "$gy" ]; then
        read -r gx gy < <("$py" scripts/report_table.py grid "$dir/np1-t1.r1.yaml")
      fi
      while [ $((fx * fy)) -lt "$p" ]; do if [ "$fx" = "$fy" ]; then fx=$((fx * 2)); else fy=$((fy * 2)); fi; done
      # the deck's golden hashes belong to its own grid: clear them
      extra=(-da_grid_x $((gx * fx)) -da_grid_y $((gy * fy)) -golden_state_hash none)
      grep -q '^[[:space:]]*-golden_weights_hash' "$opts" && extra+=(-golden_weights_hash none) # a deck without a network has none (and refuses the option)
    fi
    launch_set "$r" "$t" "$cores" "$launcher"
    out=$dir/np$r-t$t.r$k
    manifest_add "np$r-t$t.r$k.yaml"; manifest_add "np$r-t$t.r$k.log"
    rc=0
    OMP_NUM_THREADS=$t manifest_run "${launch[@]}" "$app" -options_file "$opts" "${extra[@]}" -threads "$t" \
      -deck_name "$name" -report "$out.yaml" > "$out.log" 2>&1 || rc=$?
    case $rc in
      0 | 2) echo "scaling: $r x $t${extra[*]:+ (grid ${extra[1]} x ${extra[3]})}: $(sed -n 's/^ *time_per_step: //p' "$out.yaml") s/step, $([ $rc = 0 ] && echo VALID || echo INVALID)" ;;
      *) die "$r ranks x $t threads exited with $rc: $(grep -m1 'error:' "$out.log" || tail -n 1 "$out.log")" ;;
    esac
  done
done
echo
manifest_add table.md
"$py" scripts/report_table.py scaling "$dir" --mode "$mode" --deck "$name" --command "$cmd" --out "$dir/table.md"
manifest_end
echo "scaling: table in $dir/table.md, reports and logs in $dir/"
