/* tests/cudaemu/test_emu_couple.c: the coupled loop's batch kernels on the
 * emulated device (kernels/couple_cuda.h) against their host twins
 * (kernels/couple.h), bitwise: the stencil features of periodic and
 * zero-edge grids (odd shapes, 1 and 2 components, the point alone and the
 * 5-point stencil, a column block inside wider rows, whose other columns
 * must stay as they were), the training targets with and without the
 * subtracted field, the correction, the finite test, and the comparison of
 * two arrays (kernels/diff.h) against a loop written out here; on values over
 * many binades, with signed zeros, subnormals, infinities and NaNs, and
 * scales that overflow and underflow the floats. Prints the first
 * mismatches. */
#include "couple.h"
#include "couple_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* signs and magnitudes over 80 binades, and now and then a special value */
static double value(void)
{
  uint64_t h = next();
  switch (h % 64) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return INFINITY;
  case 3: return -INFINITY;
  case 4: return NAN;
  case 5: return 0x1p-1070; /* a double subnormal */
  default: return ldexp((double)((h >> 8) % 2000001) / 1e6 - 1.0, (int)((h >> 40) % 81) - 40);
  }
}

/* a device copy of h's bytes (h NULL: none, the emulation's NaN bytes) */
static void *dev(size_t bytes, const void *h)
{
  void *d;
  if (couple_cuda_alloc(&d, bytes) || (h && couple_cuda_to_device(d, h, bytes))) {
    printf("FAIL: device allocation or copy of %zu bytes\n", bytes);
    exit(1);
  }
  return d;
}

/* a and b bitwise (n elements of size sz), the first mismatches printed */
static void same(const char *what, const void *a, const void *b, size_t n, size_t sz)
{
  int shown = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz)) {
      if (shown++ < 3) {
        double x = sz == 4 ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = sz == 4 ? ((const float *)b)[i] : ((const double *)b)[i];
        printf("FAIL: %s: entry %zu: host %a, device %a\n", what, i, x, y);
      }
    }
  if (shown) fails++, printf("FAIL: %s: %d of %zu entries differ\n", what, shown, n);
}

/* couple_stencils_cpu on a ghosted copy (ghost width 1, wrapped or 0) of u
 * against couple_cuda_stencils on u itself */
static void stencils(int M, int N, int dof, int periodic, int nst, double is)
{
  size_t      w = (size_t)nst * dof, nin = 3 * w + 1, off = w + 1, n = (size_t)M * N * dof, gx = M + 2;
  double     *u = malloc(n * sizeof *u), *g = calloc(gx * (N + 2) * dof, sizeof *g);
  float      *fh = malloc((size_t)M * N * nin * sizeof *fh), *fd = malloc((size_t)M * N * nin * sizeof *fd);
  couple_grid grid = {0, 0, M, N, -1, -1, (int)gx, dof};
  char        what[128];

  for (size_t i = 0; i < n; i++) u[i] = value();
  for (int j = -1; j <= N; j++)
    for (int i = -1; i <= M; i++) {
      int inside = i >= 0 && i < M && j >= 0 && j < N;
      if (!inside && !periodic) continue;
      int ii = (i + M) % M, jj = (j + N) % N;
      for (int c = 0; c < dof; c++)
        g[((size_t)(j + 1) * gx + (size_t)(i + 1)) * dof + c] = u[((size_t)jj * M + ii) * dof + c];
    }
  for (size_t i = 0; i < (size_t)M * N * nin; i++) fh[i] = (float)i; /* the columns not written keep these */
  void *ud = dev(n * sizeof *u, u), *fdd = dev((size_t)M * N * nin * sizeof *fh, fh);
  couple_stencils_cpu(&grid, nst, nin, off, is, g, fh);
  if (couple_cuda_stencils(M, N, dof, periodic, nst, nin, off, is, (const double *)ud, (float *)fdd) ||
      couple_cuda_to_host(fd, fdd, (size_t)M * N * nin * sizeof *fd))
    fails++, printf("FAIL: stencils: a CUDA error\n");
  snprintf(what, sizeof what, "stencils %dx%d dof %d %s nst %d scale %a", M, N, dof,
           periodic ? "periodic" : "zero edge", nst, is);
  same(what, fh, fd, (size_t)M * N * nin, sizeof *fh);
  couple_cuda_free(ud), couple_cuda_free(fdd);
  free(u), free(g), free(fh), free(fd);
}

