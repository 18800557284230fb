#!/usr/bin/env bash
# test.sh: set up (packages, all three variants) and run the whole test suite
# of each variant with ctest.
set -euo pipefail
cd "$(dirname "$0")"
variants="atomic deterministic reproducible"
scripts/setup.sh $variants
status=0
for v in $variants; do
  echo "== ctest: $v build"
  (cd "build/$v" && ctest -j1 --timeout 900 --output-on-failure) || status=1 # one at a time whatever CTEST_PARALLEL_LEVEL says; a hang fails, not stalls
done
exit $status
