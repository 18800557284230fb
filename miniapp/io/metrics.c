/* miniapp/io/metrics.c: see metrics.h for the definitions. */
#include "metrics.h"

#include <math.h>
#include <string.h>

void metrics_reset(metrics_acc *acc) { memset(acc, 0, sizeof *acc); }

/* Doubles ordered as integers: adjacent doubles differ by 1, +0 and -0 by 0. */
static int64_t ordered(double x)
{
  int64_t k;
  memcpy(&k, &x, sizeof k);
  return k < 0 ? INT64_MIN - k : k;
}

uint64_t metrics_ulp_distance(double a, double b)
{
  if (isnan(a) || isnan(b)) return UINT64_MAX;
  int64_t ka = ordered(a), kb = ordered(b);
  return ka > kb ? (uint64_t)ka - (uint64_t)kb : (uint64_t)kb - (uint64_t)ka;
}

static void add_one(metrics_acc *acc, double a, double b, int same_bits, double ulp)
{
  double d = fabs(a - b);
  acc->n += 1;
  if (!same_bits) acc->ndiff += 1;
  if (a != 0) acc->sum_rel += d / fabs(a);
  else if (b != 0 || isnan(b)) acc->sum_rel += 1;
  acc->sum_d2 += d * d;
  acc->sum_a2 += a * a;
  if (!isnan(acc->max_abs) && !(d <= acc->max_abs)) acc->max_abs = d; /* a NaN stays once seen */
  if (ulp > acc->max_ulp) acc->max_ulp = ulp;
}

void metrics_add(metrics_acc *acc, size_t n, const double *a, const double *b)
{
  for (size_t i = 0; i < n; i++) add_one(acc, a[i], b[i], !memcmp(&a[i], &b[i], sizeof *a), (double)metrics_ulp_distance(a[i], b[i]));
}

void metrics_addf(metrics_acc *acc, size_t n, const float *a, const float *b)
{
  for (size_t i = 0; i < n; i++) /* ULPs of float: the double distance scaled by 2^-29 */
    add_one(acc, a[i], b[i], !memcmp(&a[i], &b[i], sizeof *a), ldexp((double)metrics_ulp_distance(a[i], b[i]), -29));
}

void metrics_merge(metrics_acc *into, const metrics_acc *from)
{
  into->n += from->n, into->ndiff += from->ndiff, into->sum_rel += from->sum_rel;
  into->sum_d2 += from->sum_d2, into->sum_a2 += from->sum_a2;
  if (!isnan(into->max_abs) && !(from->max_abs <= into->max_abs)) into->max_abs = from->max_abs;
  if (from->max_ulp > into->max_ulp) into->max_ulp = from->max_ulp;
}

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

/* The exponential window: from the first point at least 100 times the first
 * nonzero value (past the jump to the noise floor a run starts with) up to,
 * not including, the first point at METRICS_SATURATION or more (the fields
 * differ visibly: growth stops being exponential). */
double metrics_growth(size_t n, const double *step, const double *rel, metrics_growth_t *g)
{
  double first = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, np = 0, ymin = INFINITY, ymax = -INFINITY;
  size_t i;

  g->rate = g->efold = NAN, g->from = g->to = -1, g->points = 0;
  for (i = 0; i < n && !(rel[i] > 0 && isfinite(rel[i])); i++) {}
  if (i == n) return NAN;
  first = rel[i];
  for (; i < n && !(rel[i] >= 100 * first); i++) {}
  if (i == n) return NAN; /* never 100x its first difference */
  size_t end = i, top = i; /* the window ends at its largest value: a difference that rose and decayed again (it fitted the decay too: a negative rate) */
  for (; end < n && isfinite(rel[end]) && rel[end] < METRICS_SATURATION; end++)
    if (rel[end] > rel[top]) top = end;
  size_t stop = end < n && isfinite(rel[end]) ? end : top + 1; /* saturated: every point below it */
  for (; i < stop; i++) {
    if (!(rel[i] > 0)) continue;
    double x = step[i], y = log10(rel[i]);
    if (g->from < 0) g->from = step[i];
    g->to = step[i];
    sx += x, sy += y, sxx += x * x, sxy += x * y, np += 1;
    ymin = fmin(ymin, y), ymax = fmax(ymax, y);
  }
  g->points = (size_t)np;
  double den = np * sxx - sx * sx;
  if (np < 5 || ymax - ymin < 2 || den == 0) return NAN; /* no exponential window seen */
  if (!(np * sxy - sx * sy > 0)) return NAN; /* not growing (its window ends at its largest value) */
  g->rate  = (np * sxy - sx * sy) / den;
  g->efold = g->rate > 0 ? 1.0 / (g->rate * log(10.0)) : NAN;
  return g->rate;
}
