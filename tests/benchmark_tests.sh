#!/usr/bin/env bash
# tests/benchmark_tests.sh BUILD_DIR: scripts/benchmark.sh, the one-command
# submission (docs/benchmark.md): repeats on 2 and 4 oversubscribed ranks
# through -launcher, from an install prefix, a modified deck refused,
# submissions merged, bad arguments in one line.
set -u
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
py=/usr/bin/python3
bm=$root/scripts/benchmark.sh
key() { sed -n "s/^$2: *//p" "$1" | head -1; }
case $("$build/miniapp/miniapp" -version 2> /dev/null | head -n 1) in # its official runs need a clean build (docs/benchmark.md)
  *"-dirty)"*) echo "SKIP: the build's source tree is modified (revision -dirty): no run of it is official"; exit 77 ;;
esac

for np in 2 4; do
  "$bm" grayscott-small -bin "$build" -repeat 2 -launcher "mpiexec --oversubscribe -n $np" -system "test system $np" -python $py -out "$tmp/s$np" > "$tmp/s$np.log" 2>&1 || { cat "$tmp/s$np.log"; fail "benchmark.sh on $np ranks failed"; }
  s=$tmp/s$np/submission.yaml
  [ "$(key "$s" official)" = true ] && [ "$(key "$s" repeats)" = 2 ] && grep -q "^  ranks: $np$" "$s" || { cat "$s"; fail "$np ranks: not an official 2-repeat submission on $np ranks"; }
  $py -c "import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); assert d['fom']['n'] == 2 and d['fom']['min'] <= d['fom']['mean'] <= d['fom']['max'] and d['fom']['cv'] >= 0" "$s" || fail "$np ranks: FOM statistics"
  $py - "$s" $np <<'PY' || fail "$np ranks: the submission's system"
import sys, yaml
d, np = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
s = d["system"]  # what a comparison of two systems needs (docs/benchmark.md)
for k in ("date", "name", "cpu", "cpu_mhz_max", "cores", "threads_per_core", "numa_nodes", "memory_gib", "gpu", "nodes", "interconnect", "ranks_x_threads",
          "device", "fom_unit", "revision", "energy_joules", "gpu_energy_joules"):
    assert k in s, "system lacks " + k
assert s["name"] == "test system " + np and s["ranks_x_threads"] == np + " x 1" and s["device"] == {"solver": "cpu", "surrogate": "cpu"}, s
assert s["revision"] == d["build"]["revision"] and s["date"] == d["runs"][0]["start"][:10] and len({r["id"] for r in d["runs"]}) == 2, s
PY
  echo "ok: $np ranks, $(key "$s" repeats) repeats, official"
done
# -tunable: an option the run rules leave free keeps the runs official and is in the submission's command;
# any other (one that leaves the bits alone, so the run is VALID) stops the submission in one line
"$bm" grayscott-small -bin "$build" -repeat 1 -tunable "-solver_device cpu -threads 1" -python $py -out "$tmp/tun" > "$tmp/tun.log" 2>&1 \
  && [ "$(key "$tmp/tun/submission.yaml" official)" = true ] && grep -q -- "-solver_device cpu -threads 1" "$tmp/tun/submission.yaml" \
  || { cat "$tmp/tun.log"; fail "benchmark.sh -tunable with free options: not an official submission naming them"; }
rc=0; "$bm" grayscott-small -bin "$build" -repeat 1 -tunable "-ksp_max_it 9999" -python $py -out "$tmp/tun2" > "$tmp/tun2.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "^benchmark: error: repeat 1: not an official run" "$tmp/tun2.log" || { cat "$tmp/tun2.log"; fail "benchmark.sh -tunable -ksp_max_it (not free): not refused"; }
echo "ok: -tunable: free options official, -ksp_max_it refused"
# the minimum timed duration: -repeat 1 with at least 2 s of timed runs
# repeats until the runs' timed loops add up to 2 s
"$bm" grayscott-small -bin "$build" -repeat 1 -min-seconds 2 -python $py -out "$tmp/min" > "$tmp/min.log" 2>&1 || { cat "$tmp/min.log"; fail "benchmark.sh -min-seconds 2 failed"; }
$py -c "import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); assert d['official'] and d['min_timed_seconds'] == 2 and d['timed_seconds'] >= 2 and d['repeats'] >= 2, d" "$tmp/min/submission.yaml" ||
  fail "-min-seconds 2: the submission does not hold 2 s of timed runs"
