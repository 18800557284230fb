/* tests/surrogate/test_gradsum_host.c: the CPU side of the GPU reproducible
 * reduction (kernels/gradsum_cuda.h), run on the host: global max, canonical
 * 3-fold split into int64 bins summed in an arbitrary order, rebuilt into an
 * rsum state. Asserts bitwise equality with kernels/ rsum on the same float
 * products (what makes CPU and GPU weights equal), for data spanning many
 * binades, with cancellation, and in several summation orders. Needs no GPU. */
#include "gradsum_cuda.h"
#include "hashrng.h"

#include <stdio.h>
#include <stdlib.h>

static double emulate_gpu(size_t n, const float *x, const float *y, size_t stride)
{
  double mx = 0;
  for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs((double)x[i] * (double)y[i]));
  long long bins[3] = {0, 0, 0}, q[3];
  if (mx > 0) {
    int top = gradsum_top_bin(mx);
    for (size_t o = 0; o < stride; o++) /* a scrambled order, like blocks finishing */
      for (size_t i = stride - 1 - o; i < n; i += stride) {
        gradsum_split((double)x[i] * (double)y[i], top, q);
        for (int k = 0; k < 3; k++) bins[k] = (long long)((unsigned long long)bins[k] + (unsigned long long)q[k]);
      }
  }
  rsum_t r;
  gradsum_to_rsum(mx, bins, &r);
  return rsum_value(&r);
}

int main(void)
{
  size_t n = 100000;
  float  *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd);
  int     failures = 0;
  for (int c = 0; c < 4; c++) {
    for (size_t i = 0; i < n; i++) {
      double e = c == 0 ? 0 : (rng_uniform(c, 2 * i) - 0.5) * (c == 3 ? 120 : 30); /* binades */
      x[i] = (float)((rng_uniform(100 + c, i) - 0.5) * exp2(e));
      y[i] = c == 2 ? (i % 2 ? -x[i - 1] : x[i + 1]) : (float)(rng_uniform(200 + c, i) - 0.3); /* c=2: cancels */
      xd[i] = x[i], yd[i] = y[i];
    }
    double ref = red_reduce(RED_REPRODUCIBLE, RED_OP_DOT, n, xd, yd);
    for (size_t stride = 1; stride <= 4097; stride += 2048) {
      double g = emulate_gpu(n, x, y, stride);
      printf("case %d stride %zu: rsum %.17g, gpu emulation %.17g %s\n", c, stride, ref, g, g == ref ? "equal" : "DIFFERENT");
      failures += memcmp(&g, &ref, sizeof g) != 0;
    }
  }
  free(x), free(y), free(xd), free(yd);
  return failures ? 1 : 0;
}
