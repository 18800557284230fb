/* kernels/couple_cuda.cu: the coupled loop's batch kernels on the device
 * (couple_cuda.h), in _rn intrinsics: each value rounded once per operation,
 * as kernels/couple.c rounds it; the double-to-float conversions round to
 * nearest, as C's do. */
#include "couple_cuda.h"

#include "grid_cuda.cuh"

#include <stdlib.h>


#define CC_LAUNCH(k, n, ...) \
  do { \
    if (!(n)) return 0; \
    k<<<grid_blocks(n, GRID_MAX), GRID_THREADS>>>(__VA_ARGS__); \
    return (int)cudaGetLastError(); \
  } while (0)

/* One thread per float of the rows' block [off, off + nst dof): adjacent
 * threads write adjacent columns. */
__global__ void cc_stencils_kernel(int M, int N, int dof, int periodic, int nst, size_t nin, size_t off, double is,
                                   const double *u, float *feat, size_t n)
{
  GRID_LOOP(i, n)
  {
    size_t w = (size_t)nst * (size_t)dof, pt = i / w, k = i % w;
    int    s = (int)(k / (size_t)dof), c = (int)(k % (size_t)dof); /* couple.h's stencil point, component */
    int    x = (int)(pt % (size_t)M) + (s == 1 ? -1 : s == 2), y = (int)(pt / (size_t)M) + (s == 3 ? -1 : s == 4);
    double v;
    if (periodic) {
      x = x < 0 ? M - 1 : x == M ? 0 : x;
      y = y < 0 ? N - 1 : y == N ? 0 : y;
      v = u[((size_t)y * (size_t)M + (size_t)x) * (size_t)dof + (size_t)c];
    } else
      v = x >= 0 && x < M && y >= 0 && y < N ? u[((size_t)y * (size_t)M + (size_t)x) * (size_t)dof + (size_t)c] : 0.0;
    feat[pt * nin + off + k] = (float)__dmul_rn(v, is);
  }
}

/* The same on a block of 2+ ranks: a neighbour beyond the block's edge from
 * the neighbouring blocks' edges g (W, E columns, S, N rows). */
__global__ void cc_stencils_halo_kernel(int xm, int ym, int dof, int nst, size_t nin, size_t off, double is,
                                        const double *u, const double *g, float *feat, size_t n)
{
  const double *gw = g, *ge = g + (size_t)ym * dof, *gs = g + 2 * (size_t)ym * dof, *gn = gs + (size_t)xm * dof;
  GRID_LOOP(i, n)
  {
    size_t w = (size_t)nst * (size_t)dof, pt = i / w, k = i % w;
    int    s = (int)(k / (size_t)dof), c = (int)(k % (size_t)dof);
    int    x = (int)(pt % (size_t)xm) + (s == 1 ? -1 : s == 2), y = (int)(pt / (size_t)xm) + (s == 3 ? -1 : s == 4);
    double v = x < 0 ? gw[(size_t)y * dof + c] : x == xm ? ge[(size_t)y * dof + c] : y < 0 ? gs[(size_t)x * dof + c]
             : y == ym ? gn[(size_t)x * dof + c] : u[((size_t)y * (size_t)xm + (size_t)x) * (size_t)dof + (size_t)c];
    feat[pt * nin + off + k] = (float)__dmul_rn(v, is);
  }
}
__global__ void cc_target_kernel(const double *a, const double *b, double s, float *t, size_t n)
{
  GRID_LOOP(i, n) t[i] = (float)__ddiv_rn(b ? __dsub_rn(a[i], b[i]) : a[i], s);
}

__global__ void cc_correction_kernel(double s, const float *out, double *z, size_t n)
{
  GRID_LOOP(i, n) z[i] = __dmul_rn(s, (double)out[i]);
}

/* Every thread that meets an infinity or a NaN (exponent bits all ones)
 * stores 1: the same value, in any order. */
