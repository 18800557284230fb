#!/usr/bin/env bash
# tests/solver_tests.sh: end-to-end tests of the miniapp executable, one per
# ctest entry: solver_tests.sh NAME MINIAPP STRATEGY
# Each test asserts the promise of the build's own reduction STRATEGY.
set -u
name=$1 app=$2 strategy=$3
. "$(dirname "$0")/lib.sh"

case $name in
mms_order) # heat MMS error falls as h^2 under refinement (Crank-Nicolson, dt ~ h)
  prev=""; orders=""
  for m in 15 31 63; do
    s=$(( (m + 1) / 16 * 8 ))
    run "$tmp/h$m" -scenario heat -da_grid_x $m -da_grid_y $m -ts_max_steps $s -ts_dt $(awk "BEGIN{print 0.1/$s}")
    e=$(key "$tmp/h$m" mms_error_l2)
    [ -n "$prev" ] && orders="$orders $(awk "BEGIN{print log($prev/$e)/log(2)}")"
    prev=$e
    echo "grid $m: L2 error $e"
  done
  echo "observed orders:$orders"
  for o in $orders; do awk "BEGIN{exit !($o > 1.8 && $o < 2.3)}" || fail "order $o not near 2"; done
  ;;
valid) # both scenarios run, verify VALID and report their keys
  run "$tmp/h" -scenario heat -da_grid_x 40 -da_grid_y 24
  run "$tmp/g" -scenario grayscott -da_grid_x 48 -da_grid_y 40 -ts_max_steps 20
  for k in solver_reduction surrogate_reduction scenario grid steps ksp_iterations_total ksp_iterations mms_error_l2 state_hash verification; do
    grep -q "^$k:" "$tmp/h" || fail "summary lacks $k"
  done
  [ "$(key "$tmp/h" solver_reduction)" = "$strategy" ] || fail "summary says solver_reduction $(key "$tmp/h" solver_reduction), build is $strategy"
  if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
    /usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert len(d["ksp_iterations"]) == d["steps"]' "$tmp/g" || fail "summary is not the documented YAML"
  fi
  ;;
routing) # every Krylov reduction passes through the switch: PETSc's CG does >= 3 per
  # iteration, the fused default >= 2 (p.w, then |z|^2 and z.r in one collective)
  run "$tmp/a" -scenario heat -da_grid_x 33 -da_grid_y 17 -ksp_type cg
  its=$(key "$tmp/a" ksp_iterations_total) calls=$(key "$tmp/a" reduction_calls)
  echo "cg: iterations $its, reductions through the fpna Vec type $calls"
  [ "$calls" -ge $((3 * its)) ] || fail "only $calls reductions for $its CG iterations: work vectors bypass the switch"
  run "$tmp/f" -scenario heat -da_grid_x 33 -da_grid_y 17
  its=$(key "$tmp/f" ksp_iterations_total) calls=$(key "$tmp/f" reduction_calls)
  echo "fpnacg: iterations $its, reductions $calls"
  [ "$calls" -ge $((2 * its)) ] || fail "only $calls reductions for $its fused CG iterations"
  run "$tmp/b" -scenario heat -da_grid_x 33 -da_grid_y 17 -solver_stock_vec
  [ "$(key "$tmp/b" reduction_calls)" = 0 ] || fail "stock vectors should not use the fpna ops"
  ;;
stock_cg) # PETSc's own vectors on the same operator: same iterations per step, +-1
  for sc in heat grayscott; do
    run "$tmp/o" -scenario $sc -da_grid_x 61 -da_grid_y 47 -ts_max_steps 12
    run "$tmp/s" -scenario $sc -da_grid_x 61 -da_grid_y 47 -ts_max_steps 12 -solver_stock_vec
    a=$(key "$tmp/o" ksp_iterations | tr -d '[],') b=$(key "$tmp/s" ksp_iterations | tr -d '[],')
    echo "$sc ours:  $a"; echo "$sc stock: $b"
    paste <(tr ' ' '\n' <<< "$a") <(tr ' ' '\n' <<< "$b") | awk '{d=$1-$2; if (d>1||d<-1) bad=1} END{exit bad}' || fail "$sc: iteration counts differ by more than 1"
  done
  ;;
