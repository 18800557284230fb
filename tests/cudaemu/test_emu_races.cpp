/* tests/cudaemu/test_emu_races.cpp: do the GPU atomic
 * strategy's adds race? Run under CUDAEMU_WAVE=8, a GPU's dispatch (blocks in
 * linear order, 8 resident at once, finishing in any order). The same atomic
 * gradient sum of 16 pairs x 32 chunks is taken twice: some pair's sum must
 * change its bits, as on real hardware. With the pair-major grid the adds of
 * each pair arrived in chunk order and every call gave the same bits. */
#include "cuda_runtime.h"
#include "gradsum_cuda.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main()
{
  const int    npair = 16;
  const size_t len   = 32 * 4096;
  std::vector<float> x((size_t)npair * len);
  unsigned long long r = 88172645463325252ull;
  for (float &v : x) { /* signs and magnitudes over 2^-10..2^10: an order-sensitive float sum */
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    v = ldexpf((float)(r % 2000001) / 1e6f - 1.0f, (int)(r >> 40) % 21 - 10);
  }
  float     *X;
  gradsum_ws ws;
  memset(&ws, 0, sizeof ws);
  red_partial_t a[npair], b[npair];
  if (cudaMalloc(&X, x.size() * sizeof(float)) || cudaMemcpy(X, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice) ||
      gradsum_cuda(RED_ATOMIC, npair, 0, X, len, nullptr, 0, len, &ws, gradsum_dst{nullptr, 0, a, 1}) || gradsum_cuda_flush(&ws) ||
      gradsum_cuda(RED_ATOMIC, npair, 0, X, len, nullptr, 0, len, &ws, gradsum_dst{nullptr, 0, b, 1}) || gradsum_cuda_flush(&ws)) {
    printf("FAIL: the emulated device refused the sums\n");
    return 1;
  }
  int differ = 0;
  for (int p = 0; p < npair; p++) differ += memcmp(&a[p].d, &b[p].d, sizeof a[p].d) != 0;
  gradsum_cuda_free(&ws);
  cudaFree(X);
  if (!differ) {
    printf("FAIL: two atomic sums of %d pairs x 32 chunks gave the same bits for every pair: the adds do not race\n", npair);
    return 1;
  }
  printf("ok: %d of %d pairs changed bits between two atomic sums\n", differ, npair);
  return 0;
}
