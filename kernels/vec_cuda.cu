/* kernels/vec_cuda.cu: the element-wise vector operations on the device
 * (vec_cuda.h), in _rn intrinsics: each element rounded once per operation,
 * as the host's loops round it. */
#include "vec_cuda.h"

#include "grid_cuda.cuh"
#include "hashrng.h"

#include <stdint.h>


__global__ void vc_set_kernel(double *y, double a, size_t n) { GRID_LOOP(i, n) y[i] = a; }
__global__ void vc_scale_kernel(double *y, double a, size_t n) { GRID_LOOP(i, n) y[i] = __dmul_rn(a, y[i]); }
__global__ void vc_axpby_kernel(double *y, double a, const double *x, double b, size_t n)
{
  GRID_LOOP(i, n) y[i] = __dadd_rn(__dmul_rn(a, x[i]), __dmul_rn(b, y[i]));
}
__global__ void vc_waxpy_kernel(double *w, double a, const double *x, const double *y, size_t n)
{
  GRID_LOOP(i, n) w[i] = __dadd_rn(__dmul_rn(a, x[i]), y[i]);
}
__global__ void vc_mult_kernel(double *w, const double *x, const double *y, size_t n)
{
  GRID_LOOP(i, n) w[i] = __dmul_rn(x[i], y[i]);
}

#define VC_LAUNCH(k, n, ...) \
  do { \
    if (!(n)) return 0; \
    k<<<grid_blocks(n, GRID_MAX), GRID_THREADS>>>(__VA_ARGS__); \
    return (int)cudaGetLastError(); \
  } while (0)

extern "C" int vec_cuda_alloc(double **d, size_t n)
{
  *d = NULL;
  return n ? (int)cudaMalloc((void **)d, n * sizeof(double)) : 0;
}
extern "C" int vec_cuda_free(double *d) { return d ? (int)cudaFree(d) : 0; }
extern "C" int vec_cuda_device_memory(int *ndev, size_t *bytes)
{
  cudaDeviceProp p;
  int            e;
  *ndev = 0, *bytes = 0;
  if ((e = (int)cudaGetDeviceCount(ndev)) || *ndev < 1) return e;
  if ((e = (int)cudaGetDeviceProperties(&p, 0))) return e;
  *bytes = p.totalGlobalMem;
  return 0;
}
extern "C" const char *vec_cuda_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }
extern "C" int vec_cuda_to_device(double *d, const double *h, size_t n)
{
  return n ? (int)cudaMemcpy(d, h, n * sizeof(double), cudaMemcpyHostToDevice) : 0;
}
extern "C" int vec_cuda_to_host(double *h, const double *d, size_t n)
{
  return n ? (int)cudaMemcpy(h, d, n * sizeof(double), cudaMemcpyDeviceToHost) : 0;
}
extern "C" int vec_cuda_copy(double *y, const double *x, size_t n)
{
  return n && y != x ? (int)cudaMemcpy(y, x, n * sizeof(double), cudaMemcpyDeviceToDevice) : 0;
}
extern "C" int vec_cuda_set(double *y, double a, size_t n) { VC_LAUNCH(vc_set_kernel, n, y, a, n); }
extern "C" int vec_cuda_scale(double *y, double a, size_t n)
{
  if (a == 0.0) return vec_cuda_set(y, 0.0, n); /* as PETSc's VecScale: zeros, whatever y held */
  VC_LAUNCH(vc_scale_kernel, n, y, a, n);
}
extern "C" int vec_cuda_axpby(double *y, double a, const double *x, double b, size_t n)
{
  VC_LAUNCH(vc_axpby_kernel, n, y, a, x, b, n);
}
extern "C" int vec_cuda_waxpy(double *w, double a, const double *x, const double *y, size_t n)
{
  VC_LAUNCH(vc_waxpy_kernel, n, w, a, x, y, n);
}
extern "C" int vec_cuda_pointwise_mult(double *w, const double *x, const double *y, size_t n)
{
  VC_LAUNCH(vc_mult_kernel, n, w, x, y, n);
}