fused_cg) # the default fpnacg (fused tail) gives PETSc CG's iterates bit for bit, with fewer collectives
  # (1 thread in the atomic build: there only one thread's completion order is fixed)
  t=2; [ "$strategy" = atomic ] && t=1
  for sc in "heat -da_grid_x 45 -da_grid_y 31 -ts_max_steps 6" "grayscott -da_grid_x 37 -da_grid_y 29 -ts_max_steps 10" "heat -da_grid_x 45 -da_grid_y 31 -ts_max_steps 6 -pc_type none"; do
    run "$tmp/f" -scenario $sc -threads $t
    run "$tmp/c" -scenario $sc -threads $t -ksp_type cg
    f=$(key "$tmp/f" state_hash) c=$(key "$tmp/c" state_hash)
    echo "$sc: fpnacg $f ($(key "$tmp/f" reduction_calls) reductions), cg $c ($(key "$tmp/c" reduction_calls))"
    [ "$f" = "$c" ] || fail "$sc: fpnacg and cg differ"
    [ "$(key "$tmp/f" ksp_iterations)" = "$(key "$tmp/c" ksp_iterations)" ] || fail "$sc: iteration counts differ"
    [ "$(key "$tmp/f" reduction_calls)" -lt "$(key "$tmp/c" reduction_calls)" ] || fail "$sc: the fused tail was not used"
  done
  # the product fused with p.w (gather operator: the deterministic and
  # reproducible builds; the atomic build's scatter operator keeps two steps)
  products() { awk '$1 == "MatMultDot" {n = $2} END {print n + 0}' "$1.log"; }
  run "$tmp/p" -scenario heat -da_grid_x 45 -da_grid_y 31 -ts_max_steps 3 -threads $t -log_view
  run "$tmp/q" -scenario heat -da_grid_x 45 -da_grid_y 31 -ts_max_steps 3 -threads $t -log_view -ksp_fpnacg_fuse 0
  echo "fused products: $(products "$tmp/p") (fusion off: $(products "$tmp/q"))"
  [ "$(products "$tmp/q")" = 0 ] || fail "-ksp_fpnacg_fuse 0 still ran the fused product"
  if [ "$strategy" = atomic ]; then [ "$(products "$tmp/p")" = 0 ] || fail "the scatter operator has no fused product"
  else [ "$(products "$tmp/p")" -ge "$(key "$tmp/p" ksp_iterations_total)" ] || fail "the fused product was not used: $(products "$tmp/p") for $(key "$tmp/p" ksp_iterations_total) iterations"; fi
  [ "$(key "$tmp/p" state_hash)" = "$(key "$tmp/q" state_hash)" ] || fail "the fusions changed the bits"
  # every seed of the replayed atomic order (0: real atomics, whose order is
  # fixed for 1 thread only), 1, 2, 3 threads and 1 and 3 ranks: the fused
  # pass draws the same orders as KSPCG's separate reductions
  g="-scenario grayscott -da_grid_x 97 -da_grid_y 61 -ts_max_steps 3"
  for seed in 0 1 7; do
    for np in 1 3; do
      for t in 1 2 3; do
        [ "$strategy" = atomic ] && [ $seed = 0 ] && [ $((np * t)) -gt 1 ] && continue
        [ $np = 3 ] && [ $t -gt 1 ] && continue
        run "$tmp/m" -np $np $g -threads $t -atomic_order_seed $seed
        run "$tmp/c" -np $np $g -threads $t -atomic_order_seed $seed -ksp_type cg
        [ "$(key "$tmp/m" state_hash)" = "$(key "$tmp/c" state_hash)" ] || fail "seed $seed, $np ranks x $t threads: fpnacg $(key "$tmp/m" state_hash), cg $(key "$tmp/c" state_hash)"
        echo "seed $seed, $np ranks x $t threads: $(key "$tmp/m" state_hash) both"
      done
    done
  done
  ;;
bitwise) # the build's determinism promise, on a sensitive problem with odd sizes
  args="-scenario grayscott -da_grid_x 67 -da_grid_y 53 -ts_max_steps 30"
  case $strategy in
  reproducible) # identical for any rank and thread count
    run "$tmp/r1" $args -threads 1
    run "$tmp/r2" $args -threads 2
    run "$tmp/r3" -np 2 $args -threads 1
    run "$tmp/r4" -np 3 $args -threads 1
    h=$(key "$tmp/r1" state_hash)
    for f in r2 r3 r4; do [ "$(key "$tmp/$f" state_hash)" = "$h" ] || fail "state_hash $f $(key "$tmp/$f" state_hash) != 1 rank x 1 thread $h"; done
    echo "state_hash $h for 1x1, 1x2, 2x1 and 3x1 ranks x threads"
    ;;
  deterministic) # identical on reruns of one configuration (any thread count)
    run "$tmp/d1" -np 2 $args -threads 2
    run "$tmp/d2" -np 2 $args -threads 2
    run "$tmp/d3" -np 2 $args -threads 1
    [ "$(key "$tmp/d1" state_hash)" = "$(key "$tmp/d2" state_hash)" ] || fail "deterministic rerun changed the state_hash"
    [ "$(key "$tmp/d1" state_hash)" = "$(key "$tmp/d3" state_hash)" ] || fail "deterministic: the thread count changed the state_hash"
    echo "state_hash $(key "$tmp/d1" state_hash) on reruns"
    ;;
  atomic) # seeded orders replay exactly; different seeds give different bits
    run "$tmp/a1" $args -atomic_order_seed 1
    run "$tmp/a1b" $args -atomic_order_seed 1
    run "$tmp/a2" $args -atomic_order_seed 2
    [ "$(key "$tmp/a1" state_hash)" = "$(key "$tmp/a1b" state_hash)" ] || fail "the same atomic_order_seed must replay the same bits"
    [ "$(key "$tmp/a1" state_hash)" != "$(key "$tmp/a2" state_hash)" ] || fail "seeds 1 and 2 gave identical bits: the atomic order has no effect"
    echo "seed 1: $(key "$tmp/a1" state_hash), seed 2: $(key "$tmp/a2" state_hash)"
    ;;
  esac
  ;;
