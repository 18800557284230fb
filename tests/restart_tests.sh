#!/bin/bash
# tests/restart_tests.sh NAME APP SOLVER_STRATEGY SURROGATE_STRATEGY: checkpoint/restart.
#   bitwise  2N steps in one run == N steps + -restart + N steps: every hash,
#            iteration count, loss and replica record of the summary (guess,
#            closure and heat runs; atomic builds with -atomic_order_seed)
#   layout   reproducible build: the restart on 3 ranks x 1 thread continues a
#            run of 1 rank x 2 threads with the same bits (skips elsewhere)
#   signal   SIGTERM mid-run: the step finishes, the checkpoint is written,
#            exit 3, no summary; the restart ends where an uninterrupted run does
#   crash    SIGKILL after a -checkpoint_every checkpoint: the restart from it
#            ends where an uninterrupted run does
#   bad      bad checkpoints and options: one line, exit 1, nothing written
#            (the refusals every build makes alike)
#   bad_strategy  those that depend on the build's strategy: another
#            -atomic_order_seed, another rank count
#   output   a restart continues the run file: stopped by SIGTERM three times
#            and requeued with the same command, the NetCDF file and summary
#            equal the uninterrupted run's; another file is refused, untouched
name=$1 app=$2 solver=$3 surr=$4
restart_extra=()
. "$(dirname "$0")/lib.sh"

seed=()
[ "$solver" = atomic ] || [ "$surr" = atomic ] && seed=(-atomic_order_seed 5)
gs=(-scenario grayscott -da_grid_x 24 -da_grid_y 19 "${seed[@]}")
big=(-scenario grayscott "${seed[@]}")

# The summary keys a restart must reproduce: all but timings and the counts of
# this process's own work.
skip='seconds|reduction_calls|restarted_from|per_second|mpi_ranks|omp_threads'
same() { # same A.yaml B.yaml WHAT
  local d
  d=$(diff <(grep -Ev "$skip" "$1") \
           <(grep -Ev "$skip" "$2"))
  [ -z "$d" ] || { echo "$d"; fail "$3: the restarted run differs from the uninterrupted one"; }
  for k in state_hash weights_hash ksp_iterations_total train_epochs_total; do
    [ "$(key "$1" $k)" = "$(key "$2" $k)" ] || fail "$3: $k differs"
  done
  echo "ok: $3 (state_hash $(key "$2" state_hash), weights_hash $(key "$2" weights_hash), $(key "$2" ksp_iterations_total) iterations)"
}

# split N1 N2 [-np P] ARGS...: full N2-step run vs N1 steps + restart to N2
split() {
  local n1=$1 n2=$2; shift 2
  local np=(); if [ "$1" = -np ]; then np=(-np "$2"); shift 2; fi
  rm -f "$tmp/ck.bin"
  run "$tmp/full.yaml" "$@" -ts_max_steps "$n2"
  run "$tmp/half.yaml" "$@" -ts_max_steps "$n1" -checkpoint "$tmp/ck.bin"
  [ -s "$tmp/ck.bin" ] || fail "no checkpoint written"
  run "$tmp/rest.yaml" "${np[@]}" "$@" "${restart_extra[@]}" -ts_max_steps "$n2" -restart "$tmp/ck.bin"
  [ "$(key "$tmp/rest.yaml" restarted_from_step)" = "$n1" ] || fail "restarted_from_step is not $n1"
  same "$tmp/full.yaml" "$tmp/rest.yaml" "$* ($n1 + $((n2 - n1)) steps${np:+, restart on ${np[1]} ranks})"
}

case $name in
bitwise)
  split 6 13 "${gs[@]}" -coupling guess -replicas 2
  split 5 12 "${gs[@]}" -coupling guess -guess learned -coupling_baselines 0 -guess_history 2
  split 7 15 "${gs[@]}" -coupling closure -closure_warmup 4 -replicas 2
  split 4 9 -scenario heat -da_grid_x 15 -da_grid_y 12 "${seed[@]}" -coupling guess
  split 3 8 -scenario heat -da_grid_x 15 -da_grid_y 12 -coupling none
  split 0 4 "${gs[@]}" -coupling guess
  split 5 5 "${gs[@]}" -coupling guess
  # monitors and views that compute a norm draw nothing from the atomic order and leave no cached norm: a restart may
  # add them (each changed the seeded bits)
  restart_extra=(-ksp_monitor_true_residual -ksp_monitor_solution -ksp_view_final_residual)
  split 3 6 "${gs[@]}" -coupling guess
  restart_extra=()
  # continuing in place: -restart and -checkpoint name the same file
  run "$tmp/a.yaml" "${gs[@]}" -coupling guess -ts_max_steps 4 -checkpoint "$tmp/roll.bin"
  run "$tmp/b.yaml" "${gs[@]}" -coupling guess -ts_max_steps 8 -restart "$tmp/roll.bin" -checkpoint "$tmp/roll.bin"
  run "$tmp/c.yaml" "${gs[@]}" -coupling guess -ts_max_steps 11 -restart "$tmp/roll.bin"
  run "$tmp/d.yaml" "${gs[@]}" -coupling guess -ts_max_steps 11
  same "$tmp/d.yaml" "$tmp/c.yaml" "4 + 4 + 3 steps through one checkpoint file"
  # a restart's report: its rates divide this process's time by this process's steps and iterations (it divided
  # by the whole run's: 8.5x the bandwidth); a restart at the last step timed nothing (null, not 0) and says its
  # repeat check did not run
  rk() { sed -n "s/^  $2: *//p" "$1" | head -1 | tr -d '"'; }
  rm -f "$tmp/ck.bin" "$tmp/ck7.bin"
  run "$tmp/h.yaml" "${gs[@]}" -coupling guess -ts_max_steps 3 -checkpoint "$tmp/ck.bin"
  run "$tmp/r.yaml" "${gs[@]}" -coupling guess -ts_max_steps 7 -restart "$tmp/ck.bin" -report "$tmp/rr.yaml" -checkpoint "$tmp/ck7.bin"
  [ "$(rk "$tmp/rr.yaml" timed_steps)" = 4 ] || fail "a 3 + 4 step restart's report times $(rk "$tmp/rr.yaml" timed_steps) steps, not 4"
  [ "$(rk "$tmp/rr.yaml" timed_iterations)" = $(( $(key "$tmp/r.yaml" ksp_iterations_total) - $(key "$tmp/h.yaml" ksp_iterations_total) )) ] || fail "the restart's report times $(rk "$tmp/rr.yaml" timed_iterations) iterations, not those of its own 4 steps"
  awk '$1 == "seconds_per_iteration:" {t = $2} $1 == "timed_iterations:" {n = $2} $1 == "solve:" && !s {s = $2} END {d = t * n - s; exit !(t > 0 && d * d <= (6e-7 + 1e-6 * s) ^ 2)}' "$tmp/rr.yaml" || fail "seconds_per_iteration is not solve seconds / timed_iterations" # solve: printed to 1e-6 s
  run "$tmp/l.yaml" "${gs[@]}" -coupling guess -ts_max_steps 7 -restart "$tmp/ck7.bin" -report "$tmp/rl.yaml"
  [ "$(rk "$tmp/rl.yaml" timed_steps)" = 0 ] && [ "$(rk "$tmp/rl.yaml" achieved_gbs)" = .nan ] && [ "$(rk "$tmp/rl.yaml" value)" = .nan ] || { grep -E 'timed|gbs|value' "$tmp/rl.yaml"; fail "a restart at the last step reports rates of no work"; }
  grep -q '^  repeat_check: "not run: this run solved no step' "$tmp/rl.yaml" || fail "the report does not say the repeat check did not run"
  echo "ok: a restart's report times its own steps and iterations; at the last step, none (.nan)"
  ;;
