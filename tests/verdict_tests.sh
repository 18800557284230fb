#!/usr/bin/env bash
# tests/verdict_tests.sh: VALID means right (docs/reliability.md, "What VALID
# promises"). Each class of false VALID ends in INVALID (exit 2, the reason
# in verification_detail) or a one-line bad-input error (exit 1), in every
# build. One ctest entry per class:
#   verdict_tests.sh NAME MINIAPP SOLVER_STRATEGY SURROGATE_STRATEGY
#   solves     unsolved systems: loose tolerances refused, early stops INVALID
#   nonfinite  NaN/Inf in the state (any replica) INVALID
#   restart    a restarted run keeps the verdict of the run it continues
#   detector   the replica fault detector sees replica 0 and NaN, and not a
#              flip that changed nothing
#   keys       a restart refuses any changed arithmetic option, unspoofably
#   caps       verification bounds beyond their caps are bad input
#   related    closure restart at its last step; stock vectors and golden hashes
set -u
name=$1 app=$2 ssolver=$3 ssurr=$4
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/lib.sh"
cd "$tmp" || fail "cannot enter $tmp"
atomic=0
[ "$ssolver" = atomic ] || [ "$ssurr" = atomic ] && atomic=1
gs="-da_grid_x 16 -da_grid_y 12 -threads 1"

# invalid REGEX ARGS...: exit 2, verification INVALID, detail matching REGEX
invalid() {
  local re=$1; shift
  "$app" "$@" -summary s.yaml > out.txt 2> err.txt
  local rc=$?
  [ $rc = 2 ] || { cat err.txt out.txt; fail "exit $rc (want 2, INVALID) for: $*"; }
  [ "$(key s.yaml verification)" = INVALID ] || fail "summary not INVALID for: $*"
  grep -Eq -- "$re" s.yaml || { grep verification_detail s.yaml; fail "detail does not match '$re' for: $*"; }
  echo "INVALID: $* -> $(grep -Eo -- "$re" s.yaml | head -1)"
  rm -f s.yaml
}
# valid OUT ARGS...: exit 0 VALID (lib.sh's run), detail matching "solves verified"
valid() {
  run "$@"
  grep -q 'solves verified' "$1" || fail "VALID without the solve check in its detail: ${*:2}"
}

