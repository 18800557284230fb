#!/usr/bin/env bash
# tests/install_tests.sh BUILD_DIR: cmake --install into a fresh prefix; the
# installed executables run an installed deck VALID, read from another
# working directory (no source tree on the way), and report the license; an
# outside project (tests/install_consumer) builds against the installed
# kernels' library with find_package and with pkg-config + cc, and its
# reproducible sums hold.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake --install "$build" --prefix "$tmp/p" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
share=$tmp/p/share/fpna-miniapp
for f in bin/miniapp bin/miniapp-compare bin/surrogate-train bin/bench_solver bin/bench_surrogate share/fpna-miniapp/LICENSE \
         share/fpna-miniapp/inputs/grayscott-small.opts share/fpna-miniapp/scripts/plot.py share/fpna-miniapp/docs/benchmark.md; do
  [ -e "$tmp/p/$f" ] || fail "not installed: $f"
done
mkdir "$tmp/work" && cd "$tmp/work" || fail "no work directory"
"$tmp/p/bin/miniapp" -options_file "$share/inputs/grayscott-small.opts" -threads 1 -report r.yaml > out.txt 2> err.txt || { cat err.txt; fail "the installed miniapp failed on the installed deck"; }
want='^official: true'; grep -q '^  revision: ".*-dirty"$' r.yaml && want='^official_why: .*source tree was modified' # a modified tree's build is never official
grep -q '^verdict: VALID' r.yaml && grep -q "$want" r.yaml && grep -q 'license: BSD-2-Clause' r.yaml || { grep -E 'verdict|official|license' r.yaml; fail "the installed run is not VALID, official and licensed"; }
"$tmp/p/bin/bench_solver" -bench_its 1 -bench_reps 1 -da_grid_x 64 -da_grid_y 64 > bench.txt 2>&1 || { cat bench.txt; fail "the installed bench_solver failed"; }
# the library to link: the build's C compiler (its OpenMP runtime is the library's), the installed tree only
src=$(cd "$(dirname "$0")/install_consumer" && pwd)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
for f in include/fpna-miniapp/reduce.h include/fpna-miniapp/rsum.h include/fpna-miniapp/gsum.h; do
  [ -e "$tmp/p/$f" ] || fail "not installed: $f"
done
[ ! -e "$tmp/p/include/fpna-miniapp/reduce_impl.h" ] || fail "an internal header was installed: reduce_impl.h"
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_C_COMPILER="${cc:-cc}" -DCMAKE_PREFIX_PATH="$tmp/p" > cmake.txt 2>&1 &&
  cmake --build "$tmp/consumer" >> cmake.txt 2>&1 ||
  { cat cmake.txt; fail "the outside project did not build with find_package(FPNAKernels)"; }
grep -q "^FPNAKernels_DIR:PATH=$tmp/p/" "$tmp/consumer/CMakeCache.txt" ||
  fail "find_package found another FPNAKernels: $(grep FPNAKernels_DIR "$tmp/consumer/CMakeCache.txt")"
"$tmp/consumer/consumer" > cmake-run.txt 2>&1 || { cat cmake-run.txt; fail "the find_package consumer failed"; }
pcfile=$(find "$tmp/p" -name fpna-kernels.pc | head -1)
[ -n "$pcfile" ] || fail "no fpna-kernels.pc installed"
pc=$(dirname "$pcfile")
flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs fpna-kernels) || fail "pkg-config does not read fpna-kernels.pc"
"${cc:-cc}" -o pkgc "$src/consumer.c" $flags > pkgc.txt 2>&1 ||
  { cat pkgc.txt; fail "the outside program did not build with pkg-config: $flags"; }
./pkgc > pkgc-run.txt 2>&1 || { cat pkgc-run.txt; fail "the pkg-config consumer failed"; }
grep -q '^PASS: consumer' cmake-run.txt && grep -q '^PASS: consumer' pkgc-run.txt || fail "a consumer did not pass"
# the installed docs' example, as written there
awk '/^## Linking the sums/ {on = 1} on && /^```c$/ {code = 1; next} code && /^```$/ {exit} code' \
  "$share/docs/reductions.md" > example.c
[ -s example.c ] || fail "no C example under docs/reductions.md's 'Linking the sums'"
"${cc:-cc}" -o example example.c $flags > example.txt 2>&1 && [ "$(./example)" = 1.5 ] ||
  { cat example.txt; fail "docs/reductions.md's example does not build or print 1.5"; }
sed 's/^/  /' cmake-run.txt | head -1
echo "PASS: installed to $tmp/p, deck grayscott-small VALID and official from $tmp/work;" \
  "the kernels' library linked with find_package and pkg-config"
