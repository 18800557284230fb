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
 * The CPU counterparts are surrogate/tallskinny_cpu.c and kernels/rsum.c. */
#include "gradsum_cuda.h"

#include <cuda_runtime.h>
#include <limits.h>

#define GS_THREADS 256
#define GS_CHUNK   4096
#define GS_GRID_Y  65535u /* the y-dimension limit of a grid */
#define CK_GS(x) \
  do { \
    int e_ = (int)(x); \
    if (e_) return e_; \
  } while (0)
/* Pair tiles (issue 26, F1): a block sums TJ x rows against TK y rows (the
 * bias column y = 1 among them), TJ*TK pairs from TJ+TK rows of samples, where
 * one block per pair read 2 rows: 8x less memory traffic for the float
 * strategies (8x8), 4x for the reproducible passes (4x4; their per-pair state
 * is 3 int64 bins). Each thread still adds its lane's samples of a pair in
 * sample order and the block tree is the same, so every pair's sum has the
 * bits of the one-pair-per-block kernel: the same order per pair, only more
 * pairs per block. (Fewer reads would need the sample order split across
 * warps differently, which changes the deterministic strategy's bits.) */
#define GS_FT      8  /* float strategies: TJ = TK */
#define GS_RT      4  /* reproducible passes: TJ = TK */
#define GS_ROUND   16 /* pairs per round of the block trees (16 KB of floats) */

/* Tile geometry: nx x rows (ceil(npair / (ny+1))), ny+1 columns; tile w covers
 * rows (w / ntk) * T.., columns (w % ntk) * T.. */
struct gs_tile {
  int npair, ny, ntk, j0, k0;
};
__device__ __forceinline__ gs_tile gs_tile_at(int npair, int ny, int T, size_t w)
{
  gs_tile g;
  g.npair = npair, g.ny = ny, g.ntk = (ny + 1 + T - 1) / T;
  g.j0 = (int)(w / g.ntk) * T, g.k0 = (int)(w % g.ntk) * T;
  return g;
}
__host__ __device__ inline size_t gs_ntiles(int npair, int ny, int T)
{
  size_t nx = ((size_t)npair + ny) / (ny + 1);
  return (nx + T - 1) / T * ((ny + 1 + T - 1) / T);
}
/* pair index of tile entry (a, b), or -1 outside the npair pairs */
__device__ __forceinline__ int gs_pair(const gs_tile &g, int a, int b)
{
  int k = g.k0 + b;
  if (k > g.ny) return -1;
  long long p = (long long)(g.j0 + a) * (g.ny + 1) + k;
  return p < g.npair ? (int)p : -1;
}
/* sample i of the tile's x rows and y columns; rows outside read nothing */
template <int T> __device__ __forceinline__ void gs_load(const gs_tile &g, const float *X, size_t ldx, const float *Y, size_t ldy, size_t i, float xv[T], float yv[T])
{
  int nx = (g.npair + g.ny) / (g.ny + 1);
#pragma unroll
  for (int a = 0; a < T; a++) xv[a] = g.j0 + a < nx ? X[(size_t)(g.j0 + a) * ldx + i] : 0.0f;
#pragma unroll
  for (int b = 0; b < T; b++) {
    int k = g.k0 + b;
    yv[b] = k < g.ny ? Y[(size_t)k * ldy + i] : 1.0f; /* x * 1 is x: the bias sums' bits */
  }
}

/* Work item w = tile * nchunk + chunk. Atomic (acc): a 1-D grid walks w in
 * order, so a tile's chunks go to neighbouring blocks, which a GPU runs at the
 * same time: their atomicAdds race as the strategy means them to (issue 26,
 * L3; with x = pair and y = chunk, blocks are dispatched x-fastest and each
 * pair's adds arrived in chunk order, nearly a fixed order). Deterministic
 * (partial): x = tile, y = chunk with a stride of gridDim.y; order does not
 * matter there. */
__global__ void gradsum_float_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, float *partial, float *acc)
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
 * apart from the bins and sums them as they are, so must the device. Block
 * (tile, chunk stride gridDim.y); max and or are order-free. */
__global__ void gradsum_absmax_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, unsigned long long *mx, unsigned long long *nf)
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
__global__ void gradsum_bins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, int nseg, const unsigned long long *mx, unsigned long long *bins)
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

/* gsum (issue 28): the largest |x| of each of nrow rows over len samples, as
 * the bits of a non-negative float (+Inf for a row holding an Inf or NaN):
 * atomicMax on them is order-free. Block (row, chunk stride gridDim.y). */
