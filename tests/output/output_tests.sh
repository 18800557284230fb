#!/usr/bin/env bash
# tests/output/output_tests.sh: end-to-end tests of miniapp-compare and
# scripts/plot.py on run files written by make_runs (ref, same = identical
# bits, div = replica 0 departs at step 2 / epoch 3, and broken files), and of
# the layout of real run files (small miniapp runs: Gray-Scott with guesses
# and 2 replicas, its restart, heat) and their CF compliance.
#   output_tests.sh compare MAKE_RUNS COMPARE
#   output_tests.sh plot    MAKE_RUNS COMPARE PYTHON PLOT_PY
#   output_tests.sh run     MAKE_RUNS COMPARE PYTHON MINIAPP
#   output_tests.sh cf      MAKE_RUNS COMPARE PYTHON MINIAPP   (77: no CF checker installed)
#   output_tests.sh doc     MAKE_RUNS COMPARE PYTHON MINIAPP DOC (docs/output.md's xarray example)
set -u
name=$1 make_runs=$2 compare=$3
here=$(cd "$(dirname "$0")" && pwd) # before the cd below: $0 may be relative
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

# real_runs: gs.nc (12 steps, snapshots at 0 5 10 12), rs.nc (the same run
# restarted from its step-6 checkpoint), heat.nc (7 steps, snapshots at 0 3 6
# 7), each with its summary *.yaml; cmp.nc = miniapp-compare gs.nc gs.nc and
# cmp_made.nc = miniapp-compare of the make_runs files.
real_runs() {
  export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
  local gs=(-scenario grayscott -da_grid_x 24 -da_grid_y 20 -coupling guess -replicas 2 -output_every 5)
  local heat=(-scenario heat -da_grid_x 15 -da_grid_y 12 -ts_max_steps 7 -output_every 3)
  "$app" "${gs[@]}" -ts_max_steps 12 -output gs.nc -summary gs.yaml > gs.log 2>&1 || { cat gs.log; fail "miniapp run failed"; }
  "$app" "${gs[@]}" -ts_max_steps 6 -checkpoint ck.bin > half.log 2>&1 || { cat half.log; fail "miniapp run failed"; }
  "$app" "${gs[@]}" -ts_max_steps 12 -restart ck.bin -output rs.nc -summary rs.yaml > rs.log 2>&1 || { cat rs.log; fail "restart failed"; }
  "$app" "${heat[@]}" -output heat.nc -summary heat.yaml > heat.log 2>&1 || { cat heat.log; fail "heat run failed"; }
  "$compare" gs.nc gs.nc -o cmp.nc > cmp.txt 2>&1 || { cat cmp.txt; fail "miniapp-compare failed"; }
  "$compare" ref.nc same.nc div.nc -o cmp_made.nc > /dev/null 2>&1 || fail "miniapp-compare on make_runs files failed"
}

