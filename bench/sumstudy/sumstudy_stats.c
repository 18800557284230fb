/* bench/sumstudy/sumstudy_stats.c: what the study reports per (method,
 * distribution, N): the distribution of |V_s| over arrays x orders, and the
 * power-law fit max|V_s| = beta N^alpha across N. */
#include "sumstudy.h"

#include <math.h>
#include <stdlib.h>

static int cmp_abs(const void *a, const void *b)
{
  double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
  return (x > y) - (x < y);
}

/* Quantile q of sorted a[0..n) by linear interpolation between order
 * statistics (Hyndman-Fan type 7, numpy's default). */
static double quantile(int n, const double *a, double q)
{
  double h = q * (n - 1);
  int    i = (int)floor(h);
  if (i >= n - 1) return fabs(a[n - 1]);
  return fabs(a[i]) + (h - i) * (fabs(a[i + 1]) - fabs(a[i]));
}

void ss_summarize(int nv, double *vs, int orders, const double *sums, const double *refs, ss_summary *s)
{
  s->spread = NAN;
  if (orders > 1 && sums && refs) {
    s->spread = 0.0;
    for (int a = 0; a < nv / orders; a++) {
      double lo = sums[a * orders], hi = lo;
      for (int o = 1; o < orders; o++) {
        double v = sums[a * orders + o];
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
      }
      double r = (hi - lo) / fabs(refs[a]);
      if (r > s->spread) s->spread = r;
    }
  }
  int m = 0; /* drop undefined values (reference sum 0) */
  for (int i = 0; i < nv; i++)
    if (!isnan(vs[i])) vs[m++] = vs[i];
  s->samples = m, s->undefined = nv - m, s->zeros = 0;
  s->mean = s->mean_abs = 0.0;
  for (int i = 0; i < m; i++) {
    s->zeros += vs[i] == 0.0;
    s->mean += vs[i], s->mean_abs += fabs(vs[i]);
  }
  if (m == 0) {
    s->max = s->q50 = s->q90 = s->q99 = s->mean = s->mean_abs = NAN;
    return;
  }
  s->mean /= m, s->mean_abs /= m;
  qsort(vs, (size_t)m, sizeof *vs, cmp_abs);
  s->max = fabs(vs[m - 1]);
  s->q50 = quantile(m, vs, 0.5), s->q90 = quantile(m, vs, 0.9), s->q99 = quantile(m, vs, 0.99);
}

/* Least squares of log10 y on log10 n over the points with y > 0. Centred
 * sums, taken after subtracting the first point (so equal y give exactly
 * zero deviations): the one-pass sums (sxx - sx^2/m, ...) cancelled, and a
 * sum study whose max|V_s| was the same at every N (a GPU tree sum, one
 * rounding at every size) printed alpha -3.6e-15 and r2 -10.7. Without any
 * spread in y, alpha is 0 and r2 undefined (NaN, printed as null). */
void ss_fit_power(int np, const double *n, const double *y, ss_fit *f)
{
  double x0 = 0, y0 = 0, sx = 0, sy = 0;
  int    m = 0;
  f->nlo = f->nhi = NAN;
  for (int i = 0; i < np; i++) {
    if (!(y[i] > 0)) continue;
    if (m == 0) x0 = log10(n[i]), y0 = log10(y[i]);
    sx += log10(n[i]) - x0, sy += log10(y[i]) - y0, m++;
    if (m == 1 || n[i] < f->nlo) f->nlo = n[i];
    if (m == 1 || n[i] > f->nhi) f->nhi = n[i];
  }
  f->points = m;
  f->alpha = f->alpha_se = f->beta = f->r2 = NAN;
  if (m < 2) return;
  double mx = sx / m, my = sy / m, dxx = 0, dxy = 0, dyy = 0;
  for (int i = 0; i < np; i++) {
    if (!(y[i] > 0)) continue;
    double dx = log10(n[i]) - x0 - mx, dy = log10(y[i]) - y0 - my;
    dxx += dx * dx, dxy += dx * dy, dyy += dy * dy;
  }
  if (!(dxx > 0)) return;
  f->alpha = dxy / dxx;
  f->beta  = pow(10.0, y0 + my - f->alpha * (x0 + mx));
  double ssr = 0;
  for (int i = 0; i < np; i++) {
    if (!(y[i] > 0)) continue;
    double e = (log10(y[i]) - y0 - my) - f->alpha * (log10(n[i]) - x0 - mx);
    ssr += e * e;
  }
  f->r2 = dyy > 0 ? 1.0 - ssr / dyy : NAN;
  if (m > 2) f->alpha_se = sqrt(ssr / (m - 2) / dxx);
}
