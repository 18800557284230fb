#!/usr/bin/env bash
# tests/reliability_tests.sh: bad inputs and faults end in one clear line and
# the documented exit code (1 bad input or failed run, 2 INVALID), never in a
# crash, lost data or a false VALID. One ctest entry per class:
#   reliability_tests.sh NAME MINIAPP COMPARE TRAIN [BENCH_SOLVER BENCH_SURROGATE]
# docs/reliability.md lists every case with the line it gives.
set -u
name=$1 app=$2 compare=$3 train=$4 bsolver=${5:-} bsurrogate=${6:-}
. "$(dirname "$0")/lib.sh"
cd "$tmp" || fail "cannot enter $tmp"
small="-ts_max_steps 2 -da_grid_x 12 -da_grid_y 10"

# expect RC REGEX CMD...: exit status RC and, on stderr, exactly one line
# "<program>: error: ..." matching REGEX and nothing else (mpiexec's own
# report of the failed job aside); REGEX "" means stderr must be empty.
expect() {
  local want=$1 re=$2; shift 2
  "$@" > out.txt 2> err.txt
  local rc=$? errs=err.txt
  echo "rc $rc: $* -> $(grep ': error: ' err.txt)"
  [ $rc = "$want" ] || { cat err.txt; fail "exit $rc (want $want) for: $*"; }
  if [ -z "$re" ]; then [ ! -s err.txt ] || { cat err.txt; fail "unexpected stderr for: $*"; }; return 0; fi
  if [ "$1" = mpiexec ]; then grep ': error: ' err.txt > err1.txt; errs=err1.txt; fi
  [ "$(grep -c . $errs)" = 1 ] && grep -q ': error: ' $errs || { cat err.txt; fail "want one error line for: $*"; }
  grep -Eq -- "$re" $errs || { cat err.txt; fail "message does not match '$re' for: $*"; }
}
bad() { expect 1 "$@"; }
sum() { md5sum "$@" | awk '{print $1}' | tr '\n' ' '; }
host=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')

