/* kernels/couple_cuda.h: the device twins of kernels/couple.h, on one rank's
 * whole grid (no ghosts: the stencil wraps a periodic edge or reads 0 beyond
 * another) or one block of several with its neighbours' edges, each value rounded as the host rounds it (one IEEE operation at
 * a time, no fused multiply-add), so a batch formed here holds the host
 * batch's bits. Plain C API, no PETSc; kernels run in the order of their
 * calls. Each returns 0 or a CUDA error code. */
#ifndef MINIAPP_KERNELS_COUPLE_CUDA_H
#define MINIAPP_KERNELS_COUPLE_CUDA_H

#include <stddef.h>
#include "diff.h"

#ifdef __cplusplus
extern "C" {
#endif

/* couple_stencils_cpu on an M x N grid of dof values a point, point (i, j)
 * at u + (j M + i) dof, all points one rank's: rows of nin floats, row j M + i. */
int couple_cuda_stencils(int M, int N, int dof, int periodic, int nst, size_t nin, size_t off, double is,
                         const double *u, float *feat);
/* The same on one rank's xm x ym block of 2 or more, a neighbour beyond the
 * block's edge read from g, the neighbouring blocks' edges (vec_cuda.h
 * vec_cuda_halo_pack's layout; zeros beyond a non-periodic edge). */
int couple_cuda_stencils_halo(int xm, int ym, int dof, int nst, size_t nin, size_t off, double is, const double *u,
                              const double *g, float *feat);
int couple_cuda_target(size_t n, const double *a, const double *b, double s, float *t); /* b may be NULL */
int couple_cuda_correction(size_t n, double s, const float *out, double *z);
/* *bad (host) = couple_nonfinite_cpu of the device array x; flag: one device
 * int of the caller's scratch. Waits for the kernels before it. */
int couple_cuda_nonfinite(size_t n, const float *x, int *flag, int *bad);
/* The comparison of device arrays a and b (n doubles each) merged into *acc
 * (host), with the bits of miniapp/io/metrics.c's metrics_add: one thread a
 * DIFF_BLOCK, the blocks' accumulators merged on the host in block order. */
int couple_cuda_diff(size_t n, const double *a, const double *b, diff_acc *acc);

/* device memory and copies, in bytes */
int         couple_cuda_alloc(void **d, size_t bytes); /* *d NULL for 0 bytes */
int         couple_cuda_free(void *d);
int         couple_cuda_to_host(void *h, const void *d, size_t bytes);
int         couple_cuda_to_device(void *d, const void *h, size_t bytes);
const char *couple_cuda_error_string(int e);

#ifdef __cplusplus
}
#endif
#endif
