# tests/lab_common.sh, sourced by lab_tests.sh and labnumbers_tests.sh: the
# three builds the lab needs, found from the reproducible one.
#   lab_builds BUILD_DIR  sets bdir (absolute) and prefix (build/X-reproducible
#     -> build/X-), or exits 77 (skip) when BUILD_DIR is not a reproducible
#     build or a sibling build lacks the miniapp or the sum study.
lab_builds() {
  bdir=$(cd "$1" && pwd) || exit 1
  case $bdir in *reproducible) prefix=${bdir%reproducible} ;; *) echo "SKIP: $bdir is not a reproducible build directory (its name must end in 'reproducible')"; exit 77 ;; esac
  for v in atomic deterministic reproducible; do
    for exe in miniapp/miniapp bench/sumstudy/miniapp-sumstudy; do
      [ -x "$prefix$v/$exe" ] || { echo "SKIP: $prefix$v/$exe is missing (the lab needs the three builds: scripts/setup.sh atomic deterministic reproducible)"; exit 77; }
    done
  done
}