case $name in
compare)
  "$compare" ref.nc same.nc div.nc -o cmp.nc > table.txt 2> err.txt || { cat err.txt; fail "miniapp-compare failed"; }
  cat table.txt
  [ -s err.txt ] && fail "unexpected stderr: $(cat err.txt)"
  # columns: file solver/surrogate ranks threads devices(solver/surrogate) first_step first_epoch growth final_rel_l2 digits
  row() { awk -v f="$1" '$1 == f' table.txt; }
  [ "$(row same.nc | awk '{print $6, $7, $8, $10}')" = "never never - 17.0" ] || fail "same.nc row: $(row same.nc)"
  [ "$(row div.nc | awk '{print $6, $7}')" = "2 3" ] || fail "div.nc: first divergent step/epoch not 2 3: $(row div.nc)"
  # 1e-12, 1e-10, 1e-8 at three snapshots: too short a window for a growth rate (metrics_growth)
  row div.nc | awk '{exit !($8 == "-" && $9 == "1.000e-08" && $10 == "8.0")}' ||
    fail "div.nc: no growth rate (3 snapshots), final rel_l2 1e-8, 8 digits expected: $(row div.nc)"
  [ "$(row div.nc | awk '{print $2, $5}')" = "atomic/deterministic -/gpu" ] || fail "div.nc attributes: $(row div.nc)"
  [ -f cmp.nc ] || fail "-o cmp.nc not written"
  "$make_runs" --check-compare cmp.nc || fail "cmp.nc content"
  # a field that differs only by a NaN, or by -0 against +0, at step 4's snapshot (hashes untouched): the
  # states differ there (V_c > 0), so the first divergent step is 4, not "never" (the test was max_abs > 0)
  if /usr/bin/python3 -c 'import netCDF4' 2> /dev/null; then
    for k in nan:nan zp:0.0 zn:-0.0; do
      cp ref.nc "${k%%:*}.nc"
      /usr/bin/python3 -c 'import sys, netCDF4; d = netCDF4.Dataset(sys.argv[1], "a"); d["u"][2, 0, 1, 1] = float(sys.argv[2]); d.close()' "${k%%:*}.nc" "${k#*:}"
    done
    "$compare" ref.nc nan.nc > t2.txt 2>&1 || { cat t2.txt; fail "miniapp-compare ref.nc nan.nc"; }
    [ "$(awk '$1 == "nan.nc" {print $6}' t2.txt)" = 4 ] || { cat t2.txt; fail "a NaN in step 4's fields: first divergent step not 4"; }
    "$compare" zp.nc zn.nc > t3.txt 2>&1 || { cat t3.txt; fail "miniapp-compare zp.nc zn.nc"; }
    [ "$(awk '$1 == "zn.nc" {print $6}' t3.txt)" = 4 ] || { cat t3.txt; fail "-0 against +0 in step 4's fields: first divergent step not 4"; }
  else echo "note: /usr/bin/python3 without netCDF4: the NaN and signed-zero field checks not run"; fi
  # a repeated step or an unsorted snapshot_step pairs the wrong records: refused, naming the file and the index
  if /usr/bin/python3 -c 'import netCDF4' 2> /dev/null; then
    cp ref.nc dup.nc && cp ref.nc unsorted.nc
    /usr/bin/python3 -c 'import netCDF4; d = netCDF4.Dataset("dup.nc", "a"); d["step"][2] = d["step"][1]; d.close()'
    /usr/bin/python3 -c 'import netCDF4; d = netCDF4.Dataset("unsorted.nc", "a"); s = d["snapshot_step"][:]; d["snapshot_step"][0], d["snapshot_step"][1] = s[1], s[0]; d.close()'
    expect_error "dup.nc: step[2] is 1 after 1: not a run file's series" ref.nc dup.nc
    expect_error "unsorted.nc: snapshot_step[1] is" unsorted.nc unsorted.nc
  fi

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
  # every figure drawn below is checked for empty panels as it is saved (docs/output.md: a figure draws only panels
  # that hold something; what is constant is said in its title): panels.log gets "PNG<TAB>ok|EMPTY ...<TAB>titles"
  cp "$here/panels.py" panels.py
  plotpy() { PANELS_LOG="$tmp/panels.log" "$py" "$tmp/panels.py" "$plot" "$@"; }
  # title_of PNG: the titles (figure's, panels') panels.log recorded for it
  title_of() { awk -F '\t' -v f="$1" '$1 == f {print $3}' panels.log; }
  # eq.nc: ref.nc with replica 1 made replica 0 everywhere (fields, series, hashes, losses, weights): what a
  # deterministic build's replicas give; cmp_eq.nc: ref.nc against same.nc (identical bits: losses equal)
  cp ref.nc eq.nc && "$py" - <<'PY' || fail "could not make eq.nc"
import netCDF4
d = netCDF4.Dataset("eq.nc", "a")
d.set_auto_chartostring(False)  # hashes as their characters
for v in d.variables.values():
    if "replica" in v.dimensions and v.name != "replica":
        k = v.dimensions.index("replica")
        a = v[:]
        idx = [slice(None)] * a.ndim
        idx[k] = slice(0, 1)
        v[:] = a[tuple(idx)].repeat(a.shape[k], axis=k)
d.close()
PY
  "$compare" ref.nc same.nc -o cmp_eq.nc > /dev/null || fail "miniapp-compare ref.nc same.nc failed"
  # one growth-rate definition: the figures' fit gives what metrics_growth
  # (summary, miniapp-compare) gives on test_metrics.c's series (the same cases)
  PYTHONPATH="$(dirname "$plot")" "$py" - <<'PY' || fail "plot.py's growth fit is not metrics_growth's"
