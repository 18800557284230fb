#!/bin/bash
# tests/fault_tests.sh NAME APP SOLVER_STRATEGY SURROGATE_STRATEGY: fault
# injection and detection (docs/faults.md).
#   replicas  deterministic/reproducible: a flip of the lowest mantissa bit is
#             caught by replica comparison at the step (epoch) it happens and
#             attributed to it; atomic: a high-bit flip stands out of the
#             seeded FPNA spread of fault-free replicas (-replicas 3)
#   checksum  every build: a mid-mantissa flip in an operator product and in
#             the surrogate's gradient raises the ABFT alarm in that step
#   noalarm   every build: fault-free runs with the checks on raise no alarm
#             and give the same bits as without checks
#   rollback  every build (seeded order in atomic ones): a detected fault
#             rolled back ends with the fault-free run's hashes, VALID
#   silent    a fault no detector sees is named in the verdict; one the
#             scenario's check rejects at the end is recorded as detected
#   bad       malformed or out-of-range specs: one line, exit 1, no files
#   study     scripts/faultstudy.py (docs/faults.md's tables): detect runs,
#             compare flags a noisy detector above the exact one
name=$1 app=$2 solver=$3 surr=$4
. "$(dirname "$0")/lib.sh"
# fkey FILE KEY: a key of the summary's fault block
fkey() { sed -n "/^fault:/,/^[a-z]/s/^  $2: *//p" "$1" | head -1 | tr -d '"'; }

seed=()
ordered=1
{ [ "$solver" = atomic ] || [ "$surr" = atomic ]; } && { seed=(-atomic_order_seed 3); ordered=0; }
gs=(-scenario grayscott -da_grid_x 24 -da_grid_y 21 -ts_max_steps 30 "${seed[@]}")
guess=("${gs[@]}" -coupling guess -coupling_baselines 0 -train_epochs 2)

# inject OUT ARGS...: a run that may end INVALID (exit 2) but must not fail
inject() {
  local out=$1; shift
  "$app" "$@" -summary "$out" > "$out.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || [ $rc = 2 ] || { cat "$out.log"; fail "exit $rc for: $app $*"; }
  [ "$(fkey "$out" fired)" = true ] || { cat "$out"; fail "the fault did not fire: $*"; }
}

