#!/usr/bin/env bash
# tests/output/output_tests.sh: end-to-end tests of miniapp-compare and
# scripts/plot.py on run files written by make_runs (ref, same = identical
# bits, div = replica 0 departs at step 2 / epoch 3, and broken files).
#   output_tests.sh compare MAKE_RUNS COMPARE
#   output_tests.sh plot    MAKE_RUNS COMPARE PYTHON PLOT_PY
set -u
name=$1 make_runs=$2 compare=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp" || fail "cannot enter $tmp"
"$make_runs" . || fail "make_runs could not write the test files"

# expect_error "PATTERN" ARGS...: exit 1, no partial file left, and stderr is
# exactly one line starting "miniapp-compare: error: " that contains PATTERN.
expect_error() {
  local pattern=$1; shift
  "$compare" "$@" > out.txt 2> err.txt
  local rc=$? lines
  lines=$(wc -l < err.txt)
  echo "miniapp-compare $* -> exit $rc: $(cat err.txt)"
  [ $rc = 1 ] || fail "exit $rc (want 1) for: $*"
  [ "$lines" = 1 ] || fail "$lines lines on stderr (want 1) for: $*"
  grep -q "^miniapp-compare: error: " err.txt || fail "no 'miniapp-compare: error: ' prefix for: $*"
  grep -qF -- "$pattern" err.txt || fail "message lacks '$pattern' for: $*"
  ! ls ./*.partial-* > /dev/null 2>&1 || fail "partial file left behind by: $*"
}

case $name in
compare)
  "$compare" ref.nc same.nc div.nc -o cmp.nc > table.txt 2> err.txt || { cat err.txt; fail "miniapp-compare failed"; }
  cat table.txt
  [ -s err.txt ] && fail "unexpected stderr: $(cat err.txt)"
  # columns: file solver/surrogate ranks threads device first_step first_epoch growth final_rel_l2 digits
  row() { awk -v f="$1" '$1 == f' table.txt; }
  [ "$(row same.nc | awk '{print $6, $7, $8, $10}')" = "never never - 17.0" ] || fail "same.nc row: $(row same.nc)"
  [ "$(row div.nc | awk '{print $6, $7}')" = "2 3" ] || fail "div.nc: first divergent step/epoch not 2 3: $(row div.nc)"
  # 1e-12, 1e-10, 1e-8 at three snapshots: too short a window for a growth rate (metrics_growth)
  row div.nc | awk '{exit !($8 == "-" && $9 == "1.000e-08" && $10 == "8.0")}' ||
    fail "div.nc: no growth rate (3 snapshots), final rel_l2 1e-8, 8 digits expected: $(row div.nc)"
  [ "$(row div.nc | awk '{print $2, $5}')" = "atomic/deterministic gpu" ] || fail "div.nc attributes: $(row div.nc)"
  [ -f cmp.nc ] || fail "-o cmp.nc not written"
  "$make_runs" --check-compare cmp.nc || fail "cmp.nc content"

  expect_error "ref.nc is 6 x 4 (x by y), grid.nc is 7 x 4" ref.nc grid.nc
  expect_error "comps.nc has u" ref.nc comps.nc
  expect_error "novar.nc: missing variable 'state_hash'" ref.nc novar.nc
  expect_error "corrupt.nc: cannot open (NetCDF: Unknown file format)" ref.nc corrupt.nc
  expect_error "missing.nc: cannot open (No such file or directory)" ref.nc missing.nc
  expect_error "need at least two files" ref.nc
  expect_error "unknown option '-x'" ref.nc same.nc -x
  expect_error "no/dir/out.nc: cannot create" ref.nc same.nc -o no/dir/out.nc
  expect_error "mismatched grids" ref.nc same.nc grid.nc -o out.nc
  [ ! -e out.nc ] || fail "out.nc written although the comparison failed"
  ;;
plot)
  py=$4 plot=$5
  "$py" -c "import netCDF4, matplotlib" 2> /dev/null ||
    fail "$py lacks the netCDF4/matplotlib modules: install python3-netcdf4 python3-matplotlib (scripts/setup.sh)"
  "$compare" ref.nc same.nc div.nc -o cmp.nc > /dev/null || fail "miniapp-compare failed"
  for f in ref.nc single.nc cmp.nc; do
    "$py" "$plot" "$f" -o png > list.txt 2> err.txt || { cat err.txt; fail "plot.py $f failed"; }
    [ -s list.txt ] || fail "plot.py $f listed no PNG"
    want=4; [ $f = cmp.nc ] && want=2
    [ "$(wc -l < list.txt)" = $want ] || fail "plot.py $f listed $(wc -l < list.txt) PNGs, want $want"
    while read -r png; do
      size=$(stat -c %s "$png" 2> /dev/null || echo 0)
      echo "$f -> $png ($size bytes)"
      [ "$size" -gt 1024 ] || fail "$png missing or not over 1 kB"
    done < list.txt
  done
  "$py" "$plot" ref.nc > /dev/null || fail "plot.py without -o failed"
  [ -s ref_fields.png ] || fail "default OUTDIR is not the file's directory"
  for bad in missing.nc corrupt.nc; do
    "$py" "$plot" $bad > out.txt 2> err.txt
    rc=$?
    echo "plot.py $bad -> exit $rc: $(cat err.txt)"
    [ $rc = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "^plot.py: error: $bad" err.txt ||
      fail "plot.py $bad: want exit 1 and one 'plot.py: error: $bad' line"
  done
  ;;
*) fail "unknown test $name" ;;
esac
echo PASS