import math, sys
import numpy as np
sys.argv = ["plot.py"]
import plot
st = np.array([50.0 * i for i in range(300)])
rel = np.array([0 if i == 0 else min(1e-16 * 10 ** (0.002 * st[i]), 0.3) for i in range(300)])
f = plot.growth_fit(st, rel)  # a pure exponential: exactly, from the first nonzero point to the last below 1e-2
assert f and abs(f[0] / 0.002 - 1) < 1e-12 and abs(f[1] + 16) < 1e-9 and f[2] == 50 and 6900 <= f[3] < 7000, f
st2 = np.array([20.0 * i for i in range(300)])
rel = np.array([1e-21 * 10 ** (0.05 * x) if x < 200 else 1e-11 * 10 ** (0.001 * (x - 200)) for x in st2])
f = plot.growth_fit(st2, rel)  # a fast rise, then a slow one: the slow one
assert f and abs(f[0] / 0.001 - 1) < 0.02 and 160 <= f[2] <= 400, f
f = plot.growth_fit(st2, rel, 1e-11)  # ... exactly from the floor
assert f and abs(f[0] / 0.001 - 1) < 1e-12 and f[2] == 200, f
st3 = np.arange(300.0)
rel = np.array([1e-21 * 10 ** (0.05 * x) if x < 200 else 1e-11 * 10 ** (0.001 * (x - 200)) for x in st3])
assert plot.growth_window(st3, rel) == (None, "rate not steady")  # the slow part under 2 decades
assert plot.growth_window(st3, rel, 1e-11) == (None, "rises under 2 decades")
rel = np.array([0 if i < 10 else 1e-16 if i == 10 else 3e-12 * (1 + 0.1 * math.sin(i)) for i in range(300)])
assert plot.growth_window(st, rel) == (None, "rises under 2 decades")  # a jump, then flat
rel = np.array([1e-16 * 10 ** (0.0008 * st[i] + (1.5 if i % 2 else -1.5)) for i in range(300)])
assert plot.growth_window(st, rel) == (None, "points off its line")
assert plot.growth_window(st, np.zeros(300)) == (None, "no difference")  # bitwise equal
assert plot.growth_window(st, np.full(300, 0.5)) == (None, "saturated")
assert plot.growth_window(st, 1e-13 * 10 ** (0.0001 * st), 1e-10) == (None, "below the floor")
# the secondary axes continue the mapping outside the data (np.interp clamps: time 0 sat over step -450)
s, t = np.array([0.0, 10, 20]), np.array([0.0, 5, 10])
assert list(plot.interp_lin([-10, 5, 30], s, t)) == [-5, 2.5, 15] and list(plot.interp_lin([-5, 2.5, 15], t, s)) == [-10, 5, 30]
# ... and on a drawn figure: every top tick (model time) sits over its step, also past the data, where
# the view's margins are (9000 steps of dt 0.5; a restarted run's steps 4000.., epochs 4 per step)
import matplotlib.pyplot as plt
for steps, dt in ((np.arange(0.0, 9001.0), 0.5), (np.arange(4000.0, 4501.0), 2.0)):
    fig, ax = plt.subplots()
    ax.plot(steps, np.ones_like(steps))
    top = plot.time_axis(ax, steps, steps * dt)
    fig.canvas.draw()
    lo, hi = ax.get_xlim()
    for tick in top.get_xticks():
        x = tick / dt  # the step under this time
        if lo <= x <= hi:
            px_top = top.transData.transform((tick, 0))[0] if hasattr(top, "transData") else None
            px_bottom = ax.transData.transform((x, 0))[0]
            assert px_top is None or abs(px_top - px_bottom) < 0.5, (tick, x, px_top, px_bottom)
            assert abs(plot.interp_lin([x], steps, steps * dt)[0] - tick) < 1e-9 * max(1, abs(tick)), (tick, x)
    assert top.get_xticks()[0] <= lo * dt + 1e-9 or lo < steps[0], "no tick at or before the view's left edge"
    plt.close(fig)
epochs, estep = np.arange(0.0, 400.0), np.repeat(np.arange(0.0, 100.0), 4)
fig, ax = plt.subplots()
ax.plot(epochs, epochs)
top = plot.time_axis_epoch(ax, epochs, estep)
fig.canvas.draw()
for tick in top.get_xticks():  # steps above epochs: epoch 4 k lies under step k, beyond the data too
    e = plot.interp_lin([tick], estep, epochs)[0]
    assert abs(plot.interp_lin([e], epochs, estep)[0] - tick) < 1e-9 * max(1, abs(tick)), tick