__global__ void gradsum_rowmax_kernel(int nrow, const float *X, size_t ldx, size_t len, int nchunk, unsigned *out)
{
  __shared__ float sh[GS_THREADS];
  int              t = threadIdx.x, row = blockIdx.x;
  float            m = 0.0f;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      float v = X[(size_t)row * ldx + i], a = fabsf(v);
      m       = !(a <= m) ? (isfinite(v) ? a : INFINITY) : m; /* NaN: +Inf */
    }
  }
  sh[t] = m;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = fmaxf(sh[t], sh[t + h]);
    __syncthreads();
  }
  if (t == 0 && row < nrow) atomicMax(&out[row], __float_as_uint(sh[0]));
}

/* gsum's sums: bins[(p * nseg + g) * GS_GDIG + k], the digits of the fold
 * sum of pair p over segment g, each product rounded to the pair's unit
 * 2^(ex + ey - 51) from the rows' maxima (xmax, ymax: float bits; the bias
 * column y = 1 has exponent 1). Integer adds: any order, any tiling. A pair
 * with a non-finite bound records which non-finite products it has (nf, as
 * gradsum_absmax_kernel); one with a zero row adds nothing. */
__global__ void gradsum_gbins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, int nseg, const unsigned *xmax, const unsigned *ymax,
                                     unsigned long long *nf, unsigned long long *bins)
{
  const int            T = GS_RT, R = 4; /* pairs per round of the block tree: 32 KB */
  __shared__ long long sh[R][GS_GDIG][GS_THREADS];
  int                  t = threadIdx.x;
  gs_tile              g = gs_tile_at(npair, ny, T, blockIdx.x);
  double               sx[T], sy[T]; /* 2^-ex, 2^-ey: 0 for a zero row */
  int                  bad = 0;      /* bit a (x row) or T + b (y column): non-finite bound */
  float                xv[T], yv[T];
  int                  nx = (npair + ny) / (ny + 1);
#pragma unroll
  for (int a = 0; a < T; a++) {
    int e = g.j0 + a < nx ? gsum_exp_of(__uint_as_float(xmax[g.j0 + a])) : GSUM_ZERO;
    sx[a] = e == GSUM_ZERO || e == GSUM_NONFINITE ? 0.0 : ldexp(1.0, -e), bad |= (e == GSUM_NONFINITE) << a;
  }
#pragma unroll
  for (int b = 0; b < T; b++) {
    int k = g.k0 + b, e = k < ny ? gsum_exp_of(__uint_as_float(ymax[k])) : 1;
    sy[b] = e == GSUM_ZERO || e == GSUM_NONFINITE ? 0.0 : ldexp(1.0, -e), bad |= (e == GSUM_NONFINITE) << (T + b);
  }
  unsigned long long f = 0;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t    s0 = (size_t)c * GS_CHUNK, s1 = min(len, s0 + GS_CHUNK);
    long long a0[T * T];
#pragma unroll
    for (int q = 0; q < T * T; q++) a0[q] = 0;
    for (size_t i = s0 + t; i < s1; i += GS_THREADS) {
      gs_load<T>(g, X, ldx, Y, ldy, i, xv, yv);
#pragma unroll
      for (int q = 0; q < T * T; q++) {
        int a = q / T, b = q % T;
        if ((bad >> a & 1) | (bad >> (T + b) & 1)) { /* the sum is its non-finite products' */
          double v = __dmul_rn((double)xv[a], (double)yv[b]);
          if (!isfinite(v)) f |= (v != v ? 1ull : v > 0 ? 2ull : 4ull) << (3 * q);
          continue;
        }
        if (sx[a] == 0.0 || sy[b] == 0.0) continue;
        a0[q] += gsum_fold(__dmul_rn(__dmul_rn((double)xv[a], sx[a]), __dmul_rn((double)yv[b], sy[b]))); /* at most GS_CHUNK / GS_THREADS = 16 products of < 2^51 */
      }
    }
#pragma unroll
    for (int p0 = 0; p0 < T * T; p0 += R) {
#pragma unroll
      for (int r = 0; r < R; r++) {
        sh[r][0][t] = a0[p0 + r] >> 32, sh[r][1][t] = a0[p0 + r] & 0xffffffffll;
      }
      __syncthreads();
      for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
        if (t < h)
          for (int r = 0; r < R; r++)
            for (int k = 0; k < GS_GDIG; k++) sh[r][k][t] += sh[r][k][t + h];
        __syncthreads();
      }
      if (t < GS_GDIG * R) {
        int r = t / GS_GDIG, k = t % GS_GDIG, p = gs_pair(g, (p0 + r) / T, (p0 + r) % T);
        if (p >= 0) atomicAdd(&bins[GS_GDIG * ((size_t)p * nseg + s0 / GS_SEG_LEN) + k], (unsigned long long)sh[r][k][0]);
      }
      __syncthreads();
    }
  }
  __shared__ unsigned long long shf[GS_THREADS]; /* 3 bits per pair */
  shf[t] = f;
  __syncthreads();
  for (int h = GS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) shf[t] |= shf[t + h];
    __syncthreads();
  }
  int p = t < T * T ? gs_pair(g, t / T, t % T) : -1;
  if (p >= 0 && (shf[0] >> (3 * t) & 7ull)) atomicOr(&nf[p], shf[0] >> (3 * t) & 7ull);
}

