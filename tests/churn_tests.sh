#!/usr/bin/env bash
# tests/churn_tests.sh MINIAPP SOLVER_STRATEGY SURROGATE_STRATEGY: churn
# (docs/metrics.md) needs no tolerance: bitwise-equal networks churn exactly
# 0 at every level, different ones churn > 0; every replica is asked replica
# 0's questions (its inputs), the scale is the network's own error.
set -u
app=$1 ssolver=$2 ssurr=$3
. "$(dirname "$0")/lib.sh"
g="-scenario grayscott -da_grid_x 32 -da_grid_y 24 -ts_max_steps 12 -coupling guess -coupling_baselines false -threads 1"
list() { key "$1" "$2" | tr -d '[] ' ; }
if [ "$ssolver" != atomic ] && [ "$ssurr" != atomic ]; then
  run "$tmp/e.yaml" $g -replicas 3 # ordered build: the replicas' networks are bitwise equal
  for k in replica_final_churn_10 replica_final_churn_50 replica_final_churn; do
    [ "$(list "$tmp/e.yaml" $k)" = "0.000000e+00,0.000000e+00,0.000000e+00" ] || fail "$k of bitwise-equal networks: $(key "$tmp/e.yaml" $k)"
  done
  echo "ok: equal networks churn 0 at 10%, 50%, 100% of the error"
fi
# different networks (a weight of replica 1 flipped at epoch 3): churn > 0, less at higher levels
"$app" $g -replicas 2 -atomic_order_seed 1 -inject site=weight,epoch=3,bit=29,entry=11,replica=1 -summary "$tmp/d.yaml" > "$tmp/d.log" 2>&1
[ -s "$tmp/d.yaml" ] || { cat "$tmp/d.log"; fail "the run with different networks wrote no summary"; }
c10=$(list "$tmp/d.yaml" replica_final_churn_10 | cut -d, -f2) c50=$(list "$tmp/d.yaml" replica_final_churn_50 | cut -d, -f2) c=$(list "$tmp/d.yaml" replica_final_churn | cut -d, -f2)
awk "BEGIN{exit !($c10 > 0 && $c <= $c50 && $c50 <= $c10 && $c10 <= 1)}" || fail "different networks: churn at 10/50/100% $c10/$c50/$c (want > 0 at 10%, falling with the level)"
grep -q '^churn_error_scale: [0-9]' "$tmp/d.yaml" || fail "no churn_error_scale"
echo "ok: different networks churn $c10 / $c50 / $c (10% / 50% / 100% of the error)"
# no tolerance option any more
check 'churn_tol: unknown or unused option' $g -churn_tol 1e-3
echo PASS
