/* tests/cudaemu/planted.cu: defects planted on purpose, to show that the
 * emulation catches each one (tests/cudaemu/planted_tests.sh):
 *   race       a shared-memory sum with its __syncthreads missing: the
 *              result depends on the thread order (wrong for some seed)
 *   divergent  a __syncthreads that only some threads reach: reported
 *   oob        a read one element past an allocation: the guard page
 *   memcpy     a cudaMemcpy longer than the allocation: reported
 *   good       the correct sum: right for every seed
 * Plain CUDA: nvcc could build it as well. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#define N 128

/* A shared-memory tree sum; planted (race): all its barriers but one missing. */
__global__ void sum(const float *x, float *out, int race)
{
  __shared__ float sh[N];
  int t = threadIdx.x;
  sh[t] = x[t];
  __syncthreads();
  for (int h = N / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] += sh[t + h];
    if (!race || h == N / 4) __syncthreads(); /* uniform over the block */
  }
  if (t == 0) *out = sh[0];
}

__global__ void divergent(float *out)
{
  if (threadIdx.x < 64) __syncthreads();
  out[threadIdx.x] = 1.0f;
}

__global__ void oob(const float *x, float *out, int n)
{
  if (threadIdx.x == 0) *out = x[n]; /* one past the end */
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "good";
  float       h[N], *x, *out, r = 0;
  for (int i = 0; i < N; i++) h[i] = (float)(i + 1);
  cudaMalloc(&x, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  cudaMemcpy(x, h, N * sizeof(float), cudaMemcpyHostToDevice);
  if (!strcmp(mode, "good")) sum<<<1, N>>>(x, out, 0);
  else if (!strcmp(mode, "race")) sum<<<1, N>>>(x, out, 1);
  else if (!strcmp(mode, "divergent")) divergent<<<1, N>>>(out);
  else if (!strcmp(mode, "oob")) oob<<<1, 32>>>(x, out, N);
  else if (!strcmp(mode, "memcpy")) cudaMemcpy(h, x, (N + 1) * sizeof(float), cudaMemcpyDeviceToHost);
  else if (!strcmp(mode, "empty")) { sum<<<0, N>>>(x, out, 0); printf("%s\n", cudaGetErrorString(cudaGetLastError())); return 0; }
  cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost);
  printf("%s: sum %.1f (want %.1f)\n", mode, (double)r, N * (N + 1) / 2.0);
  return r == N * (N + 1) / 2.0f ? 0 : 1;
}