__global__ void vc_cg_tail_kernel(size_t n, double a, double *x, const double *p, double *r, const double *w,
                                  const double *dinv, int dp, double *z)
{
  GRID_LOOP(i, n)
  {
    double ri = __dadd_rn(__dmul_rn(-a, w[i]), r[i]), zi = __dmul_rn(ri, dinv[dp ? i % (size_t)dp : i]);
    x[i] = __dadd_rn(__dmul_rn(a, p[i]), x[i]);
    r[i] = ri, z[i] = zi;
  }
}

extern "C" int vec_cuda_cg_tail(size_t n, double a, double *x, const double *p, double *r, const double *w,
                                const double *dinv, int dp, double *z)
{
  VC_LAUNCH(vc_cg_tail_kernel, n, n, a, x, p, r, w, dinv, dp, z);
}

/* Bit k of *bad: some entry differs from the one 2^k before it in its period (k < 4). */
__global__ void vc_period_kernel(size_t n, const double *d, unsigned long long *bad)
{
  unsigned long long b = 0;
  GRID_LOOP(i, n)
  for (int k = 0; k < 4; k++)
    if (__double_as_longlong(d[i]) != __double_as_longlong(d[i % ((size_t)1 << k)])) b |= 1ULL << k;
  if (b) atomicOr(bad, b);
}

extern "C" int vec_cuda_period(size_t n, const double *d, int *dp)
{
  unsigned long long *bad, h = 0;
  int                 e;

  *dp = 0;
  if (!n) return 0;
  if ((e = (int)cudaMalloc((void **)&bad, sizeof *bad))) return e;
  if (!(e = (int)cudaMemset(bad, 0, sizeof *bad))) {
    vc_period_kernel<<<grid_blocks(n, GRID_MAX), GRID_THREADS>>>(n, d, bad);
    if (!(e = (int)cudaGetLastError())) e = (int)cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost);
  }
  (void)cudaFree(bad);
  for (int k = 0; !e && k < 4 && !*dp && ((size_t)1 << k) <= n; k++)
    if (!(h >> k & 1)) *dp = 1 << k;
  return e;
}

/* One thread per point and component. */
__global__ void vc_stencil_kernel(int M, int N, int dof, int periodic, double c0, double c1, double ihx2, double ihy2,
                                  const double *u, double *y, size_t n)
{
  GRID_LOOP(i, n)
  {
    int    c = (int)(i % (size_t)dof), pt = (int)(i / (size_t)dof), ix = pt % M, jy = pt / M;
    double p = u[i], cf = c ? c1 : c0, W, E, S, No;
    if (periodic) {
      W  = u[((size_t)jy * M + (ix ? ix - 1 : M - 1)) * dof + c];
      E  = u[((size_t)jy * M + (ix + 1 < M ? ix + 1 : 0)) * dof + c];
      S  = u[((size_t)(jy ? jy - 1 : N - 1) * M + ix) * dof + c];
      No = u[((size_t)(jy + 1 < N ? jy + 1 : 0) * M + ix) * dof + c];
    } else {
      W  = ix ? u[i - (size_t)dof] : 0.0;
      E  = ix + 1 < M ? u[i + (size_t)dof] : 0.0;
      S  = jy ? u[i - (size_t)M * dof] : 0.0;
      No = jy + 1 < N ? u[i + (size_t)M * dof] : 0.0;
    }
    double lap = __dadd_rn(__dmul_rn(__dadd_rn(__dsub_rn(W, p), __dsub_rn(E, p)), ihx2),
                           __dmul_rn(__dadd_rn(__dsub_rn(S, p), __dsub_rn(No, p)), ihy2));
    y[i] = __dsub_rn(p, __dmul_rn(cf, lap));
  }
}

extern "C" int vec_cuda_stencil(int M, int N, int dof, int periodic, double coef0, double coef1, double ihx2,
                                double ihy2, const double *u, double *y)
{
  size_t n = (size_t)M * (size_t)N * (size_t)dof;
  VC_LAUNCH(vc_stencil_kernel, n, M, N, dof, periodic, coef0, coef1, ihx2, ihy2, u, y, n);
}

/* One thread per face: per component c, the x-faces (i-1|i), i <= M, of each
 * row, then the y-faces (j-1|j), j <= N, of each column. */