echo "ok: -min-seconds 2: $(key "$tmp/min/submission.yaml" repeats) repeats, $(key "$tmp/min/submission.yaml" timed_seconds) s timed"
# a submission whose reports hold less than its minimum is not official
$py "$root/scripts/report_table.py" submission "$tmp/min" --min-seconds 1000 > "$tmp/short.yaml" || fail "report_table.py submission failed"
[ "$(key "$tmp/short.yaml" official)" = false ] || fail "a submission below its minimum duration is official"
# a submission audits its repeats (each refused or read as before, an official submission):
# a copy of a repeat (the report names the file it was written to), a gap in r1..rN, another
# build's repeat, a golden mismatch, another state hash of an ordered build; no FOM in a repeat: n/a
sub=$tmp/s2
mkaudit() { rm -rf "$tmp/au" && mkdir "$tmp/au" && cp "$sub/r1.yaml" "$sub/r2.yaml" "$tmp/au/"; }
reseal() { $py "$root/tests/reseal.py" "$@" || fail "tests/reseal.py $*"; }
audit() { # WANT(refused|official|notofficial) WHAT [the refusal's words]: the edited repeats sealed again first
  reseal "$tmp/au"/r*.yaml
  raudit "$@"
}
raudit() { # as audit, the repeats as they are
  rc=0; $py "$root/scripts/report_table.py" submission "$tmp/au" > "$tmp/au.out" 2> "$tmp/au.err" || rc=$?
  case $1 in
    refused) [ $rc = 1 ] && [ "$(wc -l < "$tmp/au.err")" = 1 ] && grep -qF -- "${3:-error}" "$tmp/au.err" || { cat "$tmp/au.out" "$tmp/au.err"; fail "$2: not refused (with '${3:-}')"; } ;;
    notofficial) [ $rc = 0 ] && [ "$(key "$tmp/au.out" official)" = false ] || { cat "$tmp/au.out" "$tmp/au.err"; fail "$2: official"; } ;;
  esac
  echo "ok: $2 -> $(cat "$tmp/au.err")$(key "$tmp/au.out" official)"
}
mkaudit; cp "$sub/r1.yaml" "$tmp/au/r2.yaml"; audit refused "a copy of r1 as r2"
# a copy that names itself r2 is still r1's run (its run identity), and with a new identity still r1's timings
mkaudit; sed 's|^file: .*|file: "r2.yaml"|' "$sub/r1.yaml" > "$tmp/au/r2.yaml"; audit refused "a copy of r1 whose file: says r2" "r2.yaml: run.id is r1.yaml's"
sed -i 's/^  id: .*/  id: "0123456789abcdef0123456789abcdef"/; s/^  start: "\([^.]*\)\.[0-9]*Z"/  start: "\1.999999Z"/' "$tmp/au/r2.yaml"
audit refused "a copy of r1 with another run identity" "r2.yaml: timing is r1.yaml's"
# the report's own reasons, timings and build against its official flag and FOM
mkaudit; sed -i 's/^official: true$/official: true\nofficial_why: "-gs_F, -ksp_rtol"/' "$tmp/au/r2.yaml"; audit refused "official: true beside its official_why" "r2.yaml: official: true, but official_why"
mkaudit; sed -i 's/^\(options: .*\)-ts_max_steps 40 /\1-ts_max_steps 4 /' "$tmp/au/r2.yaml"; audit refused "official with another -ts_max_steps in its options" "r2.yaml: options: -ts_max_steps is 4"
mkaudit; awk '/^fom:/ {f = 1} f && /^  value:/ {printf "  value: %.6f\n", $2 * 1000; f = 0; next} {print}' "$sub/r2.yaml" > "$tmp/au/r2.yaml"
audit refused "a FOM x 1000" "r2.yaml: fom.value: is"
mkaudit; sed -i 's/^  revision: "\(.*\)"$/  revision: "\1-dirty"/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"; audit refused "official from a modified tree" "r1.yaml: official: true, but build.revision"
mkaudit; sed -i 's/^  deck_committed: true$/  deck_committed: false/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"; audit refused "official with a deck not the revision's" "r1.yaml: official: true, but build.deck_committed false"
# malformed reports: one line naming the file and the key, no traceback
mkaudit; sed -i 's/^deck: .*/deck: ["grayscott-small", "x"]/' "$tmp/au/r2.yaml"; audit refused "a list as the deck" "r2.yaml: deck: is a list"
mkaudit; sed -i '/^timing:/,/^[a-z]/{/^  train:/d}' "$tmp/au/r2.yaml"; audit refused "no timing.train" "r2.yaml: timing.train: is missing"
mkaudit; sed -i '/^timing:/,/^[a-z]/s/^  solve: .*/  solve: fast/' "$tmp/au/r2.yaml"; audit refused "a word as timing.solve" "r2.yaml: timing.solve: is 'fast'"
mkaudit; sed -i '/^run:/,/^[a-z]/{/^  id:/d}' "$tmp/au/r2.yaml"; audit refused "no run.id" "r2.yaml: run.id: is missing"
mkaudit; mv "$tmp/au/r2.yaml" "$tmp/au/r3.yaml"; audit refused "r1 and r3, no r2"
mkaudit; sed -i 's/^  revision: .*/  revision: "0000000000aa"/' "$tmp/au/r2.yaml"; audit refused "a repeat of another revision"
if grep -q '^  golden_state_hash: "match"' "$sub/r1.yaml"; then # the reproducible build's decks carry golden hashes
  mkaudit; sed -i 's/^  golden_state_hash: "match"/  golden_state_hash: "MISMATCH"/; s/^  state_hash: .*/  state_hash: "0x1111111111111111"/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"
  audit notofficial "repeats whose golden hash mismatched"
  mkaudit; sed -i 's/^  golden_weights_hash: "match"/  golden_weights_hash: "MISMATCH"/' "$tmp/au/r2.yaml"
  audit refused "a MISMATCH verdict beside the golden weights hash" "r2.yaml: verification.weights_hash: is"
  mkaudit; sed -i 's/^  state_hash: .*/  state_hash: "0xdeadbeefdeadbeef"/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"
  audit refused "a state hash not the deck's beside its match verdict" "r1.yaml: verification.state_hash: is 0xdeadbeefdeadbeef"
