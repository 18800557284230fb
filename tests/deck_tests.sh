#!/usr/bin/env bash
# tests/deck_tests.sh: the proxy-app decks and report. One ctest entry each:
# deck_tests.sh NAME MINIAPP SOLVER_STRATEGY SURROGATE_STRATEGY
#   small_DECK  the deck runs VALID; the -report is YAML with the documented
#               keys; golden hashes match in a reproducible build and are
#               "not applicable" otherwise
#   tampered    a wrong golden hash makes a reproducible build INVALID (exit 2)
#   readings    the report's phases, rates and counts mean what they say
set -u
name=$1 app=$2 ssolver=$3 ssurr=$4
. "$(dirname "$0")/lib.sh"
inputs=$(cd "$(dirname "$0")/../inputs" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
repro=0; [ "$ssolver" = reproducible ] && [ "$ssurr" = reproducible ] && repro=1

case $name in
small_*)
  deck=${name#small_}-small
  run "$tmp/s" -options_file "$inputs/$deck.opts" -report "$tmp/r.yaml"
  /usr/bin/python3 - "$tmp/r.yaml" $repro <<'PY' || fail "report of $deck"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1])); repro = sys.argv[2] == "1"
need = {"machine": ["hostname", "cpu", "ranks", "ranks_per_node", "threads", "mpi_library", "peak_memory_mib_per_rank", "device",
                    "nodes", "node_names", "binding", "cores_online", "cores_total", "sockets", "vector_isa", "cpu_flags", "memory_gib", "os", "kernel",
                    "arch", "netcdf_library", "blas_library", "petsc_configure", "environment", "cpu_mhz_max", "threads_per_core",
                    "numa_nodes", "gpu", "stream_triad_gbs"],
        "run": ["id", "start", "host", "pid", "load_before", "load_after", "energy_joules", "gpu_energy_joules"],
        "build": ["compiler", "flags", "solver_reduction", "surrogate_reduction", "cuda"],
        "problem": ["scenario", "grid", "steps", "replicas", "coupling", "memory_at_least_gib_per_rank"],
        "solver": ["device", "loop_vector_copies", "iterations_total", "seconds_per_iteration", "achieved_gbs"],
        "surrogate": ["train_samples_per_s", "inference_points_per_s"],
        "coupling": ["mode", "ksp_iterations"],
        "timing": ["total", "solve", "features", "predict", "train", "time_per_step"],
        "verification": ["state_hash", "golden_state_hash", "weights_hash", "golden_weights_hash", "repeat_residual_variance"],
        "fom": ["value", "unit", "definition"]}
for sec, keys in need.items():
    for k in keys:
        assert k in d[sec], f"report lacks {sec}.{k}"
assert d["verdict"] == "VALID" and d["fom"]["value"] > 0 and d["machine"]["stream_triad_gbs"] > 0
assert d["date"].endswith("Z") and d["machine"]["peak_memory_mib_per_rank"]["max"] > 0
mem = d["problem"]["memory_at_least_gib_per_rank"]  # a bound counted before the set-up: below what the run took
assert 0 < mem["host"] * 1024 <= d["machine"]["peak_memory_mib_per_rank"]["max"] and mem["device"] == 0, mem
assert d["solver"]["device"] == "cpu" and d["solver"]["loop_vector_copies"] == 0, d["solver"]
run = d["run"]  # one run: 128 random bits, its start in UTC to the microsecond, this process; the load it ran under
assert len(run["id"]) == 32 and int(run["id"], 16) >= 0 and run["start"].endswith("Z") and run["pid"] > 0, run
assert all(len(run[k]) == 3 and min(run[k]) >= 0 for k in ("load_before", "load_after")), run
assert all(run[k] == "not measured" or run[k] >= 0 for k in ("energy_joules", "gpu_energy_joules")), run
assert d["build"]["deck_committed"] in (True, False, None) and d["machine"]["numa_nodes"] in (None,) + tuple(range(1, 4097)), d["build"]
g = d["verification"]["golden_state_hash"], d["verification"]["golden_weights_hash"]
if repro: assert g == ("match", "match"), g
else: assert all(x.startswith("not applicable") for x in g), g
print("report keys ok; golden:", g, "FOM", d["fom"]["value"], d["fom"]["unit"])
PY
  # stdout is a YAML stream: the banner and notes are comments, the summary
  # and the report two documents
  view=(); [ "$deck" = grayscott-small ] && view=(-surrogate_view) # its lines are comments too (they were a spurious 'Surrogate' key)
  "$app" -options_file "$inputs/$deck.opts" "${view[@]}" -report "$tmp/r2.yaml" > "$tmp/stdout.yaml" 2> /dev/null || fail "rerun of $deck"
  /usr/bin/python3 - "$tmp/stdout.yaml" <<'PY' || fail "stdout of $deck is not a YAML stream"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