layout)
  [ "$solver" = reproducible ] && [ "$surr" = reproducible ] || { echo "SKIP: layout-independent bits need the reproducible build"; exit 77; }
  command -v mpiexec > /dev/null || { echo "SKIP: no mpiexec"; exit 77; }
  export OMP_NUM_THREADS=2 # the first part: 1 rank x 2 threads; the restart: 3 (2) ranks x 1 thread
  restart_extra=(-threads 1)
  split 5 11 -np 3 "${gs[@]}" -coupling guess -replicas 2
  split 6 12 -np 2 "${gs[@]}" -coupling closure -closure_warmup 3
  # -da_processors_x places the ranks: a 2-rank checkpoint split 2 x 1 continues on 1 rank without it (it was a restart key)
  run "$tmp/px.yaml" -np 2 "${gs[@]}" -coupling guess -ts_max_steps 4 -da_processors_x 2 -checkpoint "$tmp/px.bin"
  run "$tmp/px2.yaml" "${gs[@]}" -coupling guess -ts_max_steps 8 -restart "$tmp/px.bin"
  run "$tmp/px3.yaml" "${gs[@]}" -coupling guess -ts_max_steps 8
  same "$tmp/px3.yaml" "$tmp/px2.yaml" "a -da_processors_x 2 checkpoint of 2 ranks continued on 1"
  ;;