fi
# official is the shipped deck as written plus the free options, nothing else
mkaudit; sed -i 's/^\(options: .*\)-ts_max_steps /\1-gs_F 0.05 -ts_max_steps /' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"
audit refused "official with an option the deck does not set" "r1.yaml: options: -gs_F is neither the deck"
mkaudit; sed -i 's/^deck: .*/deck: "grayscott-huge"/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"; audit refused "official with a deck not shipped" "r1.yaml: deck: 'grayscott-huge' is not a shipped deck"
# timing.total (the minimum duration's basis) within the run's own dates and at least its parts
mkaudit; awk '/^timing:/ {f = 1} f && /^  total:/ {printf "  total: %.6f\n", $2 + 100; f = 0; next} {print}' "$sub/r2.yaml" > "$tmp/au/r2.yaml"
audit refused "timing.total beyond run.start to date" "r2.yaml: timing.total: is"
if ! grep -q '^  solver_reduction: atomic\|^  surrogate_reduction: atomic' "$sub/r1.yaml"; then
  mkaudit; sed -i 's/^  state_hash: .*/  state_hash: "0x1111111111111111"/' "$tmp/au/r2.yaml"; audit refused "two state hashes of an ordered build"
fi
# the seal: an edit not sealed again, a seal line cut off, an alias bomb, a byte that is not UTF-8
mkaudit; sed -i 's/^  solve: \([0-9.]*\)/  solve: \11/' "$tmp/au/r2.yaml"; raudit refused "an edit after the run" "r2.yaml: seal: is fnv1a64:"
mkaudit; sed -i '$d' "$tmp/au/r2.yaml"; raudit refused "the seal line cut off" "r2.yaml: seal: no seal as its last line"
mkaudit; { echo 'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]'; for k in b c d e f g h i j k l m n o p q r s t u v w x y z; do echo "$k: &$k [*a, *a, *a, *a, *a, *a, *a, *a, *a]"; done; } > "$tmp/au/r2.yaml"
SECONDS=0; audit refused "an alias bomb as a repeat" "r2.yaml: cannot read (an alias (*a)"; [ $SECONDS -lt 20 ] || fail "the alias bomb took $SECONDS s"
mkaudit; printf 'deck: "\377"\n' >> "$tmp/au/r2.yaml"; audit refused "a byte not UTF-8" "r2.yaml: cannot read (byte "
mkaudit; sed -i 's/^  interconnect: .*/  interconnect: "ib0: 400 Gb\/s InfiniBand"/' "$tmp/au/r2.yaml"; audit refused "a repeat on another interconnect" "the repeats differ in machine.interconnect"
mkaudit; sed -i 's/^official: true$/official: false\nofficial: true/' "$tmp/au/r2.yaml"; audit refused "a key twice (the last one won)" "r2.yaml: cannot read (the key 'official' twice"
mkaudit; sed -i 's/^  timed_steps: .*/  timed_steps: -5/' "$tmp/au/r2.yaml"; audit refused "timed_steps -5" "r2.yaml: timing.timed_steps: is -5, want a whole number"
# dates that parse and bound timing.total, the FOM's unit, the ranks the binding lists, a reproducible build's
# golden verdicts, repeats from two submissions (the later one's r1 before the earlier one's r2: no edit)
mkaudit; sed -i '/^date: /d' "$tmp/au/r2.yaml"; audit refused "no date" "r2.yaml: date: is missing, want a UTC date and time"
mkaudit; sed -i 's/^  start: ".*"$/  start: "2000-01-01T00:00:00.000000Z"/' "$tmp/au/r2.yaml"; audit refused "a run.start years before its date" "r2.yaml: timing.total: is"
mkaudit; sed -i 's|^  unit: "Mpoint-steps/s"|  unit: "Gpoint-steps/s"|' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"; audit refused "another FOM unit" "r1.yaml: fom.unit: is 'Gpoint-steps/s'"
mkaudit; sed -i 's/^  ranks: 2$/  ranks: 4/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"; audit refused "ranks the binding does not list" "r1.yaml: machine.ranks: is 4, with machine.binding listing 2"
if grep -q '^  golden_state_hash: "match"' "$sub/r1.yaml"; then
  mkaudit; sed -i 's/^  golden_state_hash: .*/  golden_state_hash: "not applicable (atomic\/atomic build)"/' "$tmp/au/r1.yaml" "$tmp/au/r2.yaml"
  audit refused "a reproducible build's golden check said not applicable" "r1.yaml: verification.golden_state_hash: is 'not applicable"