plt.close(fig)
print("secondary axes: tick positions follow the mapping inside and outside the data")
PY
  for f in ref.nc single.nc cmp.nc; do
    plotpy "$f" -o png > list.txt 2> err.txt || { cat err.txt; fail "plot.py $f failed"; }
    [ -s list.txt ] || fail "plot.py $f listed no PNG"
    want=6; [ $f = cmp.nc ] && want=2; [ $f = single.nc ] && want=5 # runs: + fields over time, per-step coupling
    [ "$(wc -l < list.txt)" = $want ] || fail "plot.py $f listed $(wc -l < list.txt) PNGs, want $want"
    while read -r png; do
      size=$(stat -c %s "$png" 2> /dev/null || echo 0)
      echo "$f -> $png ($size bytes)"
      [ "$size" -gt 1024 ] || fail "$png missing or not over 1 kB"
    done < list.txt
  done
  # one replica: no divergence figure (nothing to compare), the other three
  grep -q _divergence.png <(plotpy single.nc -o png) && fail "plot.py single.nc drew a divergence figure"
  grep -q ref_fields_time.png <(plotpy ref.nc -o png) && grep -q ref_coupling.png <(plotpy ref.nc -o png) ||
    fail "plot.py ref.nc: no fields-over-time or coupling figure"
  # --diffmap: two runs' fields at their last common snapshot and the difference
  plotpy --diffmap ref.nc div.nc -o dm > list.txt 2> err.txt || { cat err.txt; fail "plot.py --diffmap failed"; }
  [ "$(cat list.txt)" = dm/diffmap.png ] && [ "$(stat -c %s dm/diffmap.png 2> /dev/null || echo 0)" -gt 10240 ] || fail "--diffmap: listed '$(cat list.txt)', want a dm/diffmap.png over 10 kB"
  plotpy --diffmap ref.nc > /dev/null 2> err.txt && fail "--diffmap with one file accepted"
  [ "$(wc -l < err.txt)" = 1 ] || fail "--diffmap with one file: not one line"
  # --overlay: replica 1 against replica 0 of several runs on one axes, legend from the attributes
  plotpy --overlay ref.nc same.nc div.nc -o ov > list.txt 2> err.txt ||
    { cat err.txt; fail "plot.py --overlay failed"; }
  [ "$(cat list.txt)" = "$(printf 'ov/overlay_digits.png\nov/overlay_rel_l2.png')" ] || fail "--overlay listed: $(cat list.txt)"
  for png in ov/overlay_digits.png ov/overlay_rel_l2.png; do
    [ "$(stat -c %s $png 2> /dev/null || echo 0)" -gt 10240 ] || fail "$png missing or not over 10 kB"
  done
  plotpy --overlay ref.nc same.nc div.nc --list > list.txt || fail "plot.py --overlay --list failed"
  want=$(printf 'deterministic build\nreproducible/deterministic build\natomic/deterministic build')
  [ "$(cat list.txt)" = "$want" ] || fail "--overlay legend: $(cat list.txt | paste -sd '|'), want solver/surrogate from the attributes"
  plotpy --overlay ref.nc div.nc --labels 'a b,c' --list > list.txt || fail "plot.py --overlay --labels failed"
  [ "$(cat list.txt)" = "$(printf 'a b\nc')" ] || fail "--labels not used: $(cat list.txt)"
  # --sweep: bars from sweep reports (report_table.py's ratios): solver 1.1x, surrogate 1.2x, loop 1.05x +- repeats
  mkdir -p sw
  rep() { # FILE SOLVER SURROGATE TIME_PER_STEP SOLVE TRAIN
    printf '%s\n' "machine: {hostname: testhost, ranks: 1, threads: 2}" "problem: {scenario: grayscott, grid: [8, 4], steps: 10, replicas: 2, coupling: guess}" \
      "build: {solver_reduction: $2, surrogate_reduction: $3}" \
      "timing: {total: 2.0, solve: $5, train: $6, predict: 0.5, time_per_step: $4}" "verdict: VALID" > "sw/$1"
  }
  rep atomic.r1.yaml atomic atomic 0.100 4.0 1.5; rep atomic.r2.yaml atomic atomic 0.110 4.4 1.6
  rep deterministic.r1.yaml deterministic deterministic 0.105 4.2 1.7; rep deterministic.r2.yaml deterministic deterministic 0.108 4.3 1.8
  rep deterministic-atomic.r1.yaml deterministic atomic 0.102 4.4 1.5
  rep atomic-deterministic.r1.yaml atomic deterministic 0.101 4.0 1.9
  plotpy --sweep sw -o swp > list.txt 2> err.txt || { cat err.txt; fail "plot.py --sweep failed"; }
  [ "$(cat list.txt)" = swp/cost_of_determinism.png ] || fail "--sweep listed: $(cat list.txt)"
  [ "$(stat -c %s swp/cost_of_determinism.png 2> /dev/null || echo 0)" -gt 10240 ] || fail "cost_of_determinism.png missing or small"
  plotpy --sweep sw/atomic.r1.yaml --list > list.txt || fail "plot.py --sweep FILE --list failed"
  cat list.txt
  grep -qx "solver half: deterministic (deterministic-atomic) 1.100x (1.000x..1.100x)" list.txt || fail "--sweep solver ratio"
  grep -qx "surrogate half: deterministic (atomic-deterministic) 1.200x (1.143x..1.200x)" list.txt || fail "--sweep surrogate ratio"
  grep -qx "whole loop: deterministic (deterministic) 1.050x (0.955x..1.080x) target <= 1.05x within noise (0.955x..1.080x)" list.txt ||
    fail "--sweep loop ratio, spread or verdict"
  grep -qx "whole loop: reproducible (None) n/a not run" list.txt || grep -qx "whole loop: reproducible (reproducible) n/a not run" list.txt ||
    fail "--sweep: a variant not run is not said"
  # an INVALID variant's bar has no verdict (it had one from its failed runs)
  rep reproducible.r1.yaml reproducible reproducible 0.102 4.2 1.7; sed -i 's/verdict: VALID/verdict: INVALID/' sw/reproducible.r1.yaml
  plotpy --sweep sw --list > list.txt || fail "plot.py --sweep with an INVALID variant failed"
  grep -qx "whole loop: reproducible (reproducible) 1.020x (0.927x..1.020x) target <= 1.25x n/a (INVALID or another build) INVALID" list.txt || { cat list.txt; fail "--sweep: an INVALID variant got a verdict"; }
  rm sw/reproducible.r1.yaml
  # bad input: one line 'plot.py: error: ...', exit 1
  bad() {
    local pattern=$1; shift
    plotpy "$@" > out.txt 2> err.txt
    local rc=$?
    echo "plot.py $* -> exit $rc: $(cat err.txt)"
    [ $rc = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "^plot.py: error: " err.txt && grep -qF -- "$pattern" err.txt ||
      fail "plot.py $*: want exit 1 and one 'plot.py: error: ...$pattern...' line"
  }
  bad "single.nc: 1 replica" --overlay ref.nc single.nc
  bad "-o /proc/none/png: cannot create the directory" ref.nc -o /proc/none/png
  bad "-o /proc/none/ov: cannot create the directory" --overlay ref.nc div.nc -o /proc/none/ov
  bad "missing.nc: no such file" --overlay ref.nc missing.nc
  mkdir -p adir && mkfifo afifo # a directory or a FIFO is a path that exists: not 'no such file', and no wait on the FIFO
  bad "adir: not a regular file" adir
  bad "afifo: not a regular file" --diffmap ref.nc afifo
  bad "not a miniapp run file" --overlay ref.nc cmp.nc
  bad "--labels has 1 labels for 2 files" --overlay ref.nc div.nc --labels a
  mkdir -p sw2 && cp sw/deterministic.r1.yaml sw2/
  bad "no report of the atomic build" --sweep sw2
  bad "sw/nothing.yaml: no such file" --sweep sw/nothing.yaml
  bad "no sweep reports" --sweep png
  bad "ref.nc (its folder .): no sweep reports" --sweep ref.nc # the file named as given, not "."
  bad "expected one file" ref.nc div.nc
  bad "unrecognized arguments" ref.nc --bogus
  plotpy ref.nc > /dev/null || fail "plot.py without -o failed"
  [ -s ref_fields.png ] || fail "default OUTDIR is not the file's directory"
  for bad in missing.nc corrupt.nc; do
    plotpy $bad > out.txt 2> err.txt
    rc=$?
    echo "plot.py $bad -> exit $rc: $(cat err.txt)"
    [ $rc = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "^plot.py: error: $bad" err.txt ||
      fail "plot.py $bad: want exit 1 and one 'plot.py: error: $bad' line"
  done
  # what is constant is said in the title, not drawn: bitwise-equal replicas (eq.nc), equal losses (cmp_eq.nc),
  # runs all bitwise equal (--overlay), equal fields (--diffmap of identical files), series 0 at every step
  plotpy eq.nc -o eq > /dev/null 2> err.txt || { cat err.txt; fail "plot.py eq.nc failed"; }
  plotpy cmp_eq.nc -o eq > list_cmp.txt 2> err.txt || { cat err.txt; fail "plot.py cmp_eq.nc failed"; }
  plotpy --overlay eq.nc eq.nc --labels a,b -o ov_eq > list_ov.txt 2> err.txt ||
    { cat err.txt; fail "plot.py --overlay eq.nc eq.nc failed"; }
  plotpy --diffmap ref.nc same.nc -o dm_eq > /dev/null 2> err.txt || { cat err.txt; fail "plot.py --diffmap failed"; }
  # every PNG drawn in this test went through the check, and none has an empty panel
  find . -name '*.png' | sed 's|^\./||' | sort > drawn.txt
  cut -f1 panels.log | sort -u > checked.txt
  [ -s checked.txt ] && [ -z "$(comm -23 drawn.txt checked.txt)" ] ||
    fail "PNGs not checked for empty panels: $(comm -23 drawn.txt checked.txt | paste -sd ' ')"
  if grep -q "	EMPTY" panels.log; then
    grep "	EMPTY" panels.log | cut -f1,2
    fail "$(grep -c "	EMPTY" panels.log) figures draw an empty panel (docs/output.md: only panels that hold something)"
  fi
  # ... and the titles say what was not drawn
  title_of eq/eq_fields_time.png | grep -q "replica 1 bitwise equal to replica 0 at every snapshot shown" ||
    fail "eq_fields_time.png: the title does not say the replicas are bitwise equal: $(title_of eq/eq_fields_time.png)"
  title_of eq/eq_coupling.png | grep -q "churn 0 at every step" ||
    fail "eq_coupling.png: the title does not say the churn is 0: $(title_of eq/eq_coupling.png)"
  [ "$(cat list_cmp.txt)" = eq/cmp_eq_steps.png ] || fail "cmp_eq.nc (equal losses): $(paste -sd ' ' list_cmp.txt)"
  title_of eq/cmp_eq_steps.png | grep -q "training: every loss equal to the reference's" ||
    fail "cmp_eq_steps.png: the title does not say the losses are equal: $(title_of eq/cmp_eq_steps.png)"
  [ "$(cat list_ov.txt)" = ov_eq/overlay_digits.png ] || fail "--overlay of equal runs: $(paste -sd ' ' list_ov.txt)"
  title_of ov_eq/overlay_digits.png | grep -q "no overlay_rel_l2.png" ||
    fail "overlay_digits.png: the title does not say why no rel_l2 figure: $(title_of ov_eq/overlay_digits.png)"
  title_of dm_eq/diffmap.png | grep -q "no difference panel" ||
    fail "diffmap.png of equal fields: the titles do not say it: $(title_of dm_eq/diffmap.png)"
  echo "empty panels: $(wc -l < checked.txt) PNGs checked ($(wc -l < panels.log) drawn), none draws an empty panel"
  ;;
run) # the layout of real run files: snapshots, restarts, hashes = the summary's
  py=$4 app=$5
  "$py" -c "import netCDF4" 2> /dev/null || fail "$py lacks the netCDF4 module: install python3-netcdf4 (scripts/setup.sh)"
  real_runs
  "$py" - <<'PY' || fail "run files do not have the documented layout (docs/output.md)"
import netCDF4, numpy as np

def summary(path):
    d = {}
    for line in open(path):
        k, _, v = line.partition(":")
        if v and not line.startswith(" "):
            d[k.strip()] = v.strip().strip('"')
    return d

def ds(path):
    d = netCDF4.Dataset(path)
    d.set_auto_mask(False)
    return d

gs, rs, heat, cmp = ds("gs.nc"), ds("rs.nc"), ds("heat.nc"), ds("cmp.nc")
sg, sr = summary("gs.yaml"), summary("rs.yaml")
for d in (gs, rs, heat, cmp):
    assert d.Conventions == "CF-1.8", d.Conventions
    assert "time" not in d.dimensions, "no dimension may be called time (CF would want a dated axis)"
    # the attribute rule (docs/output.md): a long_name on every variable, units "1" (CF's dimensionless unit) on
    # every numeric one, none on text (hashes, labels) and on CF flag variables (hash_equal, weights_equal)
    for v in d.variables.values():
        assert getattr(v, "long_name", ""), f"{d.filepath()}: {v.name} has no long_name"
        bare = v.dtype == str or v.dtype.kind == "S" or "flag_values" in v.ncattrs()
        units = getattr(v, "units", None)
        assert units == (None if bare else "1"), f"{d.filepath()}: {v.name} ({v.dtype}) has units {units!r}"

# snapshots on their own dimension, exactly the snapshot steps, none unwritten
def snapshots(d, want, comps):
    steps = d["snapshot_step"][:].tolist()
    assert steps == want, (d.filepath(), steps, want)
    assert len(d.dimensions["snapshot"]) == len(want)
    t = dict(zip(d["step"][:].tolist(), d["time"][:].tolist()))
    assert d["snapshot_time"][:].tolist() == [t[k] for k in want], "snapshot_time is not the time of its step"
    for c in comps:
        v = d[c]
        assert v.dimensions == ("snapshot", "replica", "y", "x"), v.dimensions
        assert v.coordinates == "snapshot_step snapshot_time", v.coordinates
        f = v[:]
        for k in range(len(want)):
            assert np.isfinite(f[k]).all(), "%s: snapshot %d of %s holds NaN (unwritten)" % (d.filepath(), k, c)
snapshots(gs, [0, 5, 10, 12], ["u", "v"])
snapshots(heat, [0, 3, 6, 7], ["u"])
assert [v for v in heat.variables if heat[v].dimensions[:1] == ("snapshot",) and len(heat[v].dimensions) == 4] == ["u"]

# per-step series on step, 0..nsteps; hashes are the summary's text, bit for bit
assert gs["step"][:].tolist() == list(range(13)) and gs["vc"].dimensions == ("step", "replica")
assert float(sg["final_time"]) == gs["time"][-1], (sg["final_time"], gs["time"][-1])
assert np.all(np.diff(gs["time"][:]) > 0)
assert gs["state_hash"][-1, 0] == sg["state_hash"], (gs["state_hash"][-1, 0], sg["state_hash"])
assert gs["weights_hash"][-1, 0] == sg["weights_hash"], (gs["weights_hash"][-1, 0], sg["weights_hash"])
assert len(gs.dimensions["epoch"]) == int(sg["train_epochs_total"]) and gs["epoch"][:].tolist() == list(range(len(gs.dimensions["epoch"])))
for v in ("state_hash", "weights_hash"):
    h = gs[v][:]
    assert all(len(x) == 18 and x.startswith("0x") and int(x, 16) >= 0 for x in h.ravel()), v

# the restarted run holds only what it ran: steps 7..12, snapshots 10 and 12,
# epochs numbered on from the checkpoint's; bitwise the uninterrupted run's
assert int(rs.restarted_from_step) == 6
assert rs["step"][:].tolist() == list(range(7, 13)), rs["step"][:]
snapshots(rs, [10, 12], ["u", "v"])
assert (rs["state_hash"][:] == gs["state_hash"][7:]).all(), "restart: state hashes differ from the uninterrupted run"
assert rs["state_hash"][-1, 0] == sr["state_hash"] == sg["state_hash"]
e0 = int(rs["epoch"][0])
assert e0 > 0 and rs["epoch"][:].tolist() == list(range(e0, e0 + len(rs.dimensions["epoch"]))) and rs["epoch"][-1] == gs["epoch"][-1]
assert (rs["weights_hash"][:] == gs["weights_hash"][e0:]).all()
assert (rs["loss"][:].view(np.uint64) == gs["loss"][e0:].view(np.uint64)).all()
assert (rs["u"][-1].view(np.uint64) == gs["u"][-1].view(np.uint64)).all()
assert (rs["time"][:].view(np.uint64) == gs["time"][7:].view(np.uint64)).all()

# compare.nc: a time coordinate, labels, flags as integers
assert cmp["step"][:].tolist() == list(range(13)) and (cmp["time"][:] == gs["time"][:]).all()
assert cmp["pair_name"][:].tolist() == ["gs.nc"], cmp["pair_name"][:]
assert cmp["hash_equal"].dtype == np.int8 and (cmp["hash_equal"][:] == 1).all()
assert "_FillValue" not in cmp["hash_equal"].ncattrs() and cmp["hash_equal"].flag_meanings == "not_compared differs equal"
print("gs.nc: snapshots", gs["snapshot_step"][:].tolist(), "state_hash", sg["state_hash"], "weights_hash", sg["weights_hash"])
print("rs.nc: steps %d..%d, snapshots %s, epochs %d..%d" % (rs["step"][0], rs["step"][-1], rs["snapshot_step"][:].tolist(), rs["epoch"][0], rs["epoch"][-1]))
print("heat.nc: snapshots", heat["snapshot_step"][:].tolist())
PY
  ;;
doc) # the xarray example of docs/output.md ("Opening it"), run as written on a
     # real run file: selecting a snapshot by its step gives that step's fields
  py=$4 app=$5 doc=$6
  "$py" -c "import xarray" 2> /dev/null || fail "$py lacks the xarray module: install python3-xarray (scripts/setup.sh)"
  "$app" -scenario grayscott -da_grid_x 16 -da_grid_y 12 -ts_max_steps 120 -replicas 2 -coupling guess -output_every 50 -output run.nc > run.log 2>&1 ||
    { tail -n 3 run.log; fail "the run for the example failed"; }
  "$py" - "$doc" > example.py <<'PY' || fail "no python block after '### Opening it' in $doc"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"### Opening it.*?```python\n(.*?)```", text, re.S)
