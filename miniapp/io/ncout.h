/* miniapp/io/ncout.h: the run's NetCDF output (NetCDF-4/HDF5 file, CF-1.8),
 * written by rank 0 only (NetCDF-C in Debian is serial; the driver gathers).
 * Plain C, no PETSc/MPI. Every function returns 0 or a NetCDF/errno code and
 * then leaves one line naming what is wrong in ncout_errmsg(o).
 *
 * The file is created as a unique "<path>.partial-<pid>.<host>.XXXXXX"
 * (kernels/atomicfile.h) and renamed to <path> only by ncout_close(&o, 1, ...)
 * after a successful close and fsync: an interrupted or failed run never
 * leaves a file that looks complete (ncout_close(&o, 0, ...) removes the
 * partial file, and the next writer of <path> removes those of killed runs).
 * ncout_commit puts a copy of the records so far under <path> (at a
 * checkpoint): such a file ends at its last_step, short of nsteps.
 *
 * Layout (docs/output.md documents it for users; CF-1.8, checked with IOOS
 * compliance-checker and cfchecker, tests/output):
 *   dimensions  step = the steps this run records (nsteps + 1, index 0 the
 *               initial state; a restarted run: only the steps after its
 *               checkpoint), snapshot = the field snapshots among them (every
 *               output_every-th step and the last: ncout_snapshot_step),
 *               epoch (unlimited), replica, y, x, hash_strlen = 18
 *   coordinates step(step) int, time(step) [model time, nondimensional],
 *               snapshot_step(snapshot) int, snapshot_time(snapshot),
 *               epoch(epoch) int, epoch_step(epoch) int, replica(replica) int,
 *               y(y), x(x) [grid units]; the auxiliary ones (time,
 *               snapshot_step, snapshot_time, epoch_step) are named in each
 *               variable's "coordinates" attribute. No dimension is called
 *               time: CF would then ask for a dated time axis ("s since ..."),
 *               and model time has no unit.
 *   fields      <name>(snapshot, replica, y, x) double, one variable per
 *               component (grayscott: u, v; heat: u); chunked (1, 1, y, x)
 *   per step    state_hash(step, replica, hash_strlen) char: "0x" and 16 hex
 *               digits, as the summary prints it ("" never written),
 *               ksp_its(step, replica) int, ksp_rnorm, start_residual,
 *               increment_error, closure_error and closure_drift (closure
 *               runs only), churn (step, replica), and the metrics against replica 0: vc, vermv,
 *               rel_l2, max_abs, max_ulp, digits (step, replica) (replica 0
 *               holds 0 / 17 digits); the guesses side by side:
 *               ksp_its_<guess>(step) int (-1: not run) and
 *               start_residual_<guess>(step), guess in ncout_guess_names
 *   per epoch   loss(epoch, replica), weights_hash(epoch, replica,
 *               hash_strlen) char, weights_vc(epoch, replica),
 *               weights_rel_l2(epoch, replica); epoch holds the epoch's number
 *               (a restarted run's first is info.first_epoch)
 *   final       first_divergent_step(replica), first_divergent_epoch(replica)
 *               int (-1: never diverged)
 *   fill        double data variables have _FillValue NaN (a value never
 *               written reads as NaN); coordinates, int and char variables
 *               have none (int: NetCDF's default fill, char: "")
 *   globals     Conventions = "CF-1.8", title, institution, source, history,
 *               plus every (name, value) the caller passes (reduction
 *               strategies, options, scenario, grid, seeds, versions, source
 *               revision). */
#ifndef MINIAPP_NCOUT_H
#define MINIAPP_NCOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct ncout ncout;

typedef struct {
  const char *name, *value;
  int         numeric; /* 1: value is an integer, written as a 64-bit integer attribute; 2: a double */
} ncout_attr;