bad_input) # one clear line naming the problem, nonzero exit, no output file
  check 'da_grid_x 0' -da_grid_x 0
  check 'da_grid_y -5' -da_grid_y -5
  check 'da_grid_x 1000000' -da_grid_x 1000000
  check 'ts_dt 0' -ts_dt 0
  check 'ts_dt -1' -ts_dt -1
  check 'ts_dt nan' -ts_dt nan
  check 'ts_max_steps -3' -ts_max_steps -3
  check 'scenario' -scenario nosuch
  check 'heat_theta 0.2' -scenario heat -heat_theta 0.2
  check 'threads -1' -threads -1
  check 'ts_max_step: unknown' -ts_max_step 3
  check 'gs_F: not used by this run \(it applies to -scenario grayscott\)' -scenario heat -gs_F 0.03
  check 'options_file .*nosuch.opts' -options_file "$tmp/nosuch.opts"
  check 'summary .*cannot create' -ts_max_steps 1 -summary /nonexistent-dir/x.yaml
  if [ "$strategy" != atomic ]; then check 'ksp_type pipecg' -ksp_type pipecg; fi
  # PETSc's grid options behind -da_grid_x/y (the summary said 41 x 23 of an 82 x 46 grid), the ranks' split in PETSc's words
  check "grid options \(-da_refine, .*made the grid 82 x 46, not -da_grid_x 41 -da_grid_y 23" -da_grid_x 41 -da_grid_y 23 -ts_max_steps 1 -da_refine 1
  check "da_processors_x 2: more than the run's 1 MPI ranks" -ts_max_steps 1 -da_processors_x 2
  check 'da_processors_y -1: the number of ranks along y, at least 1' -ts_max_steps 1 -da_processors_y -1
  # chebyshev's estimate starts from a vector drawn per rank: the reproducible build needs its bounds
  if [ "$strategy" = reproducible ]; then check 'ksp_type chebyshev: .*-ksp_chebyshev_eigenvalues' -ts_max_steps 1 -ksp_type chebyshev; fi
  check 'ksp_type fgmres -ksp_norm_type none: FGMRES then never reports convergence' -ts_max_steps 1 -ksp_type fgmres -ksp_norm_type none # 10000 iterations a solve, INVALID
  # PETSc's words named no option: "Maximum eigenvalue must be larger than minimum", "No method getrowmaxabs for Mat of type shell"
  check 'ksp_chebyshev_eigenvalues: needs min,max with 0 < min < max' -ts_max_steps 1 -ksp_type chebyshev -ksp_chebyshev_eigenvalues 2,0.5
  check 'ksp_chebyshev_eigenvalues: needs min,max with 0 < min < max' -ts_max_steps 1 -ksp_type chebyshev -ksp_chebyshev_eigenvalues -1,1
  check 'pc_jacobi_type rowmax: needs the operator.s rows' -ts_max_steps 1 -pc_jacobi_type rowmax
  check 'solver_device gpu: not one of cpu, cuda' -solver_device gpu
  check 'solver_device cuda: not with -solver_stock_vec' -solver_device cuda -solver_stock_vec
  # a run that cannot fit says so before it allocates (1e9 unknowns, 8 replicas of guess mode: terabytes on any node)
  check 'needs at least .* GiB of memory a rank .*more than the node has available' -scenario grayscott \
    -da_grid_x 30000 -da_grid_y 17895 -coupling guess -replicas 8
  # -weak_tile: the grid grows with the ranks (MPI_Dims_create's split), and it makes the grid alone
  check 'weak_tile: not with -da_grid_x' -weak_tile 24 -da_grid_x 30
  check 'weak_tile 2: must be in \[3, 65536\]' -weak_tile 2
  check 'weak_tile: not with -da_processors_y' -weak_tile 24 -da_processors_y 1
  run "$tmp/w1" -scenario grayscott -weak_tile 24 -ts_max_steps 1 -coupling none
  run "$tmp/w2" -np 2 -scenario grayscott -weak_tile 24 -ts_max_steps 1 -coupling none
  [ "$(key "$tmp/w1" grid)" = "[24, 24]" ] && [ "$(key "$tmp/w2" grid)" = "[48, 24]" ] \
    || fail "-weak_tile 24: grids $(key "$tmp/w1" grid) on 1 rank, $(key "$tmp/w2" grid) on 2, want [24, 24] and [48, 24]"
  ;;
*) fail "unknown test $name" ;;
esac
echo "PASS $name"
