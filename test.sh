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
  (cd "build/$v" && ctest --output-on-failure) || status=1
done
exit $status
