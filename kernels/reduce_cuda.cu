/* kernels/reduce_cuda.cu: red_local on device arrays (reduce_cuda.h): the
 * block partials of the deterministic and atomic strategies, and the
 * reproducible strategy's maximum, canonical split and exact fold sums. */
#include "reduce_cuda.h"
#include "gradsum_cuda.h" /* gradsum_top_bin, gradsum_scale, gradsum_split_scaled, gs_bits */

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#define RC_THREADS 256
#define RC_LANES   8                      /* block_op's lanes (kernels/reduce.c) */
#define RC_BPC     (RC_THREADS / RC_LANES) /* RED_BLOCK blocks per CUDA block */
#define RC_SPLIT   4096 /* summands per CUDA block of the split: |fold sum| < 2^12 2^39 = 2^51 */
#ifndef RC_SEG
#define RC_SEG 1024 /* split blocks per segment: |segment sum| < 2^61, exact in int64 */
#endif
#ifndef RC_MAXGRID
#define RC_MAXGRID 1024 /* blocks of the maximum's grid-stride pass */
#endif
#define RC_ABS     0x7fffffffffffffffULL
#define RC_INF     0x7ff0000000000000ULL
enum { RC_POS_INF = 1, RC_NEG_INF = 2, RC_NAN = 4 };

#define CK(x) \
  do { \
    int e_ = (int)(x); \
    if (e_) return e_; \
  } while (0)

/* The scalars a call leaves on the device, read back in one copy. */
typedef struct {
  double             acc;   /* the unseeded atomic sum */
  unsigned long long amax;  /* the bits of max |summand| (NaN above Inf) */
  unsigned long long flags; /* RC_* of the non-finite summands */
} rc_scalars;

struct red_cuda_ws {
  rc_scalars *sc;                /* device */
  double     *part, *part_h;     /* block partials: device, host */
  size_t      part_cap;
  long long  *bins, *seg, *seg_h; /* split blocks' and segments' fold sums: device, device, host */
  size_t      bins_cap, seg_cap;
};

__device__ __forceinline__ double rc_elem(red_op_t op, const double *x, const double *y, size_t i)
{
  double a = x[i];
  return op == RED_OP_DOT ? __dmul_rn(a, y[i]) : op == RED_OP_SUMSQ ? __dmul_rn(a, a) : op == RED_OP_ASUM ? fabs(a) : a;
}

/* Block b of RED_BLOCK summands by the threads (b, lane k), k < 8: lane k adds
 * elements k, k + 8, ... in index order; thread (b, 0) combines the lanes as
 * block_op does and writes part[b], or adds it to *acc when part is NULL. */
__global__ void rc_blocks_kernel(red_op_t op, size_t n, const double *x, const double *y, double *part, double *acc)
{
  __shared__ double lane[RC_THREADS];
  int               t = threadIdx.x, k = t % RC_LANES;
  size_t            b = (size_t)blockIdx.x * RC_BPC + (size_t)(t / RC_LANES), nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  double            l = 0.0;

  if (b < nb) {
    size_t i0 = b * RED_BLOCK, m = n - i0 < RED_BLOCK ? n - i0 : RED_BLOCK;
    for (size_t i = (size_t)k; i < m; i += RC_LANES) l = __dadd_rn(l, rc_elem(op, x, y, i0 + i));
  }
  lane[t] = l;
  __syncthreads();
  if (k == 0 && b < nb) {
    const double *q = lane + t;
    double        s = __dadd_rn(__dadd_rn(__dadd_rn(q[0], q[1]), __dadd_rn(q[2], q[3])),
                                __dadd_rn(__dadd_rn(q[4], q[5]), __dadd_rn(q[6], q[7])));
    if (part) part[b] = s;
    else atomicAdd(acc, s);
  }
}

/* The largest |summand| as bits (an integer maximum: order-free) and which
 * non-finite summands occur. */
__global__ void rc_absmax_kernel(red_op_t op, size_t n, const double *x, const double *y, rc_scalars *sc)
{
  __shared__ unsigned long long sm[RC_THREADS], sf[RC_THREADS];
  int                           t = threadIdx.x;
  unsigned long long            m = 0, f = 0;

  for (size_t i = (size_t)blockIdx.x * RC_THREADS + t; i < n; i += (size_t)gridDim.x * RC_THREADS) {
    double             v = rc_elem(op, x, y, i);
    unsigned long long a = (unsigned long long)gs_bits(v) & RC_ABS;
    m                    = a > m ? a : m;
    if (a > RC_INF) f |= RC_NAN;
    else if (a == RC_INF) f |= v > 0 ? RC_POS_INF : RC_NEG_INF;
  }
  sm[t] = m, sf[t] = f;
  __syncthreads();
  for (int h = RC_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sm[t] = sm[t] > sm[t + h] ? sm[t] : sm[t + h], sf[t] |= sf[t + h];
    __syncthreads();
  }
  if (t == 0) {
    atomicMax(&sc->amax, sm[0]);
    if (sf[0]) atomicOr(&sc->flags, sf[0]);
  }
}