case $name in
replicas)
  if [ $ordered = 1 ]; then
    for site in state operator iterate; do
      inject "$tmp/r.yaml" "${gs[@]}" -replicas 2 -inject site=$site,step=9,bit=0,entry=100
      [ "$(fkey "$tmp/r.yaml" detected_by_replicas_step)" = 9 ] || { cat "$tmp/r.yaml"; fail "$site bit 0 at step 9: not caught by the replicas at step 9"; }
      [ "$(fkey "$tmp/r.yaml" replicas_attribute_it)" = true ] || fail "$site: not attributed to the fault"
      [ "$(key "$tmp/r.yaml" verification)" = INVALID ] || fail "$site: a detected, uncorrected fault must make the run INVALID"
      echo "ok: $site bit 0 at step 9 caught by the replicas at step 9 ($(fkey "$tmp/r.yaml" old_value) -> $(fkey "$tmp/r.yaml" new_value))"
    done
    # a weight's lowest bit is the weights' bits: caught at once; a gradient's
    # or an activation's low bits can be masked (Adam's 0.1 g is below half an
    # ulp of its moment; one sample of hundreds in a sum rounded to float):
    # no bit of the run changes, so there is nothing to catch (docs/faults.md)
    for sb in weight:0 gradient:16 activation:16; do
      site=${sb%:*} bit=${sb#*:}
      inject "$tmp/r.yaml" "${guess[@]}" -replicas 2 -inject site=$site,epoch=6,bit=$bit,entry=7
      [ "$(fkey "$tmp/r.yaml" detected_by_replicas_epoch)" = 6 ] || { cat "$tmp/r.yaml"; fail "$site bit $bit at epoch 6: not caught by the replicas at epoch 6"; }
      echo "ok: $site bit $bit at epoch 6 caught by the replicas at epoch 6"
    done
    inject "$tmp/r.yaml" "${guess[@]}" -replicas 2 -inject site=gradient,epoch=6,bit=0,entry=7
    if [ "$(fkey "$tmp/r.yaml" detected)" = false ]; then
      [ "$(key "$tmp/r.yaml" verification)" = VALID ] || fail "a masked flip (no bit of the run changed) must not make the run INVALID"
      echo "ok: gradient bit 0 masked (no bit of the run changed): VALID, not detected"
    fi
  else
    inject "$tmp/r.yaml" "${gs[@]}" -replicas 3 -inject site=state,step=9,bit=51,entry=100
    [ "$(fkey "$tmp/r.yaml" detected_above_noise_step)" = 9 ] || { cat "$tmp/r.yaml"; fail "atomic: bit 51 at step 9 not above the fault-free spread at step 9"; }
    echo "ok: atomic: bit 51 at step 9 stands out of the FPNA spread at step 9"
    # a fault the detector sees in the weights (not the state) has a latency too (it was null)
    inject "$tmp/lat.yaml" -options_file "$(dirname "$0")/../inputs/default.opts" -da_grid_x 16 -da_grid_y 12 -ts_max_steps 45 -replicas 3 -atomic_order_seed 1 -threads 1 -inject site=gradient,epoch=110,bit=29
    if [ "$(fkey "$tmp/lat.yaml" detected_above_noise_epoch)" != null ]; then
      [ "$(fkey "$tmp/lat.yaml" detection_latency_steps)" != null ] || { cat "$tmp/lat.yaml"; fail "detected above the noise in the weights, but no detection latency"; }
    fi
    # a restart may change the detector's window (a restart-free option): it kept the checkpoint's
    rm -f "$tmp/nw.bin"
    inject "$tmp/n1.yaml" "${gs[@]}" -ts_max_steps 12 -replicas 3 -inject site=state,step=9,bit=51,entry=100 -checkpoint "$tmp/nw.bin"
    "$app" "${gs[@]}" -ts_max_steps 14 -replicas 3 -inject site=state,step=9,bit=51,entry=100 -restart "$tmp/nw.bin" -fault_noise_window 50 -summary "$tmp/n2.yaml" > /dev/null 2>&1
    [ "$(fkey "$tmp/n2.yaml" noise_window_steps)" = 50 ] || { cat "$tmp/n2.yaml"; fail "-fault_noise_window 50 on a restart: the window is $(fkey "$tmp/n2.yaml" noise_window_steps)"; }
  fi ;;
checksum)
  inject "$tmp/c.yaml" "${gs[@]}" -fault_checks -inject site=operator,step=9,call=3,bit=44,entry=100
  [ "$(fkey "$tmp/c.yaml" detected_by_checksum_step)" = 9 ] || { cat "$tmp/c.yaml"; fail "operator bit 44 at step 9: no checksum alarm at step 9"; }
  [ "$(fkey "$tmp/c.yaml" false_alarms)" = 0 ] || fail "operator: false alarms"
  echo "ok: operator bit 44 at step 9: checksum alarm at step 9 ($(fkey "$tmp/c.yaml" first_alarm))"
  inject "$tmp/c.yaml" "${guess[@]}" -fault_checks -inject site=gradient,epoch=6,bit=29,entry=7
  [ -n "$(fkey "$tmp/c.yaml" detected_by_checksum_step)" ] && [ "$(fkey "$tmp/c.yaml" detected_by_checksum_step)" != null ] || { cat "$tmp/c.yaml"; fail "gradient bit 29: no checksum alarm"; }
  echo "ok: gradient bit 29 at epoch 6: checksum alarm ($(fkey "$tmp/c.yaml" first_alarm))" ;;