case $name in
outputs) # section 1: no output may replace an input, another output or a device
  printf -- '-scenario heat\n' > deck.opts
  "$app" $small -output a.nc > /dev/null 2>&1 || fail "setup run failed"
  cp a.nc b.nc
  before=$(sum deck.opts a.nc b.nc)
  bad 'report deck.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts -report deck.opts
  bad 'summary deck.opts: is the input -options_file ./deck.opts' "$app" -options_file ./deck.opts -summary deck.opts
  bad 'summary ./x.nc and -output x.nc name the same file' "$app" $small -output x.nc -summary ./x.nc
  bad 'summary \.\./[^ ]*/x.yaml and -report x.yaml name the same file' "$app" $small -summary "../$(basename "$tmp")/x.yaml" -report x.yaml
  bad 'log_view deck.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts -log_view :deck.opts
  ln deck.opts hard.opts
  bad 'summary hard.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts $small -summary hard.opts
  bad '-o a.nc: is the input file a.nc' "$compare" a.nc b.nc -o a.nc
  bad '-o ./b.nc: is the input file b.nc' "$compare" a.nc b.nc -o ./b.nc
  "$train" -train_steps 1 -train_save ck.bin > /dev/null 2>&1 || fail "surrogate-train could not write ck.bin"
  before="$before$(sum ck.bin)"
  bad 'train_save ./ck.bin: is the input -train_load ck.bin' "$train" -train_steps 1 -train_load ck.bin -train_save ./ck.bin
  # every PETSc option whose value is a file viewer, whatever its name (-ksp_converged_reason ascii:F replaced the
  # deck), and PETSc's file options in surrogate-train too (-log_view :F, -history F replaced or appended to its input)
  bad 'ksp_converged_reason deck.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts -ksp_converged_reason ascii:deck.opts
  bad 'sub_ksp_converged_rate deck.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts -sub_ksp_converged_rate ascii:deck.opts
  bad 'ksp_converged_rate x.yaml and -summary x.yaml name the same file' "$app" $small -ksp_converged_rate ascii:x.yaml -summary x.yaml
  bad 'log_view ck.bin: is the input -train_load ck.bin' "$train" -train_steps 1 -train_load ck.bin -log_view :ck.bin
  bad 'history ck.bin: is the input -train_load ck.bin' "$train" -train_steps 1 -train_load ck.bin -history ck.bin
  bad 'log_view deck.opts: is the input -options_file deck.opts' "$train" -train_steps 1 -options_file deck.opts -log_view :deck.opts
  bad 'log_view new.bin and -train_save new.bin name the same file' "$train" -train_steps 1 -train_save new.bin -log_view :new.bin
  [ ! -e new.bin ] && [ ! -e x.yaml ] || fail "a refused run left an output"
  [ "$(sum deck.opts a.nc b.nc ck.bin)" = "$before" ] || fail "an input was modified"
  # devices, FIFOs and directories are never replaced; a directory fails before the run
  bad 'output /dev/full: is a character device' "$app" $small -output /dev/full
  ln -s /dev/full full-link
  bad 'summary full-link: is a character device' "$app" $small -summary full-link
  [ -c /dev/full ] && [ -L full-link ] || fail "/dev/full or the link to it was replaced"
  mkfifo fifo
  bad 'report fifo: is a FIFO' "$app" $small -report fifo
  # a pseudo file system has no blocks at all: not "No space left on device"
  bad 'report /proc/1/x.yaml: cannot create a file there \((No such file or directory|Permission denied|Read-only file system)\)' "$app" $small -report /proc/1/x.yaml
  # an output named through a symbolic link replaces the file it names and
  # keeps the link (it used to replace the link with a regular file); a link
  # to no file is refused
  mkdir -p sub && printf 'old\n' > sub/target.yaml && ln -s sub/target.yaml link.yaml
  "$app" $small -summary link.yaml > /dev/null 2>&1 || fail "-summary through a link failed"
  [ -L link.yaml ] && grep -q 'state_hash' sub/target.yaml || fail "-summary link.yaml: the link was replaced, or its file not written"
  ln -s sub/none.nc dangling.nc
  bad 'output dangling.nc: is a symbolic link to no file' "$app" $small -output dangling.nc
  [ -L dangling.nc ] && [ ! -e sub/none.nc ] || fail "the dangling link was replaced or followed"
  # a program is never an output: the running executable, an ELF file, a #! script
  cp "$app" prog && printf '#!/bin/sh\necho hi\n' > script.sh && cp prog elf.bin && chmod a-x elf.bin
  before=$(sum prog script.sh elf.bin)
  bad 'summary prog: is a program' "$app" $small -summary prog
  bad 'report script.sh: is a program' "$app" $small -report script.sh
  bad 'output elf.bin: is a program' "$app" $small -output elf.bin
  bad 'train_save script.sh: is a program' "$train" -train_steps 1 -train_save script.sh
  bad '-o elf.bin: is a program' "$compare" a.nc b.nc -o elf.bin
  bad "summary $app: is a program" "$app" $small -summary "$app"
  [ "$(sum prog script.sh elf.bin)" = "$before" ] && [ -x "$app" ] || fail "a program was modified" 
  # a write-protected file (chmod a-w) is never replaced: renaming over it needs only the directory's permission
  # (and root passes every check), so a 0444 output was replaced by a 0644 one
  printf 'kept\n' > ro.nc && cp ro.nc ro.yaml && cp ro.nc ro.bin && chmod a-w ro.nc ro.yaml ro.bin
  bad 'output ro.nc: is write-protected' "$app" $small -output ro.nc
  bad 'summary ro.yaml: is write-protected' "$app" $small -summary ro.yaml
  bad 'checkpoint ro.bin: is write-protected' "$app" $small -checkpoint ro.bin
  bad 'train_save ro.bin: is write-protected' "$train" -train_steps 1 -train_save ro.bin
  bad '-o ro.nc: is write-protected' "$compare" a.nc b.nc -o ro.nc
  for f in ro.nc ro.yaml ro.bin; do [ "$(cat $f)" = kept ] || fail "$f was replaced"; done
  # the file a standard stream is redirected to (named as itself or as /dev/stdout) is never replaced
  printf 'earlier job output\n' > job.log
  for args in "-report /dev/stdout" "-summary job.log" "-output /dev/fd/1"; do
    "$app" $small $args >> job.log 2> err.txt
    rc=$?
    [ $rc = 1 ] && [ "$(grep -c . err.txt)" = 1 ] && grep -q -- "${args% *} ${args#* }: is where this run's standard input, output or error goes" err.txt || { cat err.txt; fail "exit $rc for $args >> job.log"; }
  done
  "$app" $small -output /dev/stderr 2>> job.log > out.txt && fail "-output /dev/stderr 2>> job.log ran"
  "$train" -train_steps 1 -train_save /dev/stdout >> job.log 2> err.txt && fail "-train_save /dev/stdout >> job.log ran"
  grep -q -- "-train_save /dev/stdout: is where this run's standard" err.txt || { cat err.txt; fail "surrogate-train: no line for -train_save /dev/stdout"; }
  "$compare" a.nc b.nc -o job.log >> job.log 2> err.txt && fail "-o job.log >> job.log ran"
  grep -q -- "-o job.log: is where this run's standard" err.txt || { cat err.txt; fail "miniapp-compare: no line for -o job.log >> job.log"; }
  grep -q "^earlier job output$" job.log || fail "the log a stream was redirected to was replaced"
  bad '-o /dev/full: is a character device' "$compare" a.nc b.nc -o /dev/full
  bad 'train_save /dev/full: is a character device' "$train" -train_steps 1 -train_save /dev/full
  start=$(date +%s)
  bad 'output /tmp: is a directory' "$app" -da_grid_x 300 -da_grid_y 300 -ts_max_steps 100000 -output /tmp
  [ $(( $(date +%s) - start )) -lt 20 ] || fail "-output /tmp was refused only after the run"
  grep -q "FPNA mini-app" out.txt && fail "-output /tmp: the run started before the check"
  bad 'summary: needs a file name' "$app" $small -summary ""
  bad 'report: needs a file name' "$app" $small -report ""
  bad 'output: needs a file name' "$app" $small -output ""
  bad 'train_save: needs a file name' "$train" -train_steps 1 -train_save ""
  # stdout closed early (| head): was a PETSc stack trace and MPI_Abort on SIGPIPE;
  # now one line, exit 1, and the run's files are complete
  rm -f p.yaml
  # (a pipe whose reader has already gone, so the first write fails, not a race with head)
  /usr/bin/python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=open("err.txt", "w"))