signal)
  args=("${big[@]}" -da_grid_x 64 -da_grid_y 64 -coupling guess -ts_max_steps 2000)
  "$app" "${args[@]}" -checkpoint "$tmp/sig.bin" -summary "$tmp/sig.yaml" > "$tmp/sig.out" 2> "$tmp/sig.err" &
  pid=$!
  for i in $(seq 300); do grep -q 'FPNA mini-app' "$tmp/sig.out" 2> /dev/null && break; sleep 0.1; done
  sleep 2
  kill -TERM $pid; wait $pid; rc=$?
  cat "$tmp/sig.err"
  [ $rc = 3 ] || fail "SIGTERM: exit $rc, expected 3"
  [ "$(wc -l < "$tmp/sig.err")" = 1 ] && grep -q 'SIGTERM after step [0-9]*: checkpoint written to .*sig.bin' "$tmp/sig.err" || fail "SIGTERM: not the one documented line"
  [ ! -e "$tmp/sig.yaml" ] || fail "SIGTERM: a partial run wrote a summary"
  step=$(sed -n 's/.*after step \([0-9]*\).*/\1/p' "$tmp/sig.err")
  [ "$step" -gt 0 ] && [ "$step" -lt 2000 ] || fail "SIGTERM: stopped at step $step"
  n=$((step + 5))
  run "$tmp/rest.yaml" "${args[@]}" -ts_max_steps $n -restart "$tmp/sig.bin"
  run "$tmp/full.yaml" "${args[@]}" -ts_max_steps $n
  same "$tmp/full.yaml" "$tmp/rest.yaml" "SIGTERM after step $step, restart to step $n"
  # a SIGTERM during start-up (here: already pending when the program starts, blocked by its launcher) becomes a
  # checkpoint after the first step, exit 3 (it killed the run with none, or with this launcher was never seen)
  rc=0; /usr/bin/python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); os.kill(os.getpid(), signal.SIGTERM); os.execv(sys.argv[1], sys.argv[1:])' \
    "$app" "${args[@]}" -ts_max_steps 50 -checkpoint "$tmp/early.bin" > /dev/null 2> "$tmp/early.err" || rc=$?
  [ $rc = 3 ] && [ -s "$tmp/early.bin" ] && grep -q 'SIGTERM after step 1: checkpoint written' "$tmp/early.err" || { cat "$tmp/early.err"; fail "SIGTERM during start-up: exit $rc"; }
  echo "ok: a SIGTERM during start-up: checkpoint after step 1, exit 3"
  # the exit code is final: a burst of signals around the stop decision, and
  # signals while a completed run verifies, reports and finalizes, change nothing
  "$app" "${args[@]}" -checkpoint "$tmp/b.bin" > "$tmp/b.out" 2> "$tmp/b.err" &
  pid=$!
  for i in $(seq 300); do grep -q 'FPNA mini-app' "$tmp/b.out" 2> /dev/null && break; sleep 0.1; done
  sleep 1
  for i in $(seq 40); do kill -USR1 $pid 2> /dev/null; kill -TERM $pid 2> /dev/null; sleep 0.005; done
  wait $pid; rc=$?
  [ $rc = 3 ] || { cat "$tmp/b.err"; fail "a burst of 80 signals: exit $rc, expected 3"; }
  "$app" "${args[@]}" -ts_max_steps 30 -checkpoint "$tmp/e.bin" -repeat_check 64 -summary "$tmp/e.yaml" > /dev/null 2>&1 &
  pid=$!
  while [ ! -e "$tmp/e.yaml" ] && kill -0 $pid 2> /dev/null; do sleep 0.001; done
  while kill -0 $pid 2> /dev/null; do kill -TERM $pid 2> /dev/null; done
  wait $pid; rc=$?
  [ $rc = 0 ] || fail "SIGTERMs while a completed run finished: exit $rc, expected 0"
  echo "ok: a burst of signals exits 3; signals at the end of a completed run exit 0"
  # SIGXCPU (past a CPU-time limit, ulimit -S -t) is a SIGTERM: the step finishes, the output and the checkpoint are
  # written, one line, exit 3 (it dumped core: exit 152, no line, no checkpoint, the output's partial left)
  rc=0; (ulimit -S -t 1; exec "$app" "${args[@]}" -checkpoint "$tmp/x.bin" -output "$tmp/x.nc" > "$tmp/x.out" 2> "$tmp/x.err") || rc=$?
  [ $rc = 3 ] && [ "$(wc -l < "$tmp/x.err")" = 1 ] && grep -q 'SIGXCPU after step [0-9]*: checkpoint written to .*x.bin' "$tmp/x.err" || { cat "$tmp/x.err"; fail "SIGXCPU: exit $rc, not 3 with the one line"; }
  [ -s "$tmp/x.nc" ] && ! ls "$tmp"/x.nc.partial-* > /dev/null 2>&1 || fail "SIGXCPU: no output file, or its partial left"
  step=$(sed -n 's/.*after step \([0-9]*\).*/\1/p' "$tmp/x.err")
  run "$tmp/xr.yaml" "${args[@]}" -ts_max_steps $((step + 2)) -restart "$tmp/x.bin"
  run "$tmp/xf.yaml" "${args[@]}" -ts_max_steps $((step + 2))
  same "$tmp/xf.yaml" "$tmp/xr.yaml" "SIGXCPU after step $step, restart to step $((step + 2))"
  # the signals that stop a run without a checkpoint: one line, the exit code docs/running.md lists, the files being
  # written not left as partials, the files there kept (PETSc's own handler would print a trace, and the default
  # actions of SIGUSR2, SIGALRM and SIGXCPU leave partial files). Started with SIGQUIT at its default: a shell's
  # background job has it ignored, and the run keeps it so
  doc=$(dirname "$0")/../docs/running.md
  for s in QUIT USR2 ALRM XCPU; do
    want=$(grep -o "SIG$s [0-9][0-9]*" "$doc" | head -1 | cut -d' ' -f2)
    [ "$want" = $((128 + $(kill -l $s))) ] || fail "docs/running.md gives SIG$s exit '$want', not 128 + its number"
    echo keep > "$tmp/k.nc"; echo keep > "$tmp/k.yaml"
    /usr/bin/python3 -c 'import os, signal, sys; signal.signal(signal.SIGQUIT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
      "$app" "${args[@]}" -output "$tmp/k.nc" -summary "$tmp/k.yaml" > "$tmp/k.out" 2> "$tmp/k.err" &
    pid=$!
    for i in $(seq 300); do ls "$tmp"/k.nc.partial-$pid.* > /dev/null 2>&1 && break; sleep 0.05; done
    ls "$tmp"/k.nc.partial-$pid.* > /dev/null 2>&1 || fail "SIG$s: no partial output seen while the run wrote"
    kill -$s $pid; wait $pid; rc=$?
    [ $rc = "$want" ] && [ "$(wc -l < "$tmp/k.err")" = 1 ] && grep -q "^miniapp: stopped by SIG$s: .*exit $want\$" "$tmp/k.err" || { cat "$tmp/k.err"; fail "SIG$s: exit $rc, want $want and one line"; }
    left=$(cd "$tmp" && ls k.* | grep partial)
    [ -z "$left" ] && [ "$(cat "$tmp/k.nc" "$tmp/k.yaml")" = "$(printf 'keep\nkeep')" ] || fail "SIG$s: left $left, or changed the files there"
    echo "ok: SIG$s: exit $rc, $(cat "$tmp/k.err")"
  done
  "$app" "${args[@]}" > /dev/null 2> "$tmp/bg.err" & # a background job of this script: SIGQUIT ignored, as it came
  pid=$!
  sleep 1
  kill -QUIT $pid; sleep 0.3
  kill -0 $pid 2> /dev/null || { cat "$tmp/bg.err"; fail "SIGQUIT stopped a run started with it ignored"; }
  kill -TERM $pid; wait $pid
  echo "ok: SIGQUIT ignored where the run was started with it ignored"
  ;;
