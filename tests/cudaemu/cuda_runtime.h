/* tests/cudaemu/cuda_runtime.h: a CUDA emulation for the host, for tests
 * only (docs/gpu.md, "The emulation"). The project's .cu files, with their
 * kernel launches rewritten by rewrite.py, compile as C++ against this
 * header and run on the CPU: each launch runs its blocks one at a time in a
 * shuffled (seeded) order, each block's threads as fibers that switch at
 * __syncthreads, in a shuffled order per phase; a barrier that not every
 * thread of the block reaches is reported. Device allocations are filled
 * with NaN bytes and end at a guard page; every cudaMemcpy is checked
 * against the allocation it names (direction and size). The arithmetic is
 * the host's with -ffp-contract=off: the _rn intrinsics are the plain
 * operators. What only a real GPU can say is in docs/gpu.md. */
#ifndef TESTS_CUDAEMU_CUDA_RUNTIME_H
#define TESTS_CUDAEMU_CUDA_RUNTIME_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static /* blocks run one at a time: one copy serves the block */
#define __restrict__

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct float4 {
  float x, y, z, w;
};

namespace emu {
extern uint3 *cur_tid; /* the running fiber's threadIdx */
extern uint3  block;   /* the running block's blockIdx */
extern dim3   bdim, gdim;
void          sync(void);
bool          is_device(const void *p, size_t n); /* [p, p+n) inside one device allocation */
void          launch(dim3 grid, dim3 block, const std::function<void()> &body, const char *name, bool fibers);
} // namespace emu

#define threadIdx (*emu::cur_tid)
#define blockIdx  (emu::block)
#define blockDim  (emu::bdim)
#define gridDim   (emu::gdim)
#define __syncthreads() emu::sync()
/* rewrite.py turns k<<<g, b>>>(args) into this */
#define EMU_LAUNCH(k, g, b, ...)      emu::launch(dim3(g), dim3(b), [&]() { k(__VA_ARGS__); }, #k, false)
#define EMU_LAUNCH_SYNC(k, g, b, ...) emu::launch(dim3(g), dim3(b), [&]() { k(__VA_ARGS__); }, #k, true)

template <class A, class B> static inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B> static inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }

static inline float     __fadd_rn(float a, float b) { return a + b; }
static inline float     __fsub_rn(float a, float b) { return a - b; }
static inline float     __fmul_rn(float a, float b) { return a * b; }
static inline float     __fdiv_rn(float a, float b) { return a / b; }
static inline float     __fsqrt_rn(float a) { return std::sqrt(a); }
static inline double    __dadd_rn(double a, double b) { return a + b; }
static inline double    __dsub_rn(double a, double b) { return a - b; }
static inline double    __dmul_rn(double a, double b) { return a * b; }
static inline double    __ddiv_rn(double a, double b) { return a / b; }
static inline long long __double_as_longlong(double d) { long long l; std::memcpy(&l, &d, 8); return l; }
static inline double    __longlong_as_double(long long l) { double d; std::memcpy(&d, &l, 8); return d; }
static inline int       __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline float     __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline unsigned  __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
static inline float     __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }

/* Fibers switch only at __syncthreads: an atomic is a plain read-modify-write. */
static inline float              atomicAdd(float *p, float v) { float o = *p; *p = o + v; return o; }
static inline double             atomicAdd(double *p, double v) { double o = *p; *p = o + v; return o; }
static inline int                atomicAdd(int *p, int v) { int o = *p; *p = o + v; return o; }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p = o + v; return o; }
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; if (v > o) *p = v; return o; }
static inline unsigned           atomicMax(unsigned *p, unsigned v) { unsigned o = *p; if (v > o) *p = v; return o; }
static inline unsigned long long atomicOr(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p = o | v; return o; }

enum cudaError_t {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9, cudaErrorInvalidDevice = 101,
  cudaErrorNoDevice = 100, cudaErrorLaunchFailure = 719, cudaErrorIllegalAddress = 700, cudaErrorInsufficientDriver = 35,
  cudaErrorLaunchOutOfResources = 701, cudaErrorUnknown = 999
};
typedef cudaError_t cudaError;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeMode = 20 };
typedef struct emu_event *cudaEvent_t;
typedef struct emu_stream *cudaStream_t;
struct cudaDeviceProp {
  char   name[256];
  size_t totalGlobalMem;
  int    multiProcessorCount, major, minor;
};

cudaError_t cudaMallocBytes(void **p, size_t n);
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMallocBytes((void **)p, n); }
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHostBytes(void **p, size_t n);
template <class T> static inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMallocHostBytes((void **)p, n); }
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemset(void *p, int v, size_t n);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s = 0);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDevice(int *d);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int d);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaEventDestroy(cudaEvent_t e);

#endif