open("rc.txt", "w").write("%d\n" % p.returncode)' "$app" $small -summary p.yaml
  echo "rc $(cat rc.txt): miniapp with its stdout's reader gone -> $(cat err.txt)"
  [ "$(cat rc.txt)" = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q 'writing standard output failed (Broken pipe)' err.txt || { cat err.txt; fail "stdout closed early: exit $(cat rc.txt)"; }
  "$app" $small > /dev/full 2> err.txt; rc=$? # the full device says what it is
  [ $rc = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q 'writing standard output failed (No space left on device)' err.txt || { cat err.txt; fail "stdout to /dev/full: exit $rc"; }
  grep -q '^verification: VALID' p.yaml || fail "stdout closed early: the summary file is not complete"
  ;;
tempfiles) # section 1: unique temporaries; concurrent writers; partials of killed runs
  for i in 1 2 3; do
    "$app" -ts_max_steps 15 -da_grid_x 30 -da_grid_y 30 -atomic_order_seed $i -summary s.yaml -report r.yaml -output o.nc > run$i.log 2>&1 &
  done
  st=0
  for j in 1 2 3; do wait -n || st=1; done
  [ $st = 0 ] || { cat run*.log; fail "a run writing the same files as others at the same time failed"; }
  [ "$(key s.yaml verification)" = VALID ] && [ "$(sed -n 's/^verdict: //p' r.yaml)" = VALID ] || fail "mixed or incomplete summary/report"
  /usr/bin/python3 -c 'import sys, yaml; [yaml.safe_load(open(f)) for f in sys.argv[1:]]' s.yaml r.yaml || fail "summary/report not YAML after concurrent writes"
  "$compare" o.nc o.nc > /dev/null || fail "o.nc unreadable after concurrent writes"
  ls ./*.partial-* > /dev/null 2>&1 && fail "temporaries left: $(ls ./*.partial-*)"
  echo "3 concurrent runs: exit 0, complete files, no temporaries left"
  # partials of dead processes of this host go; live or foreign ones stay
  sleep 0 & dead=$!; wait $dead
  touch "o.nc.partial-$dead" "o.nc.partial-$dead.$host.AbCdEf" "s.yaml.partial-$dead.$host.xYz123" \
        "o.nc.partial-$$.$host.LiVe00" "o.nc.partial-$dead.some-other-host.OtHeR0"
  "$app" $small -output o.nc -summary s.yaml > /dev/null 2>&1 || fail "run after killed runs failed"
  left=$(ls | grep partial | LC_ALL=C sort | tr '\n' ' ')
  want=$(printf '%s\n' "o.nc.partial-$$.$host.LiVe00" "o.nc.partial-$dead.some-other-host.OtHeR0" | LC_ALL=C sort | tr '\n' ' ') # as sets: the pids' text order varies
  echo "partials left: $left"
  [ "$left" = "$want" ] || fail "stale partials of pid $dead not removed, or live/foreign ones removed: $left"
  # a killed writer's partial is removed by the next run
  "$app" -da_grid_x 200 -da_grid_y 200 -ts_max_steps 100000 -output k.nc > k.log 2>&1 &
  pid=$!
  for i in $(seq 100); do ls k.nc.partial-$pid.* > /dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  kill -KILL $pid; wait $pid 2> /dev/null
  ls k.nc.partial-$pid.$host.* > /dev/null 2>&1 || fail "no temporary k.nc.partial-$pid.$host.XXXXXX seen while writing"
  "$app" $small -output k.nc > /dev/null 2>&1 || fail "rerun failed"
  ls k.nc.partial-* > /dev/null 2>&1 && fail "the killed run's partial was not removed: $(ls k.nc.partial-*)"
  echo "killed run's partial removed by the next writer"
  # a run stopped by SIGTERM (a batch system's time limit) removes its own partial
  "$app" -da_grid_x 200 -da_grid_y 200 -ts_max_steps 100000 -output t.nc > t.log 2>&1 &
  pid=$!
  for i in $(seq 100); do ls t.nc.partial-$pid.* > /dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  kill -TERM $pid; wait $pid 2> /dev/null
  ls t.nc* > /dev/null 2>&1 && fail "SIGTERM left: $(ls t.nc*)"
  echo "SIGTERM: no partial left"
  # SIGHUP likewise (PETSc's handler printed a stack trace, aborted MPI with exit 59 and left the partial)
  "$app" -da_grid_x 200 -da_grid_y 200 -ts_max_steps 100000 -output h.nc > h.log 2> h.err &
  pid=$!
  for i in $(seq 100); do ls h.nc.partial-$pid.* > /dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  kill -HUP $pid; wait $pid 2> /dev/null; rc=$?
  [ $rc = 129 ] && ! ls h.nc* > /dev/null 2>&1 && ! grep -q 'PETSC ERROR' h.err || { cat h.err; fail "SIGHUP: exit $rc (want 129), left: $(ls h.nc* 2> /dev/null)"; }
  echo "SIGHUP: exit 129, no partial left"
  # a file-size limit (ulimit -f, as batch systems set): one line, exit 1, no partial (SIGXFSZ killed the run, exit 153)
  for o in "-output lim.nc" "-checkpoint lim.bin"; do
    rc=0; (ulimit -f 100; PMIX_MCA_gds=hash "$app" -scenario grayscott -da_grid_x 64 -da_grid_y 64 -coupling guess -ts_max_steps 3 $o > f.log 2> f.err) || rc=$?
    [ $rc = 1 ] && [ "$(grep -vc '^#' f.err)" = 1 ] && grep -q 'File too large' f.err && ! ls lim.* > /dev/null 2>&1 || { cat f.err; fail "ulimit -f with $o: exit $rc, left: $(ls lim.* 2> /dev/null)"; }
    echo "ulimit -f with $o: $(grep -v '^#' f.err)"
  done
  ;;
diskfull) # section 2: a full disk is an error naming ENOSPC, never a success or a crash
  full=$tmp/full ro=$tmp/ro
  mkdir -p "$full" "$ro"
  trap 'umount "$full" 2> /dev/null; umount "$ro" 2> /dev/null; rm -rf "$tmp"' EXIT
  mount -t tmpfs -o size=96k tmpfs "$full" 2> /dev/null || { echo "cannot mount a tmpfs here (not root?): skipped"; exit 77; }
  "$app" $small -output a.nc > /dev/null 2>&1 && cp a.nc b.nc || fail "setup run failed"
  "$train" -train_steps 1 -train_save ck.bin > /dev/null 2>&1 || fail "setup surrogate-train failed"
  nospace() { # CMD...: exit 1, one line saying "No space left on device", nothing left on the disk
    expect 1 'No space left on device' "$@"
    [ "$(ls -A "$full")" = fill ] || fail "files left on the full disk: $(ls -A "$full")"
  }
  # nearly full: NetCDF fails while writing or closing (was: SIGSEGV in HDF5's exit handler)
  dd if=/dev/zero of="$full/fill" bs=1k count=60 2> /dev/null
  nospace "$app" -ts_max_steps 20 -da_grid_x 40 -da_grid_y 40 -output "$full/o.nc"
  dd if=/dev/zero of="$full/fill" bs=1k count=80 2> /dev/null
  nospace "$compare" a.nc b.nc -o "$full/c.nc"
  nospace "$app" -ts_max_steps 3 -da_grid_x 40 -da_grid_y 40 -coupling guess -checkpoint "$full/ck.bin"
  # completely full: every writer (was: 0-byte summary/report, exit 0, VALID; "Permission denied")
  dd if=/dev/zero of="$full/fill" bs=1k count=200 2> /dev/null
  nospace "$app" $small -summary "$full/s.yaml"
  nospace "$app" $small -report "$full/r.yaml"
  nospace "$app" $small -output "$full/o.nc"
  nospace "$compare" a.nc b.nc -o "$full/c.nc"
  nospace "$train" -train_steps 1 -train_save "$full/ck.bin"
  nospace "$app" $small -checkpoint "$full/ck.bin"
  "$app" $small > "$full/log" 2> err.txt
  rc=$?
  echo "rc $rc: stdout on the full disk -> $(cat err.txt)"
  [ $rc = 1 ] && grep -q 'writing standard output failed (No space left on device)' err.txt || fail "stdout on a full disk: exit $rc"
  rm -f "$full/log"
  # a read-only file system: refused before the run
  mount -t tmpfs -o ro,size=16k tmpfs "$ro" || fail "cannot mount a read-only tmpfs"
  bad "summary $ro/s.yaml: cannot create a file there \(Read-only file system\)" "$app" $small -summary "$ro/s.yaml"
  ;;
optfiles) # section 3: options files: one line naming the file, never a crash
  printf -- '-options_file self.opts\n' > self.opts
  printf -- '-ts_dt 0.5\n-options_file b.opts\n' > a.opts
  printf -- '# b includes a\n-options_file a.opts\n' > b.opts
  mkdir dir.opts
  printf -- '-ts_dt 0.5\n\001\002\377\376 garbage\n' > binary.opts
  /usr/bin/python3 -c 'import random, sys; r = random.Random(7); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(300)))' > random.opts # fixed bytes: the same test every run
  printf -- 's\n\001\002\377 random bytes whose first line looks like text\n' > textfirst.opts
  printf -- '-ts_dt 0.5\nda_grid_x 5\n' > nodash.opts
  printf -- '-ts_dt 0.5\n-options_file missing.opts\n' > nested.opts
  bad 'options_file self.opts: includes itself \(self.opts -> self.opts\)' "$app" -options_file self.opts
  bad 'options_file a.opts: includes itself \(a.opts -> b.opts -> a.opts\)' "$app" -options_file a.opts
  bad 'options_file dir.opts: is a directory' "$app" -options_file dir.opts
  bad 'options_file binary.opts: line 2 is not text' "$app" -options_file binary.opts
  bad 'options_file random.opts: line [0-9]+ is not text' "$app" -options_file random.opts
  bad 'options_file textfirst.opts: line 2 is not text' "$app" -options_file textfirst.opts
  bad "options_file nodash.opts: line 2: 'da_grid_x' is not an option" "$app" -options_file nodash.opts
  bad 'options_file missing.opts \(included from nested.opts line 2\): cannot read \(No such file or directory\)' "$app" -options_file nested.opts
  bad 'options_file needs a file name' "$app" -options_file
  mkfifo fifo.opts # would block until a writer comes: refused before it is opened
  start=$(date +%s)
  bad 'options_file fifo.opts: is a FIFO \(a pipe\), not a regular file' timeout 20 "$app" -options_file fifo.opts
  [ $(($(date +%s) - start)) -lt 10 ] || fail "a FIFO options file blocked"
  bad 'options_file /dev/stdin: is a FIFO' sh -c "echo -ts_max_steps 1 | '$app' -options_file /dev/stdin"
  bad 'options_file /dev/null: is a character device' "$app" -options_file /dev/null
  printf '\357\273\277-ts_max_steps 2\n' > bom.opts
  bad 'options_file bom.opts: starts with a UTF-8 byte-order mark' "$app" -options_file bom.opts
  PETSC_OPTIONS="-options_file self.opts" expect 1 'includes itself' "$app" $small
  if command -v mpiexec > /dev/null; then # before MPI_Init every rank sees it; one says it
    bad 'options_file self.opts: includes itself' mpiexec -n 2 "$app" -options_file self.opts
    [ "$(grep -c ': error: ' err.txt)" = 1 ] || { cat err.txt; fail "more than one rank reported the cycle"; }
  fi
  printf -- '-ts_max_steps 2 -da_grid_x 12\n' > two.opts
  bad "options_file two.opts: line 1: '-da_grid_x' after -ts_max_steps 2: one option per line" "$app" -options_file two.opts
  # a quote not closed: PETSc would take the rest of the line as the value
  printf -- '-ts_max_steps 2\n-deck_name "my deck\n-da_grid_x 12\n' > quote.opts
  bad 'options_file quote.opts: line 2: the quote \(\"\) of -deck_name.s value is not closed' "$app" -options_file quote.opts -report quote.yaml
  [ ! -e quote.yaml ] || fail "a run with an open quote wrote its report"
  printf -- '"-ts_max_steps 2\n' > quote2.opts
  bad 'options_file quote2.opts: line 1: a quote \(\"\) is not closed' "$app" -options_file quote2.opts
  PETSC_OPTIONS='-deck_name "my deck' expect 1 'PETSC_OPTIONS: a quote \(\"\) is not closed' "$app" $small
  # what PETSc accepts still runs: comments, alias, blank lines, a diamond include, a quoted value
  printf -- '# comment\nalias -dt -ts_dt\n-ts_max_steps 2 # trailing\n\n\t-da_grid_x 12\n-da_grid_y 10\n-options_file leaf.opts\n-options_file leaf.opts\n-deck_name "my deck"\n' > good.opts
  printf -- '-scenario heat\n' > leaf.opts
  run s.yaml -options_file good.opts -dt 0.005 -report g.yaml
  [ "$(key s.yaml scenario)" = heat ] && [ "$(key s.yaml steps)" = 2 ] && [ "$(key g.yaml deck)" = "my deck" ] || fail "good.opts not applied"
  ;;
options) # section 3: numeric options that do not fit, options without a value, bad words
  printf -- '-ts_dt\n' > nodt.opts
  bad 'da_grid_x 12abc: not an integer' "$app" -da_grid_x 12abc
  bad 'da_grid_x 2147483648: does not fit a 32-bit integer' "$app" -da_grid_x 2147483648
  bad 'da_grid_x 4294967299: does not fit a 32-bit integer' "$app" -da_grid_x 4294967299
  bad 'ts_max_steps 4294967297: does not fit a 32-bit integer' "$app" -ts_max_steps 4294967297
  bad 'ksp_max_it 4294967297: does not fit a 32-bit integer' "$app" $small -ksp_max_it 4294967297 # read inside libpetsc
  bad 'ksp_gmres_restart 4294967297: does not fit a 32-bit integer \(largest 2147483647\)$' "$app" $small -ksp_gmres_restart 4294967297 # read only by GMRES: judged anyway
  bad 'sub_ksp_max_it 4294967297: does not fit a 32-bit integer' "$app" $small -pc_type bjacobi -sub_ksp_max_it 4294967297 # under a prefix
  bad 'pc_hypre_x 4294967297: does not fit a 32-bit integer \(largest 2147483647; if -pc_hypre_x takes a real number' "$app" $small -pc_hypre_x 4294967297 # declared by no program
  bad 'malloc_debug maybe: not a true/false value' "$app" $small -malloc_debug maybe # PETSc's parse error inside PetscInitialize, named
  bad 'ksp_type preonly: applies the preconditioner once' "$app" $small -ksp_type preonly
  bad 'surrogate_layers 8-4: the range 8-4 decreases' "$app" $small -coupling guess -surrogate_layers 8-4
  bad 'options_monitor ascii:f: not a true/false value' "$app" $small -options_monitor ascii:f
  bad 'surrogate_layers 32,4294967297: entry 4294967297 does not fit' "$app" $small -coupling guess -surrogate_layers 32,4294967297
  bad 'ts_dt 1e400: out of the range of a double' "$app" $small -ts_dt 1e400
  bad 'ts_dt abc: not a number' "$app" $small -ts_dt abc
  bad 'da_grid_x: given without a value' "$app" -ts_max_steps 2 -da_grid_x
  bad 'da_grid_x: given without a value' "$app" -ts_max_steps 2 -da_grid_x ""
  bad 'ts_dt: given without a value' "$app" $small -options_file nodt.opts
  bad 'scenario: given without a value' "$app" $small -scenario
  bad 'ksp_type: given without a value' "$app" $small -ksp_type
  bad 'ksp_type nosuch: unknown ksp type' "$app" $small -ksp_type nosuch
  bad 'coupling_baselines maybe: not a true/false value' "$app" $small -coupling guess -coupling_baselines maybe
  bad 'mms_tol -1[.]?: must be a positive number' "$app" $small -scenario heat -mms_tol -1
  bad 'golden_state_hash: given without a value' "$app" $small -golden_state_hash
  bad 'surrogate_eps inf[.]? must be in \[1e-30, 1e-2\]' "$app" $small -coupling guess -surrogate_eps inf
  bad 'summary: file name too long' "$app" $small -summary "$(printf 'a%.0s' $(seq 5000))"
  bad 'SurrogateLoad: checkpoint /tmp is not a regular file' "$train" -train_steps 1 -train_load /tmp
  # PETSc's keywords are negative numbers to the app ("-ts_dt -2.: must be positive"); a PETSc message named no option
  bad 'ts_dt PETSC_DEFAULT: needs a number' "$app" $small -ts_dt PETSC_DEFAULT
  bad 'ksp_max_it decide: needs an integer' "$app" $small -ksp_max_it decide
  bad 'ksp_gmres_restart 0: restart must be positive' "$app" $small -ksp_type gmres -ksp_gmres_restart 0
  bad 'ksp_pc_side right: .*does not support preconditioner side' "$app" $small -ksp_pc_side right
  # an X window without a display: PETSc printed six lines of errors and the run went on
  (unset DISPLAY; bad 'ksp_monitor draw: draws in an X window, and DISPLAY is not set' "$app" $small -ksp_monitor draw)
  run s.yaml $small -ksp_divtol infinity # a number
  run s.yaml $small -ts_max_steps +3 -coupling guess -coupling_baselines 0
  [ "$(key s.yaml steps)" = 3 ] || fail "-ts_max_steps +3 not read as 3"
  ;;
declared) # section 3: every option a program reads is judged by its declared type before any work, whatever the configuration
  /usr/bin/python3 "$(dirname "$0")/options_declared.py" "$app" "$train" "$bsolver" "$bsurrogate" "$(cd "$(dirname "$0")/.." && pwd)" || fail "an option read but not judged (or judged by the wrong type): see above"
  # a misspelled option is an error in every program, before any work (the
  # tools ran on the defaults, exit 0)
  bad 'surrogate_layer: unknown option; did you mean -surrogate_layers' "$train" -train_steps 1 -train_batch 16 -surrogate_layer 8
  bad 'train_step: unknown option; did you mean -train_steps' "$train" -train_step 5
  if [ -n "$bsolver" ]; then bad 'bench_it: unknown option; did you mean -bench_its' "$bsolver" -da_grid_x 16 -da_grid_y 16 -bench_it 5; fi
  # more iterations than the solve makes (a small grid converges to the last bit): no time per iteration (it printed 216% of triad)
  if [ -n "$bsolver" ]; then bad 'petsc-stock: the solve stopped after [0-9]+ of the 1000 iterations asked for \(CONVERGED_' "$bsolver" -da_grid_x 16 -da_grid_y 16 -bench_its 1000 -bench_reps 1; fi
  if [ -n "$bsurrogate" ]; then bad 'bogus: unknown or unused option' "$bsurrogate" -surrogate_device cpu -bench_n 1024 -bench_steps 1 -bench_reps 1 -bogus 1; fi
  # a problem too large for the memory: the tools say so (they gave the name of a PETSc function)
  if [ -n "$bsolver" ]; then (ulimit -v 1500000; expect 1 'out of memory \(in [A-Za-z_0-9]+\): the problem does not fit' "$bsolver" -da_grid_x 20000 -da_grid_y 20000 -bench_its 1 -bench_reps 1) || exit 1; fi
  if [ -n "$bsurrogate" ]; then (ulimit -v 3000000; expect 1 'out of memory \(in [A-Za-z_0-9]+\): the problem does not fit' "$bsurrogate" -surrogate_device cpu -bench_n 2000000000 -bench_steps 1 -bench_reps 1) || exit 1; fi
  # bench_rsum's counts: a sign, a wrap-around, a trailing word (it ran out of memory or never ended)
  rsum=$(dirname "${bsolver:-/nonexistent/x}")/bench_rsum
  if [ -x "$rsum" ]; then
    # each names the argument it refuses; a count of samples that is no whole number of chunks too (4097 ran 4096)
    for a in "-5" "99999999999999999999 1" "4097 1"; do
      # shellcheck disable=SC2086 # the arguments, split
      bad "samples ${a%% *}: a multiple of 1024 from 1024 to 2\^26" timeout 60 "$rsum" $a
    done
    for a in "4096 99999999999999999999" "4096 1x"; do
      # shellcheck disable=SC2086
      bad "rounds ${a#* }: an integer from 1 to 1000" timeout 60 "$rsum" $a
    done
    bad 'usage: bench_rsum \[samples, a multiple of 1024 up to 2\^26\] \[rounds, 1 to 1000\]' timeout 60 "$rsum" 1024 1 extra
  fi
  ;;
symbols) # section 3: strict options without symbol interposition: no executable defines a function libpetsc defines
  command -v nm > /dev/null || { echo "SKIP: no nm (binutils)"; exit 77; }
  lib=$(ldd "$app" | awk '/libpetsc/ {print $3; exit}')
  [ -n "$lib" ] || { echo "SKIP: PETSc is linked statically: no shared library to interpose on"; exit 77; }
  nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' | sort -u > petsc.txt
  grep -qx PetscOptionsGetInt petsc.txt || fail "nm lists no PetscOptionsGetInt in $lib"
  for exe in "$app" "$train" "$bsolver" "$bsurrogate"; do
    [ -n "$exe" ] || continue
    { nm -g --defined-only "$exe"; nm -D --defined-only "$exe"; } 2> /dev/null | awk 'NF == 3 {sub(/@.*/, "", $3); print $3}' | sort -u > exe.txt
    [ -s exe.txt ] || fail "nm lists no symbols in $exe"
    comm -12 petsc.txt exe.txt > both.txt
    [ ! -s both.txt ] || fail "$(basename "$exe") defines $(head -5 both.txt | tr '\n' ' ')which $(basename "$lib") defines too: symbol interposition (fails to link with a static PETSc, silently off with -Bsymbolic)"
    echo "ok: $(basename "$exe") defines none of the $(wc -l < petsc.txt) functions of $(basename "$lib")"
  done
  ;;
