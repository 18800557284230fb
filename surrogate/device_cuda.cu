/* surrogate/device_cuda.cu: the CUDA device itself, for the MLP engine
 * (mlp_cuda.h) and its callers: whether one is usable and if not why, the
 * first contact of gpu-check.sh, the device's selection and name, page-locked
 * host memory, device memory for another backend's batch, and the float peak
 * and copy bandwidth bench_surrogate quotes beside its figures. The engine's kernels are in mlp_cuda.cu. */
#include "mlp_cuda.h"

#include <cuda_runtime.h>
#include <stdio.h>

#define CK(x) \
  do { \
    int e_ = (int)(x); \
    if (e_ != 0) return e_; \
  } while (0)

/* Whether a device is usable, and if not why (the runtime's words: e.g. a
 * driver too old for this runtime), for the one-line refusal (C4). */
static int  avail = -1, unavail_err = 0;
static char unavail_why[200];
extern "C" int mlp_cuda_available(void)
{
  if (avail < 0) {
    int         n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    cudaGetLastError(); /* clear the sticky "no driver" error */
    avail = e == cudaSuccess && n > 0, unavail_err = (int)e;
    if (e != cudaSuccess)
      snprintf(unavail_why, sizeof unavail_why, "cudaGetDeviceCount: %s (CUDA error %d)", cudaGetErrorString(e),
               (int)e);
    else if (!avail) snprintf(unavail_why, sizeof unavail_why, "the driver reports no CUDA device");
  }
  return avail;
}

extern "C" const char *mlp_cuda_unavailable_reason(void) { return mlp_cuda_available() ? "" : unavail_why; }

__global__ void k_probe(int *out) { out[threadIdx.x] = 3 * (int)threadIdx.x + 1; }

/* First contact (gpu-check.sh -steps device): the CUDA version the driver
 * supports and the runtime's, device 0's name, compute capability, memory
 * and compute mode, and one launch checked on the host. A driver that cannot
 * run this runtime gives its reason and the runtime's error code. */
extern "C" int mlp_cuda_probe(char *buf, size_t len)
{
  static const char *modes[] = {"default", "exclusive-thread", "prohibited", "exclusive-process"};
  int                drv = 0, rt = 0, mode = 0, got[32], rc;
  int               *d   = nullptr;
  cudaDeviceProp     p;
  cudaDriverGetVersion(&drv), cudaRuntimeGetVersion(&rt);
  char dv[48] = "no CUDA driver";
  if (drv) snprintf(dv, sizeof dv, "driver supports CUDA %d.%d", drv / 1000, drv % 1000 / 10);
  int n = snprintf(buf, len, "%s, runtime CUDA %d.%d", dv, rt / 1000, rt % 1000 / 10);
  if (n < 0 || (size_t)n >= len) return (int)cudaErrorInvalidValue;
  if (!mlp_cuda_available()) {
    snprintf(buf + n, len - n, ": no usable device: %s", unavail_why);
    return unavail_err ? unavail_err : (int)cudaErrorNoDevice;
  }
  CK(cudaGetDeviceProperties(&p, 0));
  CK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
  CK(cudaMalloc(&d, sizeof got));
  k_probe<<<1, 32>>>(d);
  rc = (int)cudaGetLastError();
  if (!rc) rc = (int)cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost);
  cudaFree(d);
  for (int i = 0; !rc && i < 32; i++)
    if (got[i] != 3 * i + 1) rc = (int)cudaErrorLaunchFailure;
  snprintf(buf + n, len - n,
           "; device 0: %s, compute capability %d.%d, %.1f GiB, %d SMs, compute mode %s; test launch %s", p.name,
           p.major, p.minor, p.totalGlobalMem / 1073741824.0, p.multiProcessorCount,
           mode >= 0 && mode < 4 ? modes[mode] : "unknown", rc ? cudaGetErrorString((cudaError_t)rc) : "ok");
  return rc;
}

extern "C" int mlp_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  cudaGetLastError();
  return n;
}

extern "C" int mlp_cuda_select_device(int id, char *name, size_t len)
{
  cudaDeviceProp p;
  cudaError_t    e = cudaSetDevice(id);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, id);
  if (e != cudaSuccess) return (int)e;
  snprintf(name, len, "%s", p.name);
  return 0;
}

extern "C" const char *mlp_cuda_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }

/* Page-locked host memory for the arrays that cross to the device every
 * step (the training batch, the predictions): the copies then run at the
 * DMA engine's speed, not through the driver's pageable staging. */
extern "C" int  mlp_cuda_host_alloc(void **p, size_t bytes) { return (int)cudaMallocHost(p, bytes ? bytes : 1); }
extern "C" void mlp_cuda_host_free(void *p) { cudaFreeHost(p); }

extern "C" int mlp_cuda_dev_alloc(void **d, size_t bytes)
{
  *d = NULL;
  return bytes ? (int)cudaMalloc(d, bytes) : 0;
}
extern "C" void mlp_cuda_dev_free(void *d) { cudaFree(d); }
extern "C" int  mlp_cuda_copy(void *dst, const void *src, size_t bytes, int to_device)
{
  return bytes ? (int)cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) : 0;
}

/* The device's float peak without FMA: 8 independent chains of one add and
 * one multiply per thread and iteration (_rn intrinsics are never contracted). */
__global__ void k_peak(long iters, float c, float *sink)
{
  float a[8], p[8];
  for (int t = 0; t < 8; t++) a[t] = (float)(t + threadIdx.x), p[t] = 1.0f + (float)t;
  for (long i = 0; i < iters; i++)
#pragma unroll
    for (int t = 0; t < 8; t++) a[t] = __fadd_rn(a[t], c), p[t] = __fmul_rn(p[t], 0.99999994f);
  float r = 0.0f;
  for (int t = 0; t < 8; t++) r += a[t] + p[t];
  if (r == 1.2345f) *sink = r; /* keeps the work; never true in practice */
}

__global__ void k_copy(size_t n, const float4 *x, float4 *y)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

/* Best of 3 timings of a launch, in seconds. */
template <typename F> static int best_time(F launch, double *t)
{
  cudaEvent_t e0, e1;
  float       ms, best = 1e30f;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  launch(); /* warm-up */
  for (int r = 0; r < 3; r++) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  *t = 1e-3 * best;
  return (int)cudaGetLastError();
}

extern "C" int mlp_cuda_peak(double *gflops, double *gbs)
{
  int    dev, sms;
  long   iters = 1 << 16;
  size_t n     = (size_t)1 << 27; /* 2 x 512 MiB, far beyond the L2 */
  float *buf;
  double t;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  unsigned blocks = (unsigned)sms * 8;
  CK(cudaMalloc(&buf, 2 * n * sizeof(float)));
  int rc = best_time([&] { k_peak<<<blocks, 256>>>(iters, 1e-9f, buf); }, &t);
  if (!rc) *gflops = 16.0 * (double)iters * blocks * 256 / t * 1e-9;
  if (!rc) rc = best_time([&] { k_copy<<<blocks * 4, 256>>>(n / 4, (const float4 *)buf, (float4 *)(buf + n)); }, &t);
  if (!rc) *gbs = 2.0 * (double)n * sizeof(float) / t * 1e-9;
  cudaFree(buf);
  return rc;
}
