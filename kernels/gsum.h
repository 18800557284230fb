/* kernels/gsum.h: global-unit sums of float products (kernels/gsum.c).
 * Plain C, no PETSc, no MPI. */
#ifndef MINIAPP_KERNELS_GSUM_H
#define MINIAPP_KERNELS_GSUM_H

#include "rsum.h" /* gsum_to_rsum */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The surrogate's weight and bias gradients in the reproducible strategy,
 * on CPU and GPU. The unit is fixed before the sum from the rows' largest magnitudes over the whole
 * batch, all ranks included (a max is order-free): with ex, ey the exponents
 * of max|x| and max|y| (gsum_exponent), every product x_i y_i (exact in
 * double) is rounded once to the nearest multiple of U = 2^(ex + ey - 51)
 * (ties to even), and the integers are added exactly (64-bit fixed point).
 * The state is therefore a function of the multiset of products and the two
 * maxima alone: the same for any thread count, chunking, sample order, rank
 * count, CPU or GPU. Error: |sum - exact| <= n U / 2 <= n 2^-50 max|x| max|y|,
 * then the one rounding of rsum_value.
 * A train step may use exponents fixed before its batch exists (gsum_units):
 * a row's exponent E then lies between its own e and e + GSUM_SLACK, so
 * U <= 2^(ex + ey + 2 GSUM_SLACK - 51) and the bound is n 2^(2 GSUM_SLACK - 50)
 * max|x| max|y| (n 2^-44 max|x| max|y|). */
#define GSUM_ZERO      INT32_MIN /* gsum_exponent of an all-zero row */
#define GSUM_NONFINITE INT32_MAX /* ... of a row holding an Inf or NaN */
typedef struct {
  __int128 c;          /* sum of the products rounded to U, in units of U   */
  int32_t  nonfinite; /* a product was Inf or NaN: special is their sum      */
  double   special;
} gsum_t;
void    gsum_init(gsum_t *g);
float   gsum_absmax(size_t n, const float *x); /* max |x_i|; +Inf if some x_i is Inf or NaN */
int32_t gsum_exponent(float absmax);           /* e with absmax = f 2^e, 0.5 <= f < 1; GSUM_ZERO, GSUM_NONFINITE */
/* Serial: r[p * ny + q] += sum_{i<n} x[p * ldx + i] y[q * ldy + i] (p < nx,
 * q < ny) and, when rb is not NULL, rb[p] += sum_i x[p * ldx + i] (the bias
 * sums: y = 1, exponent 1), under the units of the global exponents ex[p],
 * ey[q]. Rows must lie within their exponents (|x| < 2^ex). */
void    gsum_add_outer(gsum_t *r, gsum_t *rb, size_t n, size_t nx, const float *x, size_t ldx, const int32_t *ex,
                       size_t ny, const float *y, size_t ldy, const int32_t *ey);
void    gsum_merge(gsum_t *a, const gsum_t *b); /* exact: a += b (same exponents) */
/* The rsum state of the exact value (e = ex + ey, or a marker): bins aligned
 * so that the value is held exactly, with a top that depends on e only, so
 * that rank partials merge exactly with rsum_merge and round with rsum_value. */
void    gsum_to_rsum(const gsum_t *g, int32_t ex, int32_t ey, rsum_t *r);
double  gsum_half_unit(int32_t ex, int32_t ey); /* U / 2, each product's rounding bound (0 without a unit) */
/* The exponents of n rows for this step, from the exponents the last step
 * used (pred; GSUM_ZERO where there are none) and this step's row maxima over
 * the batch and the ranks (amax): a row keeps pred[r] while it fits it
 * (e <= pred <= e + GSUM_SLACK for the row's own exponent e; an all-zero row
 * fits any), so that its sums can be made while the rows are in cache,
 * before the maxima are known; a row that does not fit is renewed one binade
 * above its maximum (e + GSUM_HEAD, at most 128; an all-zero row takes 0),
 * and its pairs' sums are made afterwards. Returns the number renewed. A
 * function of pred and amax only: every rank, thread count and device takes
 * the same exponents. */
#define GSUM_SLACK 3
#define GSUM_HEAD  1
int     gsum_units(size_t n, const int32_t *pred, const float *amax, int32_t *e); /* rows renewed */
/* a float whose gsum_exponent is e: 2^(e-1), 0 for GSUM_ZERO, +Inf for GSUM_NONFINITE */
float   gsum_unit_bound(int32_t e);

#ifdef __cplusplus
}
#endif
#endif
