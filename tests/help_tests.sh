#!/usr/bin/env bash
# tests/help_tests.sh SRC [BUILD]: every script a user runs answers -h and
# --help with its usage (the head of the file) and exit 0, before any work;
# with BUILD, every program answers -h, --help (its options) and --version
# (its name, the version and the source revision) with exit 0 and no work.
set -uo pipefail
src=$1 py=/usr/bin/python3 n=0
fail() { echo "FAIL: $*" >&2; exit 1; }
for s in "$src"/run.sh "$src"/test.sh "$src"/scripts/*.sh "$src"/scripts/*.py; do
  [ -x "$s" ] || continue # sourced libraries (launch.sh, manifest.sh)
  case $s in *.py) grep -q "__main__" "$s" || continue; cmd=("$py" "$s") ;; *) cmd=(bash "$s") ;; esac
  name=$(basename "$s")
  for h in -h --help; do
    out=$(timeout 30 "${cmd[@]}" $h 2>&1 < /dev/null); rc=$?
    [ $rc = 0 ] || fail "$name $h: exit $rc: $(echo "$out" | head -2)"
    echo "$out" | sed -n 1,3p | grep -q "${name%.*}" || fail "$name $h: no usage naming it: $(echo "$out" | head -2)"
  done
  n=$((n + 1))
done
[ $n -ge 15 ] || fail "only $n scripts checked: the scan is broken"
echo "PASS: $n scripts answer -h and --help"
[ $# -ge 2 ] || exit 0
b=$2 m=0
cd "$(mktemp -d)" || exit 1
for p in miniapp/miniapp miniapp/miniapp-compare miniapp/surrogate-train bench/bench_solver bench/bench_surrogate; do
  name=$(basename "$p")
  for h in -h --help --version; do
    out=$(OMP_NUM_THREADS=1 timeout 60 "$b/$p" $h 2>&1 < /dev/null); rc=$?
    [ $rc = 0 ] || fail "$name $h: exit $rc: $(echo "$out" | grep -v '^#' | head -2)"
    case $h in --version) echo "$out" | grep -q "^$name [0-9.]* (source revision " || fail "$name --version: no version line" ;;
      *) [ "$(echo "$out" | wc -l)" -ge 2 ] || fail "$name $h: no usage: $out" ;; esac
  done
  [ -z "$(ls)" ] || fail "$name: -h/--help/--version wrote files: $(ls)"
  m=$((m + 1))
done
echo "PASS: $m programs answer -h, --help and --version"