noalarm)
  for args in "${gs[*]} -ts_max_steps 200" "${guess[*]} -ts_max_steps 120"; do
    # shellcheck disable=SC2086
    run "$tmp/a.yaml" $args -replicas 2
    # shellcheck disable=SC2086
    run "$tmp/b.yaml" $args -replicas 2 -fault_checks
    [ "$(fkey "$tmp/b.yaml" alarms)" = 0 ] || { cat "$tmp/b.yaml"; fail "false alarm in a fault-free run: $args"; }
    for k in state_hash weights_hash ksp_iterations_total; do
      [ "$(key "$tmp/a.yaml" $k)" = "$(key "$tmp/b.yaml" $k)" ] || fail "the checks changed $k: $args"
    done
    echo "ok: no alarm in $(fkey "$tmp/b.yaml" operator_checks) operator checks (worst ratio $(fkey "$tmp/b.yaml" worst_check_ratio)), same bits as without checks: $args"
  done ;;
rollback)
  run "$tmp/ref.yaml" "${guess[@]}" -replicas 2 -fault_checks
  for spec in site=operator,step=9,call=3,bit=44,entry=100 site=state,step=12,bit=0,entry=5 site=gradient,epoch=6,bit=29,entry=7; do
    rm -f "$tmp/ck.bin"
    [ $ordered = 1 ] || [ "${spec#site=state}" = "$spec" ] || continue # atomic: a low state bit hides in the noise (no rollback to compare)
    run "$tmp/rb.yaml" "${guess[@]}" -replicas 2 -fault_checks -inject $spec -fault_action rollback -checkpoint "$tmp/ck.bin"
    [ "$(fkey "$tmp/rb.yaml" rollbacks)" = 1 ] || { cat "$tmp/rb.yaml"; fail "$spec: expected one rollback"; }
    for k in state_hash weights_hash; do
      [ "$(key "$tmp/ref.yaml" $k)" = "$(key "$tmp/rb.yaml" $k)" ] || fail "$spec: $k after the rollback differs from the fault-free run"
    done
    echo "ok: $spec rolled back once, final hashes equal the fault-free run's ($(key "$tmp/rb.yaml" state_hash))"
  done
  # ordered builds: a gradient flip changes Adam's moments epochs before the weights; the replicas compare the
  # moments too, so it is seen in its epoch and rolled back (it was seen 4 epochs later, when every checkpoint held
  # it: 10 rollbacks, exit 1)
  if [ $ordered = 1 ]; then
    ad=(-scenario grayscott -da_grid_x 32 -da_grid_y 32 -ts_max_steps 12 -replicas 2 -coupling guess -surrogate_lr 1e-2)
    run "$tmp/aref.yaml" "${ad[@]}"
    rm -f "$tmp/ck.bin"
    run "$tmp/arb.yaml" "${ad[@]}" -inject site=gradient,epoch=6,bit=6 -fault_action rollback -checkpoint "$tmp/ck.bin"
    [ "$(fkey "$tmp/arb.yaml" detected_by_replicas_epoch)" = 6 ] && [ "$(fkey "$tmp/arb.yaml" rollbacks)" = 1 ] || { cat "$tmp/arb.yaml"; fail "a flip that changed only Adam's moments: not seen in its epoch, or not rolled back once"; }
    for k in state_hash weights_hash; do [ "$(key "$tmp/aref.yaml" $k)" = "$(key "$tmp/arb.yaml" $k)" ] || fail "moments flip: $k after the rollback differs from the fault-free run"; done
    echo "ok: a flip of Adam's moments seen in its epoch (6), rolled back once, the fault-free hashes"
  fi
  # a restart with -fault_action rollback of a run that detected a fault and did not roll it back: nothing was
  # rolled back, the state holds the fault: INVALID (it was VALID)
  rs=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -fault_checks -inject site=operator,step=2,call=3,bit=28,entry=50 "${seed[@]}")
  rm -f "$tmp/ck1.bin" "$tmp/ck2.bin"
  "$app" "${rs[@]}" -ts_max_steps 4 -checkpoint "$tmp/ck1.bin" -summary "$tmp/f1.yaml" > /dev/null 2>&1
  [ $? = 2 ] && [ "$(fkey "$tmp/f1.yaml" detected)" = true ] || { cat "$tmp/f1.yaml"; fail "the operator flip was not detected: the case is not exercised"; }
  "$app" "${rs[@]}" -ts_max_steps 6 -restart "$tmp/ck1.bin" -fault_action rollback -checkpoint "$tmp/ck2.bin" -summary "$tmp/f2.yaml" > /dev/null 2>&1
  rc=$?
  [ $rc = 2 ] && [ "$(key "$tmp/f2.yaml" verification)" = INVALID ] || { cat "$tmp/f2.yaml"; fail "a restart with -fault_action rollback of a faulty, unrolled-back run: exit $rc, not INVALID"; }
  echo "ok: a restart with rollback of a run that kept its fault is INVALID"
  # any replica count: the re-done step is judged afresh (3 and 4 replicas; the
  # atomic build detects a fault above the noise of the fault-free ones)
  for nr in 3 4; do
    rm -f "$tmp/ck.bin"
    run "$tmp/ref$nr.yaml" "${gs[@]}" -replicas $nr
    run "$tmp/rb$nr.yaml" "${gs[@]}" -replicas $nr -inject site=state,step=9,bit=51,entry=100 -fault_action rollback -checkpoint "$tmp/ck.bin"
    [ "$(fkey "$tmp/rb$nr.yaml" rollbacks)" = 1 ] || { cat "$tmp/rb$nr.yaml"; fail "$nr replicas: expected one rollback"; }
    [ "$(key "$tmp/ref$nr.yaml" state_hash)" = "$(key "$tmp/rb$nr.yaml" state_hash)" ] || fail "$nr replicas: state_hash after the rollback differs from the fault-free run"
    echo "ok: $nr replicas, one rollback, the fault-free state_hash"
  done
  # a fault the replicas show only a step later (atomic: by their spread): the last checkpoint already holds it, so
  # rolling back to it removes nothing: INVALID, never VALID with the faulty state; an older checkpoint recovers
  if [ $ordered = 0 ]; then
    lag=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -ts_max_steps 8 -coupling guess -replicas 3 -atomic_order_seed 1 -threads 1)
    run "$tmp/lref.yaml" "${lag[@]}"
    rm -f "$tmp/ck.bin"
    "$app" "${lag[@]}" -inject site=weight,epoch=5,bit=20,replica=0 -fault_action rollback -checkpoint "$tmp/ck.bin" -summary "$tmp/lrb.yaml" > /dev/null 2>&1
    rc=$?
    [ $rc = 2 ] && [ "$(key "$tmp/lrb.yaml" verification)" = INVALID ] || { cat "$tmp/lrb.yaml"; fail "a rollback to a checkpoint the fault had reached: exit $rc, not INVALID"; }
    grep -q "the rollback restored step 3, which the fault (step 3, seen in the replicas' spread after step 4) had reached" "$tmp/lrb.yaml" || fail "no detail for the stale rollback"
    rm -f "$tmp/ck.bin"
    run "$tmp/lrb2.yaml" "${lag[@]}" -inject site=weight,epoch=5,bit=20,replica=0 -fault_action rollback -checkpoint "$tmp/ck.bin" -checkpoint_every 2
    [ "$(key "$tmp/lref.yaml" state_hash)" = "$(key "$tmp/lrb2.yaml" state_hash)" ] || fail "the rollback to the older checkpoint did not give the fault-free state"
    echo "ok: a rollback to a state the fault had reached is INVALID; to an older one, the fault-free state_hash"
  fi ;;
