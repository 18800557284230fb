#!/usr/bin/env bash
# test.sh [CTEST_ARGS...]: set up (packages, all three variants) and run the
# whole test suite with ctest in each build, two tests at a time (a test that
# runs 2 threads or ranks holds both slots: PROCESSORS 2). The tests that do
# not depend on the strategy run in the reproducible build only
# (MINIAPP_TESTS_COMMON, tests/CMakeLists.txt). Extra arguments go to every
# ctest, e.g. ./test.sh -L unit for a quick look (docs/tests.md). It ends with
# the 10 slowest tests and the time of each part.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS
CMAKE_ARGS="${CMAKE_ARGS:-} -DMINIAPP_TESTS_COMMON=OFF" scripts/setup.sh atomic deterministic
CMAKE_ARGS="${CMAKE_ARGS:-} -DMINIAPP_TESTS_COMMON=ON" scripts/setup.sh reproducible
times="set-up and builds $((SECONDS - start)) s"
status=0
for v in atomic deterministic reproducible; do
  echo "== ctest: $v build"
  s=$SECONDS
  # a hang fails, not stalls
  (cd "build/$v" && ctest -j2 --timeout 900 --output-on-failure "$@") 2>&1 | tee "build/$v/ctest.log" || status=1
  times="$times, $v $((SECONDS - s)) s"
done
echo "== the 10 slowest tests (seconds)"
for v in atomic deterministic reproducible; do
  sed -n "s/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1 ($v)/p" "build/$v/ctest.log"
done | sort -rn | sed -n 1,10p # sed reads to the end: no SIGPIPE under pipefail
echo "== $times; total $((SECONDS - start)) s ($(( (SECONDS - start + 30) / 60 )) min)"
exit $status
