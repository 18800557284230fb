/* kernels/gradsum_cuda.cu: the GPU tall-skinny reductions (see gradsum_cuda.h).
 * Why each strategy is built this way:
 *   atomic: one float partial per (pair, chunk of GS_CHUNK samples), added to
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
 * A block works on a tile of pairs (F1, below). The fixed-order kernels walk a
 * tile's chunks with a stride of gridDim.y (at most 65535 blocks in y), the
 * atomic one all (tile, chunk) items with a stride of gridDim.x, so any len
 * works. Results wait on the device until gradsum_cuda_flush (F4).
 * The GEMM-style kernels (-surrogate_cuda_kernels gemm) are in gradsum_gemm_cuda.cu,
 * gsum's sums (the reproducible gradient's) in gsum_cuda.cu.
 * The CPU counterparts are surrogate/tallskinny_cpu.c and kernels/rsum.c. */
#include "gradsum_cuda_impl.cuh"

#include <stdlib.h>
#include <string.h>

/* Work item w = tile * nchunk + chunk. Atomic (acc): a 1-D grid walks w in
 * order, so a tile's chunks go to neighbouring blocks, which a GPU runs at the
 * same time: their atomicAdds race as the strategy means them to (with
 * x = pair and y = chunk, blocks are dispatched x-fastest and each
 * pair's adds arrived in chunk order, nearly a fixed order). Deterministic
 * (partial): x = tile, y = chunk with a stride of gridDim.y; order does not
 * matter there. */
__global__ void gradsum_float_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                     size_t len, int nchunk, float *partial, float *acc)
{
  __shared__ float sh[GS_ROUND][GS_THREADS];
  const int        T = GS_FT;
  int              t = threadIdx.x;
  size_t           ntile = gs_ntiles(npair, ny, T);
  size_t           w     = acc ? blockIdx.x : (size_t)blockIdx.x * nchunk + blockIdx.y;
  size_t           step = acc ? gridDim.x : gridDim.y, end = acc ? ntile * nchunk : ((size_t)blockIdx.x + 1) * nchunk;
  for (; w < end; w += step) {
    gs_tile g = gs_tile_at(npair, ny, T, w / nchunk);
    int     c = (int)(w % nchunk);
    size_t  s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    float   a[T * T], xv[T], yv[T];
#pragma unroll
    for (int q = 0; q < T * T; q++) a[q] = 0.0f;
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      gs_load<T>(g, X, ldx, Y, ldy, i, xv, yv);
#pragma unroll
      for (int q = 0; q < T * T; q++) a[q] = __fadd_rn(a[q], __fmul_rn(xv[q / T], yv[q % T]));
    }
#pragma unroll
    for (int q0 = 0; q0 < T * T; q0 += GS_ROUND) { /* the fixed tree inside the block, GS_ROUND pairs at a time */
#pragma unroll
      for (int q = 0; q < GS_ROUND; q++) sh[q][t] = a[q0 + q];
      __syncthreads();
      for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
        if (t < h)
          for (int q = 0; q < GS_ROUND; q++) sh[q][t] = __fadd_rn(sh[q][t], sh[q][t + h]);
        __syncthreads();
      }
      int p = t < GS_ROUND ? gs_pair(g, (q0 + t) / T, (q0 + t) % T) : -1;
      if (p >= 0) {
        if (acc) atomicAdd(&acc[p], sh[t][0]);
        else partial[(size_t)c * npair + p] = sh[t][0]; /* pair-minor: the tree's threads read neighbours (F3) */
      }
      __syncthreads(); /* sh read before the next round writes it */
    }
  }
}

/* The pairwise tree over each pair's chunk partials: level st adds partial
 * c + st into partial c for every c that is a multiple of 2 st (and c + st
 * exists). Partials are stored chunk-major, pair-minor (partial[c * npair +
 * p]), so a warp's 32 pairs read 32 neighbouring floats. The
 * levels below GS_TREE_G stay inside aligned groups of GS_TREE_G partials, so
 * one thread sums a group in registers, and the groups' results, GS_TREE_G
 * partials apart, are the next launch's partials: the same additions in the
 * same order as one thread walking every level, hence the same bits, on
 * npair x groups threads (one thread per pair took 2.0 ms for 1281 pairs x
 * 2048 partials on an H100, 2026-11-27, docs/gpu.md). A launch sums the n
 * partials at stride `stride` (chunks 0, stride, 2 stride, ..). */