typedef struct {
  int               nx, ny, ncomp, nreplicas, nsteps, output_every;
  double            dx, dy;        /* grid spacing (x = (i + x0) * dx) */
  double            x0, y0;        /* offsets of the first point, in cells */
  const char *const *comp_names;   /* ncomp names, e.g. {"u", "v"} */
  const ncout_attr  *attrs;        /* extra global attributes */
  int                nattrs;
  int                first_step;   /* the first step recorded: 0, or a restarted run's checkpoint step + 1 */
  int                first_epoch;  /* the number of the first epoch recorded: 0, or a restarted run's */
  int                closure;      /* a closure run: closure_error and closure_drift are defined (else absent) */
} ncout_info;

/* Does `step` get a field snapshot? Every output_every-th step and the last.
 * The driver asks this before gathering fields; ncout sizes the snapshot
 * dimension by it. */
static inline int ncout_snapshot_step(int step, int nsteps, int output_every)
{
  return step == nsteps || (output_every > 0 && step % output_every == 0);
}

/* Hashes are stored as text, "0x" and 16 lowercase hex digits (CF-1.8 has no
 * 64-bit integer type): NCOUT_HASH_LEN characters, no terminator in the file. */
#define NCOUT_HASH_LEN 18
void ncout_format_hash(uint64_t h, char out[NCOUT_HASH_LEN + 1]);

/* Per-step record of one replica. */
typedef struct {
  uint64_t state_hash;
  int      ksp_its;
  double   ksp_rnorm, start_residual, increment_error, closure_error, closure_drift, churn_10, churn_50, churn;
  double   vc, vermv, rel_l2, max_abs, max_ulp, digits;
} ncout_step_rec;

/* Initial guesses compared side by side on replica 0's systems (-coupling
 * guess): iterations (-1: not run) and start residual ||b - A x0|| / ||b||. */
#define NCOUT_NGUESS 6
/* none, extrapolation, fischer, learned, combined, projection */
extern const char *const ncout_guess_names[NCOUT_NGUESS];
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
/* Step `step` (first_step..nsteps) at model time t: recs[nreplicas],
 * guesses[NCOUT_NGUESS]; a snapshot step also sets its snapshot_time. Writing
 * a step again (a rollback re-does it) overwrites it. */
int         ncout_write_step(ncout *o, int step, double t, const ncout_step_rec *recs, const ncout_guess_rec *guesses);
/* Fields of one replica at snapshot step `step` (ncout_snapshot_step): natural
 * order [y][x][ncomp] (interlaced). Any other step is an error. */
int         ncout_write_fields(ncout *o, int step, int replica, const double *field);
/* Epoch number `epoch` (>= first_epoch), run during time step `step`. */
int         ncout_write_epoch(ncout *o, int epoch, int step, const ncout_epoch_rec *recs);
int         ncout_write_final(ncout *o, const int *first_div_step, const int *first_div_epoch);
/* A restarted run continuing prev, the run file of the run it continues
 * (ncout_continue.c): o was created with first_step = first_epoch = 0;
 * prev's records of steps 0..upto_step (and their snapshots) and of epochs
 * 0..upto_epoch-1 are copied into o bit for bit. prev must be the file of
 * this run: the same layout and output schedule, the steps and epochs from
 * 0 on, and (state_hash != NULL) replica r's state_hash at upto_step equal
 * to state_hash[r]; otherwise an error naming what differs. Its last written
 * step (*prev_last) decides: from upto_step (the checkpoint's) to o's last
 * step; one past upto_step (a run killed between its commit and its
 * checkpoint) has its later records made again by this run. */
int ncout_continue(ncout *o, const char *prev, int upto_step, int upto_epoch, const uint64_t *state_hash,
                   int *prev_last);
/* The records so far, with the final record as written so far, replace the
 * file under o's path (a copy, kernels/atomicfile.h); o goes on writing its
 * temporary. A run killed after it leaves a file that ends at its
 * last_step, which a restart from the checkpoint of that step continues. */
int         ncout_commit(ncout *o);
/* More global attributes, known only at the end (e.g. the fault record). */
int         ncout_write_attrs(ncout *o, const ncout_attr *attrs, int n);
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
