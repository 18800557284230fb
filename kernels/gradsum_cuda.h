/* kernels/gradsum_cuda.h: batch sums of products on the GPU ("gradsum"), for
 * the surrogate's tall-skinny gradient reductions, in the three strategies.
 * Pair p (< npair) sums x[i]*y[i] over i < len, with x = X + (p/(ny+1))*ldx and
 * y = Y + (p%(ny+1))*ldy, or y = 1 when p%(ny+1) == ny (the bias sums).
 * The split helpers below are shared by host and device: the reproducible
 * kernel's bins, rebuilt on the host with gradsum_to_rsum(), equal the state
 * kernels/rsum.c reaches on the same products, whatever the order. */
#ifndef MINIAPP_KERNELS_GRADSUM_CUDA_H
#define MINIAPP_KERNELS_GRADSUM_CUDA_H

#include "reduce.h"
#include "gsum.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif
#if defined(__CUDA_ARCH__)
#define GS_DADD(a, b) __dadd_rn((a), (b))
#define GS_DSUB(a, b) __dsub_rn((a), (b))
#define GS_DMUL(a, b) __dmul_rn((a), (b))
#else
#define GS_DADD(a, b) ((a) + (b))
#define GS_DSUB(a, b) ((a) - (b))
#define GS_DMUL(a, b) ((a) * (b))
#endif

/* rsum.c's bin of a maximum magnitude mx > 0 (smallest K, mx < 2^((K+1)W-1)). */
GS_HD int gradsum_top_bin(double mx)
{
  int e;
  (void)frexp(mx, &e);
  int a = e + RSUM_W;
  int q = a >= 0 ? a / RSUM_W : -((-a + RSUM_W - 1) / RSUM_W);
  return q - 1;
}

/* The powers of two of the canonical split under top bin `top`, formed once
 * per sum, not per product: the shift -top*W, applied as
 * 2^600 first when it is beyond a double's range, and 2^W, 2^2W. */
typedef struct {
  int    big;
  double pre, s, w1, w2;
} gradsum_scale_t;
GS_HD gradsum_scale_t gradsum_scale(int top)
{
  gradsum_scale_t c;
  int             sh = -top * RSUM_W;
  c.big = sh > 1000, c.pre = ldexp(1.0, 600);
  if (c.big) sh -= 600;
  c.s = ldexp(1.0, sh), c.w1 = ldexp(1.0, RSUM_W), c.w2 = ldexp(1.0, 2 * RSUM_W);
  return c;
}

/* The canonical 3-fold split of v, as integer counts of 2^((top-k)W); the
 * same operations as rsum.c's chunk extraction. Products with powers of two
 * are exact, so this gives the bits of ldexp at each step. */
GS_HD void gradsum_split_scaled(double v, gradsum_scale_t c, long long q[3])
{
  if (c.big) v = GS_DMUL(v, c.pre);
  double r  = GS_DMUL(v, c.s);
  double q0 = GS_DSUB(GS_DADD(r, 0x1.8p52), 0x1.8p52);
  r         = GS_DSUB(r, q0);
  double q1 = GS_DSUB(GS_DADD(r, 0x1.8p12), 0x1.8p12);
  r         = GS_DSUB(r, q1);
  double q2 = GS_DSUB(GS_DADD(r, 0x1.8p-28), 0x1.8p-28);
  q[0] = (long long)q0, q[1] = (long long)GS_DMUL(q1, c.w1), q[2] = (long long)GS_DMUL(q2, c.w2);
}

GS_HD void gradsum_split(double v, int top, long long q[3]) { gradsum_split_scaled(v, gradsum_scale(top), q); }

/* Samples per bin segment: 2^22 splits, each part below 2^(RSUM_W-1) = 2^39
 * in magnitude, sum to below 2^61, so no int64 bin of a segment overflows. */
#define GS_SEG_LEN ((size_t)1 << 22)
static inline size_t gradsum_nseg(size_t len) { return len ? (len + GS_SEG_LEN - 1) / GS_SEG_LEN : 1; }

/* Host: the rsum state of a sum whose largest |summand| is mx, from the bins
 * of its nseg segments (bins[3 * g + k]), added exactly in __int128. */
static inline void gradsum_to_rsum(double mx, const long long *bins, int nseg, rsum_t *r)
{
  rsum_init(r);
  if (!(mx > 0.0)) return;
  r->top = gradsum_top_bin(mx);
  for (int k = 0; k < 3; k++)
    for (int g = 0; g < nseg; g++) r->bin[k] += (__int128)bins[3 * g + k];
}

/* kernels/gsum.c on the device (the reproducible weight gradients): the
 * exponent of a row's max|x| (frexp's; GSUM_ZERO, GSUM_NONFINITE), and the
 * fold of one scaled product v = x y 2^-(ex+ey), |v| < 1: q0 = v to the
 * nearest multiple of 2^-51, as an integer (the bits of b0 = v + 3, the same
 * operation as gsum.c's generic path: the same integers). */
GS_HD int gsum_exp_of(float m)
{
  if (!(m < INFINITY)) return GSUM_NONFINITE;
  if (m == 0.0f) return GSUM_ZERO;
  int e;
  (void)frexp((double)m, &e);
  return e;
}
GS_HD long long gs_bits(double d)
{
#if defined(__CUDA_ARCH__)
  return __double_as_longlong(d);
#else
  long long b;
  memcpy(&b, &d, sizeof b);
  return b;
#endif
}
GS_HD long long gsum_fold(double v) { return gs_bits(GS_DADD(v, 3.0)) - gs_bits(3.0); }
/* Digits of a thread's fold sum for the block trees and the segments' int64
 * bins: a = hi 2^32 + lo, lo in [0, 2^32) (a 2^22-sample segment's lo sums
 * stay below 2^50 and its hi sums below 2^41). */