fi
mkaudit; cp "$tmp/s4/r1.yaml" "$tmp/au/r1.yaml"; raudit refused "repeats of two submissions" "r2.yaml: run.start: is"
# a repeat that timed no step (a restart at its last step) has no FOM (.nan): the submission's FOM is n/a
mkaudit; sed -i 's/^  value: [0-9.]*$/  value: .nan/; s/^  timed_steps: .*/  timed_steps: 0/' "$tmp/au/r2.yaml"; reseal "$tmp/au/r2.yaml"
$py "$root/scripts/report_table.py" submission "$tmp/au" > "$tmp/au.out" || fail "a repeat without a FOM"
$py -c "import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); assert d['fom'] is None, d['fom']" "$tmp/au.out" || fail "a repeat without a FOM: the FOM is the other repeat's"
# --out never replaces a program or where a standard stream goes (>> job.log was replaced); a FIFO is no report (it hung)
cp /bin/true "$tmp/prog"; echo "line 1" > "$tmp/job.log"
rc=0; $py "$root/scripts/report_table.py" submission "$sub" --out "$tmp/prog" > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && cmp -s /bin/true "$tmp/prog" || { cat "$tmp/e"; fail "--out over a program: exit $rc"; }
[ ! -s "$tmp/o" ] || fail "--out over a program: refused after the submission went to stdout (a job log then holds a submission that was never written)"
cp /bin/true "$tmp/prog2.md"; : > "$tmp/prog2"
rc=0; $py "$root/scripts/report_table.py" submission "$sub" --out "$tmp/prog2" > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/o" ] && [ ! -s "$tmp/prog2" ] && cmp -s /bin/true "$tmp/prog2.md" || { cat "$tmp/e"; fail "--out whose .md is a program: exit $rc, or the YAML written before the refusal"; }
echo "kept" > "$tmp/ro.md" && chmod a-w "$tmp/ro.md" # a write-protected file, as the C tools refuse it
rc=0; $py "$root/scripts/report_table.py" submission "$sub" --out "$tmp/ro.md" > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && [ ! -s "$tmp/o" ] && [ "$(cat "$tmp/ro.md")" = kept ] && grep -q "is write-protected" "$tmp/e" || { cat "$tmp/e"; fail "--out over a write-protected file: exit $rc, or replaced"; }
rc=0; $py "$root/scripts/report_table.py" submission "$sub" --out /dev/stdout >> "$tmp/job.log" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && [ "$(head -n 1 "$tmp/job.log")" = "line 1" ] || { cat "$tmp/e"; fail "--out /dev/stdout >> job.log: exit $rc, the log replaced"; }
mkdir "$tmp/fifo" && cp "$sub/r1.yaml" "$tmp/fifo/" && mkfifo "$tmp/fifo/r2.yaml"
rc=0; timeout 20 $py "$root/scripts/report_table.py" submission "$tmp/fifo" > /dev/null 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && grep -q "not a regular file" "$tmp/e" || { cat "$tmp/e"; fail "a FIFO as a repeat: exit $rc (124: it hung)"; }
# -report_anonymize: node names as hashes, nowhere the host's own name; still an official run
app=$(cd "$build" && pwd)/miniapp/miniapp
(cd "$tmp" && "$app" -options_file "$root/inputs/grayscott-small.opts" -report_anonymize -report auto > anon.out 2>&1) || { cat "$tmp/anon.out"; fail "-report_anonymize run failed"; }
anon=$(ls "$tmp"/report-grayscott-small-*.yaml) || fail "-report auto wrote no report"
$py -c "import re,sys,yaml; d=yaml.safe_load(open(sys.argv[1])); m=d['machine']; assert re.fullmatch('host-[0-9a-f]{12}', m['hostname']) and m['node_names'] == [m['hostname']] and d['official'] is True, m" "$anon" ||
  fail "-report_anonymize: hostname and node_names are not host-<12 hex digits>, or the run is not official"
