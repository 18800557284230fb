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
echo "architecture: $n paths exist; the layers hold"
