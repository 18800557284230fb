#!/usr/bin/env bash
# tests/architecture_tests.sh SRC: docs/architecture.md against the tree.
# Every path it names in backticks exists, and the layers it describes hold:
# kernels/, solver/, surrogate/ and bench/ include no header of miniapp/; solver/ and
# surrogate/ include none of each other's; kernels/ includes no PETSc or MPI.
set -euo pipefail
src=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
page=$src/docs/architecture.md
[ -f "$page" ] || fail "no docs/architecture.md"
n=0
# a path: a backticked word that holds a slash (folders end with one)
for p in $(grep -o '`[A-Za-z0-9_./-]*/[A-Za-z0-9_./-]*`' "$page" | tr -d '`' | sort -u); do
  [ -e "$src/$p" ] || fail "docs/architecture.md names $p, which does not exist"
  n=$((n + 1))
done
[ "$n" -ge 30 ] || fail "only $n paths found in docs/architecture.md: the scan is broken"
# headers each folder owns, by file name (includes are by name, through include paths)
owned() { (cd "$src/$1" && find . -name '*.h' -o -name '*.cuh' | sed 's#.*/##' | sort -u); }
includes() { # the quoted includes of folder $1's sources
  grep -rhoE '#include "[^"]+"' "$src/$1" --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
    | sed 's/#include "\(.*\)"/\1/' | sed 's#.*/##' | sort -u
}
check() { # folder $1 must include none of folder $2's headers
  local bad
  bad=$(comm -12 <(includes "$1") <(owned "$2") | tr '\n' ' ')
  [ -z "$bad" ] || fail "$1/ includes headers of $2/: $bad"
}
for low in kernels solver surrogate bench; do check $low miniapp; done
check solver surrogate
check surrogate solver
! grep -rlE '#include [<"](petsc|mpi)' "$src/kernels" --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
  || fail "kernels/ includes PETSc or MPI (files above)"
# one list of the options a benchmark run may change: the report checker's (scripts/report_checks.py) is the header's
"${PYTHON:-python3}" - "$src" <<'PY' || fail "scripts/report_checks.py's TUNABLE differs from miniapp/io/freeopts.h's FREE_DECK rows"
import re, sys
src = sys.argv[1]
rows = re.findall(r'\{"(-[^"]+)", ([A-Z |]+)\}', open(src + "/miniapp/io/freeopts.h").read())
deck = {n for n, w in rows if "ALL" in w or re.search(r"\bD\b", w)}
exact, prefixes = {n for n in deck if not n.endswith("*")}, [n[:-1] for n in deck if n.endswith("*")]
tun = set(re.search(r"TUNABLE = \{([^}]*)\}", open(src + "/scripts/report_checks.py").read()).group(1).replace('"', "")
          .replace(",", " ").split())
extra = {t for t in tun - exact if not any(t.startswith(p) for p in prefixes)}
if exact - tun or extra:
    print("missing in TUNABLE:", sorted(exact - tun), "not free in freeopts.h:", sorted(extra))
    sys.exit(1)
PY
echo "architecture: $n paths exist; the layers hold; one list of the tunable options"
