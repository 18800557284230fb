/* kernels/gradsum_gemm_cuda.cu: the GEMM-style gradient sums on the GPU
 * (-surrogate_cuda_kernels gemm): tiles of up to 32 x 32 pairs, the
 * samples staged in shared memory, 4 x 4 register tiles per thread. The
 * reproducible kernel gives the tiled kernels' bits (integer sums); the float
 * one has its own fixed order. gradsum_cuda.cu calls the two launchers at the
 * end; the tiled kernels and the host's results live there. */
#include "gradsum_cuda.h"

#include <cuda_runtime.h>

/* gsum's sums again, GEMM-style (gradsum_gbins_kernel read every
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

/* The block's chunk sums of samples from s0 on into the pairs' bins (two
 * 32-bit digits each; column GG_R of sacc: the bias sums), sacc cleared for
 * the next chunk. Every thread of the block takes part. */
__device__ __forceinline__ void gg_flush(unsigned long long (*sacc)[GG_R + 1], unsigned long long *bins, int npair,
                                         int nx, int ny, int nseg, size_t s0, int j0, int k0, int RJ, int RK,
                                         int dobias)
{
  for (int q = threadIdx.x; q < RJ * (RK + 1); q += GG_THREADS) {
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
}

/* A thread's non-finite products, 3 bits a pair in f (16 pairs of its 4 x 4
 * tile from rows j + TJ a and columns k + TK b, then the 4 bias pairs), into
 * nf: NaN 1, +Inf 2, -Inf 4. */
__device__ __forceinline__ void gg_record_nonfinite(unsigned long long f, unsigned long long *nf, int npair, int nx,
                                                    int ny, int j, int k, int TJ, int TK)
{
#pragma unroll
  for (int a = 0; a < 4; a++) {
    int ja = j + TJ * a;
#pragma unroll
    for (int b = 0; b < 4; b++) {
      int                kb = k + TK * b;
      unsigned long long fb = f >> (3 * (4 * a + b)) & 7ull;
      if (fb && ja < nx && kb < ny && (long long)ja * (ny + 1) + kb < npair)
        atomicOr(&nf[(size_t)ja * (ny + 1) + kb], fb);
    }
    unsigned long long fb = f >> (3 * (16 + a)) & 7ull;
    if (fb && ja < nx && (long long)ja * (ny + 1) + ny < npair) atomicOr(&nf[(size_t)ja * (ny + 1) + ny], fb);
  }
}

__global__ void gradsum_gemm_gbins_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                          size_t len, int nchunk, int nseg, const unsigned *xmax, const unsigned *ymax,
                                          int TJ, int TK, unsigned long long *nf, unsigned long long *bins)
{
  /* +1: the staging's transposed writes spread over the banks */
  __shared__ double xs[GG_S][GG_R + 1], ys[GG_S][GG_R + 1];
  __shared__ double scx[GG_R], scy[GG_R]; /* staging scales: 2^-e, 0 for a zero row, 1 for a non-finite one */
  __shared__ unsigned long long sacc[GG_R][GG_R + 1]; /* the block's chunk sums; column GG_R: the bias sums */
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
              for (int b = 0; b < 4; b++)
                acc[a][b] += (unsigned long long)gs_bits(__dadd_rn(__dmul_rn(xv[a], yv[b]), 3.0));
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
      for (int b = 0; b < 4; b++)
        atomicAdd(&sacc[r][tk + TK * b], acc[a][b] - (unsigned long long)cnt * (unsigned long long)b3);
      if (dobias && bcnt) atomicAdd(&sacc[r][GG_R], bacc[a] - (unsigned long long)bcnt * (unsigned long long)b3);
    }
    __syncthreads();
    gg_flush(sacc, bins, npair, nx, ny, nseg, s0, j0, k0, RJ, RK, dobias);
    __syncthreads(); /* sacc is zero again before the next chunk adds to it */
  }
  if (f) gg_record_nonfinite(f, nf, npair, nx, ny, j0 + tj, k0 + tk, TJ, TK);
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
__global__ void gradsum_gemm_float_kernel(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy,
                                          size_t len, int nchunk, int TJ, int TK, float *partial, float *acc)
{
  __shared__ float xs[GG_S][GG_R + 1], ys[GG_S][GG_R + 1];
  /* per group: RJ x RK pair partials; per (group, tk): RJ bias partials */
  __shared__ float part[GG_THREADS * 16], bpart[GG_THREADS * 4];
  const int        t = threadIdx.x, P = TJ * TK, G = GG_THREADS / P, grp = t / P, tj = (t % P) / TK, tk = t % TK;
  const int        RJ = 4 * TJ, RK = 4 * TK, nx = (npair + ny) / (ny + 1), ntk = ((ny > 0 ? ny : 1) + RK - 1) / RK;
  const int j0 = (int)(blockIdx.x / (unsigned)ntk) * RJ, k0 = (int)(blockIdx.x % (unsigned)ntk) * RK, dobias = k0 == 0;
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

size_t gradsum_gemm_nchunk(size_t len) { return (len + GG_CHUNK - 1) / GG_CHUNK; }

void gradsum_gemm_float(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len,
                        float *partial, float *acc)
{
  int    TJ, TK;
  size_t ngc;
  dim3   grid = gg_grid(npair, ny, len, &TJ, &TK, &ngc);
  gradsum_gemm_float_kernel<<<grid, GG_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, (int)ngc, TJ, TK, partial, acc);
}

void gradsum_gemm_gbins(int npair, int ny, const float *X, size_t ldx, const float *Y, size_t ldy, size_t len, int nseg,
                        const unsigned *xmax, const unsigned *ymax, unsigned long long *nf, unsigned long long *bins)
{
  int    TJ, TK;
  size_t ngc;
  dim3   grid = gg_grid(npair, ny, len, &TJ, &TK, &ngc);
  gradsum_gemm_gbins_kernel<<<grid, GG_THREADS>>>(npair, ny, X, ldx, Y, ldy, len, (int)ngc, nseg, xmax, ymax, TJ, TK,
                                                  nf, bins);
}