/* targets (with and without b), the correction, for n values and scale s */
static void pointwise(size_t n, double s)
{
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *zh = malloc(n * sizeof *zh);
  double *zd = malloc(n * sizeof *zd);
  float  *th = malloc(n * sizeof *th), *td = malloc(n * sizeof *td), *o = malloc(n * sizeof *o);
  char    what[96];

  for (size_t i = 0; i < n; i++) a[i] = value(), b[i] = value(), o[i] = (float)value();
  void *ad = dev(n * sizeof *a, a), *bd = dev(n * sizeof *b, b), *od = dev(n * sizeof *o, o);
  void *td_ = dev(n * sizeof *th, NULL), *zd_ = dev(n * sizeof *zh, NULL);
  for (int withb = 0; withb < 2; withb++) {
    couple_target_cpu(n, a, withb ? b : NULL, s, th);
    if (couple_cuda_target(n, (const double *)ad, withb ? (const double *)bd : NULL, s, (float *)td_) ||
        couple_cuda_to_host(td, td_, n * sizeof *td))
      fails++, printf("FAIL: target: a CUDA error\n");
    snprintf(what, sizeof what, "target%s n %zu scale %a", withb ? " (a - b)" : "", n, s);
    same(what, th, td, n, sizeof *th);
  }
  couple_correction_cpu(n, s, o, zh);
  if (couple_cuda_correction(n, s, (const float *)od, (double *)zd_) || couple_cuda_to_host(zd, zd_, n * sizeof *zd))
    fails++, printf("FAIL: correction: a CUDA error\n");
  snprintf(what, sizeof what, "correction n %zu scale %a", n, s);
  same(what, zh, zd, n, sizeof *zh);
  couple_cuda_free(ad), couple_cuda_free(bd), couple_cuda_free(od), couple_cuda_free(td_), couple_cuda_free(zd_);
  free(a), free(b), free(zh), free(zd), free(th), free(td), free(o);
}

/* the finite test of n floats, finite but for entry bad (none if bad >= n) of value v */
static void nonfinite(size_t n, size_t bad, float v, int *flag)
{
  float *x = malloc((n ? n : 1) * sizeof *x);
  int    h, d = -1;

  for (size_t i = 0; i < n; i++) x[i] = (float)ldexp(1.0 + (double)(next() % 1000) / 1000, (int)(next() % 250) - 125);
  if (bad < n) x[bad] = v;
  void *xd = dev(n * sizeof *x, x);
  h = couple_nonfinite_cpu(n, x);
  if (couple_cuda_nonfinite(n, (const float *)xd, flag, &d)) fails++, printf("FAIL: nonfinite: a CUDA error\n");
  if (h != d || h != (bad < n && !isfinite(v)))
    fails++, printf("FAIL: nonfinite n %zu, entry %zu = %a: host %d, device %d\n", n, bad, (double)v, h, d);
  couple_cuda_free(xd);
  free(x);
}

/* The comparison of a with b as metrics.h defines it, block by block of
 * DIFF_BLOCK in index order, the blocks added in order: written out here, not
 * through diff.h, so that a slip in the shared code shows. */
static diff_acc diff_reference(size_t n, const double *a, const double *b)
{
  diff_acc t = {0, 0, 0, 0, 0, 0, 0};
  for (size_t k0 = 0; k0 < n; k0 += DIFF_BLOCK) {
    double s[5] = {0}, mx = 0, mu = 0;
    for (size_t i = k0; i < n && i < k0 + DIFF_BLOCK; i++) {
      double d = fabs(a[i] - b[i]);
      s[0] += 1, s[1] += memcmp(&a[i], &b[i], sizeof *a) != 0;
      s[2] += a[i] != 0 ? d / fabs(a[i]) : (b[i] != 0 || isnan(b[i]));
      s[3] += d * d, s[4] += a[i] * a[i];
      if (!isnan(mx) && !(d <= mx)) mx = d;
      int64_t ka, kb;
      memcpy(&ka, &a[i], 8), memcpy(&kb, &b[i], 8);
      ka = ka < 0 ? INT64_MIN - ka : ka, kb = kb < 0 ? INT64_MIN - kb : kb;
      double u = isnan(a[i]) || isnan(b[i]) ? (double)UINT64_MAX : (double)(ka > kb ? (uint64_t)ka - (uint64_t)kb
                                                                                       : (uint64_t)kb - (uint64_t)ka);
      if (u > mu) mu = u;
    }
    t.n += s[0], t.ndiff += s[1], t.sum_rel += s[2], t.sum_d2 += s[3], t.sum_a2 += s[4];
    if (!isnan(t.max_abs) && !(mx <= t.max_abs)) t.max_abs = mx;
    if (mu > t.max_ulp) t.max_ulp = mu;
  }
  return t;
}

