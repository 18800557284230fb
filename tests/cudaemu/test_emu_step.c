/* tests/cudaemu/test_emu_step.c: the device's state scan, state hash and
 * period test (kernels/step_cuda.h, vec_cuda.h) against the host's
 * (kernels/step.c and solver/fusedcg.c's loop), bit for bit, on lengths that fill part of a
 * block, one block, and more blocks than the grid (the stride), with ties
 * of +0 and -0, NaNs of several payloads, infinities; the hash on blocks of
 * grids with offsets and 1-3 components, and split in two (the sum of the
 * halves' hashes is the whole's). Exit 1 on the first difference. */
#include "step_cuda.h"
#include "vec_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bits_eq(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static double nan_with(uint64_t payload, int neg)
{
  uint64_t u = 0x7ff8000000000000ULL | (payload & 0x7ffffffffffffULL) | ((uint64_t)neg << 63);
  double   d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static uint64_t rng = 88172645463325252ULL;
static double   uniform(void)
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* pattern p of length n into x */
static void fill(int p, size_t n, double *x)
{
  for (size_t i = 0; i < n; i++) x[i] = 2 * uniform() - 1;
  if (p == 1) /* zeros of both signs only: the first one met decides */
    for (size_t i = 0; i < n; i++) x[i] = (i * 7919 % 5 == 0) ? -0.0 : 0.0;
  if (p == 2 && n) /* NaNs of several payloads and signs: the last one stays */
    for (size_t k = 0; k < 4; k++) x[(k * 104729 + 3) % n] = nan_with(k + 1, (int)(k & 1));
  if (p == 2 && n > 65536 + 5) /* two in one thread's stride (256 blocks of 256) */
    x[n - 1 - 65536] = nan_with(9, 0), x[n - 1] = nan_with(10, 1);
  if (p == 3 && n) x[n / 3] = INFINITY, x[n / 2] = -INFINITY;
  if (p == 4) /* equal extremes at many places, with a sign of zero at the top */
    for (size_t i = 0; i < n; i++) x[i] = (i % 3 == 0) ? 1.0 : (i % 3 == 1) ? -1.0 : ((i & 1) ? 0.0 : -0.0);
}

static int host_period(size_t n, const double *d)
{
  for (size_t bs = 1; bs <= 8 && bs <= n; bs *= 2) {
    int periodic = 1;
    for (size_t i = bs; periodic && i < n; i++) periodic = bits_eq(d[i], d[i % bs]);
    if (periodic) return (int)bs;
  }
  return 0;
}

int main(void)
{
  const size_t sizes[] = {0, 1, 2, 7, 255, 256, 257, 4099, 65536, 65536 * 3 + 17};
  double      *scratch, *xd, *x = malloc(sizeof(double) * (65536 * 3 + 17));
  int          fails = 0, cases = 0;

  if (!x || vec_cuda_alloc(&scratch, STEP_SCAN_SCRATCH) || vec_cuda_alloc(&xd, 65536 * 3 + 17)) return 2;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int p = 0; p < 5; p++) {
      size_t      n = sizes[s];
      step_scan_t h, d;
      fill(p, n, x);
      step_scan(n, x, &h);
      if (vec_cuda_to_device(xd, x, n) || step_cuda_scan(n, xd, scratch, &d)) return 2;
      cases++;
      if (!bits_eq(h.lo, d.lo) || !bits_eq(h.hi, d.hi) || h.nan != d.nan || h.nonfinite != d.nonfinite ||
          (h.nan && !bits_eq(h.nanv, d.nanv))) {
        printf("FAIL scan n %zu pattern %d: host [%g, %g] nan %d nonfinite %d, device [%g, %g] nan %d nonfinite %d\n",
               n, p, h.lo, h.hi, h.nan, h.nonfinite, d.lo, d.hi, d.nan, d.nonfinite);
        fails++;
      }
      for (int per = 1; per <= 16; per *= 2) { /* a diagonal of period per (16: none of 1..8), then one broken */
        for (size_t i = 0; i < n; i++) x[i] = 1.0 / (double)(1 + i % (size_t)per);
        for (int broken = 0; broken < 2; broken++) {
          int dp;
          if (broken && n) x[n - 1] = -x[n - 1];
          if (vec_cuda_to_device(xd, x, n) || vec_cuda_period(n, xd, &dp)) return 2;
          cases++;
          if (dp != host_period(n, x)) printf("FAIL period n %zu: host %d device %d\n", n, host_period(n, x), dp), fails++;
        }
      }
    }
  { /* blocks: xm, ym, xs, ys, M, dof */
    const size_t blocks[][6] = {{1, 1, 0, 0, 1, 1},   {7, 3, 2, 5, 20, 2},       {64, 48, 0, 0, 64, 2},
                                {255, 257, 13, 4, 300, 1}, {300, 218, 0, 0, 300, 3}, {0, 5, 0, 0, 9, 2}};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
      for (int p = 0; p < 5; p++) {
        const size_t *k = blocks[b];
        size_t        n = k[0] * k[1] * k[5], top = (k[1] / 2) * k[0] * k[5];
        uint64_t      h, d, lo, hi;
        fill(p, n, x);
        h = step_hash(k[0], k[1], k[2], k[3], k[4], k[5], x);
        if (vec_cuda_to_device(xd, x, n) || step_cuda_hash(k[0], k[1], k[2], k[3], k[4], k[5], xd, scratch, &d)) return 2;
        /* the block's rows split in two, as two ranks would hold them */
        lo = step_hash(k[0], k[1] / 2, k[2], k[3], k[4], k[5], x);
        hi = step_hash(k[0], k[1] - k[1] / 2, k[2], k[3] + k[1] / 2, k[4], k[5], x + top);
        cases++;
        if (h != d || lo + hi != h)
          printf("FAIL hash block %zu pattern %d: host %016llx device %016llx halves %016llx\n", b, p,
                 (unsigned long long)h, (unsigned long long)d, (unsigned long long)(lo + hi)),
            fails++;
      }
  }
  (void)vec_cuda_free(scratch), (void)vec_cuda_free(xd), free(x);
  if (fails) return 1;
  printf("PASS: %d scans, hashes and period tests, the host's bits\n", cases);
  return 0;
}
