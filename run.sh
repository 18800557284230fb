#!/usr/bin/env bash
# run.sh: set up (packages, build) and run the default scenario.
# Extra arguments go to the miniapp, e.g. ./run.sh -scenario heat
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh reproducible
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
mkdir -p out
exec build/reproducible/miniapp/miniapp -options_file inputs/default.opts -summary out/summary.yaml "$@"