! grep -qwF -- "$(hostname)" "$anon" || fail "-report_anonymize: the host name $(hostname) is still in $anon" # as a word: a short name (vm) is inside CPU flags (vme)
case $(basename "$anon") in *"$(hostname)"*) fail "-report_anonymize: the auto report name $(basename "$anon") holds the host name" ;; esac
echo "ok: -report_anonymize: $(basename "$anon")"
rm -f "$anon"
# from a fresh install prefix, with the installed script and deck
cmake --install "$build" --prefix "$tmp/p" > /dev/null 2>&1 || fail "cmake --install failed"
(cd "$tmp" && "$tmp/p/share/fpna-miniapp/scripts/benchmark.sh" grayscott-small -bin "$tmp/p" -repeat 3 -python $py -out "$tmp/inst") > "$tmp/inst.log" 2>&1 || { cat "$tmp/inst.log"; fail "benchmark.sh from the install prefix failed"; }
[ "$(key "$tmp/inst/submission.yaml" official)" = true ] && [ "$(key "$tmp/inst/submission.yaml" repeats)" = 3 ] || fail "installed: not an official 3-repeat submission"
echo "ok: from the install prefix $tmp/p"
# a changed deck is not a submission
sed 's/^-gs_F .*//' "$root/inputs/grayscott-small.opts" > "$tmp/mod.opts"; echo "-gs_F 0.05" >> "$tmp/mod.opts"
rc=0; "$bm" "$tmp/mod.opts" -bin "$build" -repeat 1 -python $py -out "$tmp/mod" > "$tmp/mod.log" 2>&1 || rc=$?
# (not official; in the reproducible build it is INVALID first: the golden hashes no longer match)
[ $rc = 1 ] && grep -Eq 'benchmark: error: repeat 1: (not an official run of the deck|exit 2 .*golden hash MISMATCH)' "$tmp/mod.log" || { cat "$tmp/mod.log"; fail "a modified deck was accepted (exit $rc)"; }
[ ! -e "$tmp/mod/submission.yaml" ] || fail "a modified deck left a submission"
# merge
$py "$root/scripts/report_table.py" merge "$tmp/s2/submission.yaml" "$tmp/s4/submission.yaml" "$tmp/inst/submission.yaml" > "$tmp/merge.md" || fail "merge failed"
[ "$(grep -c '^| grayscott-small ' "$tmp/merge.md")" = 3 ] || { cat "$tmp/merge.md"; fail "merge: want 3 rows"; }
rev=$(sed -n 's/^  revision: //p' "$tmp/s2/submission.yaml" | head -n 1 | tr -d "'\"")
en="\(not measured\|[0-9.]*\)" # an energy
grep -q "| FOM cv | energy \[J\] | GPU energy \[J\] | state hashes | checked |$" "$tmp/merge.md" &&
  grep -q "^| grayscott-small | test system 2 | .* | 2 x 1 | 1 | [^|]* | solver cpu, surrogate cpu | .* | $rev | 20[0-9-]* | 2 | yes | .* | Mpoint-steps/s | [0-9.]* | $en | $en | 1 | reports |$" "$tmp/merge.md" ||
  { cat "$tmp/merge.md"; fail "merge: the row lacks the system name, nodes, interconnect, device, revision, date, FOM unit or energies"; }
