/* kernels/rsum.h: the reproducible accumulator (kernels/rsum.c), the
 * summation of the RED_REPRODUCIBLE strategy (kernels/reduce.h) and of the
 * surrogate's sums. Plain C, no PETSc, no MPI. */
#ifndef MINIAPP_KERNELS_RSUM_H
#define MINIAPP_KERNELS_RSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is summed over i: x_i, x_i*y_i, x_i^2 or |x_i|. */
typedef enum { RED_OP_SUM = 0, RED_OP_DOT = 1, RED_OP_SUMSQ = 2, RED_OP_ASUM = 3 } red_op_t;

/* Reproducible accumulator. Values are split at fixed binary boundaries
 * (multiples of RSUM_W bits of exponent) into RSUM_FOLD parts; part k of every
 * value is added exactly into an integer bin. Only the RSUM_FOLD bins below the
 * largest value's bin are kept, so the result is a function of the multiset of
 * values alone. */
#define RSUM_W 40
#define RSUM_FOLD 3
typedef struct {
  int32_t  top;                /* bin index of bin[0]; INT32_MIN when empty   */
  int32_t  nonfinite;          /* 1 when an Inf or NaN was seen               */
  double   special;            /* sum of the non-finite values (order-free)   */
  __int128 bin[RSUM_FOLD];     /* bin[k] counts units of 2^((top-k)*RSUM_W)   */
} rsum_t;

void   rsum_init(rsum_t *a);
void   rsum_add(rsum_t *a, red_op_t op, size_t n, const double *x, const double *y);
/* Serial (call it from within a thread): sum_i x_i y_i (or sum_i x_i when y
 * is NULL) of floats, each product formed exactly in double; the same state
 * rsum_add reaches on the widened values. */
void   rsum_add_fdot(rsum_t *a, size_t n, const float *x, const float *y);
/* the vector path rsum and gsum_add_outer take here: generic, avx2 or avx512 (MINIAPP_RSUM_ISA picks one) */
const char *rsum_isa(void);
int         rsum_lanes(void); /* the lanes of rsum's build on that path: 2 (generic), 4 (avx2) or 8 (avx512) */
/* take that path from now on (NULL: the widest); returns the one taken (benchmarks) */
const char *rsum_set_isa(const char *isa);
/* Serial: a += sum z_i^2 and b += sum z_i r_i, the states two rsum_add
 * calls reach (the CG tail's two sums, over a block in cache). */
void   rsum_add_sumsq_dot(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r);
void   rsum_merge(rsum_t *a, const rsum_t *b); /* exact: a += b */
double rsum_value(const rsum_t *a);            /* one fixed rounding to double */

#ifdef __cplusplus
}
#endif
#endif