#define GS_TREE_G 32
__global__ void gradsum_tree_kernel(int npair, size_t n, size_t stride, float *partial, float *out)
{
  size_t ngroup = (n + GS_TREE_G - 1) / GS_TREE_G, id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (ngroup == 0) ngroup = 1;
  if (id >= ngroup * (size_t)npair) return;
  int    p  = (int)(id % (size_t)npair);
  size_t i0 = id / (size_t)npair * GS_TREE_G, ld = stride * (size_t)npair;
  float  v[GS_TREE_G];
#pragma unroll
  for (int j = 0; j < GS_TREE_G; j++) v[j] = i0 + j < n ? partial[(i0 + j) * ld + p] : 0.0f;
#pragma unroll
  for (int st = 1; st < GS_TREE_G; st *= 2)
#pragma unroll
    for (int j = 0; j + st < GS_TREE_G; j += 2 * st)
      if (i0 + j + st < n) v[j] = __fadd_rn(v[j], v[j + st]);
  if (ngroup == 1) out[p] = v[0];
  else partial[i0 * ld + p] = v[0];
}

/* The tree over nchunk partials of npair pairs into out: one launch per
 * GS_TREE_G-fold level group (2 launches for up to 1024 chunks). */
static void gs_tree(int npair, size_t nchunk, float *partial, float *out)
{
  for (size_t n = nchunk, stride = 1;; stride *= GS_TREE_G) {
    size_t ngroup = (n + GS_TREE_G - 1) / GS_TREE_G, nt = (ngroup ? ngroup : 1) * (size_t)npair;
    gradsum_tree_kernel<<<(unsigned)((nt + 127) / 128), 128>>>(npair, n, stride, partial, out);
    if (ngroup <= 1) return;
    n = ngroup;
  }
}

/* The largest finite |product| of each pair (mx), and which non-finite
 * products it has (nf: 1 NaN, 2 +Inf, 4 -Inf): kernels/rsum.c keeps those
 * apart from the bins and sums them as they are, so must the device. Block
 * (tile, chunk stride gridDim.y); max and or are order-free. */
__global__ void gradsum_absmax_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                      size_t len, int nchunk, unsigned long long *mx, unsigned long long *nf)
{
  const int                     T = GS_RT;
  __shared__ double             sh[T * T][GS_THREADS];
  __shared__ unsigned long long shf[GS_THREADS]; /* 3 bits per pair */
  int                           t = threadIdx.x;
  gs_tile                       g = gs_tile_at(npair, ny, T, blockIdx.x);
  double                        m[T * T];
  unsigned long long            f = 0;
  float                         xv[T], yv[T];
#pragma unroll
  for (int q = 0; q < T * T; q++) m[q] = 0.0;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      gs_load<T>(g, X, ldx, Y, ldy, i, xv, yv);
#pragma unroll
      for (int q = 0; q < T * T; q++) {
        double v = __dmul_rn((double)xv[q / T], (double)yv[q % T]);
        if (isfinite(v)) m[q] = fmax(m[q], fabs(v));
        else f |= (v != v ? 1ull : v > 0 ? 2ull : 4ull) << (3 * q);
      }
    }
  }
#pragma unroll
  for (int q = 0; q < T * T; q++) sh[q][t] = m[q];
  shf[t] = f;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) {
      for (int q = 0; q < T * T; q++) sh[q][t] = fmax(sh[q][t], sh[q][t + h]);
      shf[t] |= shf[t + h];
    }
    __syncthreads();
  }
  int p = t < T * T ? gs_pair(g, t / T, t % T) : -1;
  if (p >= 0) {
    unsigned long long fp = (shf[0] >> (3 * t)) & 7ull;
    atomicMax(&mx[p], (unsigned long long)__double_as_longlong(sh[t][0]));
    if (fp) atomicOr(&nf[p], fp);
  }
}

/* bins[(p * nseg + g) * 3 + k]: fold k of pair p over segment g (GS_SEG_LEN
 * samples). Integer adds: any order, any tiling gives the same bins. */
__global__ void gradsum_bins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                    size_t len, int nchunk, int nseg, const unsigned long long *mx,
                                    unsigned long long *bins)
{
  const int            T = GS_RT, R = 4; /* pairs per round of the block tree: 24 KB */
  __shared__ long long sh[R][3][GS_THREADS];
  int                  t = threadIdx.x;
  gs_tile              g = gs_tile_at(npair, ny, T, blockIdx.x);
  double               s[T * T]; /* each pair's scale (F5); 0: no finite nonzero product */
  int                  big = 0;  /* bit q: pair q's scale needs 2^600 first */
  float                xv[T], yv[T];
  gradsum_scale_t      sc = gradsum_scale(0);
#pragma unroll
  for (int q = 0; q < T * T; q++) {
    int    p  = gs_pair(g, q / T, q % T);
    double mq = p >= 0 ? __longlong_as_double((long long)mx[p]) : 0.0;
    s[q]      = 0.0;
    if (mq > 0.0) {
      gradsum_scale_t c = gradsum_scale(gradsum_top_bin(mq));
      s[q] = c.s, big |= c.big << q;
    }
  }
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t    s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    long long b[T * T][3], qv[3];
#pragma unroll
    for (int q = 0; q < T * T; q++) b[q][0] = b[q][1] = b[q][2] = 0;
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      gs_load<T>(g, X, ldx, Y, ldy, i, xv, yv);
#pragma unroll
      for (int q = 0; q < T * T; q++) {
        double v = __dmul_rn((double)xv[q / T], (double)yv[q % T]);
        if (s[q] == 0.0 || !isfinite(v)) continue; /* non-finite: counted apart (absmax's nf) */
        sc.s = s[q], sc.big = (big >> q) & 1;
        gradsum_split_scaled(v, sc, qv);
        b[q][0] += qv[0], b[q][1] += qv[1], b[q][2] += qv[2];
      }
    }
