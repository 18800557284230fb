/* kernels/couple.h: the coupled loop's batch kernels on the host: the
 * surrogate's input rows from 5-point stencils of the solver's fields, the
 * training targets, the learned correction, and the finite test of a float
 * batch. couple_cuda.h has their device twins, with the same bits. Plain C,
 * no PETSc; values are doubles (the solver's) and floats (the network's). */
#ifndef MINIAPP_KERNELS_COUPLE_H
#define MINIAPP_KERNELS_COUPLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A rank's points (xs..xs+xm-1) x (ys..ys+ym-1) in its ghosted local array,
 * whose first entry is point (gxs, gys), gxm points a row, dof values a point. */
typedef struct {
  int xs, ys, xm, ym, gxs, gys, gxm, dof;
} couple_grid;

/* The stencil points in their column order: centre, west, east, south, north. */
#define COUPLE_NST 5

/* Rows of nin floats per point, row (j - ys) xm + (i - xs): column
 * off + s dof + c, for stencil point s < nst and component c, gets
 * (float)(v is), v the value of that neighbour in the ghosted array a (a
 * ghost beyond a non-periodic edge holds 0 there). Each row is written by
 * one thread: the same floats on any thread count. */
void couple_stencils_cpu(const couple_grid *g, int nst, size_t nin, size_t off, double is, const double *a,
                         float *feat);
/* t[i] = (float)((a[i] - b[i]) / s), or (float)(a[i] / s) for b NULL. */
void couple_target_cpu(size_t n, const double *a, const double *b, double s, float *t);
/* z[i] = s (double)out[i] */
void couple_correction_cpu(size_t n, double s, const float *out, double *z);
/* 1 if some x[i], i < n, is an infinity or a NaN, else 0 */
int couple_nonfinite_cpu(size_t n, const float *x);

#ifdef __cplusplus
}
#endif
#endif
