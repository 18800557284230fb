/* kernels/gradsum_cuda_impl.cuh: what the GPU tall-skinny reductions'
 * sources share (kernels/gradsum_cuda.cu: the float and binned strategies,
 * the results area and the flush; kernels/gsum_cuda.cu: gsum's sums, the
 * reproducible gradient's). Not a public header: gradsum_cuda.h is. */
#ifndef MINIAPP_GRADSUM_CUDA_IMPL_CUH
#define MINIAPP_GRADSUM_CUDA_IMPL_CUH
#include "gradsum_cuda.h"

#include <cuda_runtime.h>
#include <limits.h>

#define GS_THREADS 256
#define GS_CHUNK   4096
#define CK_GS(x) \
  do { \
    int e_ = (int)(x); \
    if (e_) return e_; \
  } while (0)
/* Pair tiles: a block sums TJ x rows against TK y rows (the
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
template <int T>
__device__ __forceinline__ void gs_load(const gs_tile &g, const float *X, size_t ldx, const float *Y, size_t ldy,
                                        size_t i, float xv[T], float yv[T])
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

/* The workspace (gradsum_cuda.cu): scratch on the device (growing it frees
 * the old one), and room for a call's results until the flush (pending
 * calls flushed first when they do not fit). */
int gs_ws_scratch(gradsum_ws *ws, size_t bytes);
int gs_ws_results(gradsum_ws *ws, size_t bytes, size_t *off);
/* An outer call's pair p on the host, from its flushed results h
 * (gsum_cuda.cu). */
void gs_outer_result(const gradsum_call *c, const char *h, size_t p, red_partial_t *d);
#endif
