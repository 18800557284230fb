/* miniapp/io/metrics.h: the observation metrics of ../docs/metrics.md, comparing
 * a run B against a reference run A value by value. Plain C (no PETSc, no
 * MPI): the driver accumulates on each rank and merges the accumulators
 * across ranks; miniapp-compare uses the same code on whole fields.
 *
 *   V_c      = (1/D) #{i : A_i != B_i, compared bitwise}
 *   V_ermv   = (1/D) sum_i |A_i - B_i| / |A_i|   (term = 1 when A_i == 0 != B_i)
 *   rel_l2   = ||A - B||_2 / ||A||_2              (= ||B|| when ||A|| == 0)
 *   max_abs  = max_i |A_i - B_i|
 *   max_ulp  = max_i (distance of A_i and B_i in units in the last place)
 *   digits   = -log10(rel_l2), capped at METRICS_DIGITS_MAX (bitwise equal)
 *   V_s      = 1 - |s_B / s_A| for scalars (loss, residual norm)
 *   churn    = fraction of points whose prediction differs by more than
 *              tol * RMS_k in any output component k, RMS_k the root mean
 *              square of the reference's output k over all points */
#ifndef MINIAPP_METRICS_H
#define MINIAPP_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include "diff.h"

#define METRICS_DIGITS_MAX 17.0 /* reported when the runs agree bitwise */

typedef diff_acc metrics_acc; /* n, ndiff, sum_rel, sum_d2, sum_a2, max_abs, max_ulp */

typedef struct {
  double vc, vermv, rel_l2, max_abs, max_ulp, digits;
} metrics_t;

#define METRICS_NSUM 5 /* n .. sum_a2 merge by sum, the last two by max */

void     metrics_reset(metrics_acc *acc);
void     metrics_add(metrics_acc *acc, size_t n, const double *a, const double *b);
void     metrics_addf(metrics_acc *acc, size_t n, const float *a, const float *b);
void     metrics_merge(metrics_acc *into, const metrics_acc *from);
void     metrics_finish(const metrics_acc *acc, metrics_t *m);
uint64_t metrics_ulp_distance(double a, double b);  /* NaN involved: UINT64_MAX */
double   metrics_digits(double rel);                /* -log10(rel), capped */
double   metrics_vs(double a, double b);            /* V_s = 1 - |b / a| */
/* Growth of a difference series rel[i] at step[i] (e.g. rel_l2 between two
 * runs; docs/metrics.md, "growth rate"): the least-squares line of log10(rel)
 * against the step over the longest window that is one exponential. The
 * window ends where the record ends, at the last point before the first one
 * at METRICS_SATURATION or more (or not finite): a forecast needs the rate the
 * record ends with. It holds no point below floor (the summary passes the
 * Krylov tolerance of runs coupled through a learned guess: below it the
 * difference climbs from rounding level to where the solves stop, a rise the
 * dynamics do not continue; 0: every point). It must have at least
 * METRICS_GROWTH_POINTS points, rise METRICS_GROWTH_DECADES along its line,
 * grow steadily (the least-squares parabola's slopes at its two ends
 * positive and within a factor METRICS_GROWTH_STEADY: a bend, such as a fast
 * rise followed by a slow one, fails) and keep every point within
 * METRICS_GROWTH_SPREAD decades of its line. Returns the rate in decades per
 * step, NaN with g->why (a static string) when no window qualifies. */
#define METRICS_SATURATION     1e-2
#define METRICS_GROWTH_POINTS  8
#define METRICS_GROWTH_DECADES 2.0
#define METRICS_GROWTH_STEADY  2.0
#define METRICS_GROWTH_SPREAD  1.0
typedef struct {
  double      rate, efold, icpt; /* decades/step, steps, the line's log10(rel) at step 0 */
  double      from, to;          /* the window's first and last step (-1: none) */
  size_t      points;
  const char *why; /* NULL when measured, else which condition no window met */
} metrics_growth_t;
double metrics_growth(size_t n, const double *step, const double *rel, double floor, metrics_growth_t *g);
/* Number of the n points (n_out values each) whose predictions churn: some
 * output k moved by more than tol * scale[k] (the caller passes the RMS of
 * the reference's output k over all points, so that near-zero background
 * outputs do not count every last-bit change as churn). */
size_t metrics_churn_count(size_t n, int n_out, const float *a, const float *b, const double *scale, double tol);

#endif
