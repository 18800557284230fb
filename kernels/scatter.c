/* kernels/scatter.c: scatter-add y[target[k]] += val[k] with the three
 * strategies. A finite-volume face loop is the motivating case: each face
 * flux is added to the two cells it separates.
 *   atomic:        contributions in completion order (#pragma omp atomic);
 *                  seeded: one sequential pass in a drawn order.
 *   deterministic: each target gathers its contributions in index order k,
 *                  starting from its old value.
 *   reproducible:  each target's old value and contributions are summed with
 *                  the order-independent accumulator. */
#include "reduce.h"
#include "reduce_impl.h"
#include "hashrng.h"

#include <stdlib.h>

struct scatter_plan {
  size_t   ntarget, ncontrib;
  int64_t *target; /* [ncontrib] copy of the targets, for the atomic scatter    */
  size_t  *start;  /* [ntarget+1] contributions of target t: order[start[t]..]  */
  size_t  *order;  /* [ncontrib] contribution indices grouped by target, k asc. */
};

int scatter_plan_create(size_t ntarget, size_t ncontrib, const int64_t *target, scatter_plan **plan)
{
  *plan          = NULL;
  scatter_plan *p = calloc(1, sizeof *p);
  if (!p) return 1;
  p->ntarget = ntarget, p->ncontrib = ncontrib;
  p->target  = malloc((ncontrib ? ncontrib : 1) * sizeof *p->target);
  p->start   = calloc(ntarget + 1, sizeof *p->start);
  p->order   = malloc((ncontrib ? ncontrib : 1) * sizeof *p->order);
  if (!p->target || !p->start || !p->order) goto fail;
  for (size_t k = 0; k < ncontrib; k++) {
    if (target[k] < 0 || (size_t)target[k] >= ntarget) goto fail;
    p->target[k] = target[k];
    p->start[target[k] + 1]++;
  }
  for (size_t t = 0; t < ntarget; t++) p->start[t + 1] += p->start[t];
  { /* stable counting sort by target */
    size_t *fill = malloc((ntarget ? ntarget : 1) * sizeof *fill);
    if (!fill) goto fail;
    for (size_t t = 0; t < ntarget; t++) fill[t] = p->start[t];
    for (size_t k = 0; k < ncontrib; k++) p->order[fill[target[k]]++] = k;
    free(fill);
  }
  *plan = p;
  return 0;
fail:
  scatter_plan_destroy(&p);
  return 1;
}

void scatter_plan_destroy(scatter_plan **plan)
{
  if (!plan || !*plan) return;
  free((*plan)->target), free((*plan)->start), free((*plan)->order), free(*plan);
  *plan = NULL;
}

static void scatter_atomic(const scatter_plan *p, const double *val, double *y, red_atomic_state *ord)
{
  if (!red_seeded(ord)) {
#pragma omp parallel for schedule(dynamic, 64) if (p->ncontrib >= 4 * RED_BLOCK)
    for (size_t k = 0; k < p->ncontrib; k++) {
#pragma omp atomic
      y[p->target[k]] += val[k];
    }
    return;
  }
  /* Seeded replay: per target, its contributions in a drawn order (a GPU's
   * atomics arrive in some order per address; this draws one). */
  uint64_t seed = ord->seed, call = red_atomic_next_call(ord);
#pragma omp parallel for schedule(static) if (p->ntarget >= 4 * RED_BLOCK)
  for (size_t t = 0; t < p->ntarget; t++) {
    size_t  m = p->start[t + 1] - p->start[t];
    size_t  idx[16];
    double  s = y[t];
    if (m > 16) { /* unusual fan-in: fall back to index order */
      for (size_t j = p->start[t]; j < p->start[t + 1]; j++) s += val[p->order[j]];
      y[t] = s;
      continue;
    }
    for (size_t j = 0; j < m; j++) idx[j] = p->order[p->start[t] + j];
    for (size_t j = m; j > 1; j--) {
      uint64_t r = mix64(seed ^ mix64(call ^ mix64((uint64_t)t * 32 + j)));
      size_t i = (size_t)(r % j), tmp = idx[j - 1];
      idx[j - 1] = idx[i], idx[i] = tmp;
    }
    for (size_t j = 0; j < m; j++) s += val[idx[j]];
    y[t] = s;
  }
}

void scatter_add(red_strategy_t s, const scatter_plan *p, const double *val, double *y, red_atomic_state *ord)
{
  if (s == RED_ATOMIC) {
    scatter_atomic(p, val, y, ord);
    return;
  }
  if (s == RED_DETERMINISTIC) {
#pragma omp parallel for schedule(static) if (p->ntarget >= 4 * RED_BLOCK)
    for (size_t t = 0; t < p->ntarget; t++) {
      double acc = y[t];
      for (size_t j = p->start[t]; j < p->start[t + 1]; j++) acc += val[p->order[j]];
      y[t] = acc;
    }
    return;
  }
#pragma omp parallel for schedule(static) if (p->ntarget >= 4 * RED_BLOCK)
  for (size_t t = 0; t < p->ntarget; t++) {
    if (p->start[t + 1] == p->start[t]) continue;
    rsum_t a;
    rsum_init(&a);
    rsum_add(&a, RED_OP_SUM, 1, &y[t], NULL);
    for (size_t j = p->start[t]; j < p->start[t + 1]; j++) rsum_add(&a, RED_OP_SUM, 1, &val[p->order[j]], NULL);
    y[t] = rsum_value(&a);
  }
}
