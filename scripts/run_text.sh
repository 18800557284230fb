#!/usr/bin/env bash
# scripts/run_text.sh DIR: the closing text of ./run.sh, from the summaries
# DIR/reproducible.yaml and DIR/atomic.yaml of the default deck's two runs.
# Every number it prints is read from those summaries (a share's sign as
# "more" or "fewer"; docs_readme checks that on a run of the deck), none is
# written here.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
dir=$1
for f in reproducible atomic; do [ -s "$dir/$f.yaml" ] || { echo "run_text.sh: no summary $dir/$f.yaml"; exit 1; }; done
key() { sed -n "s/^$2: *//p" "$dir/$1.yaml" | tr -d '"[]'; }
r() { key reproducible "$1"; }
base=$(r learned_base) vs=$(r learned_saved_pct_vs_base)
case $vs in -*) vs="${vs#-}% more" ;; *) vs="$vs% fewer" ;; esac
# the net time's verdict is the sign of the summary's net_seconds_saved
if awk -v n="$(r net_seconds_saved)" 'BEGIN { exit !(n < 0) }'; then
  pays="on this machine the learned part does not pay for itself"
else pays="on this machine the learned part pays for itself"; fi
cat <<TXT

Results in $dir/: reproducible.nc, atomic.nc (fields + per-step/per-epoch series,
NetCDF, open with xarray or ncview), compare.nc, summaries *.yaml, PNG figures in
$dir/plots/ (divergence vs step and epoch, Krylov iterations, final fields;
*_fields_time.png: the pattern forming and where the replicas differ;
*_coupling.png: the learned guess's error and the churn per step;
overlay_digits.png: both builds' replicas on one axes, the README's figure;
diffmap.png: the two builds' fields at the last step and their difference;
phases.png: where each build's time goes per step, from the reports $dir/*.report.yaml).
What they show:
 - reproducible build: the two replicas agree bitwise at every step and epoch
   (first divergent step: $(key reproducible replica_first_divergent_step | cut -d, -f2 | tr -d ' ')).
 - atomic build: replica 1 (another combination order) leaves replica 0's bits at
   step $(key atomic replica_first_divergent_step | cut -d, -f2 | tr -d ' ') and epoch $(key atomic replica_first_divergent_epoch | cut -d, -f2 | tr -d ' '); after $(key atomic steps) steps they agree to $(key atomic replica_final_digits | cut -d, -f2 | tr -d ' ') digits.
 - Krylov iterations of replica 0's systems (reproducible build), each guess on the same systems:
     no guess $(r ksp_iterations_total_none), extrapolation $(r ksp_iterations_total_extrapolation) ($(r iterations_saved_pct_extrapolation)% saved),
     PETSc Fischer $(r ksp_iterations_total_fischer) ($(r iterations_saved_pct_fischer)%),
     projection = the energy-norm best point over past solutions and increments, no network, $(r ksp_iterations_total_projection) ($(r iterations_saved_pct_projection)%),
     combined = the same with the network's correction (drives the run) $(r ksp_iterations_total_combined) ($(r iterations_saved_pct_combined)%).
   What the network itself adds (-guess_learn $(r guess_learn)) is combined against projection:
     $(r network_iterations_saved_vs_projection) iterations of $(r ksp_iterations_total_projection), $(r network_saved_pct_vs_projection)%.
   The learned row ($base's guess plus the network's correction, unscaled) takes
     $(r ksp_iterations_total_learned) against the $base row's $(r ksp_iterations_total_$base) ($vs).
   Net time: the solves saved $(r solve_seconds_saved_vs_none) s against no guess, the surrogate
   (features, predict, train) cost $(r surrogate_seconds) s: $pays
   (net $(r net_seconds_saved) s; docs/coupling.md says what would change that).
See docs/coupling.md and docs/metrics.md for how to read the figures.
TXT
