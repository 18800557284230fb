# tests/sumstudy_tests.sh CASE TOOL [PYTHON PLOT_SCRIPT]: miniapp-sumstudy
# (docs/fpna-sums.md). Cases:
#   alpha      per-element random order: alpha of max|V_s| near 1/2 on uniform
#              and normal data; the app's blocks cut V_s at large N
#   block      why the blocks do that: with the deterministic reference V_s is
#              exactly 0 for two blocks and not for one or three; -block works
#   threads    seeded results do not depend on the thread count; omp with one
#              thread is the index-ordered sum exactly
#   bad_input  one line, nonzero exit and no file for bad options; CUDA methods
#              skipped with one line without a GPU (refused when alone)
#   plot       scripts/sumstudy_plot.py makes a PNG (skipped, 77, without
#              matplotlib in PYTHON)
# The intervals come from 20 seeds at these settings (docs/fpna-sums.md).
set -u
case_=$1 tool=$(realpath "$2") py=${3:-/usr/bin/python3} plot=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# fit METHOD KEY FIELD < yaml: a number from "  method:\n    key: {..., field: v, ...}"
fit() { awk -v m="  $1:" -v k="    $2:" -v f="$3" '
  $0 == m { in_m = 1; next } /^  [^ ]/ { in_m = 0 }
  in_m && index($0, k) == 1 { if (match($0, f ": [-0-9.e+]+")) { print substr($0, RSTART + length(f) + 2, RLENGTH - length(f) - 2) } }'; }
# col CSV METHOD DIST N COLUMN: one value of the summary CSV
col() { awk -F, -v m="$2" -v d="$3" -v n="$4" -v c="$5" '
  /^#/ { next } $1 == "method" { for (i = 1; i <= NF; i++) h[$i] = i; next }
  $1 == m && $2 == d && $3 == n { print $(h[c]) }' "$1"; }
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x != "" && x >= lo && x <= hi) }'; }
ratio_at_least() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { exit !(b > 0 && a / b >= r) }'; }

case $case_ in
alpha)
  "$tool" -n 10:1e5:4 -arrays 100 -methods element,block -seed 1 -o "$tmp/a.csv" -samples "$tmp/s.csv" > "$tmp/a.yaml" 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "the run failed"; }
  cat "$tmp/a.yaml"
  # standard output is YAML (docs/fpna-sums.md), with an output path that needs quoting
  "$tool" -n 100 -arrays 2 -methods element -o "$tmp/odd: #name.csv" > "$tmp/q.yaml" 2> "$tmp/err" || { cat "$tmp/err"; fail "the run with an odd -o failed"; }
  /usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["sumstudy"]["output"] == sys.argv[2] and d["sumstudy"]["distributions"] == ["uniform", "normal"] and "element" in d["fits"], d' "$tmp/q.yaml" "$tmp/odd: #name.csv" ||
    { cat "$tmp/q.yaml"; fail "standard output is not the documented YAML"; }
  au=$(fit element uniform alpha < "$tmp/a.yaml") an=$(fit element normal alpha < "$tmp/a.yaml")
  amu=$(fit element uniform alpha_median < "$tmp/a.yaml") amn=$(fit element normal alpha_median < "$tmp/a.yaml")
  r2=$(fit element uniform r2 < "$tmp/a.yaml")
  # 20 seeds: uniform 0.455..0.512; normal 0.27..0.73 (the max follows the
  # array whose sum nearly cancels); medians 0.43..0.52
  within "$au" 0.40 0.60 || fail "element uniform alpha $au not in [0.40, 0.60]"
  within "$an" 0.20 0.80 || fail "element normal alpha $an not in [0.20, 0.80]"
  within "$amu" 0.35 0.60 || fail "element uniform alpha_median $amu not in [0.35, 0.60]"
  within "$amn" 0.35 0.60 || fail "element normal alpha_median $amn not in [0.35, 0.60]"
  within "$r2" 0.90 1 || fail "element uniform r2 $r2 below 0.9"
  # blocks of 1024 at N = 1e5: max ratio 20..48 (uniform), median ratio 12..31
  ratio_at_least "$(col "$tmp/a.csv" element uniform 100000 max_abs_vs)" "$(col "$tmp/a.csv" block uniform 100000 max_abs_vs)" 10 ||
    fail "block max|V_s| not 10x below element's at N=1e5 (uniform)"
  for d in uniform normal; do
    ratio_at_least "$(col "$tmp/a.csv" element $d 100000 q50_abs_vs)" "$(col "$tmp/a.csv" block $d 100000 q50_abs_vs)" 5 ||
      fail "block median |V_s| not 5x below element's at N=1e5 ($d)"
  done
  rows=$(grep -c '^element,uniform,100000,' "$tmp/s.csv")
  [ "$rows" = 100 ] || fail "-samples: $rows rows for element, uniform, N=1e5 (expected 100)"
  echo "ok: alpha uniform $au normal $an (medians $amu, $amn); block below element at 1e5"
  ;;