/* gsum's sums again, GEMM-style (issue 27: gradsum_gbins_kernel read every
 * sample's rows once per 4x4 tile of pairs and made 3 multiplies per product;
 * ncu gave it 95 registers and 15.9 ms of a 19 ms step). A block of
 * GG_THREADS threads owns a tile of up to 32 x 32 pairs (4TJ x rows, 4TK y
 * columns; the host picks the powers of two TJ, TK <= 8 from the layer's
 * shape) for chunks of GG_CHUNK samples. Each round stages GG_S samples of the
 * tile's rows in shared memory, already scaled (x 2^-ex, y 2^-ey, as doubles:
 * the same values gradsum_gbins_kernel forms per product), so a product is one
 * multiply, one add and one integer add; G = GG_THREADS / (TJ TK) groups of
 * threads take every G-th staged sample, each thread a 4 x 4 register tile of
 * pairs (rows tj + TJ a, columns tk + TK b). The bias column (y = 1, scale
 * 1/2) of the tile's rows is summed by the blocks of the first column tile:
 * within a group, thread tk takes every TK-th of its samples, so every lane
 * does one row of 4 bias products per TK samples. Integer sums: any grouping,
 * any tiling gives gradsum_gbins_kernel's bins, hence the CPU's.
 * Exactness: |scaled product| < 1 rounds to at most 2^51 units, so a chunk's
 * 2048 products sum below 2^62 in one int64; each thread adds the bits of
 * v + 3 and subtracts count x bits(3) at the end (unsigned: exact mod 2^64,
 * and the true sum fits). A tile holding a row with an Inf or NaN (rare)
 * takes the checked path: such pairs record their non-finite products in nf
 * (products of finite floats are finite in double, and the power-of-two
 * scales keep zeros and signs, so the flags are the raw products'). */