__global__ void cc_nonfinite_kernel(const float *x, int *flag, size_t n)
{
  GRID_LOOP(i, n)
  if ((__float_as_uint(x[i]) & 0x7f800000u) == 0x7f800000u) *flag = 1;
}

/* One thread a block of DIFF_BLOCK values, in index order (diff.h). */
__global__ void cc_diff_kernel(size_t n, const double *a, const double *b, diff_acc *part, size_t nb)
{
  GRID_LOOP(k, nb) part[k] = diff_block(n, a, b, k);
}

extern "C" int couple_cuda_stencils(int M, int N, int dof, int periodic, int nst, size_t nin, size_t off, double is,
                                    const double *u, float *feat)
{
  size_t n = (size_t)M * (size_t)N * (size_t)nst * (size_t)dof;
  CC_LAUNCH(cc_stencils_kernel, n, M, N, dof, periodic, nst, nin, off, is, u, feat, n);
}

extern "C" int couple_cuda_stencils_halo(int xm, int ym, int dof, int nst, size_t nin, size_t off, double is,
                                         const double *u, const double *g, float *feat)
{
  size_t n = (size_t)xm * (size_t)ym * (size_t)nst * (size_t)dof;
  CC_LAUNCH(cc_stencils_halo_kernel, n, xm, ym, dof, nst, nin, off, is, u, g, feat, n);
}
extern "C" int couple_cuda_target(size_t n, const double *a, const double *b, double s, float *t)
{
  CC_LAUNCH(cc_target_kernel, n, a, b, s, t, n);
}

extern "C" int couple_cuda_correction(size_t n, double s, const float *out, double *z)
{
  CC_LAUNCH(cc_correction_kernel, n, s, out, z, n);
}

extern "C" int couple_cuda_nonfinite(size_t n, const float *x, int *flag, int *bad)
{
  int e;
  *bad = 0;
  if (!n) return 0;
  if ((e = (int)cudaMemset(flag, 0, sizeof *flag))) return e;
  cc_nonfinite_kernel<<<grid_blocks(n, GRID_MAX), GRID_THREADS>>>(x, flag, n);
  if ((e = (int)cudaGetLastError())) return e;
  return (int)cudaMemcpy(bad, flag, sizeof *bad, cudaMemcpyDeviceToHost);
}

extern "C" int couple_cuda_diff(size_t n, const double *a, const double *b, diff_acc *acc)
{
  size_t    nb = (n + DIFF_BLOCK - 1) / DIFF_BLOCK;
  diff_acc *d  = NULL, *h;
  int       e;
  if (!nb) return 0;
  if (!(h = (diff_acc *)malloc(nb * sizeof *h))) return (int)cudaErrorMemoryAllocation;
  if (!(e = (int)cudaMalloc((void **)&d, nb * sizeof *d))) {
    cc_diff_kernel<<<grid_blocks(nb, GRID_MAX), GRID_THREADS>>>(n, a, b, d, nb);
    if (!(e = (int)cudaGetLastError())) e = (int)cudaMemcpy(h, d, nb * sizeof *h, cudaMemcpyDeviceToHost);
    (void)cudaFree(d);
  }
  for (size_t k = 0; !e && k < nb; k++) diff_merge(acc, &h[k]);
  free(h);
  return e;
}

extern "C" int couple_cuda_alloc(void **d, size_t bytes)
{
  *d = NULL;
  return bytes ? (int)cudaMalloc(d, bytes) : 0;
}
extern "C" int couple_cuda_free(void *d) { return d ? (int)cudaFree(d) : 0; }
extern "C" int couple_cuda_to_host(void *h, const void *d, size_t bytes)
{
  return bytes ? (int)cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) : 0;
}
extern "C" int couple_cuda_to_device(void *d, const void *h, size_t bytes)
{
  return bytes ? (int)cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) : 0;
}
extern "C" const char *couple_cuda_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }
