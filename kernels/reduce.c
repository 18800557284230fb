/* kernels/reduce.c: the atomic and deterministic summation strategies and the
 * strategy-generic entry points (local partials, combining partials).
 * The reproducible accumulator lives in rsum.c. */
#include "reduce.h"
#include "reduce_impl.h"
#include "hashrng.h"

#include <stdlib.h>
#include <string.h>

/* Sum of one block of m <= RED_BLOCK summands with a fixed pattern: element i
 * goes to lane i % 8, lanes are combined as a pairwise tree. The lanes let the
 * compiler vectorize without reassociating anything. */
static inline __attribute__((always_inline)) double block_op(red_op_t op, size_t m, const double *x, const double *y)
{
  double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i    = 0;
  for (; i + 8 <= m; i += 8)
    for (int k = 0; k < 8; k++) l[k] += red_elem(op, x, y, i + k);
  for (; i < m; i++) l[i % 8] += red_elem(op, x, y, i);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

static double block_sum(red_op_t op, size_t m, const double *x, const double *y)
{
  switch (op) {
  case RED_OP_DOT: return block_op(RED_OP_DOT, m, x, y);
  case RED_OP_SUMSQ: return block_op(RED_OP_SUMSQ, m, x, y);
  case RED_OP_ASUM: return block_op(RED_OP_ASUM, m, x, y);
  default: return block_op(RED_OP_SUM, m, x, y);
  }
}

/* Pairwise (recursive halving) sum of p[0..n): a fixed tree for a given n. */
static double pairwise(size_t n, const double *p)
{
  if (n == 0) return 0.0;
  if (n == 1) return p[0];
  size_t h = n / 2;
  return pairwise(h, p) + pairwise(n - h, p + h);
}

/* Block partials p[b] = sum of block b, in parallel when worth it. */
static void block_partials(red_op_t op, size_t n, const double *x, const double *y, size_t nb, double *p)
{
#pragma omp parallel for schedule(static) if (nb >= RED_PAR_MIN_BLOCKS)
  for (size_t b = 0; b < nb; b++) {
    size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
    p[b] = block_sum(op, m, x + i0, op == RED_OP_DOT ? y + i0 : y);
  }
}

static double sum_deterministic(red_op_t op, size_t n, const double *x, const double *y)
{
  size_t nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  double stackbuf[256], *p = nb <= 256 ? stackbuf : malloc(nb * sizeof *p);
  if (!p) return NAN;
  block_partials(op, n, x, y, nb, p);
  double s = pairwise(nb, p);
  if (p != stackbuf) free(p);
  return s;
}

/* ---- atomic ------------------------------------------------------------ */

/* A permutation of 0..n-1 drawn from (seed, call): Fisher-Yates. */
static void seeded_permutation(red_atomic_state *ord, size_t n, size_t *perm)
{
  uint64_t call = red_atomic_next_call(ord);
  for (size_t i = 0; i < n; i++) perm[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(mix64(ord->seed ^ mix64(call * 0x100000001b3ULL + i)) % i);
    size_t t = perm[i - 1];
    perm[i - 1] = perm[j], perm[j] = t;
  }
}

/* Seeded replay: block partials p[0..nb) combined in a drawn order. With one
 * block the order cannot matter, so the elements are permuted instead. */
static double seeded_combine(red_atomic_state *ord, red_op_t op, size_t n, const double *x, const double *y, size_t nb,
                             const double *p)
{
  double s = 0.0;
  if (nb == 1) {
    size_t stackperm[RED_BLOCK];
    seeded_permutation(ord, n, stackperm);
    for (size_t i = 0; i < n; i++) s += red_elem(op, x, y, stackperm[i]);
    return s;
  }
  size_t stackperm[256], *perm = nb <= 256 ? stackperm : malloc(nb * sizeof *perm);
  if (!perm) return NAN;
  seeded_permutation(ord, nb, perm);
  for (size_t b = 0; b < nb; b++) s += p[perm[b]];
  if (perm != stackperm) free(perm);
  return s;
}

static double sum_atomic(red_op_t op, size_t n, const double *x, const double *y, red_atomic_state *ord)
{
  size_t nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  double s  = 0.0;
  if (!red_seeded(ord)) {
    /* Many small dynamic chunks, each added when it completes: with two or
     * more threads the order of the additions (and so the bits) varies. */
#pragma omp parallel for schedule(dynamic, 1) if (nb >= RED_PAR_MIN_BLOCKS)
    for (size_t b = 0; b < nb; b++) {
      size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
      double pb = block_sum(op, m, x + i0, op == RED_OP_DOT ? y + i0 : y);
#pragma omp atomic
      s += pb;
    }
    return s;
  }
  double  stackbuf[256], *p = nb <= 256 ? stackbuf : malloc(nb * sizeof *p);
  if (!p) return NAN;
  block_partials(op, n, x, y, nb, p);
  s = seeded_combine(ord, op, n, x, y, nb, p);
  if (p != stackbuf) free(p);
  return s;
}

/* ---- the fused tail of a CG iteration ------------------------------------ */

/* The diagonal of element i: dinv[i], or dinv[i % dp] for a periodic one
 * (dp = 1, 2, 4 or 8: a constant diagonal per component, as Jacobi gives on a
 * constant-coefficient operator), which saves the tail a pass. In the
 * loops below i runs over multiples of 8 plus k < 8, so dinv[i % dp] is
 * dpat[k]. */
static inline void diag_pattern(size_t dp, const double *dinv, double dpat[8])
{
  for (int k = 0; k < 8; k++) dpat[k] = dp ? dinv[k % dp] : 0.0;
}
#define DIAG(dp, dinv, dpat, j, k) ((dp) ? (dpat)[k] : (dinv)[(j) + (k)])

/* One block of the tail with its two block sums formed in the same loop, in
 * block_op's pattern (element i to lane i % 8, the lanes as a tree), so that
 * *zz and *zr are bitwise block_sum(SUMSQ, z) and block_sum(DOT, z, r). */
static inline void cg_tail_block(size_t i0, size_t m, double a, double *x, const double *p, double *r, const double *w,
                                 const double *dinv, size_t dp, double *z, double *zz, double *zr)
{
  double lzz[8] = {0, 0, 0, 0, 0, 0, 0, 0}, lzr[8] = {0, 0, 0, 0, 0, 0, 0, 0}, dpat[8];
  size_t i      = 0;
  diag_pattern(dp, dinv, dpat);
  for (; i + 8 <= m; i += 8) {
    const size_t j = i0 + i;
#pragma omp simd
    for (int k = 0; k < 8; k++) {
      double ri = -a * w[j + k] + r[j + k], zi = ri * DIAG(dp, dinv, dpat, j, k);
      x[j + k]  = a * p[j + k] + x[j + k];
      r[j + k]  = ri;
      z[j + k]  = zi;
      lzz[k] += zi * zi;
      lzr[k] += zi * ri;
    }
  }
  for (; i < m; i++) {
    const size_t j = i0 + i;
    double       ri = -a * w[j] + r[j], zi = ri * (dp ? dinv[j % dp] : dinv[j]);
    x[j]            = a * p[j] + x[j];
    r[j] = ri, z[j] = zi;
    lzz[i % 8] += zi * zi;
    lzr[i % 8] += zi * ri;
  }
  *zz = ((lzz[0] + lzz[1]) + (lzz[2] + lzz[3])) + ((lzz[4] + lzz[5]) + (lzz[6] + lzz[7]));
  *zr = ((lzr[0] + lzr[1]) + (lzr[2] + lzr[3])) + ((lzr[4] + lzr[5]) + (lzr[6] + lzr[7]));
}

/* Elements [i0, i0 + m) of the tail alone (the reproducible sums follow):
 * the block sums of cg_tail_block are not used, and inlined, not computed. */
static inline void cg_tail_update(size_t i0, size_t m, double a, double *x, const double *p, double *r, const double *w,
                                  const double *dinv, size_t dp, double *z)
{
  double unused_zz, unused_zr;
  cg_tail_block(i0, m, a, x, p, r, w, dinv, dp, z, &unused_zz, &unused_zr);
}

void red_cg_tail(red_strategy_t s, size_t n, double a, double *x, const double *p, double *r, const double *w,
                 const double *dinv, size_t dp, double *z, red_partial_t *zz, red_partial_t *zr, red_atomic_state *ord)
{
  size_t nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  zz->d = zr->d = 0.0;
  if (s == RED_REPRODUCIBLE) {
    rsum_init(&zz->r), rsum_init(&zr->r);
#pragma omp parallel if (nb >= RED_PAR_MIN_BLOCKS)
    {
      rsum_t lzz, lzr;
      rsum_init(&lzz), rsum_init(&lzr);
#pragma omp for schedule(static) nowait /* no barrier: each thread merges when its blocks are done */
      for (size_t b = 0; b < nb; b++) {
        size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
        cg_tail_update(i0, m, a, x, p, r, w, dinv, dp, z);
        rsum_add_sumsq_dot(&lzz, &lzr, m, z + i0, r + i0);
      }
#pragma omp critical(red_cg_tail)
      rsum_merge(&zz->r, &lzz), rsum_merge(&zr->r, &lzr); /* exact: any order */
    }
    return;
  }
  if (s == RED_ATOMIC && !red_seeded(ord)) { /* block partials added as they complete */
    double szz = 0.0, szr = 0.0;
#pragma omp parallel for schedule(dynamic, 1) if (nb >= RED_PAR_MIN_BLOCKS)
    for (size_t b = 0; b < nb; b++) {
      size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
      double pzz, pzr;
      cg_tail_block(i0, m, a, x, p, r, w, dinv, dp, z, &pzz, &pzr);
#pragma omp atomic
      szz += pzz;
#pragma omp atomic
      szr += pzr;
    }
    zz->d = szz, zr->d = szr;
    return;
  }
  /* deterministic, seeded atomic: the block partials of red_local, formed
   * while the block is in cache, then combined as red_local combines them. */
  double  stackbuf[512], *pb = nb <= 256 ? stackbuf : malloc(2 * nb * sizeof *pb);
  if (!pb) {
    zz->d = zr->d = NAN;
    return;
  }
#pragma omp parallel for schedule(static) if (nb >= RED_PAR_MIN_BLOCKS)
  for (size_t b = 0; b < nb; b++) {
    size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
    cg_tail_block(i0, m, a, x, p, r, w, dinv, dp, z, &pb[b], &pb[nb + b]);
  }
  if (s == RED_DETERMINISTIC) zz->d = pairwise(nb, pb), zr->d = pairwise(nb, pb + nb);
  else { /* seeded: the norm's order is drawn first, then the dot's, as in the unfused order */
    zz->d = seeded_combine(ord, RED_OP_SUMSQ, n, z, NULL, nb, pb);
    zr->d = seeded_combine(ord, RED_OP_DOT, n, z, r, nb, pb + nb);
  }
  if (pb != stackbuf) free(pb);
}

/* ---- a producer of blocks fused with a dot -------------------------------- */

void red_dot_blocks(red_strategy_t s, size_t n, red_block_fn fn, void *ctx, const double *x, const double *y,
                    red_partial_t *p, red_atomic_state *ord)
{
  size_t nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  p->d      = 0.0;
  if (s == RED_REPRODUCIBLE) {
    rsum_init(&p->r);
#pragma omp parallel if (nb >= RED_PAR_MIN_BLOCKS)
    {
      rsum_t loc;
      double xs[RED_BLOCK];
      rsum_init(&loc);
#pragma omp for schedule(static) nowait
      for (size_t b = 0; b < nb; b++) {
        size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
        rsum_add(&loc, RED_OP_DOT, m, fn(ctx, i0, m, xs), y + i0); /* one chunk: serial */
      }
#pragma omp critical(red_dot_blocks)
      rsum_merge(&p->r, &loc); /* exact: any order */
    }
    return;
  }
  if (s == RED_ATOMIC && !red_seeded(ord)) { /* block partials added as they complete */
    double sum = 0.0;
#pragma omp parallel if (nb >= RED_PAR_MIN_BLOCKS)
    {
      double xs[RED_BLOCK];
#pragma omp for schedule(dynamic, 1) nowait
      for (size_t b = 0; b < nb; b++) {
        size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
        double pb = block_sum(RED_OP_DOT, m, fn(ctx, i0, m, xs), y + i0);
#pragma omp atomic
        sum += pb;
      }
    }
    p->d = sum;
    return;
  }
  /* deterministic, seeded atomic: red_local's block partials and combination */
  double stackbuf[256], *pb = nb <= 256 ? stackbuf : malloc(nb * sizeof *pb);
  if (!pb) {
    p->d = NAN;
    return;
  }
#pragma omp parallel if (nb >= RED_PAR_MIN_BLOCKS)
  {
    double xs[RED_BLOCK];
#pragma omp for schedule(static) nowait
    for (size_t b = 0; b < nb; b++) {
      size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
      pb[b] = block_sum(RED_OP_DOT, m, fn(ctx, i0, m, xs), y + i0);
    }
  }
  p->d = s == RED_DETERMINISTIC ? pairwise(nb, pb) : seeded_combine(ord, RED_OP_DOT, n, x, y, nb, pb);
  if (pb != stackbuf) free(pb);
}

/* ---- strategy-generic entry points -------------------------------------- */

void red_local(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y, red_partial_t *p,
               red_atomic_state *ord)
{
  p->d = 0.0;
  switch (s) {
  case RED_REPRODUCIBLE:
    rsum_init(&p->r);
    rsum_add(&p->r, op, n, x, y);
    break;
  case RED_DETERMINISTIC: p->d = sum_deterministic(op, n, x, y); break;
  default: p->d = sum_atomic(op, n, x, y, ord); break;
  }
}

double red_blocks_combine(red_strategy_t s, size_t nb, const double *p, red_atomic_state *ord)
{
  double r = 0.0;
  if (s == RED_DETERMINISTIC) return pairwise(nb, p);
  if (s == RED_ATOMIC && red_seeded(ord) && nb >= 2) return seeded_combine(ord, RED_OP_SUM, 0, NULL, NULL, nb, p);
  for (size_t b = 0; b < nb; b++) r += p[b];
  return r;
}

void red_local_mdot(red_strategy_t s, size_t n, const double *x, int nv, const double *const *y, red_partial_t *p,
                    red_atomic_state *ord)
{
  for (int j = 0; j < nv; j++) red_local(s, RED_OP_DOT, n, x, y[j], &p[j], ord);
}

double red_combine(red_strategy_t s, int np, const red_partial_t *p)
{
  if (s == RED_REPRODUCIBLE) {
    rsum_t a;
    rsum_init(&a);
    for (int i = 0; i < np; i++) rsum_merge(&a, &p[i].r);
    return rsum_value(&a);
  }
  double  stackbuf[64] = {0}, *d = np <= 64 ? stackbuf : malloc((size_t)np * sizeof *d);
  if (!d) return NAN;
  for (int i = 0; i < np; i++) d[i] = p[i].d;
  double r = 0.0;
  if (s == RED_DETERMINISTIC) r = pairwise((size_t)np, d);
  else
    for (int i = 0; i < np; i++) r += d[i];
  if (d != stackbuf) free(d);
  return r;
}

double red_reduce(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y, red_atomic_state *ord)
{
  red_partial_t p;
  red_local(s, op, n, x, y, &p, ord);
  return red_combine(s, 1, &p);
}

static const char *const red_names[] = {"atomic", "deterministic", "reproducible"};

const char *red_strategy_name(red_strategy_t s) { return (unsigned)s < 3 ? red_names[s] : "unknown"; }

int red_strategy_parse(const char *name, red_strategy_t *s)
{
  for (int i = 0; i < 3; i++)
    if (name && !strcmp(name, red_names[i])) {
      *s = (red_strategy_t)i;
      return 0;
    }
  return 1;
}
