/* kernels/vec_cuda.cu: the element-wise vector operations on the device
 * (vec_cuda.h), in _rn intrinsics: each element rounded once per operation,
 * as the host's loops round it. */
#include "vec_cuda.h"

#include <cuda_runtime.h>

#define VC_THREADS 256
#define VC_MAXGRID 65535

static unsigned vc_grid(size_t n)
{
  size_t g = (n + VC_THREADS - 1) / VC_THREADS;
  return (unsigned)(g < VC_MAXGRID ? g : VC_MAXGRID);
}

#define VC_LOOP for (size_t i = (size_t)blockIdx.x * VC_THREADS + threadIdx.x; i < n; i += (size_t)gridDim.x * VC_THREADS)

__global__ void vc_set_kernel(double *y, double a, size_t n) { VC_LOOP y[i] = a; }
__global__ void vc_scale_kernel(double *y, double a, size_t n) { VC_LOOP y[i] = __dmul_rn(a, y[i]); }
__global__ void vc_axpby_kernel(double *y, double a, const double *x, double b, size_t n)
{
  VC_LOOP y[i] = __dadd_rn(__dmul_rn(a, x[i]), __dmul_rn(b, y[i]));
}
__global__ void vc_waxpy_kernel(double *w, double a, const double *x, const double *y, size_t n)
{
  VC_LOOP w[i] = __dadd_rn(__dmul_rn(a, x[i]), y[i]);
}
__global__ void vc_mult_kernel(double *w, const double *x, const double *y, size_t n) { VC_LOOP w[i] = __dmul_rn(x[i], y[i]); }

#define VC_LAUNCH(k, n, ...) \
  do { \
    if (!(n)) return 0; \
    k<<<vc_grid(n), VC_THREADS>>>(__VA_ARGS__); \
    return (int)cudaGetLastError(); \
  } while (0)

extern "C" int vec_cuda_alloc(double **d, size_t n)
{
  *d = NULL;
  return n ? (int)cudaMalloc((void **)d, n * sizeof(double)) : 0;
}
extern "C" int vec_cuda_free(double *d) { return d ? (int)cudaFree(d) : 0; }
extern "C" int vec_cuda_to_device(double *d, const double *h, size_t n)
{
  return n ? (int)cudaMemcpy(d, h, n * sizeof(double), cudaMemcpyHostToDevice) : 0;
}
extern "C" int vec_cuda_to_host(double *h, const double *d, size_t n)
{
  return n ? (int)cudaMemcpy(h, d, n * sizeof(double), cudaMemcpyDeviceToHost) : 0;
}
extern "C" int vec_cuda_copy(double *y, const double *x, size_t n)
{
  return n && y != x ? (int)cudaMemcpy(y, x, n * sizeof(double), cudaMemcpyDeviceToDevice) : 0;
}
extern "C" int vec_cuda_set(double *y, double a, size_t n) { VC_LAUNCH(vc_set_kernel, n, y, a, n); }
extern "C" int vec_cuda_scale(double *y, double a, size_t n)
{
  if (a == 0.0) return vec_cuda_set(y, 0.0, n); /* as PETSc's VecScale: zeros, whatever y held */
  VC_LAUNCH(vc_scale_kernel, n, y, a, n);
}
extern "C" int vec_cuda_axpby(double *y, double a, const double *x, double b, size_t n)
{
  VC_LAUNCH(vc_axpby_kernel, n, y, a, x, b, n);
}
extern "C" int vec_cuda_waxpy(double *w, double a, const double *x, const double *y, size_t n)
{
  VC_LAUNCH(vc_waxpy_kernel, n, w, a, x, y, n);
}
extern "C" int vec_cuda_pointwise_mult(double *w, const double *x, const double *y, size_t n)
{
  VC_LAUNCH(vc_mult_kernel, n, w, x, y, n);
}
