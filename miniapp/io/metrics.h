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

#define METRICS_DIGITS_MAX 17.0 /* reported when the runs agree bitwise */

typedef struct {
  double n, ndiff, sum_rel, sum_d2, sum_a2, max_abs, max_ulp; /* counts as doubles: exact to 2^53 */
} metrics_acc;

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
 * runs): least-squares slope of log10(rel) on step over its exponential
 * window only (metrics.c says which points), in decades per step, with the
 * e-folding time in steps. NaN when there is no window of at least 5 points
 * spanning 2 decades: a jump to a noise floor, or a flat difference, is not
 * exponential growth. */
#define METRICS_SATURATION 1e-2
typedef struct {
  double rate, efold, from, to; /* decades/step, steps; the window's first and last step (-1: none) */
  size_t points;
} metrics_growth_t;
double metrics_growth(size_t n, const double *step, const double *rel, metrics_growth_t *g);
/* Number of the n points (n_out values each) whose predictions churn: some
 * output k moved by more than tol * scale[k] (the caller passes the RMS of
 * the reference's output k over all points, so that near-zero background
 * outputs do not count every last-bit change as churn). */
size_t metrics_churn_count(size_t n, int n_out, const float *a, const float *b, const double *scale, double tol);

#endif