silent) # a fault no detector sees: named in the verdict's detail; one the scenario's check rejects at the end is
  # recorded as detected by it (it said 'detected: false'), in whichever replica it is (the atomic build's 2 replicas
  # have no detector: a replica 1 out of the bounds was VALID)
  out=-1 in=-1
  for s in $(seq 1 40); do # the first seeds whose lowest exponent bit's flip leaves the state out of [-0.01, 1.5], and within
    inject "$tmp/s.yaml" "${gs[@]}" -inject site=state,step=30,bit=52,seed=$s
    v=$(fkey "$tmp/s.yaml" new_value)
    if awk -v v="$v" 'BEGIN { exit !(v > 1.5 || v < -0.01) }'; then [ $out = -1 ] && out=$s; else [ $in = -1 ] && in=$s; fi
    [ $out != -1 ] && [ $in != -1 ] && break
  done
  [ $out != -1 ] && [ $in != -1 ] || fail "no seed of 40 gave a flip out of the bounds and one within"
  inject "$tmp/o.yaml" "${gs[@]}" -inject site=state,step=30,bit=52,seed=$out
  [ "$(key "$tmp/o.yaml" verification)" = INVALID ] || fail "a state out of the scenario's bounds: not INVALID"
  [ "$(fkey "$tmp/o.yaml" detected)" = true ] && [ "$(fkey "$tmp/o.yaml" detected_by_scenario_check_step)" = 30 ] && [ "$(fkey "$tmp/o.yaml" detected_by_scenario_check_replica)" = 0 ] ||
    { cat "$tmp/o.yaml"; fail "a fault the scenario's check rejected is not recorded as detected by it"; }
  inject "$tmp/i.yaml" "${gs[@]}" -inject site=state,step=30,bit=52,seed=$in
  [ "$(key "$tmp/i.yaml" verification)" = VALID ] && [ "$(fkey "$tmp/i.yaml" detected)" = false ] || { cat "$tmp/i.yaml"; fail "a fault within the bounds, no detector: want VALID, not detected"; }
  grep -q "^verification_detail: .*the fault injected in replica 0 (state, step 30) fired and no detector saw it" "$tmp/i.yaml" || { cat "$tmp/i.yaml"; fail "the verdict does not say that a fired fault went unseen"; }
  inject "$tmp/r.yaml" "${gs[@]}" -replicas 2 -inject site=state,step=30,bit=52,seed=$out
  [ "$(key "$tmp/r.yaml" verification)" = INVALID ] && [ "$(fkey "$tmp/r.yaml" detected)" = true ] && [ "$(fkey "$tmp/r.yaml" detected_by_scenario_check_replica)" = 1 ] ||
    { cat "$tmp/r.yaml"; fail "replica 1 out of the scenario's bounds: want INVALID, detected (by the scenario's check in replica 1)"; }
  rm -f "$tmp/ck.bin" # ordered builds: the replicas see it and it is rolled back; atomic: seen only after the last step, nothing rolled back: INVALID
  inject "$tmp/b.yaml" "${gs[@]}" -replicas 2 -inject site=state,step=30,bit=52,seed=$out -fault_action rollback -checkpoint "$tmp/ck.bin"
  if [ $ordered = 1 ]; then
    [ "$(key "$tmp/b.yaml" verification)" = VALID ] && [ "$(fkey "$tmp/b.yaml" rollbacks)" = 1 ] || { cat "$tmp/b.yaml"; fail "-fault_action rollback: the replicas' fault was not rolled back"; }
  else
    [ "$(key "$tmp/b.yaml" verification)" = INVALID ] || { cat "$tmp/b.yaml"; fail "-fault_action rollback: a fault seen only after the last step was not rolled back, yet VALID"; }
  fi
  # no fault fired: a failed check is the verdict's, not a detection (-fault_checks alone said detected: true)
  "$app" -scenario heat -da_grid_x 16 -da_grid_y 12 -ts_max_steps 4 "${seed[@]}" -fault_checks -mms_tol 1e-12 -summary "$tmp/m.yaml" > /dev/null 2>&1
  [ "$(key "$tmp/m.yaml" verification)" = INVALID ] && [ "$(fkey "$tmp/m.yaml" detected)" = false ] || { sed -n '/^fault:/,$p' "$tmp/m.yaml"; fail "an MMS tolerance missed, no fault: recorded as a detected fault"; }
  echo "ok: seed $out (out of the bounds) detected by the scenario's check in replica 0 and 1, INVALID; seed $in unseen, VALID and named" ;;
