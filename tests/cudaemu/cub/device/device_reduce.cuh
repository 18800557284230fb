/* tests/cudaemu/cub/device/device_reduce.cuh: the one CUB entry point the
 * project uses (bench/sumstudy/sumstudy_cuda.cu), for the CUDA emulation.
 * DeviceReduce::Sum keeps CUB's two-call protocol (a size query with a null
 * workspace, then the sum) and its arguments are checked like a launch's: the
 * input and output must lie in device allocations. The emulation's order is
 * a fixed pairwise tree, its own, not CUB's: what is tested here is that the
 * study calls CUB correctly and that a deterministic device sum is the same
 * on every call, not CUB's bits. */
#ifndef TESTS_CUDAEMU_CUB_DEVICE_REDUCE_CUH
#define TESTS_CUDAEMU_CUB_DEVICE_REDUCE_CUH

#include "cuda_runtime.h"
#include <vector>

namespace cub {
struct DeviceReduce {
  template <class In, class Out> static cudaError_t Sum(void *tmp, size_t &bytes, In in, Out out, long long n, cudaStream_t = 0)
  {
    if (!tmp) return bytes = 256, cudaSuccess;
    if (n < 0 || bytes < 256 || !emu::is_device(tmp, bytes) || !emu::is_device(out, sizeof *out) || (n && !emu::is_device(in, (size_t)n * sizeof *in))) return cudaErrorInvalidValue;
    std::vector<double> v(in, in + n);
    for (size_t st = 1; st < v.size(); st *= 2)
      for (size_t i = 0; i + st < v.size(); i += 2 * st) v[i] = __dadd_rn(v[i], v[i + st]);
    *out = v.empty() ? 0.0 : v[0];
    return cudaSuccess;
  }
};
} // namespace cub
#endif