if not m:
    sys.exit(1)
print(m.group(1))
PY
  cat >> example.py <<'PY'
# checks (not in the doc): the step selection is the snapshot of step 100
import netCDF4
raw = netCDF4.Dataset("run.nc")
steps = list(raw["snapshot_step"][:])
assert steps == [0, 50, 100, 120], steps
want = raw["u"][steps.index(100)]
got = ds.u.swap_dims(snapshot="snapshot_step").sel(snapshot_step=100)
assert (got.values == want).all(), "sel(snapshot_step=100) is not the snapshot of step 100"
print("docs/output.md example: ok; snapshot_step 100 is snapshot", steps.index(100))
PY
  MPLBACKEND=Agg "$py" example.py || fail "the xarray example of docs/output.md failed"
  # a run with an injected fault: its divergence figure marks the fault (step, replica, bit) from the file's attributes
  "$app" -scenario grayscott -da_grid_x 24 -da_grid_y 24 -ts_max_steps 12 -replicas 2 -inject site=state,step=6,bit=40,entry=100,replica=1 \
    -output_every 6 -output fault.nc > fault.log 2>&1; [ $? -le 2 ] || { tail -n 3 fault.log; fail "the faulted run failed"; }
  MPLBACKEND=Agg "$py" - "$(dirname "$doc")/../scripts" <<'PY' || fail "the fault is not marked in the divergence figure"
