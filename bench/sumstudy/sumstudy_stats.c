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

void ss_fit_power(int np, const double *n, const double *y, ss_fit *f)
{
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int    m  = 0;
  f->nlo = f->nhi = NAN;
  for (int i = 0; i < np; i++) {
    if (!(y[i] > 0)) continue;
    double lx = log10(n[i]), ly = log10(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m++;
    if (m == 1 || n[i] < f->nlo) f->nlo = n[i];
    if (m == 1 || n[i] > f->nhi) f->nhi = n[i];
  }
  f->points = m;
  f->alpha = f->alpha_se = f->beta = f->r2 = NAN;
  double dxx = sxx - sx * sx / (m ? m : 1);
  if (m < 2 || !(dxx > 0)) return;
  f->alpha    = (sxy - sx * sy / m) / dxx;
  double b0   = (sy - f->alpha * sx) / m;
  f->beta     = pow(10.0, b0);
  double ssr = 0, sst = 0, my = sy / m;
  for (int i = 0; i < np; i++) {
    if (!(y[i] > 0)) continue;
    double lx = log10(n[i]), ly = log10(y[i]), e = ly - (b0 + f->alpha * lx);
    ssr += e * e, sst += (ly - my) * (ly - my);
  }
  f->r2 = sst > 0 ? 1.0 - ssr / sst : NAN;
  if (m > 2) f->alpha_se = sqrt(ssr / (m - 2) / dxx);
}