bad)
  check 'unknown key' "${gs[@]}" -inject site=state,step=3,bitt=2
  check 'site=nope: unknown' "${gs[@]}" -inject site=nope,step=3
  check 'needs step=N' "${gs[@]}" -inject site=operator
  check 'needs epoch=N' "${gs[@]}" -inject site=weight,step=3
  check 'bit=40: site weight holds 32-bit' "${guess[@]}" -inject site=weight,epoch=1,bit=40
  check 'step=31, but the run has 30 steps' "${gs[@]}" -inject site=state,step=31
  check 'entry=1008, but the solver' "${gs[@]}" -inject site=state,step=2,entry=1008
  check 'replica=2, but the run has 2' "${gs[@]}" -replicas 2 -inject site=state,step=2,replica=2
  check 'needs a surrogate' "${gs[@]}" -inject site=gradient,epoch=1
  check 'not a whole decimal number' "${gs[@]}" -inject site=state,step=2x
  check 'step= given twice' "${gs[@]}" -inject site=state,step=2,step=3
  check 'empty entry in .site=state,,step=2,bit=1.' "${gs[@]}" -inject site=state,,step=2,bit=1 # it ran
  check 'epoch=99, but the run trains at most' "${gs[@]}" -ts_max_steps 4 -coupling guess -inject site=gradient,epoch=99,bit=3 # it never fired, VALID
  check 'step=0x5 is not a whole decimal number' "${gs[@]}" -inject site=state,step=0x5
  check 'entry=99999999999999999999 is out of range' "${gs[@]}" -inject site=state,step=2,entry=99999999999999999999
  inject "$tmp/oct.yaml" "${gs[@]}" -inject site=state,step=010,bit=3 # decimal: step 10, not octal 8
  [ "$(fkey "$tmp/oct.yaml" step)" = 10 ] || fail "step=010 read as step $(fkey "$tmp/oct.yaml" step)"
  check 'rollback: needs -checkpoint' "${gs[@]}" -fault_action rollback
  check 'fault_action' "${gs[@]}" -fault_action retry
  check 'noise_factor' "${gs[@]}" -fault_noise_factor 0.5
  check 'fault_noise_factor: sets the noise detector, which judges' "${gs[@]}" -fault_noise_factor 5 # 1 replica (or no atomic half): it did nothing
  check 'fault_noise_window: sets the noise detector, which judges' "${gs[@]}" -replicas 2 -fault_noise_window 3
  # the surrogate's checks alone ran and no alarm reached the verdict (a gradient flip: VALID)
  check '-surrogate_checks: use -fault_checks' "${guess[@]}" -surrogate_checks -inject site=gradient,epoch=3,bit=25 ;;
