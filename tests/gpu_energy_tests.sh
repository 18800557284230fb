#!/usr/bin/env bash
# tests/gpu_energy_tests.sh MINIAPP STUB_DIR: the report's run.gpu_energy_joules (miniapp/io/gpuenergy.c) through
# a stand-in NVML (tests/nvml_stub.c, built as STUB_DIR/libnvidia-ml.so.1): its two GPUs' counters rise 1.5 and
# 2.7 J between the run's start and its report, so the report says 4.2, in its file and stdout copies alike; one
# GPU's counter not supported, one that went backwards, or an NVML that does not start gives "not measured" for
# the whole figure (never the other GPU's part); no NVML at all gives "not measured"; and a submission's
# system.gpu_energy_joules is its repeats' mean, "not measured" where one repeat did not measure it.
set -u
app=$1 stub=$2
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$stub/libnvidia-ml.so.1" ] || fail "no stub library $stub/libnvidia-ml.so.1"
tiny() { # OUT [VAR=VALUE...]: a tiny run's report in OUT.yaml, its stdout in OUT.out
  local out=$1; shift
  (cd "$tmp" && env "$@" "$app" -scenario heat -da_grid_x 16 -da_grid_y 16 -ts_max_steps 2 -report "$out.yaml" \
    > "$out.out" 2>&1) || { cat "$tmp/$out.out"; fail "$out: the run failed"; }
}
gpu() { sed -n 's/^  gpu_energy_joules: //p' "$tmp/$1.yaml"; }
with_stub=("LD_LIBRARY_PATH=$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

tiny ok "${with_stub[@]}"
/usr/bin/python3 - "$tmp/ok.yaml" <<'PY' || fail "the stub's 4.2 J"
import sys, yaml
run = yaml.safe_load(open(sys.argv[1]))["run"]
assert list(run)[-2:] == ["energy_joules", "gpu_energy_joules"], list(run)
assert run["gpu_energy_joules"] == 4.2, run
PY
line="  gpu_energy_joules: 4.2  # all NVIDIA GPUs of rank 0's node (NVML), the whole run"
[ "$(grep -cxF "$line" "$tmp/ok.yaml")" = 1 ] && [ "$(grep -cxF "$line" "$tmp/ok.out")" = 1 ] ||
  { grep -n gpu_energy "$tmp/ok.yaml" "$tmp/ok.out"; fail "the file and stdout copies do not both say: $line"; }
echo "ok: the stub's two GPUs, 1.5 + 2.7 J: 4.2 J in the file and on stdout"
for mode in unsupported backwards init; do
  tiny "$mode" "${with_stub[@]}" NVML_STUB=$mode
  [ "$(gpu "$mode")" = '"not measured"' ] || fail "NVML_STUB=$mode: gpu_energy_joules is $(gpu "$mode"), not measured"
  echo "ok: NVML_STUB=$mode: not measured"
done
# without the stub: this machine's own NVML, if its driver has one (then a figure or "not measured")
tiny none
if /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libnvidia-ml.so.1")' 2> /dev/null; then
  /usr/bin/python3 -c 'import sys, yaml; g = yaml.safe_load(open(sys.argv[1]))["run"]["gpu_energy_joules"]
assert g == "not measured" or g >= 0, g' "$tmp/none.yaml" || fail "the driver's NVML: gpu_energy_joules is $(gpu none)"
  echo "note: this machine has an NVML: gpu_energy_joules $(gpu none)"
else
  [ "$(gpu none)" = '"not measured"' ] || fail "no NVML: gpu_energy_joules is $(gpu none)"
  echo "ok: no NVML: not measured"
fi
# a submission's mean (scripts/report_submission.py): two measured repeats, then one not measured among them
mkdir "$tmp/s1" "$tmp/s2"
tiny s1/r1 "${with_stub[@]}" && tiny s1/r2 "${with_stub[@]}"
cp "$tmp/s1/r1.yaml" "$tmp/s2/r1.yaml" && tiny s2/r2 "${with_stub[@]}" NVML_STUB=unsupported
for s in s1 s2; do
  /usr/bin/python3 "$root/scripts/report_table.py" submission "$tmp/$s" > "$tmp/$s.sub" 2> "$tmp/$s.err" ||
    { cat "$tmp/$s.err"; fail "report_table.py submission $s failed"; }
done
/usr/bin/python3 - "$tmp/s1.sub" "$tmp/s2.sub" <<'PY' || fail "the submissions' system.gpu_energy_joules"
import sys, yaml
g = [yaml.safe_load(open(p))["system"]["gpu_energy_joules"] for p in sys.argv[1:]]
assert g == [4.2, "not measured"], g
PY
echo "ok: the submissions' system.gpu_energy_joules: 4.2, then \"not measured\""