limits) # section 3: too many ranks, too little memory, too large a network: the user's terms
  if command -v mpiexec > /dev/null; then
    bad '5 MPI ranks cannot share the grid: -da_grid_[xy] 3 is split over 5 ranks' mpiexec -n 5 "$app" -da_grid_x 3 -da_grid_y 3 -ts_max_steps 1
  fi
  # more than the node has: refused before anything is allocated (memory.c), on any node (1e9 unknowns, 8 replicas)
  bad 'needs at least [0-9.]+ GiB of memory a rank .*more than the node has available' "$app" -scenario grayscott \
    -da_grid_x 30000 -da_grid_y 17895 -coupling guess -replicas 8 -ts_max_steps 1
  # within the node's memory but over the process's limit (4.3 GiB at least, 1.5 GB allowed): the allocation's failure
  # (or, on a node with less available, the bound's refusal), in the same words
  (ulimit -v 1500000; expect 1 'out of memory \(in [A-Za-z_0-9]+\): the problem does not fit|needs at least [0-9.]+ GiB of memory a rank' "$app" -scenario heat -da_grid_x 8000 -da_grid_y 8000 -ts_max_steps 1) || exit 1
  bad 'surrogate_layers: the network would have [0-9]+ weights' "$app" $small -coupling guess -surrogate_layers 65536,65536
  # out of memory while the guess space is made: the clean-up destroyed uninitialized vectors (SEGV trace after the line)
  for lim in 2600000 3000000; do
    (ulimit -v $lim; expect 1 'out of memory \(in [A-Za-z_0-9]+\): the problem does not fit' "$app" -scenario grayscott -ts_max_steps 2 -da_grid_x 1000 -da_grid_y 1000 -coupling guess -guess_history 32 -replicas 2) || exit 1
  done
  # OMP_NUM_THREADS judged as -threads is: 100000 crashed in the first parallel region (SEGV), 0 or abc ran on the default
  OMP_NUM_THREADS=100000 bad 'OMP_NUM_THREADS=100000: must be a thread count in \[1, 1024\]' "$app" $small
  OMP_NUM_THREADS=1025 bad 'OMP_NUM_THREADS=1025: must be a thread count' "$train" -train_steps 1
  for v in 0 abc 2,; do # libgomp warns of these itself (its lines come first): the run must still stop, with our line last
    OMP_NUM_THREADS=$v "$app" $small > out.txt 2> err.txt && fail "OMP_NUM_THREADS=$v ran"
    [ "$(tail -1 err.txt)" = "miniapp: error: OMP_NUM_THREADS=$v: must be a thread count in [1, 1024] (or a list of them, one per nesting level); unset it or give -threads N" ] || { cat err.txt; fail "OMP_NUM_THREADS=$v: no line naming it"; }
  done
  OMP_NUM_THREADS=100000 run t.yaml $small -threads 1 # -threads rules: the variable is not used
  OMP_NUM_THREADS=2,1 run t.yaml $small
  ;;
