/* kernels/step_cuda.h: the solver's step outside the Krylov solve on device
 * arrays, for the scenarios of solver/ on one rank: the right-hand sides
 * the scan of the new state and its hash. Each value is rounded as the host's loop
 * rounds it (solver/grayscott.c, heat.c, solver.c; -ffp-contract=off, one
 * IEEE operation at a time), so the device's arrays hold the host's bits.
 * Plain C API, no PETSc; each returns 0 or a CUDA error code. */
#ifndef MINIAPP_KERNELS_STEP_CUDA_H
#define MINIAPP_KERNELS_STEP_CUDA_H

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Gray-Scott, npts points, (u, v) interleaved in w and b:
 *   q = (c v) v with c = u, or c[p] where c is not NULL (a closure model),
 *   b_u = u + dt (-q + F (1 - u)),  b_v = v + dt (q - (F + k) v). */
int step_cuda_gs_rhs(size_t npts, double dt, double F, double k, const double *w, const double *c, double *b);

/* Heat on an M x N interior grid, this rank's xm x ym block from (xs, ys),
 * point (i, j) at (j - ys) xm + (i - xs), the exact solution separable,
 * u*(x, y, t) = (e(t) sx) cy. The host's 1-D tables on the device:
 * sx[i + 1] = sin(a x_i + b) for x_i = (i + 1) hx, i = -1 .. M, cy likewise
 * (N + 2 values); sx1, cy1 the factors at x = 1 and y = 1 exactly; e0 =
 * e(t), e1 = e(t + dt). The coefficients as the host forms them: c_old =
 * (1 - theta) dt D, c_new = theta dt D, f_new = theta fk, f_old = (1 -
 * theta) fk. g: the neighbouring blocks' edges (vec_cuda.h
 * vec_cuda_halo_pack's layout, one component), NULL on one rank. Per point,
 * u's neighbours beyond the grid's edge the exact solution at t:
 *   lap = ((W - p) + (E - p)) ihx2 + ((S - p) + (N - p)) ihy2,
 *   bnd = the edge neighbours' exact values at t + dt, (W + E) ihx2 + (S + N) ihy2,
 *   b   = p + c_old lap + c_new bnd + dt (f_new u*(t + dt) + f_old u*(t)). */
typedef struct {
  int           M, N, xs, ys, xm, ym;
  const double *sx, *cy, *g;
  double        sx1, cy1, e0, e1, dt, c_old, c_new, f_new, f_old, ihx2, ihy2;
} step_heat_t;
int step_cuda_heat_rhs(const step_heat_t *h, const double *u, double *b);

/* step_scan (step.h) of device array x, the same result; scratch:
 * STEP_SCAN_SCRATCH doubles of the caller's device memory. */
#define STEP_SCAN_SCRATCH (8 * 256)
int step_cuda_scan(size_t n, const double *x, double *scratch, step_scan_t *out);

/* step_hash (step.h) of device array x; scratch as step_cuda_scan's. */
int step_cuda_hash(size_t xm, size_t ym, size_t xs, size_t ys, size_t M, size_t dof, const double *x, double *scratch,
                   uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif
