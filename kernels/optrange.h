/* kernels/optrange.h: the range of a numeric option and the one line that
 * refuses a value outside it ("-gs_F 2: must be in [0, 1]"), in plain C, so
 * that the readers of miniapp/cli and the checks of solver/ and surrogate/
 * word their refusals alike. Not the reading of options (PETSc's). */
#ifndef KERNELS_OPTRANGE_H
#define KERNELS_OPTRANGE_H

#include <math.h>
#include <stddef.h>

enum {
  OPT_INT     = 1,  /* print the value and bounds as integers */
  OPT_LO_OPEN = 2,  /* lo itself is outside: (lo, ... */
  OPT_HI_OPEN = 4,  /* hi itself is outside: ..., hi) */
  OPT_NORMAL  = 8,  /* a nonzero subnormal is outside (an operator divides by it, or squares it to zero) */
  OPT_FINITE  = 16  /* infinity is outside even where no bound is given */
};
#define OPT_NONE HUGE_VAL /* no bound on that side: lo = -OPT_NONE or hi = OPT_NONE */

typedef struct {
  const char *name;   /* "-gs_F" */
  double      value;  /* NaN is always outside */
  double      lo, hi; /* the bounds, inclusive unless OPT_*_OPEN */
  unsigned    flags;
  const char *why;    /* said in parentheses after the range, or NULL */
} opt_range;

/* 1 when r->value is outside its range, with the refusal in msg
 * ("<name> <value>: must be in [lo, hi] (why)"; one-sided: "must be at least
 * lo", "must not be negative", "must be positive" (with OPT_FINITE: "must be
 * a positive number"), "must be at most hi"); else 0. */
int opt_range_refuse(const opt_range *r, char *msg, size_t len);
/* The first of n ranges whose value is outside: 1 and its refusal; else 0. */
int opt_ranges_refuse(const opt_range *r, size_t n, char *msg, size_t len);
/* A refusal a check found in plain C, written into msg as printf writes; returns msg. */
const char *opt_say(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
