#!/usr/bin/env bash
# tests/sweep_tests.sh: self-test of the sweep and scaling tables
# (scripts/report_table.py) on synthetic reports with known numbers, and of
# the argument checks of scripts/sweep.sh, scripts/scaling.sh, scripts/gpu-check.sh
# and scripts/gpu-pack.sh. Builds and runs nothing; a few seconds. Prints PASS
# and exits 0 when all checks pass.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
has() { grep -qF -- "$2" "$1" || { cat "$1"; fail "'$2' not in $(basename "$1")"; }; }

# report FILE SOLVER SURROGATE TOTAL SOLVE TRAIN PREDICT VERDICT [HASH [M N]]
report() {
  cat > "$1" <<EOF
report_version: 1
deck: "synthetic"
machine: {hostname: "testhost", cpu: "Test CPU", ranks: 1, threads: 2, device: cpu}
build: {solver_reduction: $2, surrogate_reduction: $3, cuda: not built, compiler: "GNU 12.2.0"}
problem: {scenario: grayscott, grid: [${10:-100}, ${11:-50}], steps: 100, replicas: 2, coupling: guess}
timing: {total: $4, solve: $5, features: 0.1, predict: $7, train: $6, metrics: 0.1, output: 0.0, time_per_step: $(awk "BEGIN{print $4 / 100}")}
solver: {iterations_total: 1000, seconds_per_iteration: 1.0e-3, achieved_gbs: 10.0}
surrogate: {train_samples_per_s: 1.0e+06, inference_points_per_s: 1.0e+07}
verification: {detail: "ok", state_hash: "${9:-0x0000000000000001}"}
fom: {value: $(awk "BEGIN{print 100 * 50 * 100 * 2 / $4 / 1000000}"), unit: "Mpoint-steps/s"}
verdict: $8
EOF
}

# --- sweep table: ratios and met/missed on known numbers
d=$tmp/sweep; mkdir -p "$d"
report "$d/atomic.r1.yaml"               atomic        atomic        10.0 4.0 2.0 1.0 VALID
report "$d/atomic.r2.yaml"               atomic        atomic        12.0 5.0 2.5 1.0 VALID  # slower repeat: min wins
report "$d/deterministic.r1.yaml"        deterministic deterministic 10.5 4.2 2.1 1.0 VALID  # 1.050x: met (boundary)
report "$d/reproducible.r1.yaml"         reproducible  reproducible  12.6 5.0 3.0 1.5 VALID  # 1.260x, but 1.050x against the slower atomic repeat: within noise
report "$d/deterministic-atomic.r1.yaml" deterministic atomic        10.2 4.4 2.0 1.0 VALID  # solver 1.100x
report "$d/reproducible-atomic.r1.yaml"  reproducible  atomic        11.0 6.0 2.0 1.0 INVALID # solver 1.500x
report "$d/atomic-deterministic.r1.yaml" atomic        deterministic 10.3 4.0 2.6 1.0 VALID  # surrogate 3.6/3.0 = 1.200x
report "$d/atomic-reproducible.r1.yaml"  atomic        reproducible  11.0 4.0 4.5 1.5 VALID  # surrogate 2.000x
$py scripts/report_table.py sweep "$d" --deck synthetic --command "scripts/sweep.sh synthetic" --out "$d/table.md" > "$d/stdout" \
  || fail "report_table.py sweep exited nonzero"
