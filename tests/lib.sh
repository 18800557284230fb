# tests/lib.sh: shared by the end-to-end test scripts. Expects $app (the
# miniapp executable); gives a scratch directory $tmp and helpers.
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# key VALUE from a summary file
key() { sed -n "s/^$2: *//p" "$1" | tr -d '"'; }
run() { # run OUT [-np N] ARGS...: summary in OUT, must be VALID
  local out=$1; shift
  local np=1
  if [ "$1" = "-np" ]; then np=$2; shift 2; fi
  if [ "$np" = 1 ]; then "$app" "$@" -summary "$out" > "$out.log" 2>&1
  else mpiexec -n "$np" "$app" "$@" -summary "$out" > "$out.log" 2>&1; fi
  local rc=$?
  [ $rc = 0 ] || { cat "$out.log"; fail "exit $rc for: $app $*"; }
  [ "$(key "$out" verification)" = VALID ] || fail "not VALID: $*"
}
# check REGEX ARGS...: bad input gives one matching line on stderr, a nonzero
# exit and leaves no summary or NetCDF file (nor a partial one) behind
check() {
  local re=$1; shift
  rm -rf "$tmp/chk"; mkdir -p "$tmp/chk"
  local sum=(-summary "$tmp/chk/out.yaml")
  case " $* " in *" -summary "*) sum=() ;; esac
  (cd "$tmp/chk" && "$app" "$@" "${sum[@]}" > ../stdout 2> ../stderr)
  local rc=$?
  [ $rc != 0 ] || fail "exit 0 for bad input: $*"
  [ "$(wc -l < "$tmp/stderr")" = 1 ] || { cat "$tmp/stderr"; fail "expected one error line for: $*"; }
  grep -Eq -- "$re" "$tmp/stderr" || { cat "$tmp/stderr"; fail "message does not match '$re' for: $*"; }
  [ -z "$(ls -A "$tmp/chk")" ] || fail "files left behind for: $* ($(ls -A "$tmp/chk"))"
  echo "ok ($rc): $* -> $(cat "$tmp/stderr")"
}
