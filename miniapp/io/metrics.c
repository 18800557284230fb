/* miniapp/io/metrics.c: see metrics.h for the definitions. */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void metrics_reset(metrics_acc *acc) { memset(acc, 0, sizeof *acc); }

uint64_t metrics_ulp_distance(double a, double b) { return diff_ulp(a, b); }

/* In blocks, as the device's couple_cuda_diff: the same bits on both. */
void metrics_add(metrics_acc *acc, size_t n, const double *a, const double *b)
{
  for (size_t k = 0; k * DIFF_BLOCK < n; k++) {
    diff_acc blk = diff_block(n, a, b, k);
    diff_merge(acc, &blk);
  }
}

void metrics_addf(metrics_acc *acc, size_t n, const float *a, const float *b)
{
  for (size_t i = 0; i < n; i++) /* ULPs of float: the double distance scaled by 2^-29 */
    diff_add(acc, a[i], b[i], !memcmp(&a[i], &b[i], sizeof *a), ldexp((double)diff_ulp(a[i], b[i]), -29));
}

void metrics_merge(metrics_acc *into, const metrics_acc *from) { diff_merge(into, from); }

double metrics_digits(double rel)
{
  if (isnan(rel)) return 0;
  if (rel <= 0) return METRICS_DIGITS_MAX;
  double d = -log10(rel);
  return d > METRICS_DIGITS_MAX ? METRICS_DIGITS_MAX : d;
}

void metrics_finish(const metrics_acc *acc, metrics_t *m)
{
  double D = acc->n > 0 ? acc->n : 1;
  m->vc      = acc->ndiff / D;
  m->vermv   = acc->sum_rel / D;
  m->rel_l2  = acc->sum_a2 > 0 ? sqrt(acc->sum_d2 / acc->sum_a2) : sqrt(acc->sum_d2);
  m->max_abs = acc->max_abs;
  m->max_ulp = acc->max_ulp;
  m->digits  = acc->ndiff == 0 ? METRICS_DIGITS_MAX : metrics_digits(m->rel_l2);
}

double metrics_vs(double a, double b)
{
  if (a == b) return 0;
  return 1 - fabs(b / a);
}

size_t metrics_churn_count(size_t n, int n_out, const float *a, const float *b, const double *scale, double tol)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < n_out; k++) {
      double x = a[i * n_out + k], y = b[i * n_out + k];
      if (!(fabs(x - y) <= tol * scale[k])) { /* NaN counts as churn */
        c++;
        break;
      }
    }
  return c;
}

/* One candidate window x[0..m), y = log10(rel): its line (slope and value at
 * the window's middle xm, in units of the half width h) and the parabola's
 * slopes at its two ends, from the sums over u = (x - xm) / h in [-1, 1]. */
typedef struct {
  double xm, h, c0, c1, end0, end1;
} window_fit;

static int fit_window(size_t m, const double *x, const double *y, window_fit *w)
{
  double s[5] = {0}, t[3] = {0};
  w->xm = 0.5 * (x[0] + x[m - 1]), w->h = 0.5 * (x[m - 1] - x[0]);
  if (!(w->h > 0)) return 0;
  for (size_t k = 0; k < m; k++) {
    double u = (x[k] - w->xm) / w->h, u2 = u * u;
    s[0] += 1, s[1] += u, s[2] += u2, s[3] += u2 * u, s[4] += u2 * u2;
    t[0] += y[k], t[1] += u * y[k], t[2] += u2 * y[k];
  }
  double dl = s[0] * s[2] - s[1] * s[1];
  if (!(dl > 0)) return 0;
  w->c1 = (s[0] * t[1] - s[1] * t[0]) / dl, w->c0 = (t[0] - w->c1 * s[1]) / s[0];
  /* the parabola q0 + q1 u + q2 u^2 by Cramer's rule on its normal equations */
  double a[3][3] = {{s[0], s[1], s[2]}, {s[1], s[2], s[3]}, {s[2], s[3], s[4]}}, det = 0, d1 = 0, d2 = 0;
  for (int r = 0; r < 3; r++) {
    int r1 = (r + 1) % 3, r2 = (r + 2) % 3;
    det += a[0][r] * (a[1][r1] * a[2][r2] - a[1][r2] * a[2][r1]);
  }
  /* columns 1 and 2 replaced by t (the system is symmetric) */
  d1 = a[0][0] * (t[1] * a[2][2] - a[1][2] * t[2]) - t[0] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
       a[0][2] * (a[1][0] * t[2] - t[1] * a[2][0]);
  d2 = a[0][0] * (a[1][1] * t[2] - t[1] * a[2][1]) - a[0][1] * (a[1][0] * t[2] - t[1] * a[2][0]) +
       t[0] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  if (!(det != 0)) return 0;
  w->end0 = (d1 - 2 * d2) / det, w->end1 = (d1 + 2 * d2) / det;
  return 1;
}