#define GS_GDIG 2 /* c hi, c lo */
/* The GEMM-style kernels' tile (-surrogate_cuda_kernels gemm): TJ, TK (powers
 * of two, at most 8) threads along the nx x rows and the ny y columns, 4 pairs
 * each way per thread, GS_GEMM_THREADS / (TJ TK) groups of threads a block. */
#define GS_GEMM_THREADS 256
GS_HD void gradsum_gemm_shape(int nx, int ny, int *TJ, int *TK)
{
  int tj = 1, tk = 1;
  while (tj < 8 && 4 * tj < nx) tj *= 2;
  while (tk < 8 && 4 * tk < ny) tk *= 2;
  *TJ = tj, *TK = tk;
}

#define GS_GRID_Y 65535u /* the y-dimension limit of a grid */

#if defined(__cplusplus)
/* gradsum_gemm_cuda.cu's launchers, for gradsum_cuda.cu and gsum_cuda.cu (CUDA code only): the
 * float sums (partial: one per pair and chunk of samples, the chunk index
 * major, gradsum_gemm_nchunk(len) chunks; or acc: atomicAdd into one per
 * pair) and the reproducible bins (as gradsum_gbins_kernel's). */
size_t gradsum_gemm_nchunk(size_t len);
void   gradsum_gemm_float(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                          float *partial, float *acc);
void gradsum_gemm_gbins(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nseg,
                        const unsigned *xmax, const unsigned *ymax, unsigned long long *nf, unsigned long long *bins);
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* Where a call's pair sums go: pair p = j*(ny+1) + k lands at w[j*ldw + k]
 * (k < ny) or b[j*ldb] (k == ny, the bias sums; b NULL: not wanted). */
typedef struct {
  red_partial_t *w;
  size_t         ldw;
  red_partial_t *b;
  size_t         ldb;
} gradsum_dst;
typedef struct {
  red_strategy_t st;
  int            outer; /* a gradsum_cuda_outer call */
  int            npair, ny, nseg;
  size_t         off; /* bytes into the results area */
  gradsum_dst    dst;
} gradsum_call;
/* Workspace grown on demand; zero-initialize before first use. */
typedef struct {
  void         *dev; /* scratch: deterministic chunk partials */
  size_t        bytes;
  void         *res, *hres; /* pending results: device, pinned host */
  size_t        rcap, rused;
  gradsum_call *call; /* the pending calls */
  int           ncall, ccap;
  /* 1: the GEMM-style kernels (reproducible: the same bits; float: their own fixed order), 0: the tiled ones */
  int gemm;
} gradsum_ws;

/* Launch on the current stream; the npair results reach dst at the next
 * gradsum_cuda_flush (one device-to-host copy and one wait per
 * train step, not one per call), or earlier if the pending results outgrow
 * the workspace: dst must stay valid until then. d for atomic/deterministic,
 * r for reproducible. Returns 0 or a cudaError_t value. Any len (segments of
 * GS_SEG_LEN samples keep the int64 bins from overflowing). */
int gradsum_cuda(red_strategy_t st, int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                 size_t len, gradsum_ws *ws, gradsum_dst dst);
/* The reproducible weight gradients (kernels/gsum.c's sums, the same states
 * the CPU reaches): pairs as in gradsum_cuda, st is RED_REPRODUCIBLE. The
 * rows' maxima over len samples are found first; rowmax (NULL on one rank)
 * turns them, n floats on the host, into the maxima over all ranks (an
 * MPI_MAX; every rank must make the same calls, len 0 included); then every
 * product is rounded to its pair's unit and added in integers. */
typedef int (*gradsum_rowmax_fn)(float *m, size_t n, void *ctx);
int gradsum_cuda_outer(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                       gradsum_ws *ws, gradsum_dst dst, gradsum_rowmax_fn rowmax, void *ctx);
/* The same under exponents decided before the call (kernels/gsum.h
 * gsum_units): bx, by on the device, the bounds gsum_unit_bound of the nx x
 * rows' and the ny y rows' exponents (nx = npair / (ny + 1)); the rows must
 * lie within them. No maxima are found and nothing waits for the device. */
int gradsum_cuda_outer_at(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                          gradsum_ws *ws, gradsum_dst dst, const float *bx, const float *by);
/* The largest |x| of each of the nx rows of X and then the ny rows of Y over
 * len samples, onto the host (h[nx + ny]; +Inf for a row holding an Inf or
 * NaN): the maxima kernels/gsum.h's gsum_units takes, whose exponents then
 * reach gradsum_cuda_outer_at as bounds (gsum_unit_bound). Waits for the
 * device once (a layer's deltas and inputs in one copy). */
int  gradsum_cuda_rowmax(int nx, const float *X, size_t ldx, int ny, const float *Y, size_t ldy, size_t len,
                         gradsum_ws *ws, float *h);
int  gradsum_cuda_flush(gradsum_ws *ws);
void gradsum_cuda_free(gradsum_ws *ws);
#ifdef __cplusplus
}
#endif
#endif