compare) # section 3/4: miniapp-compare validates shapes and refuses series that do not line up
  "$app" -ts_max_steps 10 -da_grid_x 12 -da_grid_y 10 -output a10.nc > /dev/null 2>&1 || fail "setup run failed"
  "$app" -ts_max_steps 5 -da_grid_x 12 -da_grid_y 10 -output b5.nc > /dev/null 2>&1 || fail "setup run failed"
  bad 'series do not line up: a10.nc holds 11 time records \(steps 0..10\), b5.nc holds 6' "$compare" a10.nc b5.nc
  bad '-o given twice \(o1.nc and o2.nc\): one output file' "$compare" a10.nc a10.nc -o o1.nc -o o2.nc
  [ ! -e o1.nc ] && [ ! -e o2.nc ] || fail "-o twice wrote a file"
  # runs of other problems are no divergence of the builds: another -ts_dt, a parameter left at its default in one, another seed
  "$app" -ts_max_steps 10 -da_grid_x 12 -da_grid_y 10 -ts_dt 0.02 -output dt.nc > /dev/null 2>&1 || fail "setup run failed"
  bad 'different problems: step 1 is at model time 1 in a10.nc and 0.02 in dt.nc \(another -ts_dt\?\)' "$compare" a10.nc dt.nc
  "$app" -scenario heat -ts_max_steps 4 -da_grid_x 12 -da_grid_y 10 -output h.nc > /dev/null 2>&1 && "$app" -scenario heat -ts_max_steps 4 -da_grid_x 12 -da_grid_y 10 -heat_theta 1 -output th.nc > /dev/null 2>&1 || fail "setup runs failed"
  bad 'different problems: h.nc has parameters -heat_D 1 -heat_theta 0.5, th.nc has -heat_D 1 -heat_theta 1' "$compare" h.nc th.nc
  gs="-scenario grayscott -ts_max_steps 3 -da_grid_x 12 -da_grid_y 10"
  "$app" $gs -output g1.nc > /dev/null 2>&1 && "$app" $gs -gs_F 0.05 -output gF.nc > /dev/null 2>&1 && "$app" $gs -gs_seed 5 -output gs.nc > /dev/null 2>&1 && "$app" $gs -gs_F 4e-2 -output g4.nc > /dev/null 2>&1 || fail "setup runs failed"
  bad 'different problems: g1.nc has parameters -gs_Du 0.16 -gs_Dv 0.08 -gs_F 0.04 .*, gF.nc has .*-gs_F 0.05 ' "$compare" g1.nc gF.nc
  bad 'different problems: g1.nc has gs_seed 1, gs.nc has gs_seed 5' "$compare" g1.nc gs.nc
  "$compare" g1.nc g4.nc > out.txt 2>&1 || { cat out.txt; fail "-gs_F 4e-2 (the default, written another way) was refused"; }
  # nor runs with another setting of the arithmetic (a tolerance, the learning rate, the guess), given or left out in either
  "$app" $gs -ksp_rtol 1e-6 -output gr.nc > /dev/null 2>&1 && "$app" $gs -ksp_rtol 1e-7 -output gr7.nc > /dev/null 2>&1 && "$app" $gs -ksp_type cg -replicas 2 -atomic_order_seed 4 -log_view :lv.txt -output gc.nc > /dev/null 2>&1 || fail "setup runs failed"
  bad 'different runs: gr.nc was given -ksp_rtol 1e-6, g1.nc was not' "$compare" g1.nc gr.nc
  bad 'different runs: gr.nc was given -ksp_rtol 1e-6, g1.nc was not' "$compare" gr.nc g1.nc
  bad 'different runs: gr.nc has -ksp_rtol 1e-6, gr7.nc has -ksp_rtol 1e-7' "$compare" gr.nc gr7.nc
  # a default restated, or written another way, is the same run (the files' settings in effect say so): it was refused
  # ("gd.nc was given -ksp_rtol 1e-10, g1.nc was not")
  "$app" $gs -ksp_rtol 1e-10 -ts_dt 1.0 -ksp_max_it 10000 -output gd.nc > /dev/null 2>&1 || fail "setup run failed"
  for pair in "g1.nc gd.nc" "gd.nc g1.nc"; do
    # shellcheck disable=SC2086
    "$compare" $pair > out.txt 2>&1 || { cat out.txt; fail "compare $pair: restated defaults were refused"; }
  done
  bad 'different runs: gr.nc was given -ksp_rtol 1e-6, gd.nc has -ksp_rtol 1e-10|different runs: gr.nc has -ksp_rtol 1e-6, gd.nc has -ksp_rtol 1e-10' "$compare" gr.nc gd.nc
  "$compare" g1.nc gc.nc > out.txt 2>&1 || { cat out.txt; fail "runs that differ in replicas, seed, a log and cg for the default fpnacg (the same bits) were refused"; }
  "$app" $gs -coupling guess -guess_projection -output p1.nc > /dev/null 2>&1 && "$app" $gs -coupling guess -guess_projection true -output p2.nc > /dev/null 2>&1 || fail "setup runs failed"
  "$compare" p1.nc p2.nc > out.txt 2>&1 || { cat out.txt; fail "-guess_projection and -guess_projection true (one setting) were refused"; }
  /usr/bin/python3 - <<'PY' || fail "could not write the misshaped files (python3-netcdf4)"