/* n values a, and b: a changed in about one entry in `every` (by two ulps,
 * or by 0.1%), with specials planted in both when `specials` */
static void diffs(size_t n, unsigned every, int specials)
{
  double  *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
  diff_acc h, d = {0, 0, 0, 0, 0, 0, 0};
  char     what[96];

  for (size_t i = 0; i < n; i++) {
    a[i] = ldexp((double)(next() % 2000001) / 1e6 - 1.0, (int)(next() % 41) - 20);
    if (specials && next() % 97 == 0) a[i] = value();
    uint64_t h = next();
    double c   = specials ? value() : 1.001 * a[i];
    b[i]       = h % every ? a[i] : h % 3 ? nextafter(nextafter(a[i], INFINITY), INFINITY) : c;
  }
  void *ad = dev(n * sizeof *a, a), *bd = dev(n * sizeof *b, b);
  h = diff_reference(n, a, b);
  if (couple_cuda_diff(n, (const double *)ad, (const double *)bd, &d)) fails++, printf("FAIL: diff: a CUDA error\n");
  snprintf(what, sizeof what, "diff n %zu every %u%s (n ndiff sum_rel sum_d2 sum_a2 max_abs max_ulp)", n, every,
           specials ? " specials" : "");
  /* a NaN's sign and payload are the hardware's (x86's default NaN is negative, CUDA's positive): NaN is NaN */
  double *ph = &h.n, *pd = &d.n;
  for (size_t k = 0; k < sizeof h / sizeof(double); k++)
    if (isnan(ph[k]) && isnan(pd[k])) ph[k] = pd[k] = NAN;
  same(what, &h, &d, sizeof h / sizeof(double), sizeof(double));
  couple_cuda_free(ad), couple_cuda_free(bd);
  free(a), free(b);
}

int main(void)
{
  static const int shapes[][2] = {{7, 5}, {1, 3}, {3, 1}, {33, 17}, {64, 48}};
  const double     scales[]    = {1.0, 1.0 / 3.7e-3, 0x1p+200, 0x1p-160};
  /* and a scale whose reciprocal overflows: a quotient is not a product by it */
  const double     tscales[]   = {1.0, 3.7e-3, 0x1p+200, 0x1p-160, 0x1p-1060};
  int             *flag;

  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    for (int dof = 1; dof <= 2; dof++)
      for (int periodic = 0; periodic < 2; periodic++)
        for (int nst = 1; nst <= COUPLE_NST; nst += COUPLE_NST - 1)
          for (size_t q = 0; q < sizeof scales / sizeof scales[0]; q++)
            stencils(shapes[k][0], shapes[k][1], dof, periodic, nst, scales[q]);
  for (size_t q = 0; q < sizeof tscales / sizeof tscales[0]; q++) {
    pointwise(1, tscales[q]);
    pointwise(9001, tscales[q]);
  }
  if (couple_cuda_alloc((void **)&flag, sizeof *flag)) return printf("FAIL: device allocation\n"), 1;
  nonfinite(0, 0, 0.0f, flag);
  nonfinite(1000, 1000, 0.0f, flag);
  nonfinite(1000, 999, NAN, flag);
  nonfinite(5, 0, INFINITY, flag);
  nonfinite(70000, 31337, -INFINITY, flag);
  nonfinite(257, 3, 0x1p-149f, flag); /* a subnormal is finite */
  couple_cuda_free(flag);
  static const size_t dn[] = {0, 1, DIFF_BLOCK - 1, DIFF_BLOCK, DIFF_BLOCK + 1, 70001};
  for (size_t k = 0; k < sizeof dn / sizeof *dn; k++)
    for (int sp = 0; sp < 2; sp++) {
      diffs(dn[k], 7, sp);
      diffs(dn[k], 1, sp);
    }
  printf("%s: the batch kernels on the device %s the host's bits\n", fails ? "FAIL" : "PASS",
         fails ? "do not give" : "give");
  return fails != 0;
}