#pragma unroll
    for (int q0 = 0; q0 < T * T; q0 += R) {
#pragma unroll
      for (int r = 0; r < R; r++)
        for (int k = 0; k < 3; k++) sh[r][k][t] = b[q0 + r][k];
      __syncthreads();
      for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
        if (t < h)
          for (int r = 0; r < R; r++)
            for (int k = 0; k < 3; k++) sh[r][k][t] += sh[r][k][t + h];
        __syncthreads();
      }
      if (t < 3 * R) {
        int r = t / 3, k = t % 3, p = gs_pair(g, (q0 + r) / T, (q0 + r) % T);
        if (p >= 0) atomicAdd(&bins[3 * ((size_t)p * nseg + s0 / GS_SEG_LEN) + k], (unsigned long long)sh[r][k][0]);
      }
      __syncthreads();
    }
  }
}

/* Scratch for the deterministic chunk partials. Growing it frees the old
 * one: cudaFree waits for the kernels that still use it. */
int gs_ws_scratch(gradsum_ws *ws, size_t bytes)
{
  if (bytes <= ws->bytes) return 0;
  cudaFree(ws->dev);
  ws->dev = nullptr, ws->bytes = 0;
  CK_GS(cudaMalloc(&ws->dev, bytes));
  ws->bytes = bytes;
  return 0;
}

/* Results of the calls not yet flushed live at res (device) and, after the
 * flush's one copy, at hres (pinned host). A call that does not fit flushes
 * the pending ones first; the area grows only when nothing is pending, to at
 * least GS_RES_MIN bytes, so one flush serves a whole train step of a
 * moderate network and the memory stays bounded for any width. */
#ifndef GS_RES_MIN /* the emulation sets it small, to cross the flushes */
#define GS_RES_MIN ((size_t)4 << 20)
#endif
int gs_ws_results(gradsum_ws *ws, size_t bytes, size_t *off)
{
  if (ws->rused + bytes > ws->rcap) CK_GS(gradsum_cuda_flush(ws));
  if (bytes > ws->rcap) {
    cudaFree(ws->res), cudaFreeHost(ws->hres);
    ws->res = ws->hres = nullptr, ws->rcap = 0;
    size_t cap = bytes > GS_RES_MIN ? bytes : GS_RES_MIN;
    CK_GS(cudaMalloc(&ws->res, cap));
    CK_GS(cudaMallocHost(&ws->hres, cap));
    ws->rcap = cap;
  }
  if (ws->ncall == ws->ccap) {
    int   n = ws->ccap ? 2 * ws->ccap : 64;
    void *c = realloc(ws->call, (size_t)n * sizeof *ws->call);
    if (!c) return (int)cudaErrorMemoryAllocation;
    ws->call = (gradsum_call *)c, ws->ccap = n;
  }
  *off = ws->rused;
  ws->rused += (bytes + 7) / 8 * 8;
  return 0;
}

/* Pair p's destination (gradsum_dst), or NULL for a dropped bias sum. */
static red_partial_t *dst_of(const gradsum_dst *d, int ny, size_t p)
{
  size_t j = p / ((size_t)ny + 1), k = p % ((size_t)ny + 1);
  return k < (size_t)ny ? d->w + j * d->ldw + k : d->b ? d->b + j * d->ldb : nullptr;
}