/* The block's three fold sums c (one per thread) added in a tree (integers:
 * exact in any order) and written to out[0..2] by thread 0. */
__device__ void rc_sum3(long long (*sh)[RC_THREADS], const long long c[3], long long *out)
{
  int t = threadIdx.x;
  for (int k = 0; k < 3; k++) sh[k][t] = c[k];
  __syncthreads();
  for (int h = RC_THREADS / 2; h > 0; h >>= 1) {
    if (t < h)
      for (int k = 0; k < 3; k++) sh[k][t] += sh[k][t + h];
    __syncthreads();
  }
  if (t == 0)
    for (int k = 0; k < 3; k++) out[k] = sh[k][0];
}

/* Every summand of the block's RC_SPLIT split canonically under the bin of
 * the maximum (rsum.c's folds, gradsum_split_scaled) and the folds added as
 * integers: bins[3 b + k]. Nothing to add when the maximum is 0 or not finite. */
__global__ void rc_split_kernel(red_op_t op, size_t n, const double *x, const double *y, const rc_scalars *sc,
                                long long *bins)
{
  __shared__ long long sh[3][RC_THREADS];
  int                  t  = threadIdx.x;
  unsigned long long   am = sc->amax;
  long long            c[3] = {0, 0, 0};

  if (am > 0 && am < RC_INF) {
    gradsum_scale_t s  = gradsum_scale(gradsum_top_bin(__longlong_as_double((long long)am)));
    size_t          i0 = (size_t)blockIdx.x * RC_SPLIT, i1 = n - i0 < RC_SPLIT ? n : i0 + RC_SPLIT;
    for (size_t i = i0 + (size_t)t; i < i1; i += RC_THREADS) {
      long long q[3];
      gradsum_split_scaled(rc_elem(op, x, y, i), s, q);
      c[0] += q[0], c[1] += q[1], c[2] += q[2];
    }
  }
  rc_sum3(sh, c, bins + 3 * (size_t)blockIdx.x);
}

/* Segment g: the fold sums of split blocks g RC_SEG .. (g+1) RC_SEG. */
__global__ void rc_segment_kernel(size_t nblk, const long long *bins, long long *seg)
{
  __shared__ long long sh[3][RC_THREADS];
  int                  t  = threadIdx.x;
  size_t               b0 = (size_t)blockIdx.x * RC_SEG, b1 = nblk - b0 < RC_SEG ? nblk : b0 + RC_SEG;
  long long            c[3] = {0, 0, 0};

  for (size_t b = b0 + (size_t)t; b < b1; b += RC_THREADS)
    for (int k = 0; k < 3; k++) c[k] += bins[3 * b + k];
  rc_sum3(sh, c, seg + 3 * (size_t)blockIdx.x);
}

extern "C" int red_cuda_ws_create(red_cuda_ws **w)
{
  int e;
  *w = (red_cuda_ws *)calloc(1, sizeof **w);
  if (!*w) return (int)cudaErrorMemoryAllocation;
  if ((e = (int)cudaMalloc(&(*w)->sc, sizeof(rc_scalars)))) free(*w), *w = NULL;
  return e;
}

extern "C" void red_cuda_ws_destroy(red_cuda_ws **w)
{
  if (!*w) return;
  (void)cudaFree((*w)->sc), (void)cudaFree((*w)->part), (void)cudaFree((*w)->bins), (void)cudaFree((*w)->seg);
  free((*w)->part_h), free((*w)->seg_h), free(*w);
  *w = NULL;
}

/* Device and host arrays of at least n elements of size sz (grown, never shrunk). */
static int rc_grow(void **dev, void **host, size_t *cap, size_t n, size_t sz)
{
  if (n <= *cap) return 0;
  *cap = 0; /* until both are there again */
  (void)cudaFree(*dev), *dev = NULL;
  CK(cudaMalloc(dev, n * sz));
  if (host) {
    free(*host);
    if (!(*host = malloc(n * sz))) return (int)cudaErrorMemoryAllocation;
  }
  *cap = n;
  return 0;
}

