/* kernels/couple.c: the coupled loop's batch kernels on the host (couple.h);
 * built with -ffp-contract=off, as every numeric file here. */
#include "couple.h"

#include <math.h>

#define COUPLE_PAR_MIN_POINTS 32768 /* below it one thread: the fork would cost more than the rows */

static const int couple_di[COUPLE_NST] = {0, -1, 1, 0, 0}, couple_dj[COUPLE_NST] = {0, 0, 0, -1, 1};

void couple_stencils_cpu(const couple_grid *g, int nst, size_t nin, size_t off, double is, const double *a,
                         float *feat)
{
  const int dof = g->dof;

#pragma omp parallel for schedule(static) if ((long long)g->xm * g->ym >= COUPLE_PAR_MIN_POINTS)
  for (int j = g->ys; j < g->ys + g->ym; j++)
    for (int i = g->xs; i < g->xs + g->xm; i++) {
      float *f = feat + ((size_t)(j - g->ys) * (size_t)g->xm + (size_t)(i - g->xs)) * nin + off;
      for (int s = 0; s < nst; s++) {
        size_t        y = (size_t)(j + couple_dj[s] - g->gys), x = (size_t)(i + couple_di[s] - g->gxs);
        const double *v = a + (y * (size_t)g->gxm + x) * (size_t)dof;
        for (int c = 0; c < dof; c++) f[s * dof + c] = (float)(v[c] * is);
      }
    }
}

void couple_target_cpu(size_t n, const double *a, const double *b, double s, float *t)
{
  if (b)
    for (size_t i = 0; i < n; i++) t[i] = (float)((a[i] - b[i]) / s);
  else
    for (size_t i = 0; i < n; i++) t[i] = (float)(a[i] / s);
}

void couple_correction_cpu(size_t n, double s, const float *out, double *z)
{
  for (size_t i = 0; i < n; i++) z[i] = s * (double)out[i];
}

int couple_nonfinite_cpu(size_t n, const float *x)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 1;
  return 0;
}