assert len(docs) == 2 and docs[0]["verification"] == "VALID" and docs[1]["verdict"] == "VALID", [type(d) for d in docs]
print("stdout: a YAML stream of", len(docs), "documents")
PY
  # the user's start-up: without GOMP_SPINCOUNT (the suite sets it, tests/CMakeLists.txt) the miniapp re-executes
  # itself to set it (kernels/spincount.h), and the report's environment says so
  if [ "$deck" = heat-small ]; then
    env -u GOMP_SPINCOUNT "$app" -scenario heat -da_grid_x 8 -da_grid_y 8 -ts_max_steps 1 -report "$tmp/spin.yaml" > /dev/null 2>&1 || fail "the run without GOMP_SPINCOUNT failed"
    grep -q '^    GOMP_SPINCOUNT: "2000"$' "$tmp/spin.yaml" || { grep -A3 environment "$tmp/spin.yaml"; fail "without GOMP_SPINCOUNT the run did not re-execute itself with GOMP_SPINCOUNT=2000"; }
    echo "ok: the re-execution sets GOMP_SPINCOUNT=2000"
  fi
  # -version: the versions and no run (it ran the whole problem, then printed PETSc's banner after the summary)
  (cd "$tmp" && "$app" -version > version.txt 2> version.err) || fail "-version: exit $?"
  head -n 1 "$tmp/version.txt" | grep -Eq '^miniapp [^ ]+ \(source revision [^)]+\): solver reduction [a-z]+, surrogate reduction [a-z]+; Petsc Release Version 3' &&
    ! grep -q '^verification' "$tmp/version.txt" || { cat "$tmp/version.txt"; fail "-version: not the versions alone"; }
  # -log_view: the project's kernels log their flops (the Mflop/s column means something)
  short=(-scenario "${name#small_}" -da_grid_x 16 -da_grid_y 16 -ts_max_steps 2 -coupling guess) # not the deck: its golden hashes hold for its full length
  "$app" "${short[@]}" -surrogate_device cpu -log_view ":$tmp/log.txt" > /dev/null 2>&1 || fail "-log_view run failed"
  for ev in MatMult VecTDot VecNorm VecCGTail; do # VecCGTail: the default CG's fused tail
    awk -v e=$ev '$1 == e {f = $6} END {exit !(f > 0)}' "$tmp/log.txt" || fail "-log_view: $ev logs no flops"
  done
  # the CPU train step's two parts, once per train step each (docs/performance.md)
  for ev in SurrGradPass SurrGradSums; do
    awk -v e=$ev '$1 == "CplTrain" {t = $2} $1 == e {c = $2} END {exit !(t > 0 && c == t)}' "$tmp/log.txt" || fail "-log_view: $ev is not logged once per train step (CplTrain)"
  done
  # the reproducible gradient sums are made in the pass under the last step's row exponents: the second
  # pass (SurrGradResum) runs on the first train step and where a row's exponent changed, not on every step
  if [ "$ssurr" = reproducible ]; then
    "$app" "${short[@]}" -ts_max_steps 8 -surrogate_device cpu -log_view ":$tmp/log8.txt" > /dev/null 2>&1 || fail "-log_view run failed (8 steps)"
    awk '$1 == "CplTrain" {t = $2} $1 == "SurrGradResum" {c = $2} END {print "train steps", t, "second passes", c; exit !(c >= 1 && c < t)}' "$tmp/log8.txt" ||
      fail "-log_view: SurrGradResum absent or on every train step: the reproducible sums are not made in the pass"
  fi
  # the report's train and metrics times are the CplTrain and CplMetrics events: the epochs' observation was timed as
  # training (with many replicas and a wide network, 0.25 s of 0.9: the FOM and the training rates 22% low)
  "$app" "${short[@]}" -da_grid_x 8 -da_grid_y 8 -ts_max_steps 4 -coupling_baselines 0 -replicas 6 -surrogate_layers 128,128 -log_view ":$tmp/log3.txt" -report "$tmp/r3.yaml" > /dev/null 2>&1 || fail "-log_view -report run failed"
  /usr/bin/python3 - "$tmp/log3.txt" "$tmp/r3.yaml" <<'PY' || fail "the report's timing.train or timing.metrics is not its -log_view event"
