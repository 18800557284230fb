/* kernels/step.c: the state scan on the host (step.h). */
#include "step.h"
#include "hashrng.h"

#include <math.h>

void step_scan(size_t n, const double *x, step_scan_t *out)
{
  step_scan_t m = {INFINITY, -INFINITY, 0, 0, 0};

  for (size_t i = 0; i < n; i++) { /* index order: a strict comparison keeps the first of equal values */
    double v = x[i];
    if (v != v) {
      m.nanv = v; /* the last one stays */
      m.nan = m.nonfinite = 1;
    }
    else {
      if (v < m.lo) m.lo = v;
      if (v > m.hi) m.hi = v;
      if (isinf(v)) m.nonfinite = 1;
    }
  }
  *out = m;
}

uint64_t step_hash(size_t xm, size_t ym, size_t xs, size_t ys, size_t M, size_t dof, const double *x)
{
  uint64_t h = 0;
  for (size_t j = 0; j < ym; j++)
    for (size_t i = 0; i < xm; i++)
      for (size_t c = 0; c < dof; c++)
        h += hash_term(((ys + j) * M + xs + i) * dof + c, x[(j * xm + i) * dof + c]);
  return h;
}
