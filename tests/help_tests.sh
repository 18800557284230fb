#!/usr/bin/env bash
# tests/help_tests.sh SRC: every script a user runs answers -h and --help with
# its usage (the head of the file) and exit 0, before any work.
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