import sys, yaml
ev = {l.split()[0]: float(l.split()[3]) for l in open(sys.argv[1]) if l.split()[:1] in (["CplTrain"], ["CplMetrics"])}
t = yaml.safe_load(open(sys.argv[2]))["timing"]
print("train", t["train"], "CplTrain", ev["CplTrain"], "metrics", t["metrics"], "CplMetrics", ev["CplMetrics"])
sys.exit(0 if all(abs(t[k] - ev[e]) <= 0.02 * ev[e] + 2e-3 for k, e in (("train", "CplTrain"), ("metrics", "CplMetrics"))) else 1)
PY
  "$app" "${short[@]}" -ksp_type cg -log_view ":$tmp/log2.txt" > /dev/null 2>&1 || fail "-log_view run failed (-ksp_type cg)"
  awk '$1 == "VecAXPY" {f = $6} END {exit !(f > 0)}' "$tmp/log2.txt" || fail "-log_view: VecAXPY logs no flops (-ksp_type cg)"
  # -report auto: a new name per run
  (cd "$tmp" && "$app" "${short[@]}" -deck_name "$deck" -report auto > auto.log 2>&1) || fail "-report auto failed"
  ls "$tmp"/report-$deck-*Z-*.yaml > /dev/null 2>&1 || fail "-report auto wrote no report-$deck-<date>-<host>-<pid>.yaml"
  # three runs started together: three reports (the names carry host and pid)
  mkdir "$tmp/auto3"
  for i in 1 2 3; do (cd "$tmp/auto3" && "$app" "${short[@]}" -deck_name "$deck" -report auto > /dev/null 2>&1) & done
  wait
  [ "$(ls "$tmp/auto3" | grep -c '^report-.*\.yaml$')" = 3 ] || fail "three simultaneous -report auto runs left $(ls "$tmp/auto3" | tr '\n' ' ')"
  ;;
readings) # the report's numbers mean what docs/running.md says: phases >= 0 (timing.metrics was negative with
  # -output), rates over the work of this process (re-done steps after a rollback; every rank's points, also on a
  # layout whose ranks hold different counts), the closure's switch step counted as every step field
  rd=(-options_file "$inputs/default.opts" -da_grid_x 16 -da_grid_y 12 -ts_max_steps 12 -threads 1)
  run "$tmp/m" "${rd[@]}" -report "$tmp/m.yaml" -output "$tmp/m.nc"
  rm -f "$tmp/rb.bin"
  run "$tmp/b" "${rd[@]}" -inject site=state,step=11,bit=62 -fault_action rollback -checkpoint "$tmp/rb.bin" -checkpoint_every 5 -report "$tmp/b.yaml"
  run "$tmp/o" -np 2 -options_file "$inputs/default.opts" -da_grid_x 15 -da_grid_y 12 -ts_max_steps 6 -replicas 1 -threads 1 -report "$tmp/o.yaml"
  run "$tmp/c" -scenario grayscott -da_grid_x 16 -da_grid_y 12 -ts_max_steps 40 -coupling closure -closure_warmup 5 -closure_tol 0.5 -output "$tmp/c.nc"
  # a network that never trained, and a run of no step: no loss, no rate, no mean (.nan), never 0 or the string nan
  run "$tmp/n" -scenario grayscott -da_grid_x 13 -da_grid_y 7 -ts_max_steps 5 -coupling guess -train_every 100 -replicas 2 -report "$tmp/n.yaml"
  "$app" -scenario grayscott -da_grid_x 7 -da_grid_y 5 -ts_max_steps 0 -coupling guess -summary "$tmp/z" > /dev/null 2>&1
  /usr/bin/python3 - "$tmp" <<'PY' || fail "report readings"