#define GG_THREADS GS_GEMM_THREADS
#define GG_S       64   /* samples staged per round */
#define GG_CHUNK   2048 /* samples per work item: sums below 2^62 */
#define GG_R       32   /* rows and columns of the largest tile */
__global__ void gradsum_gemm_gbins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, int nseg, const unsigned *xmax, const unsigned *ymax, int TJ, int TK,
                                          unsigned long long *nf, unsigned long long *bins)
{
  __shared__ double             xs[GG_S][GG_R + 1], ys[GG_S][GG_R + 1]; /* +1: the staging's transposed writes spread over the banks */
  __shared__ double             scx[GG_R], scy[GG_R];                   /* staging scales: 2^-e, 0 for a zero row, 1 for a non-finite one */
  __shared__ unsigned long long sacc[GG_R][GG_R + 1];                   /* the block's chunk sums; column GG_R: the bias sums */
  __shared__ int                badr[GG_R], badc[GG_R];                 /* rows, columns holding an Inf or NaN */
  const int  t = threadIdx.x, P = TJ * TK, G = GG_THREADS / P, grp = t / P, tj = (t % P) / TK, tk = t % TK;
  const int  RJ = 4 * TJ, RK = 4 * TK, nx = (npair + ny) / (ny + 1), ntk = ((ny > 0 ? ny : 1) + RK - 1) / RK;
  const int  j0 = (int)(blockIdx.x / (unsigned)ntk) * RJ, k0 = (int)(blockIdx.x % (unsigned)ntk) * RK, dobias = k0 == 0;
  const long long b3 = gs_bits(3.0);
  if (t < GG_R) {
    int e = t < RJ && j0 + t < nx ? gsum_exp_of(__uint_as_float(xmax[j0 + t])) : GSUM_ZERO;
    scx[t] = e == GSUM_ZERO ? 0.0 : e == GSUM_NONFINITE ? 1.0 : ldexp(1.0, -e), badr[t] = e == GSUM_NONFINITE;
  } else if (t < 2 * GG_R) {
    int c = t - GG_R, e = c < RK && k0 + c < ny ? gsum_exp_of(__uint_as_float(ymax[k0 + c])) : GSUM_ZERO;
    scy[c] = e == GSUM_ZERO ? 0.0 : e == GSUM_NONFINITE ? 1.0 : ldexp(1.0, -e), badc[c] = e == GSUM_NONFINITE;
  }
  for (int q = t; q < GG_R * (GG_R + 1); q += GG_THREADS) sacc[q / (GG_R + 1)][q % (GG_R + 1)] = 0;
  __syncthreads();
  int slow = 0, badx[4], bady[4];
  for (int r = 0; r < GG_R; r++) slow |= badr[r] | badc[r];
  unsigned long long f = 0; /* 3 bits per pair: 16 main, then 4 bias */
#pragma unroll
  for (int a = 0; a < 4; a++) badx[a] = badr[tj + TJ * a];
#pragma unroll
  for (int b = 0; b < 4; b++) bady[b] = badc[tk + TK * b];
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t             s0 = (size_t)c * GG_CHUNK, s1 = min(len, s0 + GG_CHUNK);
    unsigned long long acc[4][4], bacc[4];
    long long          cnt = 0, bcnt = 0;
#pragma unroll
    for (int a = 0; a < 4; a++) {
      bacc[a] = 0;
#pragma unroll
      for (int b = 0; b < 4; b++) acc[a][b] = 0;
    }
    for (size_t base = s0; base < s1; base += GG_S) {
      for (int q = t; q < GG_S * RJ; q += GG_THREADS) { /* consecutive threads: consecutive samples of one row */
        int    r = q / GG_S, s = q % GG_S;
        size_t i = base + (size_t)s;
        xs[s][r] = j0 + r < nx && i < s1 ? __dmul_rn((double)X[(size_t)(j0 + r) * ldx + i], scx[r]) : 0.0;
      }
      for (int q = t; q < GG_S * RK; q += GG_THREADS) {
        int    r = q / GG_S, s = q % GG_S;
        size_t i = base + (size_t)s;
        ys[s][r] = k0 + r < ny && i < s1 ? __dmul_rn((double)Y[(size_t)(k0 + r) * ldy + i], scy[r]) : 0.0;
      }
      __syncthreads();
      int nm = (GG_S - grp + G - 1) / G; /* this group's samples: grp, grp + G, ... */
      for (int m0 = 0; m0 < nm; m0 += TK) {
        for (int m = m0; m < m0 + TK && m < nm; m++) {
          int    s = grp + G * m;
          double xv[4], yv[4];
#pragma unroll
          for (int a = 0; a < 4; a++) xv[a] = xs[s][tj + TJ * a];
#pragma unroll
          for (int b = 0; b < 4; b++) yv[b] = ys[s][tk + TK * b];
          if (!slow) {
#pragma unroll
            for (int a = 0; a < 4; a++)
#pragma unroll
              for (int b = 0; b < 4; b++) acc[a][b] += (unsigned long long)gs_bits(__dadd_rn(__dmul_rn(xv[a], yv[b]), 3.0));
          } else {
#pragma unroll
            for (int a = 0; a < 4; a++)
#pragma unroll
              for (int b = 0; b < 4; b++) {
                double v = __dmul_rn(xv[a], yv[b]);
                if (badx[a] | bady[b]) { /* the sum is its non-finite products' */
                  if (!isfinite(v)) f |= (v != v ? 1ull : v > 0 ? 2ull : 4ull) << (3 * (4 * a + b));
                  v = 0.0;
                }
                acc[a][b] += (unsigned long long)gs_bits(__dadd_rn(v, 3.0));
              }
          }
          cnt++;
        }
        int mb = m0 + tk; /* the bias products of one of these TK samples */
        if (dobias && mb < nm) {
          int s = grp + G * mb;
#pragma unroll
          for (int a = 0; a < 4; a++) {
            double v = __dmul_rn(xs[s][tj + TJ * a], 0.5); /* y = 1 under the bias column's scale 2^-1 */
            if (badx[a]) {
              if (!isfinite(v)) f |= (v != v ? 1ull : v > 0 ? 2ull : 4ull) << (3 * (16 + a));
              v = 0.0;
            }
            bacc[a] += (unsigned long long)gs_bits(__dadd_rn(v, 3.0));
          }
          bcnt++;
        }
      }
      __syncthreads(); /* the stage is read before the next round writes it */
    }
#pragma unroll
    for (int a = 0; a < 4; a++) {
      int r = tj + TJ * a;
#pragma unroll
      for (int b = 0; b < 4; b++) atomicAdd(&sacc[r][tk + TK * b], acc[a][b] - (unsigned long long)cnt * (unsigned long long)b3);
      if (dobias && bcnt) atomicAdd(&sacc[r][GG_R], bacc[a] - (unsigned long long)bcnt * (unsigned long long)b3);
    }
    __syncthreads();
    for (int q = t; q < RJ * (RK + 1); q += GG_THREADS) {
      int r = q / (RK + 1), cc = q % (RK + 1), col = cc == RK ? GG_R : cc, j = j0 + r, k = cc == RK ? ny : k0 + cc;
      if (j < nx && (cc == RK ? dobias : k < ny)) {
        long long p = (long long)j * (ny + 1) + k, v = (long long)sacc[r][col];
        if (p < npair) {
          unsigned long long *d = &bins[GS_GDIG * ((size_t)p * nseg + s0 / GS_SEG_LEN)];
          atomicAdd(&d[0], (unsigned long long)(v >> 32));
          atomicAdd(&d[1], (unsigned long long)(v & 0xffffffffll));
        }
      }
      sacc[r][col] = 0;
    }
    __syncthreads(); /* sacc is zero again before the next chunk adds to it */
  }
  if (f) {
#pragma unroll
    for (int a = 0; a < 4; a++) {
      int j = j0 + tj + TJ * a;
#pragma unroll
      for (int b = 0; b < 4; b++) {
        int                k  = k0 + tk + TK * b;
        unsigned long long fb = f >> (3 * (4 * a + b)) & 7ull;
        if (fb && j < nx && k < ny && (long long)j * (ny + 1) + k < npair) atomicOr(&nf[(size_t)j * (ny + 1) + k], fb);
      }
      unsigned long long fb = f >> (3 * (16 + a)) & 7ull;
      if (fb && j < nx && (long long)j * (ny + 1) + ny < npair) atomicOr(&nf[(size_t)j * (ny + 1) + ny], fb);
    }
  }
}