import netCDF4, numpy as np
src = netCDF4.Dataset("a10.nc")
src.set_auto_chartostring(False)  # hashes as their characters
def clone(name, var, dims):
    d = netCDF4.Dataset(name, "w")
    for k, dm in src.dimensions.items(): d.createDimension(k, None if dm.isunlimited() else len(dm))
    d.createDimension("big", 1000)
    for k, v in src.variables.items():
        if k == var: d.createVariable(k, v.dtype, dims)
        else: d.createVariable(k, v.dtype, v.dimensions)[:] = v[:]
    d.close()
clone("bigstep.nc", "step", ("big",))           # read whole into 11 ints: heap overflow before
clone("hash1d.nc", "state_hash", ("step",))
clone("losstime.nc", "loss", ("step", "replica"))
PY
  bad "bigstep.nc: variable 'step' has dimensions \(big\), expected \(step\)" "$compare" a10.nc bigstep.nc
  bad "hash1d.nc: variable 'state_hash' has dimensions \(step\), expected \(step, replica, hash_strlen\)" "$compare" a10.nc hash1d.nc
  bad "losstime.nc: variable 'loss' has dimensions \(step, replica\), expected \(epoch, replica\)" "$compare" a10.nc losstime.nc -o out.nc
  [ ! -e out.nc ] && ! ls ./*.partial-* > /dev/null 2>&1 || fail "output or temporary left by a failed comparison"
  cp a10.nc c10.nc
  "$compare" a10.nc c10.nc -o cmp.nc > table.txt || fail "comparing equal runs failed"
  # equal states at every step: never; no network, no epochs: no claim about training ("-", it said never)
  grep -q '^c10.nc .* never  *-  ' table.txt || fail "equal runs: $(cat table.txt)"
  # a file whose hashes are blank claims nothing ("never" before); one whose field differs where its hash
  # says equal (a file miniapp did not write so) diverges where the fields do ("never" before)
  /usr/bin/python3 - <<'PY' || fail "could not make the altered copies"
import shutil, netCDF4
for name in ("nohash.nc", "field.nc"):
    shutil.copy("a10.nc", name)
    d = netCDF4.Dataset(name, "a"); d.set_auto_mask(False)
    if name == "nohash.nc":
        d["state_hash"][:] = b"\0"
    else:
        v = [k for k, x in d.variables.items() if x.dimensions == ("snapshot", "replica", "y", "x")][0]
        s = d["snapshot_step"][:]; i = len(s) - 1
        f = d[v][i]; f[0, 0, 0] *= 1.001; d[v][i] = f
        last = int(s[i])
    d.close()
open("last_snap", "w").write(str(last))
PY
  "$compare" a10.nc nohash.nc field.nc > table2.txt || fail "comparing the altered copies failed"
  mkfifo fifo.nc; rc=0; timeout 20 "$compare" a10.nc fifo.nc > /dev/null 2> fifo.err || rc=$?
  [ $rc = 1 ] && grep -q "fifo.nc: not a regular file" fifo.err || { cat fifo.err; fail "a FIFO input: exit $rc (124: it hung)"; }
  grep -q '^nohash.nc .* -  ' table2.txt || fail "blank hashes said: $(grep '^nohash' table2.txt)"
  grep -q "^field.nc .* $(cat last_snap)  " table2.txt || fail "a differing field at step $(cat last_snap) said: $(grep '^field' table2.txt)"
  ;;
valid) # section 4: VALID means right
  expect 2 '' "$app" -scenario heat -ts_dt 1e6 -ts_max_steps 2 -summary s.yaml
  grep -q 'EXCEEDS tolerance .*capped at 5% of the exact solution' s.yaml || fail "heat -ts_dt 1e6: $(key s.yaml verification_detail)"
  [ "$(key s.yaml verification)" = INVALID ] || fail "heat -ts_dt 1e6 not INVALID"
  run h.yaml -scenario heat
  echo "default heat: $(key h.yaml verification_detail)"
  # YAML strings are quoted and escaped: a deck name with quotes and backslashes reads back
  run s.yaml $small -deck_name 'say "hi" \ there' -report r.yaml
  /usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["deck"] == "say \"hi\" \\ there", d["deck"]' r.yaml ||
    fail "report deck name not read back"
  ;;
petscfiles) # PETSc's own file options are checked before PetscInitialize writes
  printf -- '-ts_max_steps 2\n-da_grid_x 12\n-da_grid_y 10\n' > deck.opts
  cp deck.opts in.opts.0; cp deck.opts mv.opts_0; cp deck.opts hist.opts
  "$app" $small -checkpoint ck.bin > /dev/null 2>&1 || fail "setup run failed"
  before=$(sum deck.opts in.opts.0 mv.opts_0 hist.opts ck.bin)
  [ -e in.opts.2 ] && fail "in.opts.2 exists before the test"
  bad 'history deck.opts: is the input -options_file deck.opts' "$app" -options_file deck.opts -history deck.opts
  bad 'info in.opts.0: is the input -options_file in.opts.0' "$app" -options_file in.opts.0 -info in.opts
  bad 'log_trace in.opts.0: is the input' "$app" -options_file in.opts.0 -log_trace in.opts
  bad 'malloc_view mv.opts_0: is the input -options_file mv.opts_0' "$app" -options_file mv.opts_0 -malloc_view mv.opts
  bad 'history ck.bin: is the input -restart ck.bin' "$app" $small -ts_max_steps 3 -restart ck.bin -history ck.bin
  bad 'output x.nc and -history x.nc name the same file' "$app" $small -output x.nc -history x.nc
  bad 'history /tmp: is a directory' "$app" $small -history /tmp
  printf -- '-options_file deck.opts\n-history hist.opts\n' > nest.opts # given inside an options file
  bad 'history hist.opts: is the input -options_file hist.opts' "$app" -options_file nest.opts -options_file hist.opts
  cp deck.opts in.opts.2 # the launcher's rank count: rank 2 of 3 would write in.opts.2 (refused before MPI starts)
  bad 'info in.opts.2: is the input -options_file in.opts.2' env OMPI_COMM_WORLD_SIZE=3 "$app" -options_file in.opts.2 -info in.opts
  [ "$(sum deck.opts in.opts.0 mv.opts_0 hist.opts ck.bin)" = "$before" ] || fail "an input was modified"
  expect 0 "" "$app" $small -history h.txt -info i.txt -log_trace t.txt -malloc_view m.txt
  [ -s h.txt ] && [ -s i.txt.0 ] && [ -s t.txt.0 ] && [ -s m.txt_0 ] || fail "PETSc's files were not written where expected"
  ;;
*) fail "unknown test $name" ;;
esac
echo "PASS $name"