__global__ void vc_faces_kernel(int M, int N, int dof, int periodic, double ihx2, double ihy2, const double *u,
                                double *lap, size_t n)
{
  const size_t nx = (size_t)(M + 1) * N, per_c = nx + (size_t)M * (N + 1);
  GRID_LOOP(i, n)
  {
    int       c = (int)(i / per_c), lo_ok, hi_ok;
    size_t    f = i % per_c, lo, hi;
    double    ul, uh, F;
    if (f < nx) { /* between (ix-1, jy) and (ix, jy) */
      int ix = (int)(f % (size_t)(M + 1)), jy = (int)(f / (size_t)(M + 1));
      lo_ok = ix > 0, hi_ok = ix < M;
      lo = ((size_t)jy * M + (size_t)(lo_ok ? ix - 1 : M - 1)) * dof + c;
      hi = ((size_t)jy * M + (size_t)(hi_ok ? ix : 0)) * dof + c;
      F  = ihx2;
    } else { /* between (ix, jy-1) and (ix, jy) */
      f -= nx;
      int ix = (int)(f % (size_t)M), jy = (int)(f / (size_t)M);
      lo_ok = jy > 0, hi_ok = jy < N;
      lo = ((size_t)(lo_ok ? jy - 1 : N - 1) * M + ix) * dof + c;
      hi = ((size_t)(hi_ok ? jy : 0) * M + ix) * dof + c;
      F  = ihy2;
    }
    ul = lo_ok || periodic ? u[lo] : 0.0, uh = hi_ok || periodic ? u[hi] : 0.0;
    F = __dmul_rn(__dsub_rn(uh, ul), F);
    if (lo_ok) atomicAdd(&lap[lo], F);
    if (hi_ok) atomicAdd(&lap[hi], -F);
  }
}

__global__ void vc_apply_kernel(int dof, double c0, double c1, const double *u, const double *lap, double *y, size_t n)
{
  GRID_LOOP(i, n) y[i] = __dsub_rn(u[i], __dmul_rn(i % (size_t)dof ? c1 : c0, lap[i]));
}

extern "C" int vec_cuda_stencil_atomic(int M, int N, int dof, int periodic, double coef0, double coef1, double ihx2,
                                       double ihy2, const double *u, double *lap, double *y)
{
  size_t n = (size_t)M * (size_t)N * (size_t)dof, nf = ((size_t)(M + 1) * N + (size_t)M * (N + 1)) * dof;
  int    e;
  if (!n) return 0;
  if ((e = vec_cuda_set(lap, 0.0, n))) return e;
  vc_faces_kernel<<<grid_blocks(nf, GRID_MAX), GRID_THREADS>>>(M, N, dof, periodic, ihx2, ihy2, u, lap, nf);
  if ((e = (int)cudaGetLastError())) return e;
  VC_LAUNCH(vc_apply_kernel, n, dof, coef0, coef1, u, lap, y, n);
}

/* One thread per edge value: W column, E column, S row, N row. */
__global__ void vc_halo_pack_kernel(int xm, int ym, int dof, const double *u, double *e, size_t n)
{
  GRID_LOOP(i, n)
  {
    size_t col = (size_t)ym * dof, k = i;
    int    side = k < col ? 0 : k < 2 * col ? 1 : k < 2 * col + (size_t)xm * dof ? 2 : 3;
    k -= side == 0 ? 0 : side == 1 ? col : side == 2 ? 2 * col : 2 * col + (size_t)xm * dof;
    int    c = (int)(k % (size_t)dof), q = (int)(k / (size_t)dof), ix, jy;
    if (side < 2) ix = side ? xm - 1 : 0, jy = q;
    else ix = q, jy = side == 2 ? 0 : ym - 1;
    e[i] = u[((size_t)jy * xm + ix) * dof + c];
  }
}

extern "C" int vec_cuda_halo_pack(int xm, int ym, int dof, const double *u, double *e)
{
  size_t n = 2 * ((size_t)xm + ym) * dof;
  VC_LAUNCH(vc_halo_pack_kernel, n, xm, ym, dof, u, e, n);
}

