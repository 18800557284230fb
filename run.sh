#!/usr/bin/env bash
# run.sh: set up (packages, builds) and run the default scenario: the coupled
# Gray-Scott run of inputs/default.opts in the reproducible build and in the
# atomic build (each replica replaying its own seeded atomic order), the
# comparison of the two, and the plots. Results in out/.
# Extra arguments go to both miniapp runs, e.g. ./run.sh -ts_max_steps 100
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh reproducible atomic
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
py=/usr/bin/python3
mkdir -p out/plots
for v in reproducible atomic; do
  echo "== $v build"
  seed=(); [ $v = atomic ] && seed=(-atomic_order_seed 1)
  build/$v/miniapp/miniapp -options_file inputs/default.opts "${seed[@]}" -output out/$v.nc -summary out/$v.yaml -report out/$v.report.yaml "$@" \
    | grep -E "^(FPNA|ksp_iterations_total:|replica_final_digits|replica_first_divergent|weights_hash|state_hash|verification)"
done
echo "== atomic vs reproducible"
build/reproducible/miniapp/miniapp-compare out/reproducible.nc out/atomic.nc -o out/compare.nc
for f in reproducible atomic compare; do $py scripts/plot.py out/$f.nc -o out/plots > /dev/null; done
# the README's figure: the two builds' replicas on one axes (out/plots/overlay_digits.png)
$py scripts/plot.py --overlay out/reproducible.nc out/atomic.nc --labels "reproducible build","atomic build (seeded orders)" -o out/plots > /dev/null
$py scripts/plot.py --diffmap out/reproducible.nc out/atomic.nc -o out/plots > /dev/null # the two builds' fields and their difference
$py scripts/plot.py --phases out/reproducible.report.yaml out/atomic.report.yaml -o out/plots > /dev/null # where the time goes
scripts/run_text.sh out # what the runs measured (every number from out/*.yaml)