grep -q '| checked |' "$tmp/merge.md" && [ "$(grep -c '| reports |$' "$tmp/merge.md")" = 3 ] || { cat "$tmp/merge.md"; fail "merge: the submissions were not re-checked from their reports"; }
# merge re-checks every submission: official beside all_valid false, a mean its reports do not give
mkdir "$tmp/m1" && cp "$tmp/s2"/r*.yaml "$tmp/s2/submission.yaml" "$tmp/m1/" && sed -i 's/^all_valid: true$/all_valid: false/' "$tmp/m1/submission.yaml"
cp "$tmp/s2/submission.yaml" "$tmp/alone.yaml" && sed -i 's/^all_valid: true$/all_valid: false/' "$tmp/alone.yaml"
mkdir "$tmp/m2" && cp "$tmp/s2"/r*.yaml "$tmp/s2/submission.yaml" "$tmp/m2/" && sed -i '/^fom:/,/^[a-z]/s/^  max: .*/  max: 1000.0/' "$tmp/m2/submission.yaml"
mkdir "$tmp/m3" && cp "$tmp/s2/r1.yaml" "$tmp/s2/submission.yaml" "$tmp/m3/" # r2 left out: a cut set, not a moved file
mkdir "$tmp/m5" && cp "$tmp/s2"/r*.yaml "$tmp/s2/submission.yaml" "$tmp/m5/" && sed -i 's/^  cpu: .*/  cpu: Faster CPU/' "$tmp/m5/submission.yaml"
reseal "$tmp/m1/submission.yaml" "$tmp/alone.yaml" "$tmp/m2/submission.yaml" "$tmp/m5/submission.yaml"
edit() { # NAME SED: a copy of s2 (reports and submission) as $tmp/NAME, its submission edited by SED and sealed again
  rm -rf "$tmp/$1" && mkdir "$tmp/$1" && cp "$tmp/s2"/r*.yaml "$tmp/s2/submission.yaml" "$tmp/$1/" && sed -i "$2" "$tmp/$1/submission.yaml" && reseal "$tmp/$1/submission.yaml"
}
edit e1 's/^- r1.yaml$/- r7.yaml/; s/^- r2.yaml$/- r8.yaml/'
edit e2 '0,/^  id: /s/^  id: .*/  id: 0123456789abcdef0123456789abcdef/'
edit e3 '/^command: /,/^fom:/{/^fom:/!d}; s/^fom:/command: [x]\nfom:/'
edit e4 's/^  cores_online: [0-9]*$/  cores_online: true/'
edit e5 's/^repeats: 2$/repeats: 2\nextra_key: 5/'
cp "$tmp/s2/submission.yaml" "$tmp/edited.yaml" && sed -i 's/^repeats: 2$/repeats: 3/' "$tmp/edited.yaml" # not sealed again
cp "$tmp/s2/submission.yaml" "$tmp/runs5.yaml" && sed -i 's/^runs:$/runs: 5\nruns_was:/' "$tmp/runs5.yaml" && reseal "$tmp/runs5.yaml"
for bad in "$tmp/e1/submission.yaml:reports: 2 of the 2 listed are not beside it" "$tmp/e2/submission.yaml:runs[0].id: is 0123456789abcdef0123456789abcdef, its reports give" \
  "$tmp/e3/submission.yaml:command: is a list, want a string" "$tmp/e4/submission.yaml:machine.cores_online: is True, its reports give" "$tmp/e5/submission.yaml:extra_key: is 5, its reports give None" \
  "$tmp/edited.yaml:seal: is fnv1a64:" "$tmp/runs5.yaml:runs: is 5, want a list" "$tmp/m5/submission.yaml:cpu: is Faster CPU, its reports give" \
  "$tmp/m3/submission.yaml:reports: 1 of the 2 listed are not beside it" "$tmp/m1/submission.yaml:official: true, but all_valid false" "$tmp/alone.yaml:official: true, but all_valid false" "$tmp/m2/submission.yaml:fom.max: is 1000.0, its reports give"; do
  rc=0; $py "$root/scripts/report_table.py" merge "$tmp/s4/submission.yaml" "${bad%%:*}" > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -qF -- "${bad#*:}" "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "merge of ${bad%%:*}: exit $rc, want one line '${bad#*:}'"; }