import sys, yaml, netCDF4
t = sys.argv[1]
m = yaml.safe_load(open(t + "/m.yaml"))["timing"]
for k in ("solve", "features", "predict", "train", "metrics", "output", "baselines"):
    assert m[k] >= 0, f"timing.{k} = {m[k]} < 0 with -output"
b = yaml.safe_load(open(t + "/b.yaml"))
assert b["timing"]["timed_steps"] > b["problem"]["steps"], f"a rollback re-did steps, but timed_steps {b['timing']['timed_steps']} <= steps {b['problem']['steps']}"
assert b["timing"]["timed_iterations"] > b["solver"]["iterations_total"], "the re-done steps' iterations are not in timed_iterations"
o = yaml.safe_load(open(t + "/o.yaml"))
per_epoch = o["surrogate"]["train_samples_per_s"] * o["timing"]["train"] / o["surrogate"]["epochs"]
assert abs(per_epoch / (15 * 12) - 1) < 1e-5 + 6e-7 / o["timing"]["train"], f"2 ranks, 15 x 12 points: {per_epoch} samples per epoch"  # train: printed to 1e-6 s
nc = netCDF4.Dataset(t + "/c.nc")
steps, err = nc["step"][:], nc["closure_error"][:, 0]
s = yaml.safe_load(open(t + "/c"))
if s["closure_switches"] == 1:
    first = min(int(st) for st, e in zip(steps, err) if st - 1 >= 5 and e <= 0.5)
    assert s["closure_last_switch_step"] == first, f"closure_last_switch_step {s['closure_last_switch_step']}, but the first step the learned term was on is {first}"
isnan = lambda v: isinstance(v, float) and v != v
n, nr = yaml.safe_load(open(t + "/n")), yaml.safe_load(open(t + "/n.yaml"))
assert n["train_epochs_total"] == 0 and isnan(n["final_loss"]), f"no epoch trained, final_loss {n['final_loss']!r}"
assert all(isnan(v) for v in n["replica_final_loss"] + n["replica_final_loss_vs"]), f"replica_final_loss {n['replica_final_loss']}"
assert isnan(nr["surrogate"]["train_samples_per_s"]) and isnan(nr["surrogate"]["train_gflops"]), f"no training timed, train_samples_per_s {nr['surrogate']['train_samples_per_s']!r}"
z = yaml.safe_load(open(t + "/z"))
assert isnan(z["start_residual_geomean_none"]), f"no solve, start_residual_geomean_none {z['start_residual_geomean_none']!r}"
print("readings ok")
PY
  # a 14 kB command line and a 3 kB path: the report holds both whole, read back as YAML
  long=$tmp/l
  for i in $(seq 1 30); do long=$long/$(printf 'd%.0s' $(seq 1 100)); done
  mkdir -p "$long"
  many=(); for i in $(seq 1 1000); do many+=(-ts_dt 1.0); done
  cl=("$app" -scenario heat -da_grid_x 8 -da_grid_y 8 -ts_max_steps 1 -coupling none "${many[@]}" -report "$long/r.yaml")
  "${cl[@]}" > /dev/null 2>&1 || fail "a run with a 14 kB command line and a 3 kB report path"
  CL="${cl[*]}" /usr/bin/python3 - "$long/r.yaml" <<'PY' || fail "the report's command_line or file is not whole"
import os, sys, yaml
r = yaml.safe_load(open(sys.argv[1]))
assert r["command_line"] == os.environ["CL"], f"command_line: {len(r['command_line'])} characters of {len(os.environ['CL'])}"
assert r["file"] == sys.argv[1], f"file: {len(r['file'])} characters of {len(sys.argv[1])}"
PY
  ;;
