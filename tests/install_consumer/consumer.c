/* tests/install_consumer/consumer.c: a program outside the project that links
 * the installed kernels' library (find_package(FPNAKernels) or pkg-config
 * fpna-kernels) and checks its reproducible sum against integer arithmetic.
 * Exit 0 when every check holds, 1 otherwise, naming the first that fails. */
#include <fpna-miniapp/gsum.h>
#include <fpna-miniapp/reduce.h>
#include <fpna-miniapp/rsum.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 4099 /* not a multiple of the library's 1024-element blocks */

static uint64_t next(uint64_t *s) /* splitmix64: a fixed sequence */
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int main(void)
{
  static double x[N], y[N];
  uint64_t      seed = 52;
  __int128      exact = 0;
  double        naive = 0;

  /* integers of up to 62 bits that are multiples of 2^10 (exact in double), then the negations of the first
   * half in another order: large partial sums that cancel, exact sum a small integer, summed exactly here in
   * 128-bit integers */
  for (int i = 0; i < N / 2; i++) {
    int64_t v = (int64_t)(next(&seed) >> 2) & ~(int64_t)1023;
    x[i]      = (double)(next(&seed) & 1 ? v : -v);
  }
  for (int i = N / 2; i < N - 1; i++) x[i] = -x[(7 * (i - N / 2) + 3) % (N / 2)];
  x[N - 1] = 12345.0;
  for (int i = 0; i < N; i++) exact += (__int128)x[i], naive += x[i];

  double s = red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, N, x, NULL, NULL);
  /* the same values in another order (a stride permutation), summed in uneven pieces through the accumulator */
  for (int i = 0; i < N; i++) y[i] = x[(int)(((int64_t)i * 1031) % N)];
  rsum_t a, b;
  rsum_init(&a), rsum_init(&b);
  rsum_add(&a, RED_OP_SUM, 1000, y, NULL);
  rsum_add(&b, RED_OP_SUM, N - 1000, y + 1000, NULL);
  rsum_merge(&a, &b);
  double p = rsum_value(&a);

  printf("consumer: reproducible sum %.17g, permuted %.17g, exact %.17g, naive %.17g (path %s)\n", s, p,
         (double)exact, naive, rsum_isa());
  if (s != (double)exact) return printf("FAIL: the reproducible sum is not the exact one\n"), 1;
  if (memcmp(&s, &p, sizeof s)) return printf("FAIL: the permuted sum differs in its bits\n"), 1;
  /* docs/reductions.md's example: 2^60 + 1 rounds to 2^60 in a plain loop */
  const double d[] = {0x1p60, 1.0, -0x1p60, 0.5};
  double       plain = 0;
  for (int i = 0; i < 4; i++) plain += d[i];
  if (red_reduce(RED_REPRODUCIBLE, RED_OP_SUM, 4, d, NULL, NULL) != 1.5 || plain != 0.5)
    return printf("FAIL: the documented example's sums are not 1.5 and 0.5 (plain loop %g)\n", plain), 1;
  if (gsum_exponent(gsum_absmax(3, (const float[]){0.75f, -3.0f, 1.0f})) != 2) /* 3 = 0.75 x 2^2 */
    return printf("FAIL: gsum_exponent\n"), 1;
  printf("PASS: consumer\n");
  return 0;
}
