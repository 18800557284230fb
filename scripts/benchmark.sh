#!/usr/bin/env bash
# scripts/benchmark.sh DECK [-launcher "mpiexec -n 4"] [-bin DIR] [-repeat N] [-min-seconds S] [-system NAME] [-tunable "OPTS"] [-python PY] -out DIR
# One benchmark submission (docs/benchmark.md): the deck as written (its run
# rules: a run that is not official stops the submission), N repeats
# (default 5) and more until the repeats' timed loops add up to the deck's
# minimum duration (-min-seconds raises it, never lowers it: small decks 0 s,
# medium 60 s, large 300 s), each VALID, the golden hashes checked where the build
# promises them; then DIR/submission.yaml (FOM mean, min, max, coefficient of
# variation; the system, the machine, the build; official only within the
# noise rules) and DIR/submission.yaml.md.
#   DECK      a deck name (inputs/DECK.opts, or P/share/fpna-miniapp/inputs of
#             an installed tree) or an options file
#   -launcher how to start the ranks, e.g. "srun -n 64" or "mpiexec -n 4
#             --hostfile hosts" (default: one process, no launcher)
#   -bin DIR  an install prefix (DIR/bin/miniapp) or a build directory
#             (DIR/miniapp/miniapp); default build/reproducible
#   -system   the system's name in the submission and the merged table
#             (default: the host name the reports give)
#   -tunable  options added to every repeat, e.g. "-solver_device cuda": only
#             those the run rules leave free (docs/benchmark.md); any other
#             makes the runs not official, and the submission stops
#   -python   the Python for the tables (default: python3 on PATH)
# Merge the submissions of several machines with
#   scripts/report_table.py merge A/submission.yaml B/submission.yaml
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the head above is the usage
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "benchmark: error: $*" >&2; exit 1; }
usage="usage: scripts/benchmark.sh DECK [-launcher CMD] [-bin DIR] [-repeat N] [-min-seconds S] [-system NAME] [-tunable OPTS] [-python PY] -out DIR"
[ $# -ge 1 ] || die "$usage"
deck=$1; shift
launcher="" bin="" repeat=5 out="" py=python3 minsec="" system="" tunable=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    -launcher) launcher=$2 ;;
    -tunable) tunable=$2 ;;
    -bin) bin=$2 ;;
    -repeat) [[ $2 =~ ^[1-9][0-9]{0,3}$ ]] || die "-repeat ${2//$'\n'/\\n}: must be a whole number from 1 to 9999"; repeat=$2 ;;
    -python) py=$2 ;;
    -min-seconds) [[ $2 =~ ^[0-9]{1,7}$ ]] || die "-min-seconds ${2//$'\n'/\\n}: must be a whole number of seconds (at most 9999999)"; minsec=$2 ;;
    -out) out=$2 ;;
    -system) [[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9\ ._+-]*$ ]] || die "-system '${2//$'\n'/\\n}': letters, digits, spaces and ._+- only"; system=$2 ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
  shift 2
done
[ -n "$out" ] || die "-out DIR is required ($usage)"
command -v "$py" > /dev/null || die "-python $py: not found"
"$py" -c "import yaml" 2> /dev/null || die "-python $py: has no PyYAML (Debian: python3-yaml)"
if [ -z "$bin" ]; then bin=$here/../build/reproducible; fi
app=""
for c in "$bin/bin/miniapp" "$bin/miniapp/miniapp" "$bin/miniapp"; do [ -f "$c" ] && [ -x "$c" ] && { app=$c; break; }; done
[ -n "$app" ] || die "-bin $bin: no bin/miniapp, miniapp/miniapp or miniapp there"
opts=""
if [ -f "$deck" ]; then opts=$deck
else for c in "$here/../inputs/$deck.opts" "$here/../share/fpna-miniapp/inputs/$deck.opts" "$(dirname "$app")/../share/fpna-miniapp/inputs/$deck.opts"; do [ -f "$c" ] && { opts=$(cd "$(dirname "$c")" && pwd)/$(basename "$c"); break; }; done; fi
[ -n "$opts" ] || die "unknown deck '$deck' (not a file, not in inputs/)"
# the run rules' minimum timed duration of a submission (docs/benchmark.md):
# enough repeats for the statistics to mean something on a fast machine
dname=$(sed -n 's/^[[:space:]]*-deck_name[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p' "$opts" | tail -n 1) # the name the report carries (report_submission.py judges by it)
case ${dname:-$(basename "$opts" .opts)} in
  *-medium | *-weak) rule=60 ;;
  *-large) rule=300 ;;
  *) rule=0 ;;
esac
[ -z "$minsec" ] || [ "$minsec" -ge "$rule" ] || die "-min-seconds $minsec: below the deck's minimum of $rule s (the run rules)"
minsec=${minsec:-$rule}
mkdir -p "$out" 2> /dev/null || die "-out $out: cannot create it"
[ -w "$out" ] || die "-out $out: not writable"
. "$here/manifest.sh"
manifest_begin "$out" benchmark.sh # replaces only what an earlier submission wrote here, and only if this one ends well
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
read -r -a launch <<< "$launcher"
read -r -a tune <<< "$tunable"
timed=0 k=0
while [ $k -lt "$repeat" ] || awk -v t="$timed" -v m="$minsec" 'BEGIN { exit !(t < m) }'; do
  k=$((k + 1))
  [ $k -le 10000 ] || die "10000 repeats did not reach $minsec s of timed runs"
  manifest_add "r$k.yaml"; manifest_add "r$k.log"
  rc=0
  manifest_run "${launch[@]}" "$app" -options_file "$opts" "${tune[@]}" -report "$out/r$k.yaml" > "$out/r$k.log" 2>&1 || rc=$?
  [ $rc = 0 ] || die "repeat $k: exit $rc ($(grep -m1 'error:' "$out/r$k.log" || grep -m1 '^verification_detail' "$out/r$k.log" || tail -n 1 "$out/r$k.log"))"
  official=$(sed -n 's/^official: //p' "$out/r$k.yaml")
  [ "$official" = true ] || die "repeat $k: not an official run of the deck ($(sed -n 's/^official_why: //p' "$out/r$k.yaml"))"
  total=$(sed -n '/^timing:/,/^[a-z]/s/^  total: //p' "$out/r$k.yaml")
  timed=$(awk -v a="$timed" -v b="${total:-0}" 'BEGIN { printf "%.6f", a + b }')
  echo "benchmark: repeat $k/$repeat: VALID, official, FOM $(sed -n '/^fom:/,/^[a-z]/s/^  value: //p' "$out/r$k.yaml"), $timed of $minsec s timed"
done
manifest_add submission.yaml; manifest_add submission.yaml.md
"$py" "$here/report_table.py" submission "$out" --min-seconds "$minsec" --command "${launcher:+$launcher }$app -options_file $opts${tunable:+ $tunable}" --system "$system" --out "$out/submission.yaml" > /dev/null
manifest_end
echo "benchmark: $out/submission.yaml and $out/submission.yaml.md: official $(sed -n 's/^official: //p' "$out/submission.yaml")$(sed -n 's/^official_why: \(.\{1,\}\)/ (\1)/p' "$out/submission.yaml" | grep -v '(null)')"