__global__ void vc_stencil_halo_kernel(int xm, int ym, int dof, double c0, double c1, double ihx2, double ihy2,
                                       const double *u, const double *g, double *y, size_t n)
{
  GRID_LOOP(i, n)
  {
    int           c = (int)(i % (size_t)dof), pt = (int)(i / (size_t)dof), ix = pt % xm, jy = pt / xm;
    const double *gw = g, *ge = g + (size_t)ym * dof, *gs = g + 2 * (size_t)ym * dof, *gn = gs + (size_t)xm * dof;
    double        p = u[i], cf = c ? c1 : c0;
    double        W  = ix ? u[i - (size_t)dof] : gw[(size_t)jy * dof + c];
    double        E  = ix + 1 < xm ? u[i + (size_t)dof] : ge[(size_t)jy * dof + c];
    double        S  = jy ? u[i - (size_t)xm * dof] : gs[(size_t)ix * dof + c];
    double        No = jy + 1 < ym ? u[i + (size_t)xm * dof] : gn[(size_t)ix * dof + c];
    double lap = __dadd_rn(__dmul_rn(__dadd_rn(__dsub_rn(W, p), __dsub_rn(E, p)), ihx2),
                           __dmul_rn(__dadd_rn(__dsub_rn(S, p), __dsub_rn(No, p)), ihy2));
    y[i] = __dsub_rn(p, __dmul_rn(cf, lap));
  }
}

extern "C" int vec_cuda_stencil_halo(int xm, int ym, int dof, double c0, double c1, double ihx2, double ihy2,
                                     const double *u, const double *g, double *y)
{
  size_t n = (size_t)xm * ym * dof;
  VC_LAUNCH(vc_stencil_halo_kernel, n, xm, ym, dof, c0, c1, ihx2, ihy2, u, g, y, n);
}

/* The faces of the owned block, as vc_faces_kernel's: x-faces (ix-1|ix),
 * ix <= xm, of each row, then y-faces; a face on the block's edge reads the
 * neighbour's value from g and adds only to the owned cell. */
__global__ void vc_faces_halo_kernel(int xm, int ym, int dof, double ihx2, double ihy2, const double *u,
                                     const double *g, double *lap, size_t n)
{
  const size_t  nx = (size_t)(xm + 1) * ym, per_c = nx + (size_t)xm * (ym + 1);
  const double *gw = g, *ge = g + (size_t)ym * dof, *gs = g + 2 * (size_t)ym * dof, *gn = gs + (size_t)xm * dof;
  GRID_LOOP(i, n)
  {
    int    c = (int)(i / per_c), lo_ok, hi_ok;
    size_t f = i % per_c, lo = 0, hi = 0;
    double ul, uh, F;
    if (f < nx) { /* between (ix-1, jy) and (ix, jy) */
      int ix = (int)(f % (size_t)(xm + 1)), jy = (int)(f / (size_t)(xm + 1));
      lo_ok = ix > 0, hi_ok = ix < xm;
      if (lo_ok) lo = ((size_t)jy * xm + ix - 1) * dof + c;
      if (hi_ok) hi = ((size_t)jy * xm + ix) * dof + c;
      ul = lo_ok ? u[lo] : gw[(size_t)jy * dof + c], uh = hi_ok ? u[hi] : ge[(size_t)jy * dof + c];
      F  = ihx2;
    } else { /* between (ix, jy-1) and (ix, jy) */
      f -= nx;
      int ix = (int)(f % (size_t)xm), jy = (int)(f / (size_t)xm);
      lo_ok = jy > 0, hi_ok = jy < ym;
      if (lo_ok) lo = ((size_t)(jy - 1) * xm + ix) * dof + c;
      if (hi_ok) hi = ((size_t)jy * xm + ix) * dof + c;
      ul = lo_ok ? u[lo] : gs[(size_t)ix * dof + c], uh = hi_ok ? u[hi] : gn[(size_t)ix * dof + c];
      F  = ihy2;
    }
    F = __dmul_rn(__dsub_rn(uh, ul), F);
    if (lo_ok) atomicAdd(&lap[lo], F);
    if (hi_ok) atomicAdd(&lap[hi], -F);
  }
}

