/* tests/output/test_metrics.c: miniapp/io/metrics.c against values computed by
 * hand (in the comments). Exact where the arithmetic is exact; otherwise the
 * stated relative tolerance. Prints every failed check; exit 1 if any. */
#include "metrics.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int nfail;

#define CHECK(cond) do { if (!(cond)) { nfail++; printf("FAIL line %d: %s\n", __LINE__, #cond); } } while (0)

static void near(double got, double want, double rtol, const char *what, int line)
{
  if (!(fabs(got - want) <= rtol * fabs(want)) && !(got == want)) {
    nfail++;
    printf("FAIL line %d: %s = %.17g, want %.17g (rtol %g)\n", line, what, got, want, rtol);
  }
}
#define NEAR(got, want, rtol) near(got, want, rtol, #got, __LINE__)

int main(void)
{
  /* The four-value case: index 1 differs by 0.5, index 2 is -0 vs +0 (bits
   * differ, values equal), index 3 is 4 vs the next double (1 ulp = 2^-50). */
  const double a[4] = {1, 2, -0.0, 4}, b[4] = {1, 2.5, 0.0, nextafter(4.0, 5.0)};
  metrics_acc acc;
  metrics_t   m;
  metrics_reset(&acc);
  metrics_add(&acc, 4, a, b);
  metrics_finish(&acc, &m);
  CHECK(m.vc == 0.75);                               /* 3 of 4 differ bitwise, -0 vs +0 included */
  CHECK(m.vermv == (0.25 + 0x1p-52) / 4);            /* (0 + 0.5/2 + 0 + 2^-50/4) / 4, exact */
  NEAR(m.rel_l2, 0.5 / sqrt(21.0), 1e-15);           /* sqrt((0.25 + 2^-100) / (1 + 4 + 0 + 16)) */
  CHECK(m.max_abs == 0.5);
  CHECK(m.max_ulp == 0x1p50);                        /* 0.5 / ulp(2) = 0.5 / 2^-51 */
  NEAR(m.digits, -log10(0.5 / sqrt(21.0)), 1e-15);   /* 0.96213... */

  /* Identical runs: 17 digits, nothing differs. */
  metrics_reset(&acc);
  metrics_add(&acc, 4, a, a);
  metrics_finish(&acc, &m);
  CHECK(m.vc == 0 && m.vermv == 0 && m.rel_l2 == 0 && m.max_abs == 0 && m.max_ulp == 0);
  CHECK(m.digits == METRICS_DIGITS_MAX && METRICS_DIGITS_MAX == 17);

  /* Only -0 vs +0: bits differ (V_c = 1) but the values agree (17 digits). */
  const double mz = -0.0, pz = 0.0;
  metrics_reset(&acc);
  metrics_add(&acc, 1, &mz, &pz);
  metrics_finish(&acc, &m);
  CHECK(m.vc == 1 && m.rel_l2 == 0 && m.max_ulp == 0 && m.digits == 17);

  /* A reference of zeros: V_ermv counts each nonzero B value as 1, rel_l2 is ||B||. */
  const double z[2] = {0, 0}, zb[2] = {3, 4};
  metrics_reset(&acc);
  metrics_add(&acc, 2, z, zb);
  metrics_finish(&acc, &m);
  CHECK(m.vermv == 1 && m.rel_l2 == 5 && m.max_abs == 4);

  /* ULP distances, across zero and with NaN. */
  CHECK(metrics_ulp_distance(1.0, 1.0) == 0);
  CHECK(metrics_ulp_distance(1.0, nextafter(1.0, 2.0)) == 1);
  CHECK(metrics_ulp_distance(nextafter(1.0, 0.0), nextafter(1.0, 2.0)) == 2); /* across a binade */
  CHECK(metrics_ulp_distance(-0.0, 0.0) == 0);
  CHECK(metrics_ulp_distance(-DBL_TRUE_MIN, DBL_TRUE_MIN) == 2);              /* across zero */
  CHECK(metrics_ulp_distance(DBL_TRUE_MIN, -DBL_TRUE_MIN) == 2);              /* symmetric */
  CHECK(metrics_ulp_distance(-1.0, 1.0) == 2 * UINT64_C(0x3FF0000000000000));
  CHECK(metrics_ulp_distance(DBL_MAX, INFINITY) == 1);
  CHECK(metrics_ulp_distance(NAN, 1.0) == UINT64_MAX && metrics_ulp_distance(1.0, NAN) == UINT64_MAX);

  /* float values: ULPs of float (one float step = 2^29 double steps). */
  const float fa[2] = {1.0f, -2.0f}, fb[2] = {nextafterf(1.0f, 2.0f), nextafterf(-2.0f, -3.0f)};
  metrics_reset(&acc);
  metrics_addf(&acc, 2, fa, fb);
  metrics_finish(&acc, &m);
  CHECK(m.vc == 1 && m.max_ulp == 1 && m.max_abs == 0x1p-22);                 /* ulpf(2) = 2^-22 */

  /* NaN in B: it differs, max_abs and rel_l2 are NaN (and stay NaN after
   * larger finite differences), max_ulp is UINT64_MAX, 0 digits. */
  const double na[3] = {1, 1, 1}, nb[3] = {NAN, 6, 2};
  metrics_reset(&acc);
  metrics_add(&acc, 3, na, nb);
  metrics_finish(&acc, &m);
  CHECK(m.vc == 1 && isnan(m.max_abs) && isnan(m.rel_l2) && isnan(m.vermv));
  CHECK(m.max_ulp == (double)UINT64_MAX && m.digits == 0);

  /* metrics_merge of two halves equals one-shot accumulation, bit for bit
   * (the sums here are exact, so no ordering can change them). */
  metrics_acc one, lo, hi;
  metrics_reset(&one), metrics_reset(&lo), metrics_reset(&hi);
  metrics_add(&one, 4, a, b);
  metrics_add(&lo, 2, a, b);
  metrics_add(&hi, 2, a + 2, b + 2);
  metrics_merge(&lo, &hi);
  CHECK(!memcmp(&one, &lo, sizeof one));
  /* ... and a NaN max in either part survives the merge, in both orders. */
  metrics_acc x, y;
  metrics_reset(&x), metrics_reset(&y);
  metrics_add(&x, 1, na, nb);          /* max_abs NaN */
  metrics_add(&y, 2, na + 1, nb + 1);  /* max_abs 5 */
  metrics_acc xy = x, yx = y;
  metrics_merge(&xy, &y), metrics_merge(&yx, &x);
  CHECK(isnan(xy.max_abs) && isnan(yx.max_abs) && xy.n == 3 && yx.ndiff == 3);

  /* digits and V_s */
  CHECK(metrics_digits(0) == 17 && metrics_digits(1e-20) == 17 && metrics_digits(NAN) == 0);
  NEAR(metrics_digits(1e-5), 5, 1e-15);
  NEAR(metrics_digits(2), -log10(2.0), 1e-15);
  CHECK(metrics_vs(2, 1.5) == 0.25 && metrics_vs(2, -2) == 0 && metrics_vs(2, 2) == 0 && metrics_vs(0, 0) == 0);
  CHECK(metrics_vs(4, 5) == -0.25);

  /* churn against the outputs' scale: 3 points x 2 outputs; point 1 moves
   * 0.01 on output 1, point 2 has a NaN; a near-zero point (0 -> 1e-7) is no
   * churn at a tolerance relative to the RMS, though its own relative change is 100%. */
  const float  ca[6] = {1, 2, 3, 4, 0, 6}, cb[6] = {1, 2, 3, 4.01f, 1e-7f, NAN};
  const double sc[2] = {2, 4};
  CHECK(metrics_churn_count(3, 2, ca, cb, sc, 1e-3) == 2);  /* 0.01 > 1e-3 * 4 */
  CHECK(metrics_churn_count(3, 2, ca, cb, sc, 1e-2) == 1);  /* 0.01 <= 1e-2 * 4: only the NaN */
  CHECK(metrics_churn_count(3, 2, ca, ca, sc, 0) == 0);
  CHECK(metrics_churn_count(1, 2, ca + 4, cb + 4, sc, 1e-6) == 1 && metrics_churn_count(1, 1, ca + 4, cb + 4, sc, 1e-6) == 0); /* only the NaN of point 2 */

  /* growth over the exponential window only (metrics.h's rule) */
  {
    enum { NG = 300 };
    double st[NG], rel[NG];
    metrics_growth_t g;
#define GROWTH(fl) metrics_growth(NG, st, rel, fl, &g)
#define WHY(w) (g.why && !strcmp(g.why, w) && isnan(g.rate) && isnan(g.efold) && g.from == -1)
    /* a pure exponential, 2 decades / 1000 steps, saturating: fitted exactly, from the first nonzero point to
     * the last below 1e-2 */
    for (int i = 0; i < NG; i++) st[i] = 50.0 * i, rel[i] = i == 0 ? 0 : fmin(1e-16 * pow(10, 0.002 * st[i]), 0.3);
    NEAR(GROWTH(0), 0.002, 1e-12);
    NEAR(g.efold, 1 / (0.002 * log(10.0)), 1e-6);
    NEAR(g.icpt, -16, 1e-9);
    CHECK(g.why == NULL && g.from == 50 && g.to >= 6900 && g.to < 7000 && g.points == (size_t)(g.to / 50));
    /* the same with noise of up to 0.3 decades: the rate within 2% */
    for (int i = 1; i < NG; i++) rel[i] = fmin(1e-16 * pow(10, 0.002 * st[i] + 0.3 * sin(2.7 * i)), 0.3);
    NEAR(GROWTH(0), 0.002, 0.02);
    /* a fast rise (50 decades / 1000 steps, to 1e-11 at step 200) and then a slow one (1 decade / 1000 steps,
     * 5 decades): fitted on the slow part, which the fast one bends */
#define TWO_RATES(x) ((x) < 200 ? 1e-21 * pow(10, 0.05 * (x)) : 1e-11 * pow(10, 0.001 * ((x) - 200)))
    for (int i = 0; i < NG; i++) st[i] = 20.0 * i, rel[i] = TWO_RATES(st[i]);
    NEAR(GROWTH(0), 0.001, 0.02);
    CHECK(g.from >= 160 && g.from <= 400 && g.to == st[NG - 1]);
    /* ... exactly, from the floor on, with the floor where the fast rise ends (the solver tolerance of a
     * coupled run) */
    NEAR(GROWTH(1e-11), 0.001, 1e-12);
    CHECK(g.from == 200);
    /* ... and not at all when the slow part spans under 2 decades (the default deck: 300 steps): the window
     * that rises 2 decades takes in the bend */
    for (int i = 0; i < NG; i++) st[i] = i, rel[i] = TWO_RATES(st[i]);
    CHECK(isnan(GROWTH(0)) && WHY("rate not steady"));
    CHECK(isnan(GROWTH(1e-11)) && WHY("rises under 2 decades"));
    /* a jump to a level that then stays flat and noisy: no growth */
    for (int i = 0; i < NG; i++) st[i] = 50.0 * i, rel[i] = i < 10 ? 0 : i == 10 ? 1e-16 : 3e-12 * (1 + 0.1 * sin(i));
    CHECK(isnan(GROWTH(0)) && WHY("rises under 2 decades"));
    /* rose 10 decades, then decayed: the record ends decaying, no growth to forecast */
    for (int i = 0; i < NG; i++) rel[i] = 1e-16 * pow(10, 0.002 * (i <= 100 ? st[i] : 2 * st[100] - st[i]));
    CHECK(isnan(GROWTH(0)) && WHY("rises under 2 decades"));
    /* steady on average, but every point 1.5 decades above or below its line */
    for (int i = 0; i < NG; i++) rel[i] = 1e-16 * pow(10, 0.0008 * st[i] + (i % 2 ? 1.5 : -1.5));
    CHECK(isnan(GROWTH(0)) && WHY("points off its line"));
    /* bitwise equal; saturated from the first difference; too few points below saturation or above the floor */
    for (int i = 0; i < NG; i++) rel[i] = 0;
    CHECK(isnan(GROWTH(0)) && WHY("no difference"));
    for (int i = 0; i < NG; i++) rel[i] = 0.5;
    CHECK(isnan(GROWTH(0)) && WHY("saturated"));
    for (int i = 0; i < NG; i++) rel[i] = 1e-16 * pow(10, 0.05 * st[i]);
    CHECK(isnan(GROWTH(0)) && WHY("too few points")); /* 1e-2 at step 280: 6 points below it */
    for (int i = 0; i < NG; i++) rel[i] = 1e-13 * pow(10, 0.0001 * st[i]);
    CHECK(isnan(GROWTH(1e-10)) && WHY("below the floor")); /* never up to it */
#undef GROWTH
#undef WHY
#undef TWO_RATES
  }

  printf("%s: %d failed checks\n", nfail ? "FAIL" : "PASS", nfail);
  return nfail != 0;
}
