/* tests/surrogate/test_rowmax.c: the row maxima that the forward and
 * back-data kernels leave for the reproducible gradient sums
 * (surrogate/layers_cpu.c, lanes) equal gsum_absmax over the rows they wrote,
 * bitwise, over the chunk's first m samples only: chunk lengths that are and
 * are not multiples of 16 and 8, rows in tiles of 4 and alone, the largest
 * value in the last partial tile, padding columns that would be larger,
 * rows holding an Inf or a NaN, and all-zero rows. The kernels' outputs are
 * bitwise the same with and without lanes. No PETSc objects. */
#include "surrogate_impl.h"
#include "hashrng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float lanes_max(const uint32_t *lanes) /* a row's maximum, as GradEnd reads it */
{
  uint32_t b = 0;
  for (int t = 0; t < 8; t++) b = lanes[t] > b ? lanes[t] : b;
  if (b >= 0x7f800000u) return INFINITY;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static int check_rows(const char *what, size_t rows, const float *out, size_t cap, size_t m, const uint32_t *lanes)
{
  int bad = 0;
  for (size_t r = 0; r < rows; r++) {
    float want = gsum_absmax(m, out + r * cap), got = lanes_max(lanes + 8 * r);
    if (memcmp(&want, &got, sizeof want) != 0) {
      if (bad++ < 3) printf("FAIL %s m %zu row %zu: lanes %a, gsum_absmax %a\n", what, m, r, (double)got, (double)want);
    }
  }
  return bad;
}

int main(void)
{
  const size_t ms[]  = {1, 7, 8, 15, 16, 17, 100, 1000, 1023, SURR_CHUNK};
  const size_t dims[][2] = {{5, 32}, {32, 32}, {32, 1}, {3, 7}, {4, 4}, {1, 5}};
  int          fails = 0, cases = 0;
  uint64_t     key = 1;

  for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
    for (size_t b = 0; b < sizeof dims / sizeof *dims; b++)
      for (int kind = 0; kind < 4; kind++) { /* 0 plain, 1 max in the tail, 2 an Inf and a NaN, 3 zero weights */
        size_t m = ms[a], m16 = (m + 15) / 16 * 16, cap = m16 + 16, din = dims[b][0], dout = dims[b][1];
        float *W = malloc(din * dout * sizeof *W), *bias = malloc(dout * sizeof *bias);
        float *in = malloc(din * cap * sizeof *in), *out = malloc(dout * cap * sizeof *out), *out2 = malloc(dout * cap * sizeof *out2);
        float *d = malloc(dout * cap * sizeof *d), *dp = malloc(din * cap * sizeof *dp), *dp2 = malloc(din * cap * sizeof *dp2);
        uint32_t *lf = malloc(dout * 8 * sizeof *lf), *lb = malloc(din * 8 * sizeof *lb);
        for (size_t i = 0; i < din * dout; i++) W[i] = kind == 3 ? 0.0f : (float)(rng_uniform(key, i) - 0.5);
        for (size_t j = 0; j < dout; j++) bias[j] = kind == 3 ? 0.0f : (float)(rng_uniform(key + 1, j) - 0.5);
        for (size_t i = 0; i < din * cap; i++) /* exponents over 60 binades; the padding (s >= m) far larger */
          in[i] = i % cap < m ? (float)((rng_uniform(key + 2, i) - 0.4) * exp2(60 * rng_uniform(key + 3, i) - 30)) : 1e30f;
        for (size_t i = 0; i < dout * cap; i++) d[i] = i % cap < m ? (float)((rng_uniform(key + 4, i) - 0.5) * exp2(40 * rng_uniform(key + 5, i) - 20)) : -1e30f;
        if (kind == 1) /* every row's largest value at its last sample */
          for (size_t k = 0; k < din; k++) in[k * cap + m - 1] = 1e20f;
        if (kind == 2 && m > 2) in[0 * cap + m / 2] = INFINITY, d[(dout - 1) * cap + m - 1] = NAN;
        key += 16;

        SurrogateLayerForward_CPU(W, bias, din, dout, in, out, cap, m16, 1, m, lf);
        SurrogateLayerForward_CPU(W, bias, din, dout, in, out2, cap, m16, 1, 0, NULL);
        SurrogateLayerBackData_CPU(W, din, dout, d, in, dp, cap, m16, m, lb);
        SurrogateLayerBackData_CPU(W, din, dout, d, in, dp2, cap, m16, 0, NULL);
        char what[64];
        snprintf(what, sizeof what, "forward %zux%zu kind %d", din, dout, kind);
        fails += check_rows(what, dout, out, cap, m, lf);
        snprintf(what, sizeof what, "back-data %zux%zu kind %d", din, dout, kind);
        fails += check_rows(what, din, dp, cap, m, lb);
        for (size_t r = 0; r < dout; r++) fails += memcmp(out + r * cap, out2 + r * cap, m16 * sizeof *out) != 0;
        for (size_t r = 0; r < din; r++) fails += memcmp(dp + r * cap, dp2 + r * cap, m16 * sizeof *dp) != 0;
        SurrogateGradNoteRows_CPU(lb, din, in, m, cap); /* the plain pass over the inputs */
        snprintf(what, sizeof what, "note rows %zu kind %d", din, kind);
        fails += check_rows(what, din, in, cap, m, lb);
        cases++;
        free(W), free(bias), free(in), free(out), free(out2), free(d), free(dp), free(dp2), free(lf), free(lb);
      }
  printf("%d cases: %s\n", cases, fails ? "FAILED" : "the kernels' row maxima equal gsum_absmax over the first m samples");
  return fails != 0;
}