study) # scripts/faultstudy.py, which writes docs/faults.md's tables: a quick
  # detect on this build, and compare's verdict on the noisy detector
  fs="$(dirname "$0")/../scripts/faultstudy.py" build=$(dirname "$(dirname "$app")")
  /usr/bin/python3 "$fs" detect "$build" --trials 1 --sites state,weight --bits 0,30,62 --out "$tmp/d.csv" > "$tmp/d.md" 2> "$tmp/d.err" || { cat "$tmp/d.err"; fail "faultstudy detect failed"; }
  grep -q '^| state | 0-25 | 1 |' "$tmp/d.md" && grep -q '^| weight | ' "$tmp/d.md" || { cat "$tmp/d.md"; fail "faultstudy detect: no table"; }
  [ "$(grep -c . "$tmp/d.csv")" = 6 ] || fail "faultstudy detect: want 5 rows (weights hold 32 bits: no bit 62) and a header in the CSV"
  # --jobs runs side by side and gives the same rows, byte for byte
  /usr/bin/python3 "$fs" detect "$build" --trials 1 --sites state,weight --bits 0,30,62 --jobs 3 --out "$tmp/d3.csv" > "$tmp/d3.md" 2> "$tmp/d.err" || { cat "$tmp/d.err"; fail "faultstudy detect --jobs 3 failed"; }
  cmp -s "$tmp/d.csv" "$tmp/d3.csv" && cmp -s "$tmp/d.md" "$tmp/d3.md" || { diff "$tmp/d.csv" "$tmp/d3.csv"; fail "faultstudy detect --jobs 3 gave other rows than one at a time"; }
  # a run that fails ends the study with its one line, without the queued runs
  # (nothing starts once a failure is seen: at most the --jobs - 1 runs already going)
  # (a stand-in build whose miniapp counts its calls and exits 1)
  mkdir -p "$tmp/fake/miniapp" && printf 'MINIAPP_SOLVER_REDUCTION:STRING=reproducible\n' > "$tmp/fake/CMakeCache.txt"
  printf '#!/bin/sh\necho x >> "%s/calls"\necho "broken on purpose" >&2\nexit 1\n' "$tmp" > "$tmp/fake/miniapp/miniapp" && chmod +x "$tmp/fake/miniapp/miniapp"
  /usr/bin/python3 "$fs" detect "$tmp/fake" --trials 1 --sites state --jobs 2 > /dev/null 2> "$tmp/f.err" && fail "faultstudy detect: a failing run, yet exit 0"
  grep -q 'exit 1: broken on purpose' "$tmp/f.err" || { cat "$tmp/f.err"; fail "faultstudy detect: the failing run's line is missing"; }
  [ "$(grep -c . "$tmp/calls")" -le 2 ] || fail "faultstudy detect: $(grep -c . "$tmp/calls") of 64 runs made, 2 jobs (want at most 2: nothing starts after the first failure)"
  # compare: an atomic row above the exact one beyond both intervals is flagged, exit 1
  /usr/bin/python3 - "$tmp" <<'PY' || fail "could not write the synthetic CSVs"
