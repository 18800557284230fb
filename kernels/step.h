/* kernels/step.h: the scan of a solver state after a step (one pass: its
 * range and whether it is finite) and the state's hash, on the host;
 * step_cuda.h has the device's, with the same results. */
#ifndef MINIAPP_KERNELS_STEP_H
#define MINIAPP_KERNELS_STEP_H

#include <stddef.h>
#include <stdint.h>

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

/* The hash of a rank's xm x ym block from (xs, ys) of an M-wide grid, dof
 * components interleaved (entry ((j - ys) xm + i - xs) dof + c): the sum of
 * hash_term(((j M + i) dof + c), value) (hashrng.h) mod 2^64, exact in any
 * order and for any split of the grid. */
uint64_t step_hash(size_t xm, size_t ym, size_t xs, size_t ys, size_t M, size_t dof, const double *x);

#endif
