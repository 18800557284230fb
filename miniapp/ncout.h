/* miniapp/ncout.h: the run's NetCDF output (NetCDF-4/HDF5 file, CF-1.8),
 * written by rank 0 only (NetCDF-C in Debian is serial; the driver gathers).
 * Plain C, no PETSc/MPI. Every function returns 0 or a NetCDF/errno code and
 * then leaves one line naming what is wrong in ncout_errmsg(o).
 *
 * The file is created as a unique "<path>.partial-<pid>.<host>.XXXXXX"
 * (kernels/atomicfile.h) and renamed to <path> only by ncout_close(&o, 1, ...)
 * after a successful close and fsync: an interrupted or failed run never
 * leaves a file that looks complete (ncout_close(&o, 0, ...) removes the
 * partial file, and the next writer of <path> removes those of killed runs).
 *
 * Layout (docs/output.md documents it for users):
 *   dimensions  time = nsteps + 1 (step 0 = initial state), epoch (unlimited),
 *               replica, y, x
 *   coordinates time(time) [model time units], step(time) int,
 *               epoch(epoch) int, replica(replica) int, y(y), x(x) [grid units]
 *   fields      <name>(time, replica, y, x) double, one variable per component
 *               (grayscott: u, v; heat: u); written every output_every steps
 *               and at the last step, _FillValue (NaN) elsewhere;
 *               chunked (1, 1, y, x), so unwritten records take no space
 *   per step    state_hash(time, replica) uint64, ksp_its(time, replica) int,
 *               ksp_rnorm, start_residual, increment_error, closure_error,
 *               closure_drift, churn (time, replica), and the metrics
 *               against replica 0: vc, vermv, rel_l2, max_abs, max_ulp,
 *               digits (time, replica) (replica 0 holds 0 / 17 digits);
 *               the guesses side by side: ksp_its_<guess>(time) int (-1:
 *               not run) and start_residual_<guess>(time), guess in
 *               ncout_guess_names
 *   per epoch   epoch_step(epoch) int (time step whose training ran it),
 *               loss(epoch, replica), weights_hash(epoch, replica) uint64,
 *               weights_vc(epoch, replica), weights_rel_l2(epoch, replica)
 *   final       first_divergent_step(replica), first_divergent_epoch(replica)
 *               int (-1: never diverged)
 *   fill        every double variable has _FillValue NaN, so a value never
 *               written reads as NaN; int/uint64 ones keep NetCDF's default fill
 *   globals     Conventions = "CF-1.8", title, institution, source, history,
 *               plus every (name, value) string the caller passes
 *               (reduction strategies, options, scenario, grid, seeds,
 *               versions, source revision). */
#ifndef MINIAPP_NCOUT_H
#define MINIAPP_NCOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct ncout ncout;

typedef struct {
  const char *name, *value;
  int         numeric; /* 1: value is an integer, written as a 64-bit integer attribute */
} ncout_attr;

typedef struct {
  int               nx, ny, ncomp, nreplicas, nsteps, output_every;
  double            dx, dy;        /* grid spacing (x = (i + x0) * dx) */
  double            x0, y0;        /* offsets of the first point, in cells */
  const char *const *comp_names;   /* ncomp names, e.g. {"u", "v"} */
  const ncout_attr  *attrs;        /* extra global attributes */
  int                nattrs;
  int                first_epoch;  /* a restarted run: number of its first epoch (the earlier ones are fill) */
} ncout_info;

/* Per-step record of one replica. */
typedef struct {
  uint64_t state_hash;
  int      ksp_its;
  double   ksp_rnorm, start_residual, increment_error, closure_error, closure_drift, churn;
  double   vc, vermv, rel_l2, max_abs, max_ulp, digits;
} ncout_step_rec;

/* Initial guesses compared side by side on replica 0's systems (-coupling
 * guess): iterations (-1: not run) and start residual ||b - A x0|| / ||b||. */
#define NCOUT_NGUESS 5
extern const char *const ncout_guess_names[NCOUT_NGUESS]; /* none, extrapolation, fischer, learned, combined */
typedef struct {
  int    its;
  double start_residual;
} ncout_guess_rec;

/* Per-epoch record of one replica. */
typedef struct {
  double   loss, weights_vc, weights_rel_l2;
  uint64_t weights_hash;
} ncout_epoch_rec;

/* Call before the process's first NetCDF call when NetCDF is used outside
 * ncout (miniapp-compare); ncout_create calls it. */
void        ncout_init(void);
int         ncout_create(const char *path, const ncout_info *info, ncout **o);
/* Step `step` (0..nsteps) at model time t: recs[nreplicas], guesses[NCOUT_NGUESS]. */
int         ncout_write_step(ncout *o, int step, double t, const ncout_step_rec *recs, const ncout_guess_rec *guesses);
/* Fields of one replica at `step`: natural order [y][x][ncomp] (interlaced). */
int         ncout_write_fields(ncout *o, int step, int replica, const double *field);
/* The next epoch (numbered from 0), run during time step `step`. */
int         ncout_write_epoch(ncout *o, int step, const ncout_epoch_rec *recs);
int         ncout_write_final(ncout *o, const int *first_div_step, const int *first_div_epoch);
/* keep = 1: close and rename into place; 0: close and delete the partial
 * file. Frees *o and sets it to NULL; on failure the one-line reason is
 * copied to err (errlen bytes). */
int         ncout_close(ncout **o, int keep, char *err, size_t errlen);
/* The last failure's one line, "<path>: <what> (<reason>)"; "" if none.
 * ncout_errmsg(NULL) is why the last ncout_create failed (*o is NULL then). */
const char *ncout_errmsg(const ncout *o);
/* The text of a returned code alone, for callers without an ncout (never NULL). */
const char *ncout_strerror(int err);

#endif