/* deterministic, seeded atomic: the block partials, combined on the host; unseeded atomic: added on the device */
static int rc_blocks(red_cuda_ws *w, red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y,
                     red_partial_t *p, red_atomic_state *ord)
{
  size_t nb = (n + RED_BLOCK - 1) / RED_BLOCK, grid = (nb + RC_BPC - 1) / RC_BPC;
  if (s == RED_ATOMIC && !(ord && ord->seed)) {
    CK(cudaMemset(w->sc, 0, sizeof(rc_scalars)));
    rc_blocks_kernel<<<(unsigned)grid, RC_THREADS>>>(op, n, x, y, NULL, &w->sc->acc);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&p->d, &w->sc->acc, sizeof p->d, cudaMemcpyDeviceToHost));
    return 0;
  }
  CK(rc_grow((void **)&w->part, (void **)&w->part_h, &w->part_cap, nb, sizeof(double)));
  rc_blocks_kernel<<<(unsigned)grid, RC_THREADS>>>(op, n, x, y, w->part, NULL);
  CK(cudaGetLastError());
  CK(cudaMemcpy(w->part_h, w->part, nb * sizeof(double), cudaMemcpyDeviceToHost));
  p->d = red_blocks_combine(s, nb, w->part_h, ord);
  return 0;
}

/* reproducible: the maximum, the split and the segment sums on the device; the rsum state on the host */
static int rc_rsum(red_cuda_ws *w, red_op_t op, size_t n, const double *x, const double *y, red_partial_t *p)
{
  size_t     nblk = (n + RC_SPLIT - 1) / RC_SPLIT, nseg = (nblk + RC_SEG - 1) / RC_SEG;
  size_t     grid = (n + RC_THREADS - 1) / RC_THREADS < RC_MAXGRID ? (n + RC_THREADS - 1) / RC_THREADS : RC_MAXGRID;
  rc_scalars sc;

  CK(rc_grow((void **)&w->bins, NULL, &w->bins_cap, 3 * nblk, sizeof(long long)));
  CK(rc_grow((void **)&w->seg, (void **)&w->seg_h, &w->seg_cap, 3 * nseg, sizeof(long long)));
  CK(cudaMemset(w->sc, 0, sizeof(rc_scalars)));
  rc_absmax_kernel<<<(unsigned)grid, RC_THREADS>>>(op, n, x, y, w->sc);
  CK(cudaGetLastError());
  rc_split_kernel<<<(unsigned)nblk, RC_THREADS>>>(op, n, x, y, w->sc, w->bins);
  CK(cudaGetLastError());
  rc_segment_kernel<<<(unsigned)nseg, RC_THREADS>>>(nblk, w->bins, w->seg);
  CK(cudaGetLastError());
  CK(cudaMemcpy(&sc, w->sc, sizeof sc, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(w->seg_h, w->seg, 3 * nseg * sizeof(long long), cudaMemcpyDeviceToHost));
  p->d = 0.0;
  rsum_init(&p->r);
  if (sc.flags) { /* the CPU's value: NaN, or the infinities' sum */
    int both       = (sc.flags & RC_POS_INF) && (sc.flags & RC_NEG_INF);
    p->r.nonfinite = 1;
    p->r.special   = (sc.flags & RC_NAN) || both ? NAN : (sc.flags & RC_POS_INF) ? INFINITY : -INFINITY;
    return 0;
  }
  if (!sc.amax) return 0;
  double mx;
  memcpy(&mx, &sc.amax, sizeof mx);
  p->r.top = gradsum_top_bin(mx);
  for (size_t g = 0; g < nseg; g++)
    for (int k = 0; k < 3; k++) p->r.bin[k] += (__int128)w->seg_h[3 * g + k];
  return 0;
}

extern "C" int red_cuda_local(red_cuda_ws *w, red_strategy_t s, red_op_t op, size_t n, const double *x,
                              const double *y, red_partial_t *p, red_atomic_state *ord)
{
  if (op != RED_OP_DOT) y = NULL;
  /* nothing to read, or one seeded block whose elements the host permutes: red_local itself */
  if (n == 0 || (s == RED_ATOMIC && ord && ord->seed && n <= RED_BLOCK)) {
    double h[2 * RED_BLOCK];
    if (n) CK(cudaMemcpy(h, x, n * sizeof(double), cudaMemcpyDeviceToHost));
    if (n && y) CK(cudaMemcpy(h + RED_BLOCK, y, n * sizeof(double), cudaMemcpyDeviceToHost));
    red_local(s, op, n, h, y ? h + RED_BLOCK : NULL, p, ord);
    return 0;
  }
  if (s == RED_REPRODUCIBLE) return rc_rsum(w, op, n, x, y, p);
  return rc_blocks(w, s, op, n, x, y, p, ord);
}