crash)
  args=("${big[@]}" -da_grid_x 48 -da_grid_y 48 -coupling guess)
  "$app" "${args[@]}" -ts_max_steps 100000 -checkpoint "$tmp/cr.bin" -checkpoint_every 3 > "$tmp/cr.out" 2>&1 &
  pid=$!
  for i in $(seq 600); do [ -e "$tmp/cr.bin" ] && break; sleep 0.1; done
  sleep 0.5
  kill -KILL $pid; wait $pid 2> /dev/null
  [ -e "$tmp/cr.bin" ] || fail "no checkpoint appeared with -checkpoint_every 3"
  step=$(head -c 4096 "$tmp/cr.bin" | tr -d '\000' | sed -n 's/^step: //p' | head -1)
  [ $((step % 3)) = 0 ] && [ "$step" -gt 0 ] || fail "checkpoint at step '$step', not a multiple of 3"
  n=$((step + 4))
  run "$tmp/rest.yaml" "${args[@]}" -ts_max_steps $n -restart "$tmp/cr.bin"
  run "$tmp/full.yaml" "${args[@]}" -ts_max_steps $n
  same "$tmp/full.yaml" "$tmp/rest.yaml" "SIGKILL, restart from the step-$step checkpoint"
  ;;
bad)
  g=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -coupling guess)
  run "$tmp/w.yaml" "${g[@]}" -ts_max_steps 3 -checkpoint "$tmp/good.bin"
  sz=$(stat -c %s "$tmp/good.bin")
  head -c $((sz / 2)) "$tmp/good.bin" > "$tmp/trunc.bin"
  head -c 12 "$tmp/good.bin" > "$tmp/short.bin"
  /usr/bin/python3 -c 'import random, sys; r = random.Random(5); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(5000)))' > "$tmp/random.bin" # fixed bytes
  : > "$tmp/empty.bin"
  cp "$tmp/good.bin" "$tmp/flip.bin"; printf '\377' | dd of="$tmp/flip.bin" bs=1 seek=$((sz - 100)) conv=notrunc 2> /dev/null
  check 'restart .*trunc.bin: corrupt or truncated' "${g[@]}" -ts_max_steps 6 -restart "$tmp/trunc.bin"
  check 'restart .*short.bin: truncated' "${g[@]}" -ts_max_steps 6 -restart "$tmp/short.bin"
  check 'restart .*random.bin: not a miniapp checkpoint' "${g[@]}" -ts_max_steps 6 -restart "$tmp/random.bin"
  check 'restart .*empty.bin: not a miniapp checkpoint' "${g[@]}" -ts_max_steps 6 -restart "$tmp/empty.bin"
  check 'restart .*flip.bin: corrupt' "${g[@]}" -ts_max_steps 6 -restart "$tmp/flip.bin"
  check 'restart .*no-such.bin: cannot open' "${g[@]}" -ts_max_steps 6 -restart "$tmp/no-such.bin"
  check 'restart .*no-such.bin: cannot open the checkpoint' "${g[@]}" -ts_max_steps 6 -restart "$tmp/no-such.bin" -checkpoint "$tmp/no-such.bin" # it said 'refusing to overwrite an input'
  check 'restart .*: not a regular file' "${g[@]}" -ts_max_steps 6 -restart "$tmp"
  check 'written with grid 16 x 12, this run has grid 16 x 13' "${g[@]}" -da_grid_y 13 -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with solver_reduction [a-z]*, this run has solver_reduction stock' "${g[@]}" -solver_stock_vec -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with surrogate_layers 32 32, this run has surrogate_layers 8' "${g[@]}" -surrogate_layers 8 -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with replicas 1, this run has replicas 2' "${g[@]}" -replicas 2 -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with coupling guess, this run has coupling none' "${g[@]}" -coupling none -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with scenario grayscott, this run has scenario heat' -scenario heat -da_grid_x 16 -da_grid_y 12 -coupling guess -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with gs_F 0.04[0-9]*, this run has gs_F 0.05' "${g[@]}" -gs_F 0.05 -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with guess_history 4, this run has guess_history 6' "${g[@]}" -guess_history 6 -ts_max_steps 6 -restart "$tmp/good.bin"
  # a default restated, or a value written another way, is the same run (they were refused: "written with no -ts_dt,
  # this run has -ts_dt 1"); the continuation is bitwise the uninterrupted run
  run "$tmp/rd.yaml" "${g[@]}" -ts_dt 1.0 -ksp_rtol 1e-10 -guess_history 4 -surrogate_lr 0.001 -surrogate_layers 32,32 -ts_max_steps 6 -restart "$tmp/good.bin"
  run "$tmp/u6.yaml" "${g[@]}" -ts_max_steps 6
  [ "$(key "$tmp/rd.yaml" state_hash)" = "$(key "$tmp/u6.yaml" state_hash)" ] || fail "a restart that restated defaults did not continue bitwise"
  check 'written with dt 1, this run has dt 0.5' "${g[@]}" -ts_dt 0.5 -ts_max_steps 6 -restart "$tmp/good.bin"
  check 'written with ksp_tolerances 1e-10 ' "${g[@]}" -ksp_rtol 1e-9 -ts_max_steps 6 -restart "$tmp/good.bin"
  # PETSc's own reductions (-solver_stock_vec) depend on the layout in every build: the reproducible build took a
  # restart of a 1-rank checkpoint on 2 ranks and ran VALID to a state neither layout produces
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  run "$tmp/st.yaml" "${g[@]}" -solver_stock_vec -ts_max_steps 3 -checkpoint "$tmp/stock.bin"
  rc=0; mpiexec --oversubscribe -n 2 "$app" "${g[@]}" -solver_stock_vec -ts_max_steps 6 -restart "$tmp/stock.bin" -summary "$tmp/st2.yaml" > "$tmp/st2.log" 2>&1 || rc=$?
  [ $rc = 1 ] && grep -q 'written with mpi_ranks 1, this run has mpi_ranks 2' "$tmp/st2.log" && [ ! -e "$tmp/st2.yaml" ] || { cat "$tmp/st2.log"; fail "a -solver_stock_vec restart on 2 ranks of a 1-rank checkpoint: exit $rc"; }
  echo "ok: a -solver_stock_vec restart on other ranks refused in the $solver/$surr build"
  # a record with a valid checksum but values no run writes: the solve record's
  # failure reason indexes PETSc's names (it crashed the run); counts out of range
  forge() { # forge OUT NSOLVES NFAIL KIND REASON: good.bin with that solve record, its checksum redone
    /usr/bin/python3 - "$tmp/good.bin" "$@" << 'PY'
import struct, sys
M = (1 << 64) - 1
def mix(z):
    z = (z + 0x9e3779b97f4a7c15) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
def checksum(b):
    s, n = 0x243f6a8885a308d3, len(b) // 8
    for i in range(n): s = mix(s ^ struct.unpack_from('<Q', b, 8 * i)[0])
    rem = b[8 * n:]
    return mix(s ^ int.from_bytes(rem.ljust(8, b'\0'), 'little') ^ (len(rem) << 56))
buf = open(sys.argv[1], 'rb').read()
body = bytearray(buf[:-8])
assert checksum(bytes(body)) == struct.unpack('<Q', buf[-8:])[0], "the checkpoint's checksum is not the one this test knows"
pos, hit = 24, 0
while pos < len(body):
    nl = struct.unpack_from('<I', body, pos)[0]; name = bytes(body[pos + 4:pos + 4 + nl]).decode()
    dl = struct.unpack_from('<Q', body, pos + 4 + nl)[0]; off = pos + 4 + nl + 8
    if name.endswith('solver/solves'):
        nsolves, nfail, kind, reason = (int(a) for a in sys.argv[3:7])
        struct.pack_into('<qqqqii', body, off, nsolves, nfail, nfail, 1, reason, kind); hit = 1
    pos = off + dl
assert hit, "no solver/solves record"
open(sys.argv[2], 'wb').write(bytes(body) + struct.pack('<Q', checksum(bytes(body))))
PY
  }
  forge "$tmp/reason.bin" 6 1 0 1000 && forge "$tmp/counts.bin" 6 -1 0 -3 && forge "$tmp/kind.bin" 6 1 7 -3 && forge "$tmp/fine.bin" 6 1 0 -3 || fail "forging a checkpoint failed"
  check 'restart .*reason.bin: the record rep0/solver/solves holds counts or a failure that no run writes' "${g[@]}" -ts_max_steps 6 -restart "$tmp/reason.bin"
  check 'restart .*counts.bin: the record .*solves holds counts' "${g[@]}" -ts_max_steps 6 -restart "$tmp/counts.bin"
  check 'restart .*kind.bin: the record .*solves holds counts' "${g[@]}" -ts_max_steps 6 -restart "$tmp/kind.bin"
  # the same file with a failure a run can write continues to its INVALID end
  "$app" "${g[@]}" -ts_max_steps 6 -restart "$tmp/fine.bin" > "$tmp/fine.log" 2>&1; rc=$?
  [ $rc = 2 ] && grep -q 'DIVERGED_ITS' "$tmp/fine.log" || { tail -5 "$tmp/fine.log"; fail "a restart holding a DIVERGED_ITS failure: exit $rc (want 2, INVALID)"; }
  check 'checkpoint is at step 3, beyond -ts_max_steps 2' "${g[@]}" -ts_max_steps 2 -restart "$tmp/good.bin"
  check 'checkpoint_every 2: needs -checkpoint' "${g[@]}" -checkpoint_every 2
  check 'checkpoint_every -1' "${g[@]}" -checkpoint_every -1 -checkpoint x.bin
  check 'checkpoint /nonexistent-dir/x.bin' "${g[@]}" -ts_max_steps 2 -checkpoint /nonexistent-dir/x.bin
  check 'checkpoint .*w.yaml' "${g[@]}" -ts_max_steps 2 -checkpoint "$tmp/w.yaml" -summary "$tmp/w.yaml"
  check 'restart .*good.bin' "${g[@]}" -ts_max_steps 4 -restart "$tmp/good.bin" -summary "$tmp/good.bin"
  [ "$(stat -c %s "$tmp/good.bin")" = "$sz" ] || fail "a refused run changed the checkpoint"
  ;;
