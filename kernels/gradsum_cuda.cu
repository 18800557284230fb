/* kernels/gradsum_cuda.cu: the GPU tall-skinny reductions (see gradsum_cuda.h).
 * Why each strategy is built this way:
 *   atomic: one float partial per (pair, block) of GS_CHUNK samples, added to
 *     the result with atomicAdd in arrival order, like common DL frameworks;
 *     a pair's chunks run in neighbouring blocks, so their adds race.
 *   deterministic: the same partials written to memory and combined by a fixed
 *     pairwise tree per pair; the split depends only on len, never on the GPU.
 *   reproducible: products are exact in double; a first pass finds the largest
 *     |product| (atomicMax on the bits of non-negative doubles is order-free),
 *     a second pass adds every product's canonical split into int64 bins with
 *     integer atomics (associative), so the bins equal rsum.c's. Each segment
 *     of GS_SEG_LEN samples has its own bins (no int64 bin can overflow); the
 *     host adds the segments' bins exactly in __int128.
 * The fixed-order kernels walk a pair's chunks with a stride of gridDim.y (at
 * most 65535 blocks in y), the atomic one all (pair, chunk) items with a
 * stride of gridDim.x, so any len works.
 * The CPU counterparts are surrogate/tallskinny_cpu.c and kernels/rsum.c. */
#include "gradsum_cuda.h"

#include <cuda_runtime.h>
#include <limits.h>

#define GS_THREADS 256
#define GS_CHUNK   4096
#define GS_GRID_Y  65535u /* the y-dimension limit of a grid */

__device__ __forceinline__ void gs_rows(int p, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, const float **x, const float **y)
{
  int j = p / (ny + 1), k = p % (ny + 1);
  *x = X + (size_t)j * ldx;
  *y = k < ny ? Y + (size_t)k * ldy : nullptr;
}

/* Work item w = pair * nchunk + chunk. Atomic (acc): a 1-D grid walks w in
 * order, so a pair's chunks go to neighbouring blocks, which a GPU runs at the
 * same time: their atomicAdds race as the strategy means them to (issue 26,
 * L3; with x = pair and y = chunk, blocks are dispatched x-fastest and each
 * pair's adds arrived in chunk order, nearly a fixed order). Deterministic
 * (partial): x = pair, y = chunk with a stride of gridDim.y; order does not
 * matter there. */
__global__ void gradsum_float_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, float *partial, float *acc)
{
  __shared__ float sh[GS_THREADS];
  const float     *x, *y;
  int              t    = threadIdx.x;
  size_t           w    = acc ? blockIdx.x : (size_t)blockIdx.x * nchunk + blockIdx.y;
  size_t           step = acc ? gridDim.x : gridDim.y, end = acc ? (size_t)npair * nchunk : ((size_t)blockIdx.x + 1) * nchunk;
  for (; w < end; w += step) {
    int    p = (int)(w / nchunk), c = (int)(w % nchunk);
    size_t s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    float  a  = 0.0f;
    gs_rows(p, ny, X, ldx, Y, ldy, &x, &y);
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) a = __fadd_rn(a, y ? __fmul_rn(x[i], y[i]) : x[i]);
    sh[t] = a;
    __syncthreads();
    for (int h = GS_THREADS / 2; h > 0; h >>= 1) { /* fixed tree inside the block */
      if (t < h) sh[t] = __fadd_rn(sh[t], sh[t + h]);
      __syncthreads();
    }
    if (t == 0) {
      if (acc) atomicAdd(&acc[p], sh[0]);
      else partial[(size_t)c * npair + p] = sh[0]; /* pair-minor: the tree's threads read neighbours (F3) */
    }
    __syncthreads(); /* sh[0] read before the next chunk writes sh */
  }
}

/* One thread per pair: level-by-level pairwise tree over its chunk partials.
 * Partials are stored chunk-major, pair-minor (partial[c * npair + p]), so a
 * warp's 32 pairs read 32 neighbouring floats at each step (issue 26, F3;
 * pair-major had them nchunk floats apart). Same tree, same bits. */