done
cp "$tmp/s2/submission.yaml" "$tmp/short2.yaml" && sed -i 's/^min_timed_seconds: .*/min_timed_seconds: 1000.0/' "$tmp/short2.yaml"
reseal "$tmp/short2.yaml"
rc=0; $py "$root/scripts/report_table.py" merge "$tmp/short2.yaml" > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q "official: true, but timed_seconds .* below 1000" "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "merge of an official submission below its minimum: exit $rc"; }
for out in "$tmp/m1/r1.yaml" "$tmp/s4/submission.yaml.md"; do # a report beside a submission it merges, a submission's own table
  cp "$out" "$tmp/before"; rc=0; $py "$root/scripts/report_table.py" merge "$tmp/s4/submission.yaml" "$tmp/m1/submission.yaml" --out "$out" > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && grep -q "is one of the reports it reads" "$tmp/e" && cmp -s "$tmp/before" "$out" || { cat "$tmp/e"; fail "merge --out $out: exit $rc, or replaced"; }
done
# a submission alone (its reports elsewhere) is held to its own rules; a link to one is checked from its reports;
# --out (and its .md) never replaces a file of a folder read; a name cannot add a column or a row to the table
cp "$tmp/s2/submission.yaml" "$tmp/alone2.yaml" && sed -i 's/^  deck_committed: true$/  deck_committed: false/' "$tmp/alone2.yaml"
cp "$tmp/s2/submission.yaml" "$tmp/alone3.yaml" && sed -i '/^fom:/,/^[a-z]/s/^  cv: .*/  cv: -0.5/' "$tmp/alone3.yaml"
reseal "$tmp/alone2.yaml" "$tmp/alone3.yaml"
for bad in "$tmp/alone2.yaml:official: true, but build.deck_committed" "$tmp/alone3.yaml:fom.cv: is -0.5"; do
  rc=0; $py "$root/scripts/report_table.py" merge "${bad%%:*}" > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -qF -- "${bad#*:}" "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "merge of ${bad%%:*}: exit $rc, want one line '${bad#*:}'"; }