bad_strategy) # the refusals that depend on this build's strategy: a seed, another rank count
  g=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -coupling guess)
  run "$tmp/w.yaml" "${g[@]}" -ts_max_steps 3 -checkpoint "$tmp/good.bin"
  if [ "$solver" = atomic ] || [ "$surr" = atomic ]; then
    check 'written with atomic_order_seed 0, this run has atomic_order_seed 9' "${g[@]}" -atomic_order_seed 9 -ts_max_steps 6 -restart "$tmp/good.bin"
  else # no atomic half: the seed changes no bit, so a restart with another is the same run (it was refused)
    run "$tmp/s9.yaml" "${g[@]}" -atomic_order_seed 9 -ts_max_steps 6 -restart "$tmp/good.bin"
    run "$tmp/s0.yaml" "${g[@]}" -ts_max_steps 6
    [ "$(key "$tmp/s9.yaml" state_hash)" = "$(key "$tmp/s0.yaml" state_hash)" ] || fail "-atomic_order_seed changed the bits of a build without an atomic half"
  fi
  # outside the reproducible build the rank count is part of the bits: a restart on other ranks ran VALID with a state
  # no run produces (the reproducible build's layout restarts: restart_layout)
  if [ "$solver" != reproducible ] || [ "$surr" != reproducible ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    rc=0; mpiexec --oversubscribe -n 2 "$app" "${g[@]}" -ts_max_steps 6 -restart "$tmp/good.bin" -summary "$tmp/r2.yaml" > "$tmp/r2.log" 2>&1 || rc=$?
    [ $rc = 1 ] && grep -q 'written with mpi_ranks 1, this run has mpi_ranks 2' "$tmp/r2.log" && [ ! -e "$tmp/r2.yaml" ] || { cat "$tmp/r2.log"; fail "a $solver/$surr restart on 2 ranks of a 1-rank checkpoint: exit $rc"; }
    echo "ok: a restart on other ranks refused in the $solver/$surr build"
  fi
  ;;
output)
  args=("${big[@]}" -da_grid_x 48 -da_grid_y 40 -coupling guess -replicas 2 -ts_max_steps 400 -output_every 7 -threads 1)
  run "$tmp/full.yaml" "${args[@]}" -output "$tmp/full.nc"
  rm -f "$tmp/q.bin" "$tmp/q.nc"
  for k in 1 2 3 4; do # the batch script's requeue: the same command, -restart once a checkpoint exists
    r=(); [ -e "$tmp/q.bin" ] && r=(-restart "$tmp/q.bin")
    "$app" "${args[@]}" "${r[@]}" -checkpoint "$tmp/q.bin" -output "$tmp/q.nc" -summary "$tmp/q.yaml" > "$tmp/q.out" 2> "$tmp/q.err" &
    pid=$!
    if [ $k -lt 4 ]; then
      for i in $(seq 600); do grep -q 'FPNA mini-app' "$tmp/q.out" 2> /dev/null && break; sleep 0.05; done
      sleep 0.$((3 + k))
      kill -TERM $pid
    fi
    wait $pid; rc=$?
    echo "run $k: exit $rc $(cat "$tmp/q.err")"
    if [ $k -lt 4 ]; then [ $rc = 3 ] || fail "run $k: exit $rc, expected 3 (stopped by SIGTERM)"
    else [ $rc = 0 ] || { cat "$tmp/q.err"; fail "the last continuation: exit $rc"; }; fi
  done
  same "$tmp/full.yaml" "$tmp/q.yaml" "stopped by SIGTERM three times and continued"
  cat > "$tmp/ncsame.py" <<'PY'