t=$d/table.md
cmp -s "$t" <(sed '/^target: /d' "$d/stdout") || fail "printed table differs from table.md"
has "$t" "| solver half | deterministic | deterministic-atomic | 1.100x |"
has "$t" "| solver half | reproducible | reproducible-atomic | 1.500x (reproducible-atomic INVALID) |"
has "$t" "| surrogate half | deterministic | atomic-deterministic | 1.200x |"
has "$t" "| surrogate half | reproducible | atomic-reproducible | 2.000x |"
has "$t" "| whole loop | deterministic | deterministic | 1.050x | <= 1.05x | met |"
has "$t" "| whole loop | reproducible | reproducible | 1.260x | <= 1.25x | within noise (1.050x..1.260x) |"
has "$t" "| reproducible-atomic | reproducible | atomic | 0.11 | 0.09091 | INVALID |"
has "$t" "| atomic | atomic | atomic | 0.1 | 0.1 | VALID | 0.04 | 1.000x | 3 | 1.000x | 10 | 1.000x | 20.0% |"
has "$t" "machine: testhost, Test CPU"
has "$t" "command: \`scripts/sweep.sh synthetic\`"
has "$t" "minimum of 1 to 2 repeat(s) of its variant"
has "$d/stdout" "target: deterministic <= 1.05x atomic end to end: met (1.050x)"
has "$d/stdout" "target: reproducible <= 1.25x atomic end to end: within noise (1.050x..1.260x) (1.260x)"
# against the fastest of atomic and deterministic: here atomic everywhere; then a faster deterministic build
has "$t" "| whole loop | reproducible | atomic | 1.260x |"
has "$t" "| solver half | reproducible-atomic | atomic | 1.500x (reproducible-atomic INVALID) |"
mkdir -p "$tmp/fast"; cp "$d"/*.yaml "$tmp/fast/"
report "$tmp/fast/deterministic.r1.yaml" deterministic deterministic 8.0 3.0 2.1 1.0 VALID
report "$tmp/fast/deterministic-atomic.r1.yaml" deterministic atomic 10.2 3.2 2.0 1.0 VALID
$py scripts/report_table.py sweep "$tmp/fast" --deck synthetic > "$tmp/fast/stdout" || fail "report_table.py sweep (fast deterministic) exited nonzero"
has "$tmp/fast/stdout" "| whole loop | reproducible | deterministic | 1.575x |"
has "$tmp/fast/stdout" "| whole loop | deterministic | deterministic | 1.000x |"
has "$tmp/fast/stdout" "| solver half | reproducible-atomic | deterministic-atomic | 1.875x (reproducible-atomic INVALID) |"
has "$tmp/fast/stdout" "target: reproducible <= 1.10x the fastest build (deterministic) end to end: MISSED (1.575x; rounds n/a, 1 paired)"
# the 1.10x target against the fastest build, paired by round: round 1 1.050x, round 2 1.150x
mkdir -p "$tmp/pair"; cp "$d"/atomic.r*.yaml "$tmp/pair/"
report "$tmp/pair/deterministic.r1.yaml" deterministic deterministic 8.0 3.0 2.1 1.0 VALID
report "$tmp/pair/deterministic.r2.yaml" deterministic deterministic 9.6 3.0 2.1 1.0 VALID
report "$tmp/pair/reproducible.r1.yaml"  reproducible  reproducible  8.4 3.0 2.1 1.0 VALID
report "$tmp/pair/reproducible.r2.yaml"  reproducible  reproducible  11.04 3.0 2.1 1.0 VALID
$py scripts/report_table.py sweep "$tmp/pair" --deck synthetic > "$tmp/pair/stdout" || fail "report_table.py sweep (paired rounds) exited nonzero"
has "$tmp/pair/stdout" "| whole loop | reproducible | deterministic | 1.050x | 1.050x..1.150x | <= 1.10x | within noise (1.050x..1.150x) |"
has "$tmp/pair/stdout" "target: reproducible <= 1.10x the fastest build (deterministic) end to end: within noise (1.050x..1.150x) (1.050x; rounds 1.050x..1.150x, 2 paired)"
# rounds numbered past 9 pair by number, not by the files' text order (r10 before r2)
for k in 2 10; do cp "$tmp/pair/deterministic.r1.yaml" "$tmp/pair/deterministic.r$k.yaml"; done
report "$tmp/pair/reproducible.r2.yaml"  reproducible  reproducible  8.64 3.0 2.1 1.0 VALID
report "$tmp/pair/reproducible.r10.yaml" reproducible  reproducible  8.56 3.0 2.1 1.0 VALID
$py scripts/report_table.py sweep "$tmp/pair" --deck synthetic > "$tmp/pair/stdout" || fail "report_table.py sweep (ten rounds) exited nonzero"
has "$tmp/pair/stdout" "| whole loop | reproducible | deterministic | 1.050x | 1.050x..1.080x | <= 1.10x | met |"
# one atomic repeat: no spread, a clear verdict
mkdir -p "$tmp/one"; cp "$d/atomic.r1.yaml" "$d/reproducible.r1.yaml" "$tmp/one/"
$py scripts/report_table.py sweep "$tmp/one" --deck synthetic > "$tmp/one/stdout" || fail "report_table.py sweep (one repeat) exited nonzero"
has "$tmp/one/stdout" "target: reproducible <= 1.25x atomic end to end: MISSED (1.260x)"

# a missing variant is reported, not a crash; no atomic build is an error
rm "$d/atomic-reproducible.r1.yaml"
$py scripts/report_table.py sweep "$d" > "$d/stdout" || fail "sweep table with a missing variant exited nonzero"
has "$d/stdout" "Not run: atomic-reproducible"
rm "$d"/atomic.r*.yaml
if $py scripts/report_table.py sweep "$d" > /dev/null 2> "$d/stderr"; then fail "sweep table without atomic exited 0"; fi
has "$d/stderr" "no report of the atomic build"

# --- scaling table: efficiency and state hash vs 1 x 1
s=$tmp/scaling; mkdir -p "$s"
report "$s/np1-t1.r1.yaml" reproducible reproducible 10.0 4 2 1 VALID 0xaaaa
report "$s/np1-t2.r1.yaml" reproducible reproducible 6.25 4 2 1 VALID 0xaaaa  # 10 / (2 x 6.25) = 80%
report "$s/np2-t1.r1.yaml" reproducible reproducible 5.0 4 2 1 VALID 0xbbbb   # 100%, hash differs
$py scripts/report_table.py scaling "$s" --mode strong --deck synthetic --out "$s/t.md" > /dev/null || fail "scaling table exited nonzero"
has "$s/t.md" "| 1 | 1 | 100x50 | 0.1 | 0.1 | 100% | VALID | yes |"
has "$s/t.md" "| 1 | 2 | 100x50 | 0.0625 | 0.16 | 80% | VALID | yes |"
has "$s/t.md" "| 2 | 1 | 100x50 | 0.05 | 0.2 | 100% | VALID | NO |"
report "$s/np2-t1.r1.yaml" reproducible reproducible 12.5 4 2 1 VALID 0xbbbb 200 50  # weak: 10 / 12.5 = 80%
$py scripts/report_table.py scaling "$s" --mode weak --out "$s/w.md" > /dev/null || fail "weak scaling table exited nonzero"
has "$s/w.md" "| 2 | 1 | 200x50 | 0.125 | 0.08 | 80% | VALID | n/a (grid differs) |"
# strong scaling over another grid, or another build beside the 1 x 1 one: refused, one line
mkdir -p "$s.x"; cp "$s"/np1-t1.r1.yaml "$s"/np2-t1.r1.yaml "$s.x/"
rc=0; $py scripts/report_table.py scaling "$s.x" --mode strong > /dev/null 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "strong scaling over two grids: exit $rc"; }
has "$tmp/err" "problem.grid is [200, 50], the 1 x 1 run's [100, 50]: not the same problem"
report "$s.x/np2-t1.r1.yaml" deterministic deterministic 5.0 4 2 1 VALID 0xbbbb
rc=0; $py scripts/report_table.py scaling "$s.x" --mode weak > /dev/null 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && grep -q "build.solver_reduction is deterministic, the 1 x 1 run's reproducible: not the same build" "$tmp/err" || { cat "$tmp/err"; fail "scaling over two builds: exit $rc"; }

# --- the figures from the same reports: scaling.png (strong) and phases.png (ms per step by phase)
if $py -c "import matplotlib" 2> /dev/null; then
  report "$s/np2-t1.r1.yaml" reproducible reproducible 5.0 4 2 1 VALID 0xbbbb
  [ "$(MPLBACKEND=Agg $py scripts/plot.py --scaling "$s" -o "$tmp/fig")" = "$tmp/fig/scaling.png" ] || fail "plot.py --scaling did not write scaling.png"
  [ "$(MPLBACKEND=Agg $py scripts/plot.py --phases "$s/np1-t1.r1.yaml" "$s/np2-t1.r1.yaml" --labels one,two -o "$tmp/fig")" = "$tmp/fig/phases.png" ] ||
    fail "plot.py --phases did not write phases.png"
  for f in scaling phases; do [ "$(stat -c %s "$tmp/fig/$f.png" 2> /dev/null || echo 0)" -gt 10240 ] || fail "$f.png missing or not over 10 kB"; done
  # two runs of one build: told apart by their file names
  [ "$($py scripts/plot.py --phases "$s/np1-t1.r1.yaml" "$s/np2-t1.r1.yaml" --list | sort -u | wc -l)" = 2 ] ||
    fail "plot.py --phases gives two runs of one build the same label"
  MPLBACKEND=Agg $py scripts/plot.py --phases "$s/t.md" > /dev/null 2> "$tmp/e" && fail "plot.py --phases took a Markdown file"
  [ "$(wc -l < "$tmp/e")" = 1 ] || { cat "$tmp/e"; fail "plot.py --phases on a non-report: not one line"; }
  echo "ok: scaling.png and phases.png from the reports"
fi

# --- the scripts reject bad arguments with one line and a nonzero exit, before building
for c in "scripts/sweep.sh no-such-deck" "scripts/sweep.sh heat -repeat 0" "scripts/sweep.sh heat -bogus 1" "scripts/sweep.sh heat -variants atomic,fastest" \
         "scripts/gpu-check.sh -decks nosuch" "scripts/gpu-check.sh -timeout 0" "scripts/gpu-check.sh -bin /nonexistent" "scripts/gpu-check.sh -bogus 1" \
         "scripts/gpu-pack.sh -arch sm90" "scripts/gpu-pack.sh -variants fast" "scripts/gpu-pack.sh -out" "scripts/gpu-pack.sh -out /proc/none/rt" "scripts/sweep.sh heat -bin /nonexistent" "scripts/sweep.sh heat -out /proc/sweep" \
         "scripts/scaling.sh no-such-deck" "scripts/scaling.sh heat sideways" "scripts/scaling.sh heat -variant fast"; do
  rc=0; $c > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" != 0 ] || fail "exit 0 for: $c"
  if [ "$(wc -l < "$tmp/err")" != 1 ] || [ -s "$tmp/out" ]; then cat "$tmp/out" "$tmp/err"; fail "expected one error line for: $c"; fi
done
has "$tmp/err" "unknown variant 'fast'"
# --- readings that must not mislead (a review's cases; each gave a wrong verdict or crashed before)
v=$tmp/v
mk() { rm -rf "$v"; mkdir -p "$v"; for k in 1 2 3; do report "$v/atomic.r$k.yaml" atomic atomic 12.0 4.0 2.0 1.0 VALID; done; }
tgt() { $py scripts/report_table.py sweep "$v" > "$v.out" 2> "$v.err" || { cat "$v.err"; fail "report_table.py sweep on $1 exited nonzero"; }; has "$v.out" "$2"; }
# rounds a variant lacks: the ratio of the minima over the rounds both ran (1.050x in each), not over all
mk; report "$v/deterministic.r1.yaml" deterministic deterministic 8.0 3.0 2.1 1.0 VALID; report "$v/deterministic.r2.yaml" deterministic deterministic 8.0 3.0 2.1 1.0 VALID
report "$v/deterministic.r3.yaml" deterministic deterministic 7.0 3.0 2.1 1.0 VALID
report "$v/reproducible.r1.yaml" reproducible reproducible 8.4 3.0 2.1 1.0 VALID; report "$v/reproducible.r2.yaml" reproducible reproducible 8.4 3.0 2.1 1.0 VALID
tgt "a round missing" "the fastest build (deterministic) end to end: met (1.050x; rounds 1.050x..1.050x, 2 paired)"
# INVALID runs decide nothing: all INVALID, a mix, an INVALID fastest build
mk; for k in 1 2; do report "$v/deterministic.r$k.yaml" deterministic deterministic 8.0 3.0 2.1 1.0 VALID; report "$v/reproducible.r$k.yaml" reproducible reproducible 8.4 3.0 2.1 1.0 INVALID; done
tgt "INVALID reproducible runs" "target: reproducible <= 1.25x atomic end to end: n/a (reproducible INVALID)"
has "$v.out" "end to end: n/a (reproducible INVALID)"
report "$v/reproducible.r1.yaml" reproducible reproducible 10.4 3.0 2.1 1.0 VALID
tgt "an INVALID repeat beside a VALID one" "the fastest build (deterministic) end to end: MISSED (1.300x; rounds n/a, 1 paired)"
has "$v.out" "1 INVALID repeat(s) left out of the times and ratios"
mk; for k in 1 2; do report "$v/deterministic.r$k.yaml" deterministic deterministic 6.0 3.0 2.1 1.0 INVALID; report "$v/reproducible.r$k.yaml" reproducible reproducible 12.6 3.0 2.1 1.0 VALID; done
tgt "an INVALID deterministic build" "the fastest build (atomic; deterministic INVALID) end to end: n/a (deterministic INVALID)"
has "$v.out" "target: deterministic <= 1.05x atomic end to end: n/a (deterministic INVALID)"
# neither atomic nor deterministic VALID: the 1.10x target still gets its line, n/a
mk; for k in 1 2 3; do sed -i 's/verdict: VALID/verdict: INVALID/' "$v/atomic.r$k.yaml"; done; report "$v/reproducible.r1.yaml" reproducible reproducible 12.6 3.0 2.1 1.0 VALID
tgt "no VALID fastest build" "target: reproducible <= 1.10x the fastest build end to end: n/a (atomic INVALID, deterministic not run)"
# no deterministic build: no verdict against "the fastest"
mk; report "$v/reproducible.r1.yaml" reproducible reproducible 12.6 3.0 2.1 1.0 VALID
tgt "no deterministic build" "end to end: n/a (deterministic not run)"
# a report of another problem: no table; one of another build than its name says (a test's stand-in): no verdict
mk; report "$v/reproducible.r1.yaml" reproducible reproducible 12.6 3.0 2.1 1.0 VALID 0x1 50 50
rc=0; $py scripts/report_table.py sweep "$v" > "$v.out" 2> "$v.err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$v.err")" = 1 ] || { cat "$v.err"; fail "a report of another grid: exit $rc"; }
has "$v.err" "reproducible.r1.yaml: problem.grid is [50, 50], atomic.r1.yaml's [100, 50]: not the same run"
mk; report "$v/deterministic.r1.yaml" atomic atomic 8.0 3.0 2.1 1.0 VALID; report "$v/reproducible.r1.yaml" reproducible reproducible 8.4 3.0 2.1 1.0 VALID
tgt "a deterministic report from an atomic build" "the fastest build (atomic; deterministic built atomic/atomic) end to end: n/a (deterministic built atomic/atomic)"
has "$v.out" "target: deterministic <= 1.05x atomic end to end: n/a (deterministic built atomic/atomic)"
has "$v.out" "Not the build their names say (their ratios mean nothing): deterministic (built atomic/atomic)"
# two files of one round; the header's cores and date are the runs'
mk; cp "$v/atomic.r1.yaml" "$v/atomic.r01.yaml"
rc=0; $py scripts/report_table.py sweep "$v" > "$v.out" 2> "$v.err" || rc=$?
[ $rc = 1 ] && grep -q "round 1 of atomic twice (atomic.r01.yaml and atomic.r1.yaml)" "$v.err" || { cat "$v.err"; fail "a round given twice: exit $rc"; }
mk; for k in 1 2 3; do printf 'date: "2026-01-0%sT00:00:00Z"\n' $k >> "$v/atomic.r$k.yaml"; sed -i 's/threads: 2,/threads: 2, cores_online: 64,/' "$v/atomic.r$k.yaml"; done
tgt "dated reports" "- machine: testhost, Test CPU, 64 cores"
has "$v.out" "- date: 2026-01-01T00:00:00Z to 2026-01-03T00:00:00Z"
# submissions: no FOM is n/a (the run timed no step), one repeat has no spread (cv was 0), a large deck keeps its 300 s rule
mkdir -p "$v/sub"; report "$v/sub/r1.yaml" atomic atomic 2.0 1.0 0.5 0.2 VALID
sed -i 's/^fom: {value: [^,]*/fom: {value: .nan/; s/^deck: .*/deck: "grayscott-large"/; s/time_per_step: [^,}]*/time_per_step: 1.8e-02, timed_steps: 0/' "$v/sub/r1.yaml"
echo "official: false" >> "$v/sub/r1.yaml"; echo "file: \"sub/r1.yaml\"" >> "$v/sub/r1.yaml" # a report names the file it was written to
echo 'date: "2026-01-01T00:00:05Z"' >> "$v/sub/r1.yaml"
echo 'run: {id: "0123456789abcdef0123456789abcdef", start: "2026-01-01T00:00:00.000000Z", host: "testhost", pid: 1}' >> "$v/sub/r1.yaml"
$py tests/reseal.py "$v/sub/r1.yaml" # a submission takes sealed reports only (docs/benchmark.md)
$py scripts/report_table.py submission "$v/sub" --out "$v/sub.yaml" > /dev/null 2> "$v.err" || { cat "$v.err"; fail "a submission without a FOM"; }
has "$v/sub.yaml.md" "| grayscott-large | 1 | NO | n/a | n/a | n/a | n/a |"
has "$v/sub.yaml" "min_timed_seconds: 300.0"
has "$v/sub.yaml" "cv: null"
$py scripts/report_table.py merge "$v/sub.yaml" > "$v.out" || fail "merge of a submission without a FOM"
has "$v.out" "| NO | n/a | n/a | n/a | not measured | not measured | 1 | file only |"
# the noise rules (docs/benchmark.md): a medium deck's submission is official only with a FOM coefficient of
# variation within 5% and a load average before each repeat within half the cores (plus the previous repeat's own)
golden() { sed -n "s/^-golden_$1_hash *//p" inputs/grayscott-medium.opts; } # the deck's golden hash
medium() { # FILE K WORK LOAD_BEFORE: repeat K of grayscott-medium, official, WORK s of the loop's own work
  cat > "$1" <<EOF
report_version: 1
deck: "grayscott-medium"
official: true
file: "r$2.yaml"
options: "$(grep '^-' inputs/grayscott-medium.opts | tr '\n' ' ')"
run: {id: "$(printf '%032x' "$2")", start: "2026-01-01T00:0$2:00.000000Z", host: "testhost", pid: $((100 + $2)), load_before: [$4, 0.5, 0.5], load_after: [2.0, 1.0, 0.5]}
machine: {hostname: "testhost", cpu: "Test CPU", ranks: 1, ranks_per_node: 1, threads: 2, device: cpu, cores_online: 2}
build: {solver_reduction: reproducible, surrogate_reduction: reproducible, revision: "0123456789ab", deck_committed: true}
problem: {scenario: grayscott, grid: [192, 192], steps: 300, replicas: 1, coupling: guess}
timing: {total: 40.0, solve: $3, features: 0.0, predict: 0.0, train: 0.0, time_per_step: $(awk "BEGIN{printf \"%.6e\", $3 / 300}"), timed_steps: 300}
verification: {detail: "ok", state_hash: "$(golden state)", golden_state_hash: "match", weights_hash: "$(golden weights)", golden_weights_hash: "match"}
fom: {value: $(awk "BEGIN{printf \"%.6f\", 192 * 192 * 300 / $3 / 1e6}"), unit: "Mpoint-steps/s"}
date: "2026-01-01T00:0$2:40Z"
verdict: VALID
EOF
  $py tests/reseal.py "$1"
}
noise() { # WANT(true|false) WHAT OFFICIAL_WHY_REGEX -- then the repeats' WORK LOAD_BEFORE pairs
  local want=$1 what=$2 words=$3 k=0; shift 3
  rm -rf "$v/noise" && mkdir -p "$v/noise"
  while [ $# -ge 2 ]; do k=$((k + 1)); medium "$v/noise/r$k.yaml" $k "$1" "$2"; shift 2; done
  $py scripts/report_table.py submission "$v/noise" > "$v/noise.yaml" 2> "$v.err" || { cat "$v.err"; fail "noise: $what: refused"; }
  [ "$(sed -n 's/^official: //p' "$v/noise.yaml")" = "$want" ] && grep -q "^official_why: .*$words" "$v/noise.yaml" || { cat "$v/noise.yaml"; fail "noise: $what: official is not $want ($words)"; }
  echo "ok: noise: $what: official $want"
}
noise true "a quiet machine, cv 0.7%" "null" 30.0 0.5 30.3 2.9
noise false "cv 20%" "FOM coefficient of variation 0.2[0-9]* above the bound 0.05" 30.0 0.5 40.0 0.5
noise false "a loaded machine before repeat 1" "repeat 1: load average 1.5 before it, above the bound 1 " 30.0 1.5 30.3 0.5
noise false "a loaded machine before repeat 2" "repeat 2: load average 3.5 before it, above the bound 3 " 30.0 0.5 30.3 3.5
noise false "no load recorded" "repeat 1: no load average" 30.0 null 30.3 0.5
# merge: a noisy submission edited to official is refused
noise false "cv 20% again" "above the bound" 30.0 0.5 40.0 0.5
sed -i 's/^official: false$/official: true/; s/^official_why: .*/official_why: null/' "$v/noise.yaml"; $py tests/reseal.py "$v/noise.yaml"; cp "$v/noise.yaml" "$v/noise/submission.yaml"
rc=0; $py scripts/report_table.py merge "$v/noise/submission.yaml" > "$v.out" 2> "$v.err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$v.err")" = 1 ] && grep -q "official: true, but fom.cv 0.2[0-9]* above the noise bound 0.05" "$v.err" || { cat "$v.out" "$v.err"; fail "merge of a noisy submission edited to official: exit $rc"; }
# --- scripts never delete or overwrite what they did not write (scripts/manifest.sh)
mkdir -p "$tmp/res/heat"; echo keep > "$tmp/res/heat/prod.results.yaml"; echo old > "$tmp/res/heat/atomic.r1.yaml"
rc=0; scripts/sweep.sh heat -out "$tmp/res" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc != 0 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/out" "$tmp/err"; fail "sweep over unlisted files: exit $rc"; }
has "$tmp/err" "which no earlier run of sweep.sh wrote there"
[ "$(cat "$tmp/res/heat/prod.results.yaml")" = keep ] && [ "$(cat "$tmp/res/heat/atomic.r1.yaml")" = old ] || fail "sweep removed files it did not write"
# a list nobody's script wrote (or another script's) is not trusted: its files stay (it deleted what a planted .files named)
printf 'atomic.r1.yaml\n' > "$tmp/res/heat/.files"; rm "$tmp/res/heat/prod.results.yaml"
rc=0; scripts/benchmark.sh heat-small -out "$tmp/res/heat" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && grep -q "was not written by benchmark.sh" "$tmp/err" && [ -e "$tmp/res/heat/atomic.r1.yaml" ] || { cat "$tmp/err"; fail "a planted list was trusted"; }
# a run that fails or is interrupted puts the previous run's files back and removes its own; one that ends well replaces them
m=$tmp/res/m; mkdir -p "$m"
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; manifest_add a.yaml; echo first > "$m/a.yaml"; manifest_end ) || fail "first run"
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; manifest_add b.yaml; echo half > "$m/b.yaml"; exit 3 ) && fail "the failing run did not fail"
[ "$(cat "$m/a.yaml")" = first ] && [ ! -e "$m/b.yaml" ] && [ ! -e "$m/.previous" ] || fail "a failed run did not restore the previous results"
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; manifest_add b.yaml; echo half > "$m/b.yaml"; kill -TERM $BASHPID; sleep 5 ) && fail "the interrupted run did not fail"
[ "$(cat "$m/a.yaml")" = first ] && [ ! -e "$m/b.yaml" ] || fail "an interrupted run did not restore the previous results"
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; manifest_add b.yaml; echo second > "$m/b.yaml"; manifest_end ) || fail "second run"
[ ! -e "$m/a.yaml" ] && [ "$(cat "$m/b.yaml")" = second ] && [ ! -e "$m/.previous" ] || fail "a run that ended well did not replace the previous results"
rc=0; ( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" scaling.sh ) > "$tmp/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "was not written by scaling.sh" "$tmp/out" && [ -e "$m/b.yaml" ] || fail "another script's folder was not refused"
# a run killed without its traps (SIGKILL) leaves .previous: the next run undoes it first (the previous files come back, the killed run's go)
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; manifest_add c.yaml; echo half > "$m/c.yaml"; trap - EXIT; exit 9 ) && fail "the killed run did not fail"
[ -d "$m/.previous" ] && [ -e "$m/c.yaml" ] || fail "the simulated kill left no .previous"
( die() { echo "die: $*"; exit 1; }; . scripts/manifest.sh; manifest_begin "$m" sweep.sh; [ "$(cat "$m/.previous/b.yaml")" = second ] && [ ! -e "$m/c.yaml" ] || exit 1; exit 5 ) > "$tmp/out" 2>&1 && fail "the recovery run did not fail on purpose"
[ "$(cat "$m/b.yaml")" = second ] && [ ! -e "$m/c.yaml" ] && [ ! -e "$m/.previous" ] || { cat "$tmp/out"; fail "a killed run's leftovers were not undone"; }
echo "ok: results folders: foreign files refused, previous results kept until a run ends well, a killed run undone"
d=$tmp/s2; mkdir -p "$d"
report "$d/atomic.r1.yaml" atomic atomic 10.0 4.0 2.0 1.0 VALID
cp "$d/atomic.r1.yaml" "$tmp/orig.yaml"
rc=0; $py scripts/report_table.py sweep "$d" --out "$d/atomic.r1.yaml" > "$tmp/out" 2> "$tmp/err" || rc=$?
cmp -s "$d/atomic.r1.yaml" "$tmp/orig.yaml" || fail "report_table overwrote its input"
[ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "report_table --out over an input: exit $rc"; }
has "$tmp/err" "is one of the reports it reads"
rc=0; $py scripts/report_table.py sweep "$d" --out /proc/none/t.md > "$tmp/out" 2> "$tmp/err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "report_table --out unwritable: exit $rc"; }
scripts/sweep.sh no-such-deck 2> "$tmp/err" || true
has "$tmp/err" "sweep: error: unknown deck 'no-such-deck'"
# docs/benchmark.md's table of recorded machines is merge's output on docs/runs/*/submission.yaml (re-checked there)
"$py" scripts/report_table.py merge docs/runs/*/submission.yaml > "$tmp/machines.md" || fail "merge of docs/runs' submissions"
[ "$(grep -c '^| grayscott' "$tmp/machines.md")" -ge 1 ] || fail "no recorded machine in docs/runs"
while IFS= read -r line; do
  grep -qxF -- "$line" docs/benchmark.md || fail "docs/benchmark.md's table of recorded machines lacks: $line"
done < "$tmp/machines.md"
echo PASS