case $name in
solves) # every solve checked; tolerances the check cannot vouch for refused
  check 'ksp_rtol 0.9: at most 0.0001' -scenario heat -da_grid_x 37 -da_grid_y 29 -ts_max_steps 4 -ksp_rtol 0.9
  check 'ksp_rtol 0.5: at most 0.0001' $gs -ts_max_steps 3 -ksp_rtol 0.5
  # tolerances no solve can mean: bad input, not a run to the 1e-50 floor (rtol) or an INVALID end (max_it)
  check 'ksp_rtol -1[.]?: must be positive' $gs -ts_max_steps 3 -ksp_rtol -1
  check 'ksp_rtol 0[.]?: must be positive' $gs -ts_max_steps 3 -ksp_rtol 0
  check 'ksp_max_it 0: must be at least 1' $gs -ts_max_steps 3 -ksp_max_it 0
  check 'ksp_divtol 0[.]?: must be at least 1' $gs -ts_max_steps 3 -ksp_divtol 0 # every solve diverged: INVALID at step 1
  check 'ksp_monitor deck.opts: not a viewer' $gs -ts_max_steps 3 -ksp_monitor deck.opts # PETSc's "Unsupported viewer deck.opts" named no option
  check 'ksp_atol -1[.]?: must not be negative' $gs -ts_max_steps 3 -ksp_atol -1
  # preconditioners the matrix-free operator cannot serve: one line (PETSc's own words, or a crash: eisenstat, kaczmarz)
  for pc in lu bjacobi eisenstat kaczmarz; do check "pc_type $pc: needs an assembled matrix" $gs -ts_max_steps 3 -pc_type $pc; done
  invalid 'step 1: the solve did not solve its system \(CONVERGED_ATOL' $gs -ts_max_steps 3 -ksp_atol 1e3
  invalid 'step 1: the solve did not solve its system \(CONVERGED_ITS after 1 ' $gs -ts_max_steps 3 -ksp_max_it 1 -ksp_converged_maxits
  invalid 'step 1: the solve did not solve its system \(DIVERGED_ITS after 1 ' $gs -ts_max_steps 3 -ksp_max_it 1
  # the repeat check re-solves a valid run's last system, not a failed one's (up to 5 more failed solves: 67 s instead of 8 on a 65536 x 3 grid)
  "$app" $gs -ts_max_steps 3 -report rv.yaml > /dev/null 2>&1 && grep -q '^ *repeat_residual_mean:' rv.yaml || fail "a valid run's report has no repeat check"
  "$app" $gs -ts_max_steps 3 -ksp_max_it 1 -report ri.yaml > /dev/null 2>&1
  [ $? = 2 ] && ! grep -q 'repeat_residual' ri.yaml || fail "the repeat check re-solved the failed run's last system"
  # BiCGStab converges along a path the reduction order changes (atomic: 52 to 55 iterations here, seeded): every
  # repeat converged, so VALID, though their final residuals vary far beyond the 1e-6 the ordered builds must meet
  bc=(-scenario heat -da_grid_x 40 -da_grid_y 40 -ts_max_steps 5 -ksp_type bcgs)
  [ $atomic = 1 ] && bc+=(-atomic_order_seed 1)
  valid "$tmp/bcgs.yaml" "${bc[@]}" -report "$tmp/bcgsr.yaml"
  if [ $atomic = 1 ]; then
    awk '$1 == "repeat_residual_mean:" {m = $2} $1 == "repeat_residual_variance:" {v = $2} END {exit !(v / (m * m) > 1e-6)}' "$tmp/bcgsr.yaml" || fail "the seeded BiCGStab repeats did not vary: the case is not exercised"
  fi
  invalid 'the solve did not solve its system \((CONVERGED_ITS|DIVERGED_INDEFINITE)' $gs -ts_max_steps 3 -ksp_convergence_test skip -ksp_max_it 5
  invalid 'step 1: the solve did not solve its system' -scenario heat -da_grid_x 37 -da_grid_y 29 -ts_max_steps 4 -ksp_atol 1e3
  invalid 'step 1: (a side-by-side|the) solve did not solve its system' $gs -ts_max_steps 3 -coupling guess -ksp_max_it 2
  invalid 'replica 1, step 1: the solve did not solve' $gs -ts_max_steps 3 -replicas 2 -ksp_max_it 2
  # the run stops at the unsolved step: its summary says how far it got
  "$app" $gs -ts_max_steps 6 -ksp_max_it 1 -summary s.yaml > /dev/null 2> err.txt
  [ "$(key s.yaml steps)" = 1 ] || fail "the run went on after an unsolved step: steps $(key s.yaml steps)"
  grep -q 'the run stops here and is INVALID' err.txt || fail "no line on stderr for the unsolved step"
  rm -f s.yaml
  # -ksp_norm_type none: no convergence test, so CG iterates until its residual is rounding and p.Ap loses its sign
  # (DIVERGED_INDEFINITE_MAT at a true residual of 1e-16): a solved system, VALID (it was INVALID); a breakdown
  # short of the tolerance is not (the skip test above)
  broke=0
  for nt in "-ts_max_steps 8 -threads 1" "$gs -ts_max_steps 5" "-scenario heat -da_grid_x 37 -da_grid_y 29 -ts_max_steps 4"; do
    valid ok.yaml $nt -ksp_norm_type none -ksp_converged_reason -report nr.yaml
    grep -q 'DIVERGED_INDEFINITE' ok.yaml.log && broke=$((broke + 1))
    grep -q '^ *repeat_residual_mean:' nr.yaml || fail "-ksp_norm_type none: no repeat check in the report"
  done
  [ $broke -gt 0 ] || fail "no breakdown with -ksp_norm_type none: the case is not exercised"
  # no step: VALID (nothing went wrong), and the detail says that nothing was solved
  "$app" $gs -ts_max_steps 0 -summary z.yaml > /dev/null 2>&1 && grep -q '^verification_detail: .*no step run (-ts_max_steps 0)' z.yaml || { cat z.yaml; fail "-ts_max_steps 0: the detail does not say that no step ran"; }
  # what passes: the default, and the loosest tolerance allowed (the lab's)
  valid ok.yaml $gs -ts_max_steps 5
  valid ok.yaml $gs -ts_max_steps 5 -ksp_rtol 1e-4 -coupling guess
  valid ok.yaml -scenario heat -da_grid_x 37 -da_grid_y 29 -ts_max_steps 4
  valid ok.yaml $gs -ts_max_steps 3 -ksp_type gmres
  "$app" -help 2>&1 | grep -q 'ksp_rtol.*at most 1e-4' || fail "-help does not state the -ksp_rtol cap" ;;