# ncsame.py A B: every variable of A in B, bitwise; B's segments increase from step 0
import sys
import netCDF4, numpy as np
a, b = netCDF4.Dataset(sys.argv[1]), netCDF4.Dataset(sys.argv[2])
bad = [v for v in a.variables if v not in b.variables or a[v].shape != b[v].shape or
       np.ma.getdata(a[v][:]).tobytes() != np.ma.getdata(b[v][:]).tobytes()]
f = [int(x) for x in b.segment_first_step]
print(f"{len(a.variables)} variables, {a.dimensions['step'].size} steps, {a.dimensions['epoch'].size} epochs; differ: {bad}; segments {f}")
sys.exit(1 if bad or (f[0] != 0 or f != sorted(set(f))) else 0)
PY
  /usr/bin/python3 - "$tmp/full.nc" "$tmp/q.nc" <<'PY' || fail "the continued NetCDF file differs from the uninterrupted run's"
import sys
import netCDF4, numpy as np
a, b = netCDF4.Dataset(sys.argv[1]), netCDF4.Dataset(sys.argv[2])
bad = [v for v in a.variables if v not in b.variables or a[v].shape != b[v].shape or
       np.ma.getdata(a[v][:]).tobytes() != np.ma.getdata(b[v][:]).tobytes()]
print(f"{len(a.variables)} variables, {a.dimensions['step'].size} steps, {a.dimensions['epoch'].size} epochs; differ: {bad}")
# the runs that wrote it: four segments from step 0 on, each on 1 rank x 1 thread, and a history line each
f = [int(x) for x in b.segment_first_step]
ok = len(f) == 4 and f[0] == 0 and f == sorted(set(f)) and list(b.segment_mpi_ranks) == [1] * 4 and list(b.segment_omp_threads) == [1] * 4
ok = ok and b.history.count("continued from step") == 3 and "created by miniapp" in b.history and not hasattr(a, "segment_first_step")
print(f"segments {f}, ranks {list(b.segment_mpi_ranks)}, threads {list(b.segment_omp_threads)}")
sys.exit(1 if bad or not ok else 0)
PY
  # a continuation on another thread count: the file says which steps ran on which layout
  small=("${big[@]}" -da_grid_x 16 -da_grid_y 12 -coupling guess -ts_max_steps 12)
  "$app" "${small[@]}" -threads 1 -ts_max_steps 6 -checkpoint "$tmp/t.bin" -output "$tmp/t.nc" > /dev/null 2>&1 || fail "the 1-thread run failed"
  run "$tmp/t.yaml" "${small[@]}" -threads 2 -restart "$tmp/t.bin" -output "$tmp/t.nc"
  /usr/bin/python3 - "$tmp/t.nc" <<'PY' || fail "the continued file does not record the thread counts of its two runs"
