/* bench/sumstudy/sumstudy_cuda.cu: the GPU sums of the study, one array
 * uploaded once and summed by each method as often as asked. The order of a
 * GPU atomic sum is whatever the hardware makes of it, so every launch is a
 * new draw; nothing here is seeded. Why each kernel is built this way:
 *   cuda-element: one atomicAdd per summand (the most orders, the slowest).
 *   cuda-block:   tiles of 1024 summands (the app's RED_BLOCK), each summed by
 *                 256 threads and a fixed shared-memory tree, the tile partial
 *                 added with one atomicAdd: only the tile order varies.
 *   cuda-tree:    the same tile partials written out and combined by a fixed
 *                 one-block tree: deterministic; its CPU replica is
 *                 ss_sum_cuda_tree_cpu (sumstudy_sums.c), checked bitwise.
 *   cuda-cub:     cub::DeviceReduce::Sum, deterministic run to run on one GPU.
 * __dadd_rn pins every addition (no contraction can touch a sum anyway). */
#include "sumstudy.h"

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#define SS_TILE    1024
#define SS_THREADS 256

struct ss_cuda {
  double *x, *partial, *out;
  void   *cub_tmp;
  size_t  cub_bytes, nmax, n;
};

__global__ void ss_element_kernel(const double *x, size_t n, double *acc)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(acc, x[i]);
}

__device__ __forceinline__ double ss_block_tree(double *sh, int t)
{
  __syncthreads();
  for (int h = SS_THREADS / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = __dadd_rn(sh[t], sh[t + h]);
    __syncthreads();
  }
  return sh[0];
}

/* Tile b = blockIdx.x: thread t adds x[b*TILE + t + k*THREADS] in k order. */
__global__ void ss_tile_kernel(const double *x, size_t n, double *partial, double *acc)
{
  __shared__ double sh[SS_THREADS];
  int               t = threadIdx.x;
  size_t            b = blockIdx.x, end = min(n, (b + 1) * SS_TILE);
  double            a = 0.0;
  for (size_t i = b * SS_TILE + t; i < end; i += SS_THREADS) a = __dadd_rn(a, x[i]);
  sh[t]    = a;
  double s = ss_block_tree(sh, t);
  if (t == 0) {
    if (acc) atomicAdd(acc, s);
    else partial[b] = s;
  }
}

/* One block: thread t adds partials t, t + THREADS, ... in order, then the tree. */
__global__ void ss_tree_kernel(const double *partial, size_t nt, double *out)
{
  __shared__ double sh[SS_THREADS];
  int               t = threadIdx.x;
  double            a = 0.0;
  for (size_t c = t; c < nt; c += SS_THREADS) a = __dadd_rn(a, partial[c]);
  sh[t]    = a;
  double s = ss_block_tree(sh, t);
  if (t == 0) *out = s;
}

extern "C" int ss_cuda_available(const char **why)
{
  int         n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = cudaGetErrorString(e);
    return 0;
  }
  *why = "no CUDA device";
  return n > 0;
}

extern "C" const char *ss_cuda_strerror(int rc) { return cudaGetErrorString((cudaError_t)rc); }

extern "C" int ss_cuda_create(size_t nmax, ss_cuda **ctx)
{
  ss_cuda *c = (ss_cuda *)calloc(1, sizeof *c);
  if (!c) return (int)cudaErrorMemoryAllocation;
  *ctx      = c;
  c->nmax   = nmax;
  size_t nt = (nmax + SS_TILE - 1) / SS_TILE;
  int    rc;
  if ((rc = (int)cudaMalloc(&c->x, (nmax ? nmax : 1) * sizeof(double)))) return rc;
  if ((rc = (int)cudaMalloc(&c->partial, (nt ? nt : 1) * sizeof(double)))) return rc;
  if ((rc = (int)cudaMalloc(&c->out, sizeof(double)))) return rc;
  if ((rc = (int)cub::DeviceReduce::Sum(nullptr, c->cub_bytes, c->x, c->out, (long long)nmax))) return rc;
  return (int)cudaMalloc(&c->cub_tmp, c->cub_bytes ? c->cub_bytes : 1);
}

extern "C" int ss_cuda_upload(ss_cuda *c, size_t n, const double *x)
{
  if (n > c->nmax) return (int)cudaErrorInvalidValue;
  c->n = n;
  return (int)cudaMemcpy(c->x, x, n * sizeof(double), cudaMemcpyHostToDevice);
}

extern "C" int ss_cuda_sum(ss_cuda *c, ss_method m, double *sum)
{
  size_t n = c->n, nt = (n + SS_TILE - 1) / SS_TILE;
  int    rc;
  if ((rc = (int)cudaMemset(c->out, 0, sizeof(double)))) return rc;
  if (n > 0) switch (m) {
    case SS_CUDA_ELEMENT:
      ss_element_kernel<<<(unsigned)((n + SS_THREADS - 1) / SS_THREADS), SS_THREADS>>>(c->x, n, c->out);
      break;
    case SS_CUDA_BLOCK: ss_tile_kernel<<<(unsigned)nt, SS_THREADS>>>(c->x, n, nullptr, c->out); break;
    case SS_CUDA_TREE:
      ss_tile_kernel<<<(unsigned)nt, SS_THREADS>>>(c->x, n, c->partial, nullptr);
      ss_tree_kernel<<<1, SS_THREADS>>>(c->partial, nt, c->out);
      break;
    case SS_CUDA_CUB:
      if ((rc = (int)cub::DeviceReduce::Sum(c->cub_tmp, c->cub_bytes, c->x, c->out, (long long)n))) return rc;
      break;
    default: return (int)cudaErrorInvalidValue;
    }
  if ((rc = (int)cudaGetLastError())) return rc;
  return (int)cudaMemcpy(sum, c->out, sizeof(double), cudaMemcpyDeviceToHost);
}

extern "C" void ss_cuda_destroy(ss_cuda **ctx)
{
  if (!*ctx) return;
  cudaFree((*ctx)->x), cudaFree((*ctx)->partial), cudaFree((*ctx)->out), cudaFree((*ctx)->cub_tmp);
  free(*ctx);
  *ctx = nullptr;
}