done
mkdir "$tmp/link" && ln -s "$tmp/s2/submission.yaml" "$tmp/link/submission.yaml"
$py "$root/scripts/report_table.py" merge "$tmp/link/submission.yaml" > "$tmp/o" && grep -q '| reports |$' "$tmp/o" || { cat "$tmp/o"; fail "merge of a link to a submission: not checked from its reports"; }
ln -s "$sub/r1.yaml" "$tmp/x1.md"; cp "$sub/r1.yaml" "$tmp/before"
rc=0; $py "$root/scripts/report_table.py" submission "$sub" --out "$tmp/x1" > /dev/null 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && cmp -s "$tmp/before" "$sub/r1.yaml" || { cat "$tmp/e"; fail "submission --out X whose X.md links to a report read: exit $rc, or replaced"; }
cp "$tmp/s4/r1.log" "$tmp/before"
rc=0; $py "$root/scripts/report_table.py" merge "$tmp/s4/submission.yaml" --out "$tmp/s4/r1.log" > /dev/null 2> "$tmp/e" || rc=$?
[ $rc = 1 ] && grep -q "is a file in a folder it reads" "$tmp/e" && cmp -s "$tmp/before" "$tmp/s4/r1.log" || { cat "$tmp/e"; fail "merge --out a log beside a submission: exit $rc, or replaced"; }
mkdir "$tmp/bar" && cp "$tmp/s2"/r*.yaml "$tmp/bar/"
$py "$root/scripts/report_table.py" submission "$tmp/bar" --system $'evil | 999\n| grayscott-small | fake' --out "$tmp/bar/submission.yaml" > /dev/null || fail "submission --system with a bar"
$py "$root/scripts/report_table.py" merge "$tmp/bar/submission.yaml" > "$tmp/o" || fail "merge of a system name with a bar"
[ "$(grep -c '^| grayscott-small ' "$tmp/o")" = 1 ] && grep -qF 'evil \| 999 \| grayscott-small \| fake' "$tmp/o" || { cat "$tmp/o"; fail "a system name with a bar and a line break: another row or column"; }
echo "ok: merge refuses an official submission with all_valid false, below its minimum, or one its reports contradict"
# one submission twice (the same file, or a copy) is not two results: it printed a row for each
cp "$tmp/s2/submission.yaml" "$tmp/copy.yaml"
for twice in "$tmp/s2/submission.yaml $tmp/s4/submission.yaml $tmp/s2/submission.yaml" "$tmp/s2/submission.yaml $tmp/copy.yaml"; do
  rc=0; $py "$root/scripts/report_table.py" merge $twice > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q "the same \(file\|submission\) as" "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "merge $twice: exit $rc, want one line"; }
done
# bad arguments: one line, exit 1
for a in "grayscott-small -repeat 0 -out $tmp/x" "grayscott-small -repeat 99999999999999999999 -out $tmp/x" "grayscott-small -min-seconds 99999999999999999999 -out $tmp/x" "no-such-deck -out $tmp/x" "grayscott-small -bin /nonexistent -out $tmp/x" "grayscott-small -bin $build" "grayscott-small -bogus 1" "grayscott-medium -min-seconds 10 -out $tmp/x" "grayscott-small -min-seconds 1.5 -out $tmp/x"; do
  rc=0; "$bm" $a > "$tmp/o" 2> "$tmp/e" || rc=$?
  [ $rc = 1 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q '^benchmark: error: ' "$tmp/e" || { cat "$tmp/o" "$tmp/e"; fail "want one error line for: $a"; }
done
echo PASS