__global__ void gradsum_tree_kernel(int npair, int nchunk, float *partial, float *out)
{
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npair) return;
  float *q = partial + p;
  size_t n = (size_t)npair;
  for (int st = 1; st < nchunk; st *= 2)
    for (int c = 0; c + st < nchunk; c += 2 * st) q[c * n] = __fadd_rn(q[c * n], q[(c + st) * n]);
  out[p] = q[0];
}

/* The largest finite |product| of each pair (mx), and which non-finite
 * products it has (nf: 1 NaN, 2 +Inf, 4 -Inf): kernels/rsum.c keeps those
 * apart from the bins and sums them as they are, so must the device. */
__global__ void gradsum_absmax_kernel(int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, unsigned long long *mx, unsigned long long *nf)
{
  __shared__ double             sh[GS_THREADS];
  __shared__ unsigned long long shf[GS_THREADS];
  const float                  *x, *y;
  int                           p = blockIdx.x, t = threadIdx.x;
  gs_rows(p, ny, X, ldx, Y, ldy, &x, &y);
  double             m = 0.0;
  unsigned long long f = 0;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      double v = y ? __dmul_rn((double)x[i], (double)y[i]) : (double)x[i];
      if (isfinite(v)) m = fmax(m, fabs(v));
      else f |= v != v ? 1ull : v > 0 ? 2ull : 4ull;
    }
  }
  sh[t] = m, shf[t] = f;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = fmax(sh[t], sh[t + h]), shf[t] |= shf[t + h];
    __syncthreads();
  }
  if (t == 0) {
    atomicMax(&mx[p], (unsigned long long)__double_as_longlong(sh[0]));
    if (shf[0]) atomicOr(&nf[p], shf[0]);
  }
}

/* bins[(p * nseg + g) * 3 + k]: fold k of pair p over segment g (GS_SEG_LEN samples) */
__global__ void gradsum_bins_kernel(int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, int nseg, const unsigned long long *mx, unsigned long long *bins)
{
  __shared__ long long sh[3][GS_THREADS];
  const float         *x, *y;
  int                  p = blockIdx.x, t = threadIdx.x;
  double               m = __longlong_as_double((long long)mx[p]);
  if (!(m > 0.0)) return; /* uniform across the block */
  gs_rows(p, ny, X, ldx, Y, ldy, &x, &y);
  gradsum_scale_t sc = gradsum_scale(gradsum_top_bin(m)); /* once per pair (F5) */
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t    s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    long long b[3] = {0, 0, 0}, q[3];
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      double v = y ? __dmul_rn((double)x[i], (double)y[i]) : (double)x[i];
      if (!isfinite(v)) continue; /* counted apart (absmax's nf) */
      gradsum_split_scaled(v, sc, q);
      b[0] += q[0], b[1] += q[1], b[2] += q[2];
    }
    for (int k = 0; k < 3; k++) sh[k][t] = b[k];
    __syncthreads();
    for (int h = GS_THREADS / 2; h > 0; h >>= 1) { /* integer adds: any order is exact */
      if (t < h)
        for (int k = 0; k < 3; k++) sh[k][t] += sh[k][t + h];
      __syncthreads();
    }
    if (t == 0) {
      unsigned long long *seg = bins + 3 * ((size_t)p * nseg + s0 / GS_SEG_LEN);
      for (int k = 0; k < 3; k++) atomicAdd(&seg[k], (unsigned long long)sh[k][0]);
    }
    __syncthreads();
  }
}

static int ws_reserve(gradsum_ws *ws, size_t dbytes, size_t hbytes)
{
  if (dbytes > ws->bytes) {
    cudaFree(ws->dev);
    ws->dev = nullptr, ws->bytes = 0;
    cudaError_t e = cudaMalloc(&ws->dev, dbytes);
    if (e != cudaSuccess) return (int)e;
    ws->bytes = dbytes;
  }
  if (hbytes > ws->hbytes) {
    free(ws->host);
    ws->host   = malloc(hbytes);
    ws->hbytes = ws->host ? hbytes : 0;
    if (!ws->host) return (int)cudaErrorMemoryAllocation;
  }
  return 0;
}

