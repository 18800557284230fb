/* tests/test_sumstudy_fit.c: the sum study's power-law fit (ss_fit_power,
 * bench/sumstudy/sumstudy_stats.c) on data whose answer is known: the same
 * max|V_s| at every N (a GPU tree sum on an H100 printed alpha -3.6e-15 and
 * r2 -10.7 for it) must give alpha 0 exactly and no r2; an exact power law
 * its exponent and r2 1; noisy data an r2 in [0, 1]; points with y <= 0 are
 * left out. Prints PASS. */
#include "sumstudy.h"

#include <math.h>
#include <stdio.h>

static int fails;
static void check(int ok, const char *what, const ss_fit *f)
{
  if (!ok) {
    printf("FAIL: %s (points %d, alpha %.17g, se %.17g, beta %.17g, r2 %.17g)\n", what, f->points, f->alpha, f->alpha_se, f->beta, f->r2);
    fails++;
  }
}

int main(void)
{
  double n[6] = {1e3, 1e4, 1e5, 1e6, 1e7, 3e7}, y[6];
  ss_fit f;

  for (int k = 0; k < 4; k++) { /* constant y: several values and point counts */
    static const double c[4] = {2.220446049250313e-16, 1.1102230246251565e-16, 3.3e-15, 7.0e-13};
    for (int np = 2; np <= 6; np++) {
      for (int i = 0; i < np; i++) y[i] = c[k];
      ss_fit_power(np, n, y, &f);
      check(f.points == np && f.alpha == 0.0 && isnan(f.r2) && (np < 3 || f.alpha_se == 0.0) && fabs(f.beta / c[k] - 1) < 1e-12, "constant y: alpha 0, r2 undefined", &f);
    }
  }
  for (int i = 0; i < 6; i++) y[i] = 3e-17 * pow(n[i], 0.5); /* an exact power law */
  ss_fit_power(6, n, y, &f);
  check(fabs(f.alpha - 0.5) < 1e-12 && fabs(f.r2 - 1) < 1e-12 && fabs(f.beta / 3e-17 - 1) < 1e-10 && f.alpha_se < 1e-12, "power law: alpha 0.5, r2 1", &f);
  for (int i = 0; i < 6; i++) y[i] = 1e-16 * pow(n[i], 0.3) * (i % 2 ? 1.7 : 0.6); /* noise */
  ss_fit_power(6, n, y, &f);
  check(f.r2 >= 0 && f.r2 <= 1 && f.alpha > 0 && f.alpha_se > 0, "noisy: r2 in [0, 1]", &f);
  y[0] = 0, y[1] = -1e-16; /* left out */
  for (int i = 2; i < 6; i++) y[i] = 5e-16 * pow(n[i], -0.25);
  ss_fit_power(6, n, y, &f);
  check(f.points == 4 && f.nlo == 1e5 && f.nhi == 3e7 && fabs(f.alpha + 0.25) < 1e-12, "y <= 0 left out", &f);
  ss_fit_power(1, n, y + 2, &f);
  check(isnan(f.alpha) && isnan(f.r2), "one point: no fit", &f);
  if (!fails) printf("PASS\n");
  return fails != 0;
}