/* The float strategies' sums, GEMM-style (-surrogate_cuda_kernels gemm): the
 * tiles, staging and thread layout of gradsum_gemm_gbins_kernel, raw floats
 * staged, float accumulators (a = a + x*y, each rounded, no FMA). Its fixed
 * order (the deterministic strategy's bits under gemm; cudaemu_gradsum_spec
 * states it): per chunk of GG_CHUNK samples, group g adds, in sample order,
 * the samples whose offset in their round of GG_S is g mod G; a bias sum's
 * samples are split once more, the group's m-th sample of a round going to
 * thread tk = m mod TK; then a pairwise tree over the groups (over g TK + tk
 * for a bias), one partial per chunk, and the pairwise tree over the chunks
 * (gradsum_tree_kernel). Atomic: the chunk partials added with atomicAdd as
 * the blocks finish. Samples past the end are not added at all (a padded
 * +0 would turn a -0 sum into +0). */
__global__ void gradsum_gemm_float_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nchunk, int TJ, int TK, float *partial, float *acc)
{
  __shared__ float xs[GG_S][GG_R + 1], ys[GG_S][GG_R + 1];
  __shared__ float part[GG_THREADS * 16], bpart[GG_THREADS * 4]; /* per group: RJ x RK pair partials; per (group, tk): RJ bias partials */
  const int        t = threadIdx.x, P = TJ * TK, G = GG_THREADS / P, grp = t / P, tj = (t % P) / TK, tk = t % TK;
  const int        RJ = 4 * TJ, RK = 4 * TK, nx = (npair + ny) / (ny + 1), ntk = ((ny > 0 ? ny : 1) + RK - 1) / RK;
  const int        j0 = (int)(blockIdx.x / (unsigned)ntk) * RJ, k0 = (int)(blockIdx.x % (unsigned)ntk) * RK, dobias = k0 == 0;
  for (int c = blockIdx.y; c < nchunk; c += gridDim.y) {
    size_t s0 = (size_t)c * GG_CHUNK, s1 = min(len, s0 + GG_CHUNK);
    float  a4[4][4], b4[4];
#pragma unroll
    for (int a = 0; a < 4; a++) {
      b4[a] = 0.0f;
#pragma unroll
      for (int b = 0; b < 4; b++) a4[a][b] = 0.0f;
    }
    for (size_t base = s0; base < s1; base += GG_S) {
      for (int q = t; q < GG_S * RJ; q += GG_THREADS) {
        int    r = q / GG_S, s = q % GG_S;
        size_t i = base + (size_t)s;
        xs[s][r] = j0 + r < nx && i < s1 ? X[(size_t)(j0 + r) * ldx + i] : 0.0f;
      }
      for (int q = t; q < GG_S * RK; q += GG_THREADS) {
        int    r = q / GG_S, s = q % GG_S;
        size_t i = base + (size_t)s;
        ys[s][r] = k0 + r < ny && i < s1 ? Y[(size_t)(k0 + r) * ldy + i] : 0.0f;
      }
      __syncthreads();
      int nm = (GG_S - grp + G - 1) / G, nv = (int)(s1 - base); /* this group's samples; the round's valid ones */
      for (int m0 = 0; m0 < nm; m0 += TK) {
        for (int m = m0; m < m0 + TK && m < nm; m++) {
          int s = grp + G * m;
          if (s >= nv) continue;
          float xv[4], yv[4];
#pragma unroll
          for (int a = 0; a < 4; a++) xv[a] = xs[s][tj + TJ * a];
#pragma unroll
          for (int b = 0; b < 4; b++) yv[b] = ys[s][tk + TK * b];
#pragma unroll
          for (int a = 0; a < 4; a++)
#pragma unroll
            for (int b = 0; b < 4; b++) a4[a][b] = __fadd_rn(a4[a][b], __fmul_rn(xv[a], yv[b]));
        }
        int sb = grp + G * (m0 + tk); /* the bias products of one of these TK samples */
        if (dobias && m0 + tk < nm && sb < nv)
#pragma unroll
          for (int a = 0; a < 4; a++) b4[a] = __fadd_rn(b4[a], __fmul_rn(xs[sb][tj + TJ * a], 1.0f));
      }
      __syncthreads(); /* the stage is read before the next round writes it */
    }
#pragma unroll
    for (int a = 0; a < 4; a++) {
      int r = tj + TJ * a;
#pragma unroll
      for (int b = 0; b < 4; b++) part[(grp * RJ + r) * RK + tk + TK * b] = a4[a][b];
      bpart[(grp * TK + tk) * RJ + r] = b4[a];
    }
    __syncthreads();
    for (int q = t; q < RJ * (RK + 1); q += GG_THREADS) { /* one thread a pair: the fixed tree over the groups */
      int    r = q / (RK + 1), cc = q % (RK + 1), bias = cc == RK, j = j0 + r, k = bias ? ny : k0 + cc;
      int    n = bias ? G * TK : G;
      float *v = bias ? &bpart[r] : &part[r * RK + cc];
      size_t st = bias ? (size_t)RJ : (size_t)RJ * RK;
      for (int h = 1; h < n; h *= 2)
        for (int g = 0; g + h < n; g += 2 * h) v[g * st] = __fadd_rn(v[g * st], v[(g + h) * st]);
      long long p = (long long)j * (ny + 1) + k;
      if (j < nx && (bias ? dobias : k < ny) && p < npair) {
        if (acc) atomicAdd(&acc[p], v[0]);
        else partial[(size_t)c * npair + p] = v[0];
      }
    }
    __syncthreads(); /* part and bpart read before the next chunk writes them */
  }
}