extern "C" int gradsum_cuda(red_strategy_t st, int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, gradsum_ws *ws, red_partial_t *part)
{
  size_t nch = (len + GS_CHUNK - 1) / GS_CHUNK;
  if (npair <= 0) return 0;
  if (nch == 0) {
    for (int p = 0; p < npair; p++) part[p].d = 0.0, rsum_init(&part[p].r);
    return 0;
  }
  if (nch > INT_MAX) return (int)cudaErrorInvalidValue;
  int  nchunk = (int)nch, rc;
  dim3 grid((unsigned)npair, nch < GS_GRID_Y ? (unsigned)nch : GS_GRID_Y);
  if (st == RED_REPRODUCIBLE) {
    int    nseg  = (int)gradsum_nseg(len);
    size_t bytes = (size_t)npair * (2 + 3 * (size_t)nseg) * sizeof(unsigned long long);
    if ((rc = ws_reserve(ws, bytes, bytes))) return rc;
    unsigned long long *mx = (unsigned long long *)ws->dev, *nf = mx + npair, *bins = nf + npair;
    cudaMemsetAsync(mx, 0, bytes);
    gradsum_absmax_kernel<<<grid, GS_THREADS>>>(ny, X, ldx, Y, ldy, len, nchunk, mx, nf);
    gradsum_bins_kernel<<<grid, GS_THREADS>>>(ny, X, ldx, Y, ldy, len, nchunk, nseg, mx, bins);
    if ((rc = (int)cudaMemcpy(ws->host, ws->dev, bytes, cudaMemcpyDeviceToHost))) return rc;
    const unsigned long long *hm = (const unsigned long long *)ws->host, *hf = hm + npair, *hb = hf + npair;
    for (int p = 0; p < npair; p++) {
      double m;
      memcpy(&m, &hm[p], sizeof m);
      part[p].d = 0.0;
      gradsum_to_rsum(m, (const long long *)&hb[3 * (size_t)p * nseg], nseg, &part[p].r);
      if (hf[p]) { /* rsum's sum of the non-finite summands: NaN with a NaN or both infinities, else the infinity */
        part[p].r.nonfinite = 1;
        part[p].r.special   = (hf[p] & 1) || (hf[p] & 6) == 6 ? (double)NAN : hf[p] & 2 ? (double)INFINITY : -(double)INFINITY;
      }
    }
  } else {
    int    det   = st == RED_DETERMINISTIC;
    size_t bytes = (size_t)npair * sizeof(float) * (det ? (size_t)nchunk + 1 : 1);
    if ((rc = ws_reserve(ws, bytes, (size_t)npair * sizeof(float)))) return rc;
    float *out = (float *)ws->dev, *partial = out + npair;
    if (det) {
      gradsum_float_kernel<<<grid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, partial, nullptr);
      gradsum_tree_kernel<<<(npair + 127) / 128, 128>>>(npair, nchunk, partial, out);
    } else {
      cudaMemsetAsync(out, 0, (size_t)npair * sizeof(float));
      size_t   nw   = (size_t)npair * (size_t)nchunk; /* pair-minor work items, see gradsum_float_kernel */
      unsigned nblk = nw < (size_t)INT_MAX ? (unsigned)nw : (unsigned)INT_MAX;
      gradsum_float_kernel<<<nblk, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nullptr, out);
    }
    if ((rc = (int)cudaMemcpy(ws->host, out, (size_t)npair * sizeof(float), cudaMemcpyDeviceToHost))) return rc;
    for (int p = 0; p < npair; p++) part[p].d = ((const float *)ws->host)[p];
  }
  return (int)cudaGetLastError();
}

extern "C" void gradsum_cuda_free(gradsum_ws *ws)
{
  cudaFree(ws->dev);
  free(ws->host);
  memset(ws, 0, sizeof *ws);
}
