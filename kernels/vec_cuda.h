/* kernels/vec_cuda.h: device arrays of doubles for the solver's vectors on a
 * GPU, their copies to and from the host, and the element-wise operations,
 * each element rounded as the CPU's loops round it (solver/vecred.c, built
 * with -ffp-contract=off: one IEEE operation at a time, no fused
 * multiply-add), so a device vector holds the host vector's bits. Plain C
 * API, no PETSc. Calls are synchronous; each returns 0 or a CUDA error code. */
#ifndef MINIAPP_KERNELS_VEC_CUDA_H
#define MINIAPP_KERNELS_VEC_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int vec_cuda_alloc(double **d, size_t n); /* n doubles; *d NULL for n == 0 */
int vec_cuda_free(double *d);
int vec_cuda_to_device(double *d, const double *h, size_t n);
int vec_cuda_to_host(double *h, const double *d, size_t n);
int vec_cuda_copy(double *y, const double *x, size_t n);                      /* y = x */
int vec_cuda_set(double *y, double a, size_t n);                              /* y = a */
int vec_cuda_scale(double *y, double a, size_t n);                            /* y = a y; a == 0: y = 0 */
int vec_cuda_axpby(double *y, double a, const double *x, double b, size_t n); /* y = a x + b y */
int vec_cuda_waxpy(double *w, double a, const double *x, const double *y, size_t n); /* w = a x + y */
int vec_cuda_pointwise_mult(double *w, const double *x, const double *y, size_t n);  /* w = x .* y */

#ifdef __cplusplus
}
#endif
#endif