/* The GEMM-style kernels' grid: x the tiles, y their work items of GG_CHUNK
 * samples (ngc of them, strided past GS_GRID_Y); the tile from
 * gradsum_gemm_shape. */
static dim3 gg_grid(int npair, int ny, size_t len, int *TJ, int *TK, size_t *ngc)
{
  int nx = (npair + ny) / (ny + 1);
  gradsum_gemm_shape(nx, ny, TJ, TK);
  *ngc = (len + GG_CHUNK - 1) / GG_CHUNK;
  size_t ntile = (size_t)((nx + 4 * *TJ - 1) / (4 * *TJ)) * (size_t)(((ny > 0 ? ny : 1) + 4 * *TK - 1) / (4 * *TK));
  return dim3((unsigned)ntile, (unsigned)(*ngc < GS_GRID_Y ? *ngc : GS_GRID_Y));
}

/* Scratch for the deterministic chunk partials. Growing it frees the old
 * one: cudaFree waits for the kernels that still use it. */
static int ws_scratch(gradsum_ws *ws, size_t bytes)
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
static int ws_results(gradsum_ws *ws, size_t bytes, size_t *off)
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

extern "C" int gradsum_cuda(red_strategy_t st, int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, gradsum_ws *ws, gradsum_dst dst)
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
  dim3   fgrid((unsigned)gs_ntiles(npair, ny, GS_FT), (unsigned)nty), rgrid((unsigned)gs_ntiles(npair, ny, GS_RT), (unsigned)nty);
  size_t bytes = st == RED_REPRODUCIBLE ? (size_t)npair * (2 + 3 * (size_t)nseg) * sizeof(unsigned long long) : (size_t)npair * sizeof(float);
  if ((rc = ws_results(ws, bytes, &off))) return rc;
  ws->call[ws->ncall++] = gradsum_call{st, 0, npair, ny, nseg, off, dst};
  if (st == RED_REPRODUCIBLE) {
    unsigned long long *mx = (unsigned long long *)((char *)ws->res + off), *nf = mx + npair, *bins = nf + npair;
    cudaMemsetAsync(mx, 0, bytes);
    gradsum_absmax_kernel<<<rgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, mx, nf);
    gradsum_bins_kernel<<<rgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nseg, mx, bins);
  } else if (ws->gemm) { /* GEMM-style tiles; deterministic: their chunk partials and the chunk tree */
    float *out = (float *)((char *)ws->res + off);
    int    TJ, TK;
    size_t ngc;
    dim3   grid = gg_grid(npair, ny, len, &TJ, &TK, &ngc);
    if (st == RED_DETERMINISTIC) {
      if ((rc = ws_scratch(ws, (size_t)npair * ngc * sizeof(float)))) return rc;
      gradsum_gemm_float_kernel<<<grid, GG_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, (int)ngc, TJ, TK, (float *)ws->dev, nullptr);
      gradsum_tree_kernel<<<(npair + 127) / 128, 128>>>(npair, (int)ngc, (float *)ws->dev, out);
    } else {
      cudaMemsetAsync(out, 0, bytes);
      gradsum_gemm_float_kernel<<<grid, GG_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, (int)ngc, TJ, TK, nullptr, out);
    }
  } else if (st == RED_DETERMINISTIC) {
    float *out = (float *)((char *)ws->res + off);
    if ((rc = ws_scratch(ws, (size_t)npair * (size_t)nchunk * sizeof(float)))) return rc;
    gradsum_float_kernel<<<fgrid, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, (float *)ws->dev, nullptr);
    gradsum_tree_kernel<<<(npair + 127) / 128, 128>>>(npair, nchunk, (float *)ws->dev, out);
  } else {
    float   *out = (float *)((char *)ws->res + off);
    size_t   nw  = gs_ntiles(npair, ny, GS_FT) * (size_t)nchunk; /* tile-minor work items, see gradsum_float_kernel */
    unsigned nb  = nw < (size_t)INT_MAX ? (unsigned)nw : (unsigned)INT_MAX;
    cudaMemsetAsync(out, 0, bytes);
    gradsum_float_kernel<<<nb, GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nullptr, out);
  }
  return (int)cudaGetLastError();
}