block)
  "$tool" -reference deterministic -methods block -n 1000,1025,2048,2049,4096,1e5 -dist uniform,normal -arrays 40 -orders 3 \
    -o "$tmp/b.csv" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; fail "the run failed"; }
  for d in uniform normal; do
    for n in 1025 2048; do # two partials: a + b == b + a, and the tree of two is a + b
      z=$(col "$tmp/b.csv" block $d $n zeros) s=$(col "$tmp/b.csv" block $d $n samples)
      [ "$z" = "$s" ] || fail "two blocks ($d, N=$n): $z of $s V_s are 0, expected all"
    done
    for n in 1000 2049 4096 100000; do # one block (elements permuted), three or more blocks
      z=$(col "$tmp/b.csv" block $d $n zeros) s=$(col "$tmp/b.csv" block $d $n samples)
      [ "$z" -lt "$s" ] || fail "$d, N=$n: every V_s is 0; the order should matter"
    done
  done
  "$tool" -methods element,block -block 256 -n 1e5 -dist uniform -arrays 30 -o "$tmp/c.csv" > /dev/null 2> "$tmp/err" ||
    { cat "$tmp/err"; fail "-block 256 failed"; }
  ratio_at_least "$(col "$tmp/c.csv" element uniform 100000 max_abs_vs)" "$(col "$tmp/c.csv" block uniform 100000 max_abs_vs)" 4 ||
    fail "-block 256: block max|V_s| not 4x below element's at N=1e5"
  echo "ok: two blocks give V_s = 0 exactly, one or three do not; -block 256 runs"
  ;;
threads)
  args=(-n 10:1e4:3,1e5 -arrays 20 -orders 2 -methods element,block -seed 7)
  "$tool" "${args[@]}" -threads 1 -o "$tmp/t1.csv" > /dev/null 2>&1 || fail "-threads 1 failed"
  "$tool" "${args[@]}" -threads 2 -o "$tmp/t2.csv" > /dev/null 2>&1 || fail "-threads 2 failed"
  "$tool" "${args[@]}" -threads 2 -o "$tmp/t3.csv" > /dev/null 2>&1 || fail "second -threads 2 run failed"
  strip() { grep -v '^#' "$1" | cut -d, -f1-15; } # all but sum_seconds
  [ "$(strip "$tmp/t1.csv")" = "$(strip "$tmp/t2.csv")" ] || fail "1 and 2 threads give different V_s"
  [ "$(strip "$tmp/t2.csv")" = "$(strip "$tmp/t3.csv")" ] || fail "two seeded runs give different V_s"
  sp=$(col "$tmp/t1.csv" element uniform 100000 spread)
  awk -v x="$sp" 'BEGIN { exit !(x > 0) }' || fail "element: two orders gave the same sums (spread $sp)"
  "$tool" -reference ordered -methods omp -threads 1 -n 1000,1e5 -arrays 5 -o "$tmp/o.csv" > /dev/null 2>&1 || fail "omp run failed"
  for d in uniform normal; do
    z=$(col "$tmp/o.csv" omp $d 100000 zeros)
    [ "$z" = 5 ] || fail "omp with one thread is not the index-ordered sum ($d: $z of 5 V_s are 0)"
  done
  echo "ok: same V_s for 1 and 2 threads and run to run; omp on one thread = ordered sum"
  ;;
