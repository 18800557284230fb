/* kernels/vec_cuda.h: device arrays of doubles for the solver's vectors on a
 * GPU, their copies to and from the host, and the element-wise operations,
 * each element rounded as the CPU's loops round it (solver/vecred.c, built
 * with -ffp-contract=off: one IEEE operation at a time, no fused
 * multiply-add), so a device vector holds the host vector's bits. Plain C
 * API, no PETSc. Each returns 0 or a CUDA error code: a launch's own, or a
 * kernel's fault from before that a copy back waited for (kernels run in the
 * order of their calls; the copies to the host wait for them). */
#ifndef MINIAPP_KERNELS_VEC_CUDA_H
#define MINIAPP_KERNELS_VEC_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int vec_cuda_alloc(double **d, size_t n); /* n doubles; *d NULL for n == 0 */
int vec_cuda_free(double *d);
const char *vec_cuda_error_string(int e); /* the runtime's words for error e */
int vec_cuda_device_memory(int *ndev, size_t *bytes); /* the devices, and device 0's memory in bytes */
int vec_cuda_to_device(double *d, const double *h, size_t n);
int vec_cuda_to_host(double *h, const double *d, size_t n);
int vec_cuda_copy(double *y, const double *x, size_t n);                      /* y = x */
int vec_cuda_set(double *y, double a, size_t n);                              /* y = a */
int vec_cuda_scale(double *y, double a, size_t n);                            /* y = a y; a == 0: y = 0 */
int vec_cuda_axpby(double *y, double a, const double *x, double b, size_t n); /* y = a x + b y */
int vec_cuda_waxpy(double *w, double a, const double *x, const double *y, size_t n); /* w = a x + y */
int vec_cuda_pointwise_mult(double *w, const double *x, const double *y, size_t n);  /* w = x .* y */
/* The CG tail's updates (kernels/reduce.h red_cg_tail): r_i = -a w_i + r_i,
 * z_i = r_i d_i, x_i = a p_i + x_i, where d_i = dinv[i] (dp = 0) or, for a
 * diagonal of period dp (1, 2, 4 or 8), dinv[i % dp]; w may be z. */
int vec_cuda_cg_tail(size_t n, double a, double *x, const double *p, double *r, const double *w, const double *dinv,
                     int dp, double *z);
/* The smallest period dp of 1, 2, 4, 8 (at most n) with d_i bitwise equal to
 * d_{i % dp} for every i, or 0 for none. */
int vec_cuda_period(size_t n, const double *d, int *dp);
/* The operator of solver/operator.c on one rank: y = u - coef_c Lap_h u per
 * component c < dof (1 or 2), on an M x N grid, point (i, j) component c at
 * (j M + i) dof + c; the 5-point Laplacian summed as the gather operator
 * sums it, ((W - p) + (E - p)) ihx2 + ((S - p) + (N - p)) ihy2, neighbours
 * across the edge wrapped (periodic) or 0 (Dirichlet). */
int vec_cuda_stencil(int M, int N, int dof, int periodic, double coef0, double coef1, double ihx2, double ihy2,
                     const double *u, double *y);

/* The same operator as the atomic build's scatter form (solver/operator.c):
 * every face flux F = (u_high - u_low) h^-2 computed once and added with
 * atomicAdd to both cells it separates (+F low, -F high; a cell beyond a
 * Dirichlet edge takes nothing), into lap (n doubles of device scratch),
 * then y = u - coef_c lap. The order of each cell's four additions is the
 * device's: the bits may change from run to run, as the strategy promises. */
int vec_cuda_stencil_atomic(int M, int N, int dof, int periodic, double coef0, double coef1, double ihx2, double ihy2,
                            const double *u, double *lap, double *y);

/* The operator on one rank's xm x ym owned block of 2 or more ranks, point
 * (i, j) component c at (j xm + i) dof + c. Its edges, packed into e by
 * vec_cuda_halo_pack: the W column (i = 0), the E column, the S row
 * (j = 0), the N row, each point's dof values in order (2 (xm + ym) dof
 * doubles). The stencil reads the neighbours' edges in g, the same layout
 * (g's W column: the west neighbour's E column; zeros beyond a Dirichlet
 * edge), and sums as vec_cuda_stencil does. */
int vec_cuda_halo_pack(int xm, int ym, int dof, const double *u, double *e);
int vec_cuda_stencil_halo(int xm, int ym, int dof, double c0, double c1, double ihx2, double ihy2, const double *u,
                          const double *g, double *y);
/* The scatter form of it (vec_cuda_stencil_atomic's, into lap: xm ym dof doubles): a face on the block's edge
 * computed from the neighbour's edge value and added to the owned cell alone. */
int vec_cuda_stencil_atomic_halo(int xm, int ym, int dof, double c0, double c1, double ihx2, double ihy2,
                                 const double *u, const double *g, double *lap, double *y);
/* The scatter form in the seeded atomic order (-atomic_order_seed): each cell's four face contributions added in
 * the order kernels/scatter.c draws for (seed, call), so the bits are the host's replay. g NULL: the whole grid
 * on one rank (xm ym = M N, wrapped or 0 beyond an edge), else one block of 2+ with its neighbours' edges. */
int vec_cuda_stencil_seeded(int xm, int ym, int dof, int periodic, double c0, double c1, double ihx2, double ihy2,
                            const double *u, const double *g, unsigned long long seed, unsigned long long call,
                            double *y);

#ifdef __cplusplus
}
#endif
#endif