import sys, netCDF4
sys.path.insert(0, sys.argv[1])
import plot
ds = netCDF4.Dataset("fault.nc")
f = plot.fault_of(ds)
assert f and f[0] == 6 and "state of replica 1, bit 40, entry 100, at step 6" in f[1], f
written = []
plot.plot_run(ds, "fault", written)
assert "fault_divergence.png" in written, written
print("fault marked:", f[1])
PY
  # heat: the error map's field is u - u* with the solver's manufactured solution: its L2 norm is the run's mms_error_l2
  "$app" -scenario heat -da_grid_x 21 -da_grid_y 17 -ts_max_steps 6 -output_every 3 -output heat.nc -summary heat.yaml > heat.log 2>&1 || { tail -n 3 heat.log; fail "the heat run failed"; }
  MPLBACKEND=Agg "$py" - "$(dirname "$doc")/../scripts" <<'PY' || fail "plot.py's heat error does not match the run's MMS error"
import sys, netCDF4
sys.path.insert(0, sys.argv[1])
import plot
ds = netCDF4.Dataset("heat.nc")
mms = float([l.split(":")[1] for l in open("heat.yaml") if l.startswith("mms_error_l2:")][0])
e, l2, st = plot.heat_error(ds)
assert st == 6 and abs(l2 - mms) <= 1e-6 * mms, (l2, mms)
written = []
plot.plot_run(ds, "heat", written)
assert "heat_error.png" in written, written
print("heat error map: L2 %.6e = the run's mms_error_l2 %.6e" % (l2, mms))
PY
  ;;
