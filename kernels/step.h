/* kernels/step.h: the scan of a solver state after a step (one pass: its
 * range and whether it is finite), on the host; step_cuda.h has the
 * device's, with the same result. */
#ifndef MINIAPP_KERNELS_STEP_H
#define MINIAPP_KERNELS_STEP_H

#include <stddef.h>

/* lo and hi: the first (lowest-index) smallest and largest of the entries
 * that are not NaN (+0 and -0 are equal: the first one met is kept); nan:
 * some entry is NaN, nanv the last of them (its sign and payload);
 * nonfinite: some entry is not finite. n == 0: lo = +Inf, hi = -Inf, no
 * flag. */
typedef struct {
  double lo, hi, nanv;
  int    nan, nonfinite;
} step_scan_t;

void step_scan(size_t n, const double *x, step_scan_t *out);

#endif