/* Layout of an outer call's results: xmax[nx], ymax[ny] (uint, padded to 8
 * bytes), nf[npair], bins[npair * nseg * GS_GDIG]. */
static size_t gs_outer_head(int nx, int ny) { return ((size_t)nx + (size_t)ny + 1) / 2 * 8; }

extern "C" int gradsum_cuda_outer(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, gradsum_ws *ws, gradsum_dst dst, gradsum_rowmax_fn rowmax, void *ctx)
{
  size_t nch = (len + GS_CHUNK - 1) / GS_CHUNK, off;
  int    nx  = (npair + ny) / (ny + 1), rc;
  if (npair <= 0) return 0;
  if (nch > INT_MAX) return (int)cudaErrorInvalidValue;
  int    nchunk = (int)nch, nseg = (int)gradsum_nseg(len);
  size_t head = gs_outer_head(nx, ny), bytes = head + (size_t)npair * (1 + GS_GDIG * (size_t)nseg) * sizeof(unsigned long long);
  if ((rc = ws_results(ws, bytes, &off))) return rc;
  ws->call[ws->ncall++] = gradsum_call{RED_REPRODUCIBLE, 1, npair, ny, nseg, off, dst};
  char               *res = (char *)ws->res + off;
  unsigned           *xmax = (unsigned *)res, *ymax = xmax + nx;
  unsigned long long *nf = (unsigned long long *)(res + head), *bins = nf + npair;
  CK_GS(cudaMemsetAsync(res, 0, bytes));
  if (nchunk) {
    size_t nty = nch < GS_GRID_Y ? nch : GS_GRID_Y;
    gradsum_rowmax_kernel<<<dim3((unsigned)nx, (unsigned)nty), GS_THREADS>>>(nx, X, ldx, len, nchunk, xmax);
    if (ny) gradsum_rowmax_kernel<<<dim3((unsigned)ny, (unsigned)nty), GS_THREADS>>>(ny, Y, ldy, len, nchunk, ymax);
  }
  if (rowmax) { /* the maxima over all ranks: one round trip through the host */
    size_t nrow = (size_t)nx + (size_t)ny;
    float *h    = (float *)malloc(nrow * sizeof *h);
    if (!h) return (int)cudaErrorMemoryAllocation;
    rc = (int)cudaMemcpy(h, xmax, nrow * sizeof *h, cudaMemcpyDeviceToHost);
    if (!rc) rc = rowmax(h, nrow, ctx) ? (int)cudaErrorUnknown : 0;
    if (!rc) rc = (int)cudaMemcpy(xmax, h, nrow * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    if (rc) return rc;
  }
  if (nchunk && ws->gemm) {
    int    TJ, TK;
    size_t ngc;
    dim3   grid = gg_grid(npair, ny, len, &TJ, &TK, &ngc);
    gradsum_gemm_gbins_kernel<<<grid, GG_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, (int)ngc, nseg, xmax, ymax, TJ, TK, nf, bins);
  } else if (nchunk) {
    size_t nty = nch < GS_GRID_Y ? nch : GS_GRID_Y;
    gradsum_gbins_kernel<<<dim3((unsigned)gs_ntiles(npair, ny, GS_RT), (unsigned)nty), GS_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, nchunk, nseg, xmax, ymax, nf, bins);
  }
  return (int)cudaGetLastError();
}

