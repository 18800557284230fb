/* miniapp/compare_impl.h: what miniapp-compare's files share: a run read
 * from its NetCDF file, the one-line error exit, the global attributes as
 * text, and the check that two runs are of one problem (compare_checks.c). */
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

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))); /* one line, exit 1 */
void attr(const run *r, const char *name, char *s, size_t len);                 /* a global attribute as text, "-" when absent */
void compare_check_runs(const run *a, const run *b); /* B is a run of A's problem, grid and series (or a stopped one's first part of it), or die() */

#endif
