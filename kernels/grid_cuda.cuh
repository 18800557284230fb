/* kernels/grid_cuda.cuh: the element-wise kernels' launch shape, shared by
 * vec_cuda.cu, step_cuda.cu and couple_cuda.cu: GRID_THREADS threads a block,
 * at most GRID_MAX blocks, each thread striding over the elements. */
#ifndef MINIAPP_KERNELS_GRID_CUDA_CUH
#define MINIAPP_KERNELS_GRID_CUDA_CUH

#include <cuda_runtime.h>
#include <stddef.h>

#define GRID_THREADS 256
#define GRID_MAX     65535

static inline unsigned grid_blocks(size_t n, unsigned max)
{
  size_t g = (n + GRID_THREADS - 1) / GRID_THREADS;
  return (unsigned)(g < 1 ? 1 : g < max ? g : max);
}

/* for each element index i < n of this thread */
#define GRID_LOOP(i, n) \
  for (size_t i = (size_t)blockIdx.x * GRID_THREADS + threadIdx.x; i < (n); i += (size_t)gridDim.x * GRID_THREADS)

#endif