extern "C" int gradsum_cuda(red_strategy_t st, int npair, int ny, const float *X, size_t ldx, const float *Y,
                            size_t ldy, size_t len, gradsum_ws *ws, gradsum_dst dst)
{
  size_t nch = (len + GS_CHUNK - 1) / GS_CHUNK, off;
  if (npair <= 0) return 0;
  if (nch == 0) { /* empty sums: nothing for the device */
    for (int p = 0; p < npair; p++) {
      red_partial_t *d = dst_of(&dst, ny, (size_t)p);
      if (d) d->d = 0.0, rsum_init(&d->r);
    }
    return 0;
  }
  if (nch > INT_MAX) return (int)cudaErrorInvalidValue;
  int    nchunk = (int)nch, nseg = (int)gradsum_nseg(len), rc;
  size_t nty    = nch < GS_GRID_Y ? nch : GS_GRID_Y;
  dim3   fgrid((unsigned)gs_ntiles(npair, ny, GS_FT), (unsigned)nty),
    rgrid((unsigned)gs_ntiles(npair, ny, GS_RT), (unsigned)nty);
  size_t bytes = st == RED_REPRODUCIBLE ? (size_t)npair * (2 + 3 * (size_t)nseg) * sizeof(unsigned long long)
                                        : (size_t)npair * sizeof(float);
  if ((rc = gs_ws_results(ws, bytes, &off))) return rc;
  ws->call[ws->ncall++] = gradsum_call{st, 0, npair, ny, nseg, off, dst};
  if (st == RED_REPRODUCIBLE) {
    unsigned long long *mx = (unsigned long long *)((char *)ws->res + off), *nf = mx + npair, *bins = nf + npair;
    cudaMemsetAsync(mx, 0, bytes);
    gradsum_absmax_kernel<<<rgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, mx, nf);
    gradsum_bins_kernel<<<rgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nseg, mx, bins);
  } else if (ws->gemm) {
    /* GEMM-style tiles (gradsum_gemm_cuda.cu); deterministic: their chunk partials and the chunk tree */
    float *out = (float *)((char *)ws->res + off);
    size_t ngc = gradsum_gemm_nchunk(len);
    if (st == RED_DETERMINISTIC) {
      if ((rc = gs_ws_scratch(ws, (size_t)npair * ngc * sizeof(float)))) return rc;
      gradsum_gemm_float(npair, ny, X, ldx, Y, ldy, len, (float *)ws->dev, nullptr);
      gs_tree(npair, ngc, (float *)ws->dev, out);
    } else {
      cudaMemsetAsync(out, 0, bytes);
      gradsum_gemm_float(npair, ny, X, ldx, Y, ldy, len, nullptr, out);
    }
  } else if (st == RED_DETERMINISTIC) {
    float *out = (float *)((char *)ws->res + off);
    if ((rc = gs_ws_scratch(ws, (size_t)npair * (size_t)nchunk * sizeof(float)))) return rc;
    gradsum_float_kernel<<<fgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, (float *)ws->dev, nullptr);
    gs_tree(npair, (size_t)nchunk, (float *)ws->dev, out);
  } else {
    float   *out = (float *)((char *)ws->res + off);
    size_t   nw  = gs_ntiles(npair, ny, GS_FT) * (size_t)nchunk; /* tile-minor work items, see gradsum_float_kernel */
    unsigned nb  = nw < (size_t)INT_MAX ? (unsigned)nw : (unsigned)INT_MAX;
    cudaMemsetAsync(out, 0, bytes);
    gradsum_float_kernel<<<nb, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nullptr, out);
  }
  return (int)cudaGetLastError();
}

extern "C" int gradsum_cuda_flush(gradsum_ws *ws)
{
  int rc = 0;
  if (ws->rused) rc = (int)cudaMemcpy(ws->hres, ws->res, ws->rused, cudaMemcpyDeviceToHost); /* the one wait */
  for (int i = 0; !rc && i < ws->ncall; i++) {
    const gradsum_call *c = &ws->call[i];
    const char         *h = (const char *)ws->hres + c->off;
    for (size_t p = 0; p < (size_t)c->npair; p++) {
      red_partial_t *d = dst_of(&c->dst, c->ny, p);
      if (!d) continue;
      d->d = 0.0;
      if (c->st != RED_REPRODUCIBLE) {
        d->d = ((const float *)h)[p];
        continue;
      }
      if (c->outer) {
        gs_outer_result(c, h, p, d);
        continue;
      }
      const unsigned long long *hm = (const unsigned long long *)h, *hf = hm + c->npair, *hb = hf + c->npair;
      double                    m;
      memcpy(&m, &hm[p], sizeof m);
      gradsum_to_rsum(m, (const long long *)&hb[3 * p * c->nseg], c->nseg, &d->r);
      if (hf[p]) { /* rsum's sum of the non-finite summands: NaN with a NaN or both infinities, else the infinity */
        d->r.nonfinite = 1;
        d->r.special = (hf[p] & 1) || (hf[p] & 6) == 6 ? (double)NAN : hf[p] & 2 ? (double)INFINITY : -(double)INFINITY;
      }
    }
  }
  ws->rused = 0, ws->ncall = 0;
  return rc;
}

extern "C" void gradsum_cuda_free(gradsum_ws *ws)
{
  cudaFree(ws->dev), cudaFree(ws->res), cudaFreeHost(ws->hres);
  free(ws->call);
  memset(ws, 0, sizeof *ws);
}
