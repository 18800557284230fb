/* kernels/diff.h: the value-by-value comparison of two arrays that the
 * observation metrics accumulate (miniapp/io/metrics.h defines them), shared
 * by the host and the device (couple_cuda.h, couple_cuda_diff). The sums run
 * over DIFF_BLOCK values at a time in index order, and the blocks' sums are
 * merged in block order, so host and device give the same bits. */
#ifndef MINIAPP_KERNELS_DIFF_H
#define MINIAPP_KERNELS_DIFF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define DIFF_HD __host__ __device__ __forceinline__
#else
#define DIFF_HD static inline
#endif
#if defined(__CUDA_ARCH__) /* no contraction, as the host's -ffp-contract=off */
#define DIFF_DADD(a, b) __dadd_rn((a), (b))
#define DIFF_DSUB(a, b) __dsub_rn((a), (b))
#define DIFF_DMUL(a, b) __dmul_rn((a), (b))
#define DIFF_DDIV(a, b) __ddiv_rn((a), (b))
#else
#define DIFF_DADD(a, b) ((a) + (b))
#define DIFF_DSUB(a, b) ((a) - (b))
#define DIFF_DMUL(a, b) ((a) * (b))
#define DIFF_DDIV(a, b) ((a) / (b))
#endif

#define DIFF_BLOCK 1024

/* counts as doubles: exact to 2^53 */
typedef struct {
  double n, ndiff, sum_rel, sum_d2, sum_a2, max_abs, max_ulp;
} diff_acc;

/* Doubles ordered as integers: adjacent doubles differ by 1, +0 and -0 by 0. */
DIFF_HD int64_t diff_ordered(double x)
{
  int64_t k;
  memcpy(&k, &x, sizeof k);
  return k < 0 ? INT64_MIN - k : k;
}

/* The distance of a and b in units in the last place; NaN involved: UINT64_MAX. */
DIFF_HD uint64_t diff_ulp(double a, double b)
{
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int64_t ka = diff_ordered(a), kb = diff_ordered(b);
  return ka > kb ? (uint64_t)ka - (uint64_t)kb : (uint64_t)kb - (uint64_t)ka;
}

/* One pair: same_bits when their bits are equal, ulp their distance (in the
 * unit of their own precision). A NaN distance stays the maximum once seen. */
DIFF_HD void diff_add(diff_acc *acc, double a, double b, int same_bits, double ulp)
{
  double d = fabs(DIFF_DSUB(a, b));
  acc->n = DIFF_DADD(acc->n, 1.0);
  if (!same_bits) acc->ndiff = DIFF_DADD(acc->ndiff, 1.0);
  if (a != 0) acc->sum_rel = DIFF_DADD(acc->sum_rel, DIFF_DDIV(d, fabs(a)));
  else if (b != 0 || isnan(b)) acc->sum_rel = DIFF_DADD(acc->sum_rel, 1.0);
  acc->sum_d2 = DIFF_DADD(acc->sum_d2, DIFF_DMUL(d, d));
  acc->sum_a2 = DIFF_DADD(acc->sum_a2, DIFF_DMUL(a, a));
  if (!isnan(acc->max_abs) && !(d <= acc->max_abs)) acc->max_abs = d;
  if (ulp > acc->max_ulp) acc->max_ulp = ulp;
}

DIFF_HD void diff_merge(diff_acc *into, const diff_acc *from)
{
  into->n       = DIFF_DADD(into->n, from->n);
  into->ndiff   = DIFF_DADD(into->ndiff, from->ndiff);
  into->sum_rel = DIFF_DADD(into->sum_rel, from->sum_rel);
  into->sum_d2  = DIFF_DADD(into->sum_d2, from->sum_d2);
  into->sum_a2  = DIFF_DADD(into->sum_a2, from->sum_a2);
  if (!isnan(into->max_abs) && !(from->max_abs <= into->max_abs)) into->max_abs = from->max_abs;
  if (from->max_ulp > into->max_ulp) into->max_ulp = from->max_ulp;
}

/* Block k (values k DIFF_BLOCK .. min(n, (k + 1) DIFF_BLOCK) - 1) of doubles a, b, from zero. */
DIFF_HD diff_acc diff_block(size_t n, const double *a, const double *b, size_t k)
{
  diff_acc acc = {0, 0, 0, 0, 0, 0, 0};
  size_t   end = (k + 1) * DIFF_BLOCK < n ? (k + 1) * DIFF_BLOCK : n;
  for (size_t i = k * DIFF_BLOCK; i < end; i++) {
    uint64_t x, y;
    memcpy(&x, &a[i], sizeof x), memcpy(&y, &b[i], sizeof y);
    diff_add(&acc, a[i], b[i], x == y, (double)diff_ulp(a[i], b[i]));
  }
  return acc;
}

#endif