import csv, sys
cols = ["build", "site", "bit", "trial", "crashed", "fired", "old", "new", "checksum_step", "replicas_step", "replicas_epoch",
        "noise_step", "noise_epoch", "solvecheck_step", "false_alarms", "at"]
def rows(build, caught):
    for t in range(30):
        r = dict.fromkeys(cols, "")
        r.update(build=build, site="state", bit=3, trial=t, crashed=0, fired=1, at=10)
        if caught(t):
            r["replicas_step" if build != "atomic" else "noise_step"] = 10
        yield r
for name, build, caught in (("e.csv", "reproducible", lambda t: t < 3), ("a.csv", "atomic", lambda t: t < 27), ("a2.csv", "atomic", lambda t: t < 4)):
    with open(f"{sys.argv[1]}/{name}", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows(build, caught))
PY
  /usr/bin/python3 "$fs" compare "$tmp/e.csv" "$tmp/a.csv" > "$tmp/c.md" && fail "compare: 90% against 10% of 30 runs not flagged"
  grep -q '| YES |' "$tmp/c.md" || fail "compare: no YES row"
  /usr/bin/python3 "$fs" compare "$tmp/e.csv" "$tmp/a2.csv" > "$tmp/c.md" || fail "compare: 13% against 10% of 30 runs flagged (within the intervals)"
  bad=$(/usr/bin/python3 "$fs" detect "$build" --trials 0 2>&1); [ $? = 1 ] && echo "$bad" | grep -q 'trials 0: must be' || fail "--trials 0: $bad"
  mkdir -p "$tmp/nb/miniapp" && cp "$app" "$tmp/nb/miniapp/"
  bad=$(/usr/bin/python3 "$fs" detect "$tmp/nb" 2>&1); [ $? = 1 ] && [ "$(echo "$bad" | wc -l)" = 1 ] && echo "$bad" | grep -q 'no CMakeCache.txt' || fail "no CMakeCache.txt: $bad"
  bad=$(/usr/bin/python3 "$fs" detect "$build" --out /proc/none/x.csv 2>&1); [ $? = 1 ] && echo "$bad" | grep -q 'cannot write a file there' || fail "--out unwritable: $bad"
  echo "ok: faultstudy detect and compare" ;;
*) fail "unknown test $name" ;;
esac
echo PASS