/* An outer call's pair p on the host: the gsum state from the digits of its
 * segments, then gsum_to_rsum (the CPU's conversion: the same rsum state). */
static void outer_result(const gradsum_call *c, const char *h, size_t p, red_partial_t *d)
{
  int                       nx = (c->npair + c->ny) / (c->ny + 1);
  const unsigned           *xmax = (const unsigned *)h, *ymax = xmax + nx;
  const unsigned long long *nf = (const unsigned long long *)(h + gs_outer_head(nx, c->ny)), *bins = nf + c->npair;
  size_t                    j = p / ((size_t)c->ny + 1), k = p % ((size_t)c->ny + 1);
  float                     fx, fy = 1.0f;
  memcpy(&fx, &xmax[j], sizeof fx);
  if (k < (size_t)c->ny) memcpy(&fy, &ymax[k], sizeof fy);
  gsum_t g;
  gsum_init(&g);
  for (int s = 0; s < c->nseg; s++) {
    const long long *b = (const long long *)&bins[GS_GDIG * (p * (size_t)c->nseg + (size_t)s)];
    g.c += (__int128)b[0] * ((__int128)1 << 32) + b[1];
  }
  if (nf[p]) { /* the sum of the non-finite products: NaN with a NaN or both infinities, else the infinity */
    g.nonfinite = 1;
    g.special   = (nf[p] & 1) || (nf[p] & 6) == 6 ? (double)NAN : nf[p] & 2 ? (double)INFINITY : -(double)INFINITY;
  }
  gsum_to_rsum(&g, gsum_exp_of(fx), gsum_exp_of(fy), &d->r);
  d->d = gsum_half_unit(gsum_exp_of(fx), gsum_exp_of(fy)); /* as the CPU's: the ABFT checks' bound */
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
        outer_result(c, h, p, d);
        continue;
      }
      const unsigned long long *hm = (const unsigned long long *)h, *hf = hm + c->npair, *hb = hf + c->npair;
      double                    m;
      memcpy(&m, &hm[p], sizeof m);
      gradsum_to_rsum(m, (const long long *)&hb[3 * p * c->nseg], c->nseg, &d->r);
      if (hf[p]) { /* rsum's sum of the non-finite summands: NaN with a NaN or both infinities, else the infinity */
        d->r.nonfinite = 1;
        d->r.special   = (hf[p] & 1) || (hf[p] & 6) == 6 ? (double)NAN : hf[p] & 2 ? (double)INFINITY : -(double)INFINITY;
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
