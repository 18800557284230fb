#!/usr/bin/env bash
# run.sh: set up (packages, builds) and run the default scenario: the coupled
# Gray-Scott run of inputs/default.opts in the reproducible build and in the
# atomic build (each replica replaying its own seeded atomic order), the
# comparison of the two, and the plots. Results in out/.
# Extra arguments go to both miniapp runs, e.g. ./run.sh -ts_max_steps 100
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
key() { sed -n "s/^$2: *//p" "out/$1.yaml" | tr -d '"[]'; }
cat <<TXT

Results in out/: reproducible.nc, atomic.nc (fields + per-step/per-epoch series,
NetCDF, open with xarray or ncview), compare.nc, summaries *.yaml, PNG figures in
out/plots/ (divergence vs step and epoch, Krylov iterations, final fields;
*_fields_time.png: the pattern forming and where the replicas differ;
*_coupling.png: the learned guess's error and the churn per step;
overlay_digits.png: both builds' replicas on one axes, the README's figure;
diffmap.png: the two builds' fields at the last step and their difference;
phases.png: where each build's time goes per step, from the reports out/*.report.yaml).
What they show:
 - reproducible build: the two replicas agree bitwise at every step and epoch
   (first divergent step: $(key reproducible replica_first_divergent_step | cut -d, -f2)).
 - atomic build: replica 1 (another combination order) leaves replica 0's bits at
   step $(key atomic replica_first_divergent_step | cut -d, -f2 | tr -d ' ') and epoch $(key atomic replica_first_divergent_epoch | cut -d, -f2 | tr -d ' '); after $(key atomic steps) steps they agree to$(key atomic replica_final_digits | cut -d, -f2) digits.
 - Krylov iterations of replica 0's systems (reproducible build), each guess on the same systems:
     no guess $(key reproducible ksp_iterations_total_none), extrapolation $(key reproducible ksp_iterations_total_extrapolation) ($(key reproducible iterations_saved_pct_extrapolation)% saved),
     PETSc Fischer $(key reproducible ksp_iterations_total_fischer) ($(key reproducible iterations_saved_pct_fischer)%), learned $(key reproducible ksp_iterations_total_learned) ($(key reproducible iterations_saved_pct_learned)%),
     combined = energy-norm projection over all of them (drives the run) $(key reproducible ksp_iterations_total_combined) ($(key reproducible iterations_saved_pct_combined)%),
     projection = the same without the network $(key reproducible ksp_iterations_total_projection) ($(key reproducible iterations_saved_pct_projection)%).
   What the network itself adds is combined against projection: $(( $(key reproducible ksp_iterations_total_projection) - $(key reproducible ksp_iterations_total_combined) )) iterations
   of $(key reproducible ksp_iterations_total_projection); almost all of the saving is the projection's. With
   -guess_learn residual the network learns what the projection misses and saves 12% more (docs/coupling.md).
   Net time: the solves saved $(key reproducible solve_seconds_saved_vs_none) s against no guess, the surrogate
   (features, predict, train) cost $(key reproducible surrogate_seconds) s: on this CPU the learned part does not pay
   for itself; the cheap projections do (docs/coupling.md says what would change that).
See docs/coupling.md and docs/metrics.md for how to read the figures.
TXT