nonfinite) # a NaN or Inf anywhere in a state is never VALID (VecMin/VecMax skip NaN)
  invalid 'step 1: the state holds a value that is not finite' -da_grid_x 12 -da_grid_y 10 -threads 1 -ts_max_steps 1 -inject site=state,step=1,bit=62,entry=2
  invalid "step 3: the state holds a value that is not finite" -da_grid_x 12 -da_grid_y 10 -threads 1 -ts_max_steps 5 -inject site=state,step=3,bit=62,entry=2
  # a finite but huge value (bit 62 of a number below 1): the next solve cannot solve its system
  invalid "step 4: the solve did not solve its system" -da_grid_x 12 -da_grid_y 10 -threads 1 -ts_max_steps 5 -inject site=state,step=3,bit=62,entry=7
  invalid 'replica 2, step 3: the state holds a value that is not finite' $gs -ts_max_steps 5 -replicas 3 -atomic_order_seed 1 -inject site=state,step=3,bit=62,entry=2
  invalid 'step 3: the solve did not solve its system \(DIVERGED_NANORINF' -scenario heat -da_grid_x 11 -da_grid_y 9 -threads 1 -ts_max_steps 3 -inject site=state,step=2,bit=62,entry=5
  invalid 'step 2: the state holds a value that is not finite' $gs -ts_max_steps 4 -coupling guess -inject site=state,step=2,bit=62,entry=2
  # a huge (finite) state entry: the network trained on it turns non-finite
  invalid "step 2, epoch 0: replica 0's network has a non-finite value in its (weights|loss)" $gs -ts_max_steps 4 -coupling guess -inject site=state,step=2,bit=62,entry=3
  # a non-finite weight: the network's own check
  invalid "replica 0's network has a non-finite value" $gs -ts_max_steps 6 -coupling guess -inject site=weight,epoch=2,bit=30,entry=5
  # Krylov iterate turned NaN: the solve's own check
  invalid 'step 2: the solve did not solve' $gs -ts_max_steps 3 -inject site=iterate,step=2,bit=62,entry=3,call=2
  # fields out of the scenario's bounds at a step, back inside by the last one: the bounds hold at every
  # step (the check read the last state only: -ts_dt 30 was VALID at 6 steps, INVALID at 3; a flipped
  # exponent bit at step 2 that the solves relaxed was VALID)
  invalid 'fields in \[-0.0278[0-9]*, [0-9.]*\] over steps 0..6 OUTSIDE' $gs -ts_max_steps 6 -ts_dt 30
  invalid 'over steps 0..4 OUTSIDE' $gs -ts_max_steps 4 -inject site=state,step=2,bit=52,entry=0 ;;
restart) # the fault and solve records travel in the checkpoint
  rep=2
  [ $atomic = 1 ] && rep=3
  invalid 'a fault was detected' $gs -ts_max_steps 5 -replicas $rep -atomic_order_seed 1 -inject site=state,step=3,bit=45 -checkpoint f.bin
  invalid 'a fault was detected .* in the run this one continues' $gs -ts_max_steps 8 -replicas $rep -atomic_order_seed 1 -inject site=state,step=3,bit=45 -restart f.bin
  invalid 'in the run this one continues' $gs -ts_max_steps 8 -replicas $rep -atomic_order_seed 1 -inject site=state,step=3,bit=45 -restart f.bin -checkpoint f.bin
  # the SIGTERM flow: a checkpoint written after the detection, then the requeued command
  invalid 'a fault was detected' $gs -ts_max_steps 6 -replicas $rep -atomic_order_seed 1 -inject site=state,step=2,bit=45 -checkpoint g.bin -checkpoint_every 3
  invalid 'in the run this one continues' $gs -ts_max_steps 6 -replicas $rep -atomic_order_seed 1 -inject site=state,step=2,bit=45 -restart g.bin
  # an unsolved step: the restart has nothing to continue
  invalid 'step 1: the solve did not solve' $gs -ts_max_steps 4 -ksp_max_it 2 -checkpoint u.bin
  invalid 'step 1: the solve did not solve' $gs -ts_max_steps 8 -ksp_max_it 2 -restart u.bin
  grep -q 'nothing to continue' err.txt || fail "the restart of an unsolved run does not say it has nothing to continue"
  # ...but a failed run never replaces a checkpoint that exists (a state a
  # restart can continue: the one it rolls forward from, its last
  # -checkpoint_every): it used to, with its dead state
  run keep.yaml $gs -ts_max_steps 2 -checkpoint keep.bin
  before=$(md5sum < keep.bin)
  invalid 'step 1: the solve did not solve' $gs -ts_max_steps 4 -ksp_max_it 2 -checkpoint keep.bin
  grep -q -- '-checkpoint keep.bin: kept as it was' err.txt || { cat err.txt; fail "a failed run does not say it kept the checkpoint"; }
  [ "$(md5sum < keep.bin)" = "$before" ] || fail "a failed run replaced an existing checkpoint"
  # a state that left the scenario's bounds: the restart is INVALID too (the bounds were not in the checkpoint)
  invalid 'over steps 0..3 OUTSIDE' $gs -ts_max_steps 3 -ts_dt 30 -checkpoint b.bin
  invalid 'over steps 0..6 OUTSIDE' $gs -ts_max_steps 6 -ts_dt 30 -restart b.bin
  # a fault-free run restarted stays VALID
  run ok1.yaml $gs -ts_max_steps 4 -replicas $rep -atomic_order_seed 1 -checkpoint ok.bin
  run ok2.yaml $gs -ts_max_steps 8 -replicas $rep -atomic_order_seed 1 -restart ok.bin ;;
