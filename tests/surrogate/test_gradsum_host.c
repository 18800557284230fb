/* tests/surrogate/test_gradsum_host.c: the CPU side of the GPU reproducible
 * reduction (kernels/gradsum_cuda.h), run on the host: global max, canonical
 * 3-fold split into int64 bins summed in an arbitrary order, rebuilt into an
 * rsum state. Asserts bitwise equality with kernels/ rsum on the same float
 * products (what makes CPU and GPU weights equal), for data spanning many
 * binades, with cancellation, and in several summation orders; and for a batch
 * of 2^24 + 2^20 products near the top of their bin, which would overflow one
 * set of int64 bins and needs the kernel's segments (GS_SEG_LEN). No GPU. */
#include "gradsum_cuda.h"
#include "hashrng.h"

#include <stdio.h>
#include <stdlib.h>

/* The kernel's arithmetic on the host: bins per segment of GS_SEG_LEN
 * samples, each segment's products added in a scrambled order (like blocks
 * finishing) with wrapping int64 adds, then gradsum_to_rsum. */
static double emulate_gpu(size_t n, const float *x, const float *y, size_t stride)
{
  double mx = 0;
  for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs((double)x[i] * (double)y[i]));
  size_t     nseg = gradsum_nseg(n);
  long long *bins = calloc(3 * nseg, sizeof *bins), q[3];
  if (mx > 0) {
    int top = gradsum_top_bin(mx);
    for (size_t o = 0; o < stride; o++)
      for (size_t i = stride - 1 - o; i < n; i += stride) {
        long long *b = bins + 3 * (i / GS_SEG_LEN);
        gradsum_split((double)x[i] * (double)y[i], top, q);
        for (int k = 0; k < 3; k++) b[k] = (long long)((unsigned long long)b[k] + (unsigned long long)q[k]);
      }
  }
  rsum_t r;
  gradsum_to_rsum(mx, bins, (int)nseg, &r);
  free(bins);
  return rsum_value(&r);
}

static int compare(const char *what, size_t n, const float *x, const float *y, double *xd, double *yd, size_t stride)
{
  for (size_t i = 0; i < n; i++) xd[i] = x[i], yd[i] = y[i];
  double ref = red_reduce(RED_REPRODUCIBLE, RED_OP_DOT, n, xd, yd, NULL), g = emulate_gpu(n, x, y, stride);
  printf("%s, n %zu, stride %zu: rsum %.17g, gpu emulation %.17g %s\n", what, n, stride, ref, g, g == ref ? "equal" : "DIFFERENT");
  return memcmp(&g, &ref, sizeof g) != 0;
}

int main(void)
{
  size_t  n = 100000, big = ((size_t)1 << 24) + ((size_t)1 << 20);
  float  *x = malloc(big * sizeof *x), *y = malloc(big * sizeof *y);
  double *xd = malloc(big * sizeof *xd), *yd = malloc(big * sizeof *yd);
  int     failures = 0;
  char    what[32];
  for (int c = 0; c < 4; c++) {
    for (size_t i = 0; i < n; i++) {
      double e = c == 0 ? 0 : (rng_uniform(c, 2 * i) - 0.5) * (c == 3 ? 120 : 30); /* binades */
      x[i] = (float)((rng_uniform(100 + c, i) - 0.5) * exp2(e));
      y[i] = c == 2 ? (i % 2 ? -x[i - 1] : x[i + 1]) : (float)(rng_uniform(200 + c, i) - 0.3); /* c=2: cancels */
    }
    snprintf(what, sizeof what, "case %d", c);
    for (size_t stride = 1; stride <= 4097; stride += 2048) failures += compare(what, n, x, y, xd, yd, stride);
  }
  /* products just below 2^39, the top of bin 0: each split's first part is
   * ~2^39, so 2^24 + 2^20 of them overflow one int64 bin but not segments */
  for (size_t i = 0; i < big; i++) x[i] = 0x1.fffffep18f, y[i] = 0x1.fffffep19f - 0x1p-4f * (float)(i % 3);
  failures += compare("2^24 + 2^20 products at the top of a bin", big, x, y, xd, yd, 4097);
  free(x), free(y), free(xd), free(yd);
  return failures ? 1 : 0;
}
