/* miniapp/tools/compare_impl.h: what miniapp-compare's files share: a run read
 * from its NetCDF file, the one-line error exit, the global attributes as
 * text, a comparison's result, the check that two runs are of one problem
 * (compare_checks.c) and the -o file (compare_output.c). */
#ifndef MINIAPP_COMPARE_IMPL_H
#define MINIAPP_COMPARE_IMPL_H

#include "ncout.h"

#include <netcdf.h>
#include <stddef.h>

typedef char hash_t[NCOUT_HASH_LEN]; /* "0x" and 16 hex digits, no terminator; all '\0': never written */

typedef struct {
  const char *path;
  int         ncid, nx, ny, ncomp;
  size_t      nt, nep, nsnap;
  int        *fieldvar;           /* ncomp variables (snapshot, replica, y, x) */
  char      (*comp)[NC_MAX_NAME + 1];
  int        *step, *epoch;       /* nt, nep */
  double     *time;               /* nt: model time of each step */
  int        *snap_step;          /* nsnap: the step of each snapshot */
  hash_t     *hash, *whash;       /* replica 0: nt, nep */
  double     *loss;               /* replica 0: nep */
  int         stopped, planned;   /* the run stopped early (its last_step before the planned last step, planned) */
} run;

#include "metrics.h"

#define NOT_COMPARED (-1) /* hash_equal / weights_equal: no record on one side (a flag value, not a fill) */
#define UNKNOWN      (-2) /* first divergent step/epoch: none found, but not every common one could be compared */

typedef struct { /* B against A */
  metrics_t   *m;     /* A's nt steps; NaN where fields were not compared */
  signed char *heq;   /* A's nt steps */
  double      *lvs;   /* A's nep epochs */
  signed char *weq;   /* A's nep epochs */
  /* first divergent step and epoch (-1: none, UNKNOWN: not every common one
   * compared), the last compared time index (-1: none) */
  int          fds, fde, last;
  double       growth, efold;
} result;

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))); /* one line, exit 1 */
void  attr(const run *r, const char *name, char *s, size_t len); /* a global attribute as text, "-" when absent */
void *xcalloc(size_t n, size_t size);               /* calloc, or die() */
void  compare_track(int ncid, int open);             /* a NetCDF id die() closes (open 1), or no longer (0) */
/* B is a run of A's problem, grid and series (or a stopped one's first part of it), or die() */
void  compare_check_runs(const run *a, const run *b);

/* compare_output.c: the -o file */
/* before any work: the temporary's path, or die() */
const char *compare_output_prepare(const char *path, const char *const *inputs, int n);
void        compare_output_write(const char *partial, const run *a, const run *b, const result *res, int nb);
void        compare_output_discard(void); /* die(): remove the temporary */

#endif