bad_input)
  check() { # REGEX ARGS...: one matching line, nonzero exit, no file left
    rm -rf "$tmp/w"; mkdir "$tmp/w"
    (cd "$tmp/w" && "$tool" -o out.csv "${@:2}" > ../out 2> ../err)
    local rc=$?
    [ $rc != 0 ] || fail "exit 0 for: ${*:2}"
    [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "expected one line for: ${*:2}"; }
    grep -Eq -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "message does not match '$1' for: ${*:2}"; }
    [ ! -s "$tmp/out" ] || fail "output on stdout for: ${*:2}"
    [ -z "$(ls -A "$tmp/w")" ] || fail "files left behind for: ${*:2} ($(ls -A "$tmp/w"))"
    echo "ok ($rc): ${*:2} -> $(cat "$tmp/err")"
  }
  check '^miniapp-sumstudy: error: -arrays 0: ' -arrays 0
  check '^miniapp-sumstudy: error: -arrays 2.5: ' -arrays 2.5
  check '^miniapp-sumstudy: error: -orders -1: ' -orders -1
  check '^miniapp-sumstudy: error: -n 10:5:3: ' -n 10:5:3
  check '^miniapp-sumstudy: error: -n 0,10: ' -n 0,10
  check '^miniapp-sumstudy: error: -n 1e10: ' -n 1e10
  check '^miniapp-sumstudy: error: -n: given without a value' -n
  check '^miniapp-sumstudy: error: -methods elemnt: elemnt is unknown' -methods elemnt
  check '^miniapp-sumstudy: error: -dist gauss: gauss is unknown' -dist gauss
  check '^miniapp-sumstudy: error: -reference sorted: ' -reference sorted
  check '^miniapp-sumstudy: error: -block 0: ' -block 0
  check '^miniapp-sumstudy: error: -seed x: ' -seed x
  check '^miniapp-sumstudy: error: -threads 0: ' -threads 0
  check '^miniapp-sumstudy: error: -quik: unknown option' -quik
  check '^miniapp-sumstudy: error: quick: not an option' quick
  check '^miniapp-sumstudy: error: -o out.csv and -samples out.csv ' -samples out.csv
  check '^miniapp-sumstudy: error: -n 1000000000: .* memory' -n 1e9 -threads 1024
  check '^miniapp-sumstudy: error: -o .*: .*directory' -o /nonexistent/dir/x.csv
  # CUDA methods: a GPU runs them; without one they are skipped with one line,
  # and asked for alone they are refused (one line, exit 1)
  (cd "$tmp" && "$tool" -methods element,cuda-cub -n 100 -arrays 2 -o mix.csv > mix.out 2> mix.err) || { cat "$tmp/mix.err"; fail "element,cuda-cub failed"; }
  if grep -q cuda-cub "$tmp/mix.csv"; then
    (cd "$tmp" && "$tool" -methods cuda-element,cuda-block,cuda-tree,cuda-cub -n 100,1e5 -arrays 3 -orders 2 -o g.csv > /dev/null 2> g.err) ||
      { cat "$tmp/g.err"; fail "the CUDA methods failed on a GPU"; }
    echo "ok: GPU present, the CUDA methods ran"
  else
    [ "$(wc -l < "$tmp/mix.err")" = 1 ] && grep -q '^miniapp-sumstudy: skipping cuda-cub: ' "$tmp/mix.err" ||
      { cat "$tmp/mix.err"; fail "no GPU: expected one 'skipping cuda-cub' line"; }
    echo "ok: $(cat "$tmp/mix.err")"
    check '^miniapp-sumstudy: error: -methods cuda-cub: ' -methods cuda-cub
  fi
  ;;
plot)
  "$py" -c 'import matplotlib, numpy' 2> /dev/null || { echo "skipped: $py has no matplotlib/numpy"; exit 77; }
  "$tool" -n 10:1e4:3 -arrays 20 -methods element,block,omp -o "$tmp/p.csv" > /dev/null 2>&1 || fail "the run failed"
  out=$("$py" "$plot" "$tmp/p.csv" -o "$tmp/p.png") || fail "sumstudy_plot.py failed"
  [ "$out" = "$tmp/p.png" ] || fail "sumstudy_plot.py printed '$out'"
  [ "$(head -c 8 "$tmp/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
  [ "$(stat -c %s "$tmp/p.png")" -gt 20000 ] || fail "PNG suspiciously small"
  echo "x,y" > "$tmp/bad.csv"
  "$py" "$plot" "$tmp/bad.csv" > /dev/null 2> "$tmp/err" && fail "a CSV that is not a summary was accepted"
  [ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "expected one error line for a bad CSV"; }
  echo "ok: $out; bad CSV -> $(cat "$tmp/err")"
  ;;
*) fail "unknown case $case_" ;;
esac