chaos) # the chaos deck, shortened: VALID; replicas leave each other's bits only in an atomic build
  run "$tmp/c" -options_file "$inputs/chaos.opts" -ts_max_steps 120
  fds=$(key "$tmp/c" replica_first_divergent_step | tr -d '[] ' | cut -d, -f2)
  grep -q '^replica_growth_decades_per_1000_steps:' "$tmp/c" || fail "chaos: no growth rate in the summary"
  if [ "$ssolver" = atomic ] || [ "$ssurr" = atomic ]; then
    [ "$fds" -ge 0 ] || fail "chaos: the atomic build's replicas never diverged"
  else
    [ "$fds" = -1 ] || fail "chaos: replicas diverged (step $fds) in a build without atomics"
  fi
  echo "chaos deck (120 steps): replica 1 first divergent step $fds, rel_l2 $(key "$tmp/c" replica_final_rel_l2)"
  ;;
tampered)
  "$app" -options_file "$inputs/grayscott-small.opts" -golden_state_hash 0x0123456789abcdef -report "$tmp/t.yaml" > "$tmp/t.log" 2>&1
  rc=$?
  v=$(sed -n 's/^verdict: //p' "$tmp/t.yaml")
  echo "exit $rc, verdict $v: $(grep golden_state "$tmp/t.yaml")"
  if [ $repro = 1 ]; then [ $rc = 2 ] && [ "$v" = INVALID ] || fail "a tampered golden hash must give INVALID and exit 2"
  else [ $rc = 0 ] && [ "$v" = VALID ] && grep -q 'golden_state_hash: "not applicable' "$tmp/t.yaml" || fail "golden check must be 'not applicable' here"; fi
  # run rules (docs/benchmark.md): the deck as written is official; a changed
  # physics or tolerance is not, and the report names what changed
  [ "$(sed -n 's/^official: //p' "$tmp/t.yaml")" = false ] || fail "a run with a changed golden hash was official"
  "$app" -options_file "$inputs/grayscott-small.opts" -threads 1 -ksp_type cg -report "$tmp/o.yaml" > /dev/null 2>&1
  if grep -q '^  revision: ".*-dirty"$' "$tmp/o.yaml"; then # a build of a modified tree (a developer's) is never official, and says why
    grep -q '^official: false' "$tmp/o.yaml" && grep -q '^official_why: .*source tree was modified' "$tmp/o.yaml" || { grep -E '^official|revision' "$tmp/o.yaml"; fail "a build of a modified source tree was official"; }
  else
    [ "$(sed -n 's/^official: //p' "$tmp/o.yaml")" = true ] || { grep -E '^official|^modified' "$tmp/o.yaml"; fail "the deck as written (tunables aside) was not official"; }
  fi
  # which embedded deck is its revision's (cmake/decks.cmake, cmake/revision.cmake), on a scratch repository: a committed
  # deck, the same deck edited, one never committed, and a tree without git (a tarball)
  g=$tmp/git; mkdir -p "$g/inputs" && printf -- '-deck_name a\n' > "$g/inputs/a.opts" && git -C "$g" init -q && git -C "$g" add inputs/a.opts &&
    git -C "$g" -c user.name=t -c user.email=t@t commit -qm a && printf -- '-deck_name b\n' > "$g/inputs/b.opts" || fail "scratch repository"
  gen() { cmake -DSRC="$1" -DOUT="$tmp/decks.c" -P "$root/cmake/decks.cmake" && cmake -DSRC="$1" -DOUT="$tmp/rev.c" -P "$root/cmake/revision.cmake" || fail "decks.cmake failed"; }
  committed() { sed -n "s/.*\"$1\")) return \(-\{0,1\}[01]\);/\1/p" "$tmp/decks.c"; }
  gen "$g"; [ "$(committed a)" = 1 ] && [ "$(committed b)" = 0 ] && ! grep -q dirty "$tmp/rev.c" || { cat "$tmp/decks.c" | grep return; fail "decks.cmake: a committed deck is not 1 or an uncommitted one not 0"; }
  printf -- '-ts_max_steps 4\n' >> "$g/inputs/a.opts"
  gen "$g"; [ "$(committed a)" = 0 ] && grep -q -- '-dirty"' "$tmp/rev.c" || { grep return "$tmp/decks.c"; cat "$tmp/rev.c"; fail "decks.cmake: an edited deck is taken for the revision's"; }
  mkdir "$tmp/tar" && cp -r "$g/inputs" "$tmp/tar/" && GIT_CEILING_DIRECTORIES=$tmp gen "$tmp/tar"
  [ "$(committed a)" = -1 ] && grep -q '"unknown"' "$tmp/rev.c" || { grep return "$tmp/decks.c"; fail "decks.cmake: a tree without git is not 'revision unknown'"; }
  echo "ok: decks.cmake: committed 1, edited 0, never committed 0, no git -1"
  # the bytes an iteration moves are the run's Krylov method's (docs/running.md): the fused CG's and PETSc CG's
  # counts there; none in the atomic build (its scatter operator's traffic is not counted)
  docs=$(dirname "$0")/../docs/running.md
  pf=$(sed -n 's/.*`fpnacg` with both fusions: \([0-9]*\) passes.*/\1/p' "$docs")
  pc=$(sed -n 's/.*`cg` (PETSc.s CG.*: \([0-9]*\) passes.*/\1/p' "$docs")
  bpu() { sed -n 's/^  bytes_per_unknown_iteration: //p' "$1"; }
  bf=$(bpu "$tmp/t.yaml") bc=$(bpu "$tmp/o.yaml")
  echo "bytes per unknown and iteration: fpnacg $bf, cg $bc (docs: $pf and $pc passes)"
  [ -n "$pf" ] && [ -n "$pc" ] && [ "$pf" != "$pc" ] || fail "docs/running.md does not state the two counts"
  if [ "$ssolver" = atomic ]; then
    [ "$bf" = .nan ] && [ "$bc" = .nan ] || fail "the scatter operator's bytes were counted"
  else
    [ "$bf" = $((8 * pf)) ] && [ "$bc" = $((8 * pc)) ] || fail "the bytes are not the documented passes"
  fi
  fusions="product and tail"; [ "$ssolver" = atomic ] && fusions=tail # the scatter operator has no fused product
  grep -q "^  krylov_method: \"fpnacg, fused $fusions\"" "$tmp/t.yaml" &&
    grep -q '^  krylov_method: "cg"' "$tmp/o.yaml" ||
    fail "the report does not name the Krylov method"
  "$app" -options_file "$inputs/grayscott-small.opts" -ksp_rtol 1e-6 -gs_F 0.05 -report "$tmp/m.yaml" > /dev/null 2>&1
  grep -q '^official: false' "$tmp/m.yaml" && grep -q '^modified_options: \["-gs_F", "-ksp_rtol"\]' "$tmp/m.yaml" || { grep -E '^official|^modified' "$tmp/m.yaml"; fail "a modified deck was not reported as such"; }
  grep -q '^command_line: .*-gs_F 0.05' "$tmp/m.yaml" && grep -q '^options: .*-gs_F 0.05' "$tmp/m.yaml" || fail "the report does not record the command line and options"
  check 'golden_state_hash 0xzz: must be 16 hex digits' -golden_state_hash 0xzz
  # none clears the deck's hashes (another grid: scripts/scaling.sh weak), not official
  "$app" -options_file "$inputs/grayscott-small.opts" -da_grid_x 40 -golden_state_hash none -golden_weights_hash none -report "$tmp/n.yaml" > /dev/null 2>&1 ||
    { grep -E 'golden|verdict' "$tmp/n.yaml"; fail "-golden_*_hash none on another grid did not run VALID"; }
  grep -q 'golden_state_hash: "not set"' "$tmp/n.yaml" && grep -q '^official: false' "$tmp/n.yaml" || { grep -E 'golden|official' "$tmp/n.yaml"; fail "-golden_state_hash none: not 'not set', or official"; }
  check 'repeat_check 1' -repeat_check 1
  check 'report .*cannot create' -report /nonexistent-dir/r.yaml
  ;;
*) fail "unknown test $name" ;;
esac
echo "PASS $name"