/* How far a window got through the conditions of metrics.h, in order. */
enum { W_SHORT, W_FLAT, W_BENT, W_SPREAD, W_OK };

static int judge(size_t m, const double *x, const double *y, window_fit *w)
{
  if (m < METRICS_GROWTH_POINTS || !fit_window(m, x, y, w)) return W_SHORT;
  if (!(2 * w->c1 >= METRICS_GROWTH_DECADES)) return W_FLAT; /* the rise along the line, u from -1 to 1 */
  double lo = fmin(w->end0, w->end1), hi = fmax(w->end0, w->end1);
  if (!(lo > 0 && hi <= METRICS_GROWTH_STEADY * lo)) return W_BENT;
  for (size_t k = 0; k < m; k++)
    if (!(fabs(y[k] - (w->c0 + w->c1 * (x[k] - w->xm) / w->h)) <= METRICS_GROWTH_SPREAD)) return W_SPREAD;
  return W_OK;
}

double metrics_growth(size_t n, const double *step, const double *rel, double floor, metrics_growth_t *g)
{
  static const char *const why[] = {"too few points", "rises under 2 decades", "rate not steady",
                                    "points off its line"};
  size_t i, first = n, end;

  g->rate = g->efold = g->icpt = NAN, g->from = g->to = -1, g->points = 0, g->why = NULL;
  for (i = 0; i < n && !(rel[i] > 0 && isfinite(rel[i])); i++) {}
  if (i == n) return g->why = "no difference", NAN;
  /* the window holds no point below the floor */
  for (end = i; end < n && isfinite(rel[end]) && rel[end] < METRICS_SATURATION; end++) if (rel[end] < floor) first = n;
    else if (first == n && rel[end] > 0) first = end;
  if (end == i) return g->why = "saturated", NAN;
  if (first == n) return g->why = "below the floor", NAN; /* its last points, at least */
  size_t m = 0;
  double *x = first < end ? malloc(2 * (end - first) * sizeof *x) : NULL, *y = x ? x + (end - first) : NULL;
  if (first < end && !x) return g->why = "out of memory", NAN;
  for (i = first; i < end; i++)
    if (rel[i] > 0) x[m] = step[i], y[m] = log10(rel[i]), m++;
  int best = W_SHORT;
  window_fit w;
  for (size_t a = 0; a + METRICS_GROWTH_POINTS <= m; a++) { /* the longest window first */
    int v = judge(m - a, x + a, y + a, &w);
    if (v > best) best = v;
    if (v == W_OK) {
      g->rate = w.c1 / w.h, g->icpt = w.c0 - g->rate * w.xm;
      g->from = x[a], g->to = x[m - 1], g->points = m - a;
      g->efold = 1.0 / (g->rate * log(10.0));
      break;
    }
  }
  free(x);
  if (best != W_OK) g->why = why[best];
  return g->rate;
}