import sys, netCDF4
d = netCDF4.Dataset(sys.argv[1])
got = (list(d.segment_first_step), list(d.segment_mpi_ranks), list(d.segment_omp_threads), int(d.omp_threads))
print("segment_first_step, segment_mpi_ranks, segment_omp_threads, omp_threads:", got)
sys.exit(0 if got == ([0, 7], [1, 1], [1, 2], 2) else 1)
PY
  # miniapp-compare's threads column names both segments' counts (it showed the last one's alone)
  "$(dirname "$app")/miniapp-compare" "$tmp/t.nc" "$tmp/t.nc" > "$tmp/tcmp.txt" 2>&1 || fail "miniapp-compare of the continued file failed"
  awk 'NR == 2 {exit !($4 == "1,2")}' "$tmp/tcmp.txt" || { cat "$tmp/tcmp.txt"; fail "miniapp-compare: the threads column does not list the segments' 1,2"; }
  # a restart at the checkpoint's last step (to verify it again) runs no step: the file stays as it was (it gained an
  # empty segment starting past its last step, and the restart's options)
  "$app" "${small[@]}" -threads 2 -checkpoint "$tmp/e.bin" -output "$tmp/e.nc" > /dev/null 2>&1 || fail "the run to the end failed"
  before=$(md5sum < "$tmp/e.nc")
  "$app" "${small[@]}" -threads 2 -restart "$tmp/e.bin" -output "$tmp/e.nc" > "$tmp/e.log" 2>&1 || { cat "$tmp/e.log"; fail "the restart at the last step failed"; }
  grep -q -- "-output $tmp/e.nc: kept as it was" "$tmp/e.log" && [ "$(md5sum < "$tmp/e.nc")" = "$before" ] || fail "a restart with no step to run changed the run file, or did not say it kept it"
  # a file that is not this run's is refused, one line, and left as it was
  cp "$tmp/full.nc" "$tmp/other.nc"
  "$app" "${big[@]}" -da_grid_x 48 -da_grid_y 40 -coupling guess -replicas 2 -ts_max_steps 10 -gs_seed 9 -output_every 7 -threads 1 -checkpoint "$tmp/o.bin" > /dev/null 2>&1 || fail "the other run failed"
  before=$(md5sum < "$tmp/other.nc")
  check 'other.nc: holds another run' "${big[@]}" -da_grid_x 48 -da_grid_y 40 -coupling guess -replicas 2 -ts_max_steps 20 -gs_seed 9 -output_every 7 -threads 1 -restart "$tmp/o.bin" -output "$tmp/other.nc"
  [ "$(md5sum < "$tmp/other.nc")" = "$before" ] || fail "a refused continuation changed the file"
  check 'written with -output_every 7, this run has 5' "${args[@]}" -output_every 5 -restart "$tmp/q.bin" -ts_max_steps 401 -output "$tmp/q.nc"
  # the batch requeue after a SIGKILL: stopped by SIGTERM (at step 1: already pending at the start), restarted, killed
  # after a -checkpoint_every checkpoint, requeued with the same command: the run continues the file (the file on
  # disk held the steps to the SIGTERM's, the checkpoint later ones: "holds 400 steps and 8 epochs, fewer than the
  # checkpoint's 25 and 100", the step dimension read as the steps written), and it ends as the uninterrupted run
  rq=("${args[@]}" -checkpoint "$tmp/k.bin" -checkpoint_every 25 -output "$tmp/k.nc" -summary "$tmp/k.yaml")
  rm -f "$tmp/k.bin" "$tmp/k.nc"
  rc=0; /usr/bin/python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); os.kill(os.getpid(), signal.SIGTERM); os.execv(sys.argv[1], sys.argv[1:])' \
    "$app" "${rq[@]}" > /dev/null 2> "$tmp/k.err" || rc=$?
  [ $rc = 3 ] && [ -s "$tmp/k.nc" ] || { cat "$tmp/k.err"; fail "the requeue's first run: exit $rc, or no output file"; }
  ckstep() { head -c 4096 "$1" | tr -d '\000' | sed -n 's/^step: //p' | head -1; }
  "$app" "${rq[@]}" -restart "$tmp/k.bin" > /dev/null 2>&1 &
  pid=$!
  while [ "$(ckstep "$tmp/k.bin")" -lt 25 ] && kill -0 $pid 2> /dev/null; do sleep 0.02; done
  kill -KILL $pid; wait $pid 2> /dev/null
  ck=$(ckstep "$tmp/k.bin")
  /usr/bin/python3 -c 'import sys, netCDF4; d = netCDF4.Dataset(sys.argv[1]); sys.exit(0 if int(d["last_step"][...]) >= int(sys.argv[2]) else 1)' "$tmp/k.nc" "$ck" ||
    fail "killed after the step-$ck checkpoint: the file on disk is behind it"
  rc=0; "$app" "${rq[@]}" -restart "$tmp/k.bin" > /dev/null 2> "$tmp/k.err" || rc=$?
  [ $rc = 0 ] || { cat "$tmp/k.err"; fail "the requeue after SIGKILL (checkpoint at step $ck): exit $rc"; }
  same "$tmp/full.yaml" "$tmp/k.yaml" "SIGTERM, restart, SIGKILL after the step-$ck checkpoint, requeue"
  /usr/bin/python3 "$tmp/ncsame.py" "$tmp/full.nc" "$tmp/k.nc" || fail "the requeued run's NetCDF file differs from the uninterrupted run's"
  # this run's own file, gone on past the checkpoint (its run was killed between committing the file and writing the
  # checkpoint, or a longer run's): continued, those steps made again, when this run reaches them; else refused
  sm=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -coupling guess -replicas 2 -output_every 3 -threads 1)
  "$app" "${sm[@]}" -ts_max_steps 12 -output "$tmp/long.nc" > /dev/null 2>&1 || fail "the 12-step run failed"
  "$app" "${sm[@]}" -ts_max_steps 6 -checkpoint "$tmp/s6.bin" > /dev/null 2>&1 || fail "the 6-step run failed"
  before=$(md5sum < "$tmp/long.nc")
  check 'long.nc: holds steps up to 12, past this run.s last step 9: continuing it would drop steps 10..12' "${sm[@]}" -ts_max_steps 9 -restart "$tmp/s6.bin" -output "$tmp/long.nc"
  [ "$(md5sum < "$tmp/long.nc")" = "$before" ] || fail "a refused continuation changed the longer file"
  cp "$tmp/long.nc" "$tmp/ahead.nc"
  "$app" "${sm[@]}" -ts_max_steps 12 -restart "$tmp/s6.bin" -output "$tmp/ahead.nc" > "$tmp/ahead.out" 2>&1 || { cat "$tmp/ahead.out"; fail "the continuation of a file ahead of the checkpoint failed"; }
  grep -q "^# -output $tmp/ahead.nc: held steps up to 12, past the checkpoint's step 6: this run makes steps 7..12 again" "$tmp/ahead.out" || fail "no note that steps 7..12 are made again"
  /usr/bin/python3 "$tmp/ncsame.py" "$tmp/long.nc" "$tmp/ahead.nc" || fail "a file ahead of its checkpoint, continued: not the uninterrupted run's"
  # a file behind the checkpoint (its steps past the file's end are in neither): refused with what to do, untouched
  # (with -coupling none it said "holds another run (replica 0's state_hash at step 9 is , ...)")
  for cpl in guess none; do
    smc=(-scenario grayscott -da_grid_x 16 -da_grid_y 12 -coupling $cpl -replicas 2 -output_every 3 -threads 1)
    "$app" "${smc[@]}" -ts_max_steps 6 -output "$tmp/b6.nc" > /dev/null 2>&1 || fail "the 6-step run failed"
    "$app" "${smc[@]}" -ts_max_steps 9 -checkpoint "$tmp/s9.bin" > /dev/null 2>&1 || fail "the 9-step run failed"
    before=$(md5sum < "$tmp/b6.nc")
    check 'b6.nc: holds steps up to 6, behind the checkpoint.s step 9: steps 7..9 are in neither.*restart from a checkpoint of step 6 or before, or name another -output' \
      "${smc[@]}" -ts_max_steps 12 -restart "$tmp/s9.bin" -output "$tmp/b6.nc"
    [ "$(md5sum < "$tmp/b6.nc")" = "$before" ] || fail "a refused continuation changed the shorter file"
  done
  # a run stopped early says where its file ends (last_step); miniapp-compare reads it only that far
  rc=0; "$app" "${sm[@]}" -ts_max_steps 8 -inject site=state,step=4,bit=62,entry=2,replica=0 -output "$tmp/nanrun.nc" > /dev/null 2>&1 || rc=$?
  [ $rc = 2 ] || fail "the run with a non-finite state: exit $rc, want 2"
  /usr/bin/python3 -c 'import sys, netCDF4; d = netCDF4.Dataset(sys.argv[1]); sys.exit(0 if int(d["last_step"][...]) == 4 else 1)' "$tmp/nanrun.nc" || fail "the stopped run's file: last_step is not 4"
  "$app" "${sm[@]}" -ts_max_steps 8 -output "$tmp/clean8.nc" > /dev/null 2>&1 || fail "the 8-step run failed"
  # compared over the steps both hold, either way round: the divergence at step 4 found, no "never" claimed past
  # step 4 (it refused: "series do not line up"; before that it blamed the fill values of unrun steps on another -ts_dt)
  for pair in "clean8 nanrun" "nanrun clean8"; do
    set -- $pair
    rc=0; "$(dirname "$app")/miniapp-compare" "$tmp/$1.nc" "$tmp/$2.nc" > "$tmp/cmp.out" 2>&1 || rc=$?
    [ $rc = 0 ] && grep -Eq "^$tmp/$2.nc +[a-z]+/[a-z]+ +1 +1 +cpu/cpu +4 +- " "$tmp/cmp.out" &&
      grep -q "^# $tmp/nanrun.nc stopped at step 4 (its run was to reach step 8)" "$tmp/cmp.out" || { cat "$tmp/cmp.out"; fail "compare $1 $2 (a stopped run's file): exit $rc, or not the divergence at step 4 with the epochs unclaimed and the note"; }
  done
  # a run that is merely shorter (it finished) is still refused: its missing steps were never planned
  "$app" "${sm[@]}" -ts_max_steps 4 -output "$tmp/clean4.nc" > /dev/null 2>&1 || fail "the 4-step run failed"
  rc=0; "$(dirname "$app")/miniapp-compare" "$tmp/clean8.nc" "$tmp/clean4.nc" > /dev/null 2> "$tmp/cmp.err" || rc=$?
  [ $rc = 1 ] && grep -q 'series do not line up' "$tmp/cmp.err" || { cat "$tmp/cmp.err"; fail "compare with a finished shorter run: exit $rc"; }
  # a stopped run whose steps all match the other file's: still no "never" (its run did not reach its end)
  rc=0; "$app" "${sm[@]}" -ts_max_steps 8 -inject site=state,step=4,bit=62,entry=2,replica=1 -output "$tmp/r1s4.nc" > /dev/null 2>&1 || rc=$?
  [ $rc = 2 ] || fail "the run with a non-finite replica 1: exit $rc, want 2"
  rc=0; "$(dirname "$app")/miniapp-compare" "$tmp/r1s4.nc" "$tmp/clean4.nc" > "$tmp/cmp.out" 2>&1 || rc=$?
  [ $rc = 0 ] && grep -Eq "^$tmp/clean4.nc +[a-z]+/[a-z]+ +1 +1 +cpu/cpu +- +- " "$tmp/cmp.out" || { cat "$tmp/cmp.out"; fail "compare of a stopped run with the same steps: exit $rc, or a 'never' claimed"; }
  ;;
*) fail "unknown test $name" ;;
esac
echo "PASS $name"