extern "C" int vec_cuda_stencil_atomic_halo(int xm, int ym, int dof, double c0, double c1, double ihx2, double ihy2,
                                            const double *u, const double *g, double *lap, double *y)
{
  size_t n = (size_t)xm * ym * dof, nf = ((size_t)(xm + 1) * ym + (size_t)xm * (ym + 1)) * dof;
  int    e;
  if (!n) return 0;
  if ((e = vec_cuda_set(lap, 0.0, n))) return e;
  vc_faces_halo_kernel<<<grid_blocks(nf, GRID_MAX), GRID_THREADS>>>(xm, ym, dof, ihx2, ihy2, u, g, lap, nf);
  if ((e = (int)cudaGetLastError())) return e;
  VC_LAUNCH(vc_apply_kernel, n, dof, c0, c1, u, lap, y, n);
}

/* The scatter form in a seeded order: one thread per cell and component,
 * its four face contributions in the face plan's order (solver/operator.c:
 * -F_W of the face (i-1|i), +F_E of (i|i+1), -F_S, +F_N), shuffled with
 * kernels/scatter.c's draw for target t, added from 0 in that order. */
__global__ void vc_seeded_kernel(int xm, int ym, int dof, int periodic, double c0, double c1, double ihx2,
                                 double ihy2, const double *u, const double *g, uint64_t seed, uint64_t call,
                                 double *y, size_t n)
{
  const double *gw = g, *ge = g + (size_t)ym * dof, *gs = g + 2 * (size_t)ym * dof, *gn = gs + (size_t)xm * dof;
  GRID_LOOP(i, n)
  {
    int    c = (int)(i % (size_t)dof), pt = (int)(i / (size_t)dof), ix = pt % xm, jy = pt / xm;
    size_t row = (size_t)jy * xm, col = (size_t)ix;
    double p = u[i], W, E, S, No, v[4];
    if (g) { /* 2+ ranks: beyond the block, the neighbours' edges */
      W  = ix ? u[i - (size_t)dof] : gw[(size_t)jy * dof + c];
      E  = ix + 1 < xm ? u[i + (size_t)dof] : ge[(size_t)jy * dof + c];
      S  = jy ? u[i - (size_t)xm * dof] : gs[(size_t)ix * dof + c];
      No = jy + 1 < ym ? u[i + (size_t)xm * dof] : gn[(size_t)ix * dof + c];
    } else { /* the whole grid: wrapped, or 0 beyond a Dirichlet edge */
      W  = ix ? u[i - (size_t)dof] : periodic ? u[(row + (size_t)xm - 1) * dof + c] : 0.0;
      E  = ix + 1 < xm ? u[i + (size_t)dof] : periodic ? u[row * dof + c] : 0.0;
      S  = jy ? u[i - (size_t)xm * dof] : periodic ? u[((size_t)(ym - 1) * xm + col) * dof + c] : 0.0;
      No = jy + 1 < ym ? u[i + (size_t)xm * dof] : periodic ? u[col * dof + c] : 0.0;
    }
    v[0] = -__dmul_rn(__dsub_rn(p, W), ihx2), v[1] = __dmul_rn(__dsub_rn(E, p), ihx2);
    v[2] = -__dmul_rn(__dsub_rn(p, S), ihy2), v[3] = __dmul_rn(__dsub_rn(No, p), ihy2);
    for (int j = 4; j > 1; j--) {
      uint64_t r = mix64(seed ^ mix64(call ^ mix64((uint64_t)i * 32 + (uint64_t)j)));
      int      k = (int)(r % (uint64_t)j);
      double   t = v[j - 1];
      v[j - 1] = v[k], v[k] = t;
    }
    double lap = 0.0;
    for (int j = 0; j < 4; j++) lap = __dadd_rn(lap, v[j]);
    y[i] = __dsub_rn(p, __dmul_rn(c ? c1 : c0, lap));
  }
}

extern "C" int vec_cuda_stencil_seeded(int xm, int ym, int dof, int periodic, double c0, double c1, double ihx2,
                                       double ihy2, const double *u, const double *g, unsigned long long seed,
                                       unsigned long long call, double *y)
{
  size_t n = (size_t)xm * ym * dof;
  VC_LAUNCH(vc_seeded_kernel, n, xm, ym, dof, periodic, c0, c1, ihx2, ihy2, u, g, (uint64_t)seed, (uint64_t)call, y,
            n);
}