detector) # replicas as a fault detector: any index, NaN; not a flip that changed nothing
  if [ $atomic = 1 ]; then
    # replica 0, the reported result, faulty: out of the spread of the two others
    invalid 'a fault was detected' $gs -ts_max_steps 5 -replicas 3 -atomic_order_seed 1 -inject site=state,step=3,bit=45,replica=0
    grep -q 'detected_above_noise_replica: 0' out.txt || fail "the faulty replica 0 was not named"
    bad=$("$app" $gs -ts_max_steps 5 -replicas 3 -atomic_order_seed 1 -inject site=state,step=3,bit=45,replica=0 -fault_action abort 2>&1 >/dev/null)
    echo "$bad" | grep -q 'fault_action abort: fault detected in step 3' || fail "abort did not stop at the fault in replica 0: $bad"
    invalid 'a fault was detected' $gs -ts_max_steps 5 -replicas 4 -atomic_order_seed 1 -inject site=state,step=2,bit=40,replica=2
    grep -q 'detected_above_noise_replica: 2' out.txt || fail "the faulty replica 2 was not named"
    # a window: the replicas' own divergence later on is not blamed on a fault
    "$app" -da_grid_x 48 -da_grid_y 48 -threads 1 -ts_max_steps 60 -replicas 3 -atomic_order_seed 1 -inject site=state,step=2,bit=0 -fault_noise_window 3 -summary s.yaml > out.txt 2>&1
    grep -q 'detection_latency_steps: null' s.yaml && grep -q 'detected: false' s.yaml || { cat s.yaml; fail "a last-bit flip was flagged beyond its window"; }
  else
    invalid 'a fault was detected' $gs -ts_max_steps 5 -replicas 3 -inject site=state,step=3,bit=45,replica=0
    invalid 'a fault was detected' $gs -ts_max_steps 5 -replicas 2 -inject site=state,step=3,bit=0,replica=1
  fi ;;
keys) # a restart refuses every change of arithmetic, and cannot be fooled
  run k.yaml $gs -ts_max_steps 4 -coupling guess -checkpoint $tmp/k.bin
  for o in "-gs_h 2" "-ts_dt 0.5" "-gs_F 0.05" "-surrogate_lr 1e-2" "-surrogate_layers 16" "-ksp_rtol 1e-8" "-pc_type none" "-ksp_type gmres" "-train_every 2" \
           "-train_epochs 3" "-guess learned" "-ksp_cg_single_reduction" "-gs_seed 3" "-surrogate_seed 2"; do
    # shellcheck disable=SC2086
    check 'restart .*k.bin: the checkpoint was written with .*this run has' $gs -ts_max_steps 8 -coupling guess -restart $tmp/k.bin $o
  done
  # the atomic order's seed: a key where a half adds in completion order; elsewhere it changes no bit (restart_bad)
  [ $atomic = 0 ] || check 'restart .*k.bin: the checkpoint was written with .*this run has' $gs -ts_max_steps 8 -coupling guess -restart $tmp/k.bin -atomic_order_seed 5
  # a newline or an option-like text inside a string value forges no key
  check 'restart .*k.bin: the checkpoint was written with dt 1, this run has dt 0.5' $gs -ts_max_steps 8 -coupling guess -restart $tmp/k.bin -deck_name "$(printf 'x\ndt: 1\ny')" -ts_dt 0.5
  check 'restart .*k.bin: the checkpoint was written with .*this run has' $gs -ts_max_steps 8 -coupling guess -restart $tmp/k.bin -deck_name "-gs_h 2"
  # what may change: output, verification and placement
  run k2.yaml $gs -ts_max_steps 8 -coupling guess -restart $tmp/k.bin -threads 2 -output k.nc -output_every 3 -progress -deck_name other -repeat_check 3 ;;
caps) # every verification bound has a cap; beyond it: bad input
  check 'closure_drift_tol 1e\+300: must be in \(0, 0.5\]' -coupling closure -closure_drift_tol 1e300
  check 'closure_pattern_factor 1e\+300: must be in \[1, 2\]' -coupling closure -closure_pattern_factor 1e300
  check 'fault_noise_factor 1e\+09: must be in \[1, 1e6\]' -fault_noise_factor 1e9
  check 'fault_noise_window 0: must be in \[1, 1000\]' -fault_noise_window 0
  check 'mms_tol' -scenario heat -mms_tol -1
  check 'surrogate_eps 1e\+39 must be in \[1e-30, 1e-2\]' -coupling guess -surrogate_eps 1e39
  check 'surrogate_lr 1e-50 must be in \[1e-12, 1\]' -coupling guess -surrogate_lr 1e-50
  check 'ksp_rtol 0.5: at most' -ksp_rtol 0.5
  check 'surrogate_beta1 0.99999999999 rounds to 1 in float' -coupling guess -surrogate_beta1 0.99999999999
  check 'surrogate_weight_decay 1e\+39 must be in \[0, 1\]' -coupling guess -surrogate_weight_decay 1e39
  help=$("$app" -help 2>&1)
  for o in 'closure_drift_tol.*at most 0.5' 'closure_pattern_factor.*1 .. 2' 'fault_noise_factor.*1 .. 1e6' 'surrogate_lr.*1e-12 .. 1' 'surrogate_eps.*1e-30 .. 1e-2'; do
    echo "$help" | grep -Eq -- "$o" || fail "-help does not state the cap: $o"
  done ;;
related) # closure restart at the checkpoint's own last step; stock vectors and golden hashes
  cl="-coupling closure -da_grid_x 24 -da_grid_y 24 -threads 1 -closure_warmup 5 -train_epochs 2"
  "$app" $cl -ts_max_steps 12 -checkpoint c.bin -summary c1.yaml > /dev/null 2>&1
  rc1=$?
  "$app" $cl -ts_max_steps 12 -restart c.bin -repeat_check 0 -summary c2.yaml > /dev/null 2>&1
  rc2=$?
  [ $rc1 = $rc2 ] || fail "closure restart at the last step: exit $rc2, the run it continues $rc1"
  [ "$(key c1.yaml verification)" = "$(key c2.yaml verification)" ] || fail "closure restart at the last step changed the verdict"
  [ "$(key c1.yaml closure_drift)" = "$(key c2.yaml closure_drift)" ] || fail "closure drift $(key c2.yaml closure_drift) after the restart, $(key c1.yaml closure_drift) before"
  # a deck with golden hashes, stock vectors: not applicable, verified by the scenario's checks
  deck="$src/inputs/grayscott-small.opts"
  run st.yaml -options_file "$deck" -solver_stock_vec -ts_max_steps 6 -repeat_check 0
  if [ "$ssolver-$ssurr" = reproducible-reproducible ]; then
    grep -q 'golden hashes not applicable (-solver_stock_vec' st.yaml || fail "stock vectors: the golden hashes are not said to be not applicable"
  else # another build: a golden hash given is not checked, and the summary says so (it said nothing)
    grep -q "golden hashes not applicable ($ssolver/$ssurr build), verified by the scenario's own checks" st.yaml || fail "a $ssolver/$ssurr build: the deck's golden hashes are not said to be not applicable"
  fi ;;
*) fail "unknown test $name" ;;
esac
echo "PASS: verdict_$name"