cf) # CF compliance of real run files, a restarted one and comparison files:
    # 0 errors and 0 warnings from every checker found (docs/output.md)
  app=$5
  checkers=()
  if [ -n "${MINIAPP_CF_CHECKER:-}" ]; then
    for c in $MINIAPP_CF_CHECKER; do
      command -v "$c" > /dev/null || fail "MINIAPP_CF_CHECKER: $c is not an executable"
      checkers+=("$(command -v "$c")")
    done
  else
    for c in cfchecks compliance-checker; do command -v $c > /dev/null && checkers+=("$(command -v $c)"); done
  fi
  if [ ${#checkers[@]} = 0 ]; then
    echo "skipped: no CF checker installed (neither cfchecks nor compliance-checker on PATH, MINIAPP_CF_CHECKER unset);"
    echo "  pip install cfchecker compliance-checker (docs/output.md, section CF compliance)"
    exit 77
  fi
  real_runs
  files=(gs.nc rs.nc heat.nc cmp.nc ref.nc cmp_made.nc)
  ran=0
  for c in "${checkers[@]}"; do
    case $(basename "$c") in
    cfchecks*)
      tables=()
      if [ -n "${MINIAPP_CF_TABLES:-}" ]; then
        for t in cf-standard-name-table.xml area-type-table.xml standardized-region-list.xml; do
          [ -s "$MINIAPP_CF_TABLES/$t" ] || fail "MINIAPP_CF_TABLES=$MINIAPP_CF_TABLES lacks $t"
        done
        tables=(-s "$MINIAPP_CF_TABLES/cf-standard-name-table.xml" -a "$MINIAPP_CF_TABLES/area-type-table.xml"
                -r "$MINIAPP_CF_TABLES/standardized-region-list.xml")
      fi
      "$c" -v auto "${tables[@]}" "${files[@]}" > cfchecks.txt 2>&1
      if grep -q "urlopen error\|URLError" cfchecks.txt; then
        echo "cfchecks could not download the CF tables (offline?): set MINIAPP_CF_TABLES to a directory holding"
        echo "  cf-standard-name-table.xml, area-type-table.xml, standardized-region-list.xml; cfchecks not run"
        continue
      fi
      grep -E "^(ERROR|WARN): " cfchecks.txt
      n=$(grep -c "^CHECKING NetCDF FILE" cfchecks.txt)
      errs=$(awk '/^ERRORS detected:/ {s += $3} END {print s + 0}' cfchecks.txt)
      warns=$(awk '/^WARNINGS given:/ {s += $3} END {print s + 0}' cfchecks.txt)
      echo "cfchecks ($(grep -m1 'CF Checker Version' cfchecks.txt)): ${#files[@]} files, $errs errors, $warns warnings"
      [ "$n" = ${#files[@]} ] && [ "$(grep -c '^ERRORS detected:' cfchecks.txt)" = ${#files[@]} ] ||
        { cat cfchecks.txt; fail "cfchecks did not check every file"; }
      [ "$errs" = 0 ] && [ "$warns" = 0 ] || fail "cfchecks: $errs errors, $warns warnings"
      ran=$((ran + 1)) ;;
    compliance-checker*|cchecker*)
      # cf:1.8, the version ncout.c and compare.c declare (Conventions); normal
      # criteria fail on errors (high priority) and warnings (medium)
      "$c" --test=cf:1.8 --criteria normal "${files[@]}" > cc.txt 2>&1
      rc=$?
      passed=$(grep -c "All tests passed!" cc.txt)
      echo "compliance-checker ($("$c" --version 2>&1 | head -1)) cf:1.8: ${#files[@]} files, $passed passed, exit $rc"
      [ $rc = 0 ] && [ "$passed" = ${#files[@]} ] || { cat cc.txt; fail "compliance-checker: errors or warnings"; }
      ran=$((ran + 1)) ;;
    *) fail "MINIAPP_CF_CHECKER: $c is neither cfchecks nor compliance-checker" ;;
    esac
  done
  [ $ran -gt 0 ] || { echo "skipped: no CF checker could run"; exit 77; }
  ;;
*) fail "unknown test $name" ;;
esac
echo PASS
