/* miniapp/io/ncout.c: the run's NetCDF-4 file (layout: ncout.h, docs/output.md), written by rank 0 as the
 * driver hands it its records; a unique temporary (atomicfile.h) renamed into place by ncout_close. The one
 * schedule it knows is the snapshots' (ncout_snapshot_step), to size their dimension. */
#define _GNU_SOURCE
#include "ncout_impl.h"
#include "atomicfile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netcdf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const ncout_guess_names[NCOUT_NGUESS] = {"none",    "extrapolation", "fischer",
                                                     "learned", "combined",      "projection"};

static char create_msg[512]; /* why the last ncout_create failed (o is NULL then) */

/* The text of err. HDF5 reports a full disk as "HDF error" (and, when it
 * cannot even create the file, "Permission denied"): the errno of the failed
 * write, or a file system without a free block, says what it was. */
static const char *reason(const ncout *o, int err, int sys)
{
  if (err == NCOUT_EMISMATCH) return ""; /* the message says it all */
  if (err < 0 && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG || sys == EIO)) return strerror(sys);
  if (afile_diagnose(o->af.tmp[0] ? o->af.tmp : o->path, err) == ENOSPC) return strerror(ENOSPC);
  return err == AFILE_ENOTREG || err == AFILE_EDANGLING || err == AFILE_EPROGRAM || err == AFILE_ESTREAM ||
             err == AFILE_EPROTECTED
         ? afile_strerror(err)
         : nc_strerror(err);
}

/* Record the one-line reason "<path>: <what> (<reason>)" and return err. */
int ncout_fail_(ncout *o, int err, const char *fmt, ...)
{
  int sys = errno; /* of the failed call: NCCHECK cleared it before */
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *why = reason(o, err, sys);
  if (why[0]) snprintf(o->msg, sizeof o->msg, "%s: %s (%s)", o->path, what, why);
  else snprintf(o->msg, sizeof o->msg, "%s: %s", o->path, what);
  return err;
}

#define NCCHECK(call, ...) do { errno = 0; int e_ = (call); if (e_) return ncout_fail_(o, e_, __VA_ARGS__); } while (0)

/* HDF5 closes its open files in an exit handler; one whose close failed
 * (a full disk) makes HDF5 1.10 crash there (SIGSEGV after the error was
 * reported). Ask the HDF5 that NetCDF uses -- looked up through NetCDF, so no
 * second HDF5 (PETSc links its own) is touched -- to skip that clean-up:
 * every file is closed explicitly, so there is nothing for it to do. */
void ncout_init(void)
{
  static int done;
  Dl_info    info;
  void      *nc;
  if (done) return;
  done = 1;
  if (!dladdr((void *)nc_create, &info) || !info.dli_fname || !(nc = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
    return;
  int (*dont_atexit)(void);
  *(void **)&dont_atexit = dlsym(nc, "H5dont_atexit");
  if (dont_atexit) (void)dont_atexit();
  dlclose(nc);
}

static int put_text(ncout *o, int varid, const char *name, const char *value)
{
  NCCHECK(nc_put_att_text(o->ncid, varid, name, strlen(value), value), "cannot write attribute %s", name);
  return 0;
}

/* A variable with long_name and, unless NULL, units. */
static int def_var(ncout *o, const char *name, nc_type type, int ndims, const int *dims, const char *units,
                   const char *long_name, int *varid)
{
  int e;
  NCCHECK(nc_def_var(o->ncid, name, type, ndims, dims, varid), "cannot define variable %s", name);
  if ((units && (e = put_text(o, *varid, "units", units))) || (e = put_text(o, *varid, "long_name", long_name)))
    return e;
  return 0;
}

/* A data variable: its auxiliary coordinates named (CF "coordinates"), and
 * for doubles _FillValue NaN, so that a value never written reads as NaN.
 * Coordinates get no _FillValue (CF). */
static int def_data(ncout *o, const char *name, nc_type type, int ndims, const int *dims, const char *long_name,
                    const char *coordinates, int *varid)
{
  int e;
  if ((e = def_var(o, name, type, ndims, dims, "1", long_name, varid))) return e;
  if (type == NC_DOUBLE) {
    double nan = NAN;
    NCCHECK(nc_def_var_fill(o->ncid, *varid, 0, &nan), "cannot set %s:_FillValue", name);
  }
  return coordinates ? put_text(o, *varid, "coordinates", coordinates) : 0;
}

/* A 64-bit hash per (record, replica) as NCOUT_HASH_LEN characters: CF-1.8
 * has no 64-bit integer type, and text is what the summary prints. */
static int def_hash(ncout *o, const char *name, int d_rec, const char *long_name, const char *coordinates, int *varid)
{
  int dims[3] = {d_rec, o->d_rep, o->d_hash}, e;
  if ((e = def_var(o, name, NC_CHAR, 3, dims, NULL, long_name, varid)) ||
      (e = put_text(o, *varid, "coordinates", coordinates)) || (e = put_text(o, *varid, "_Encoding", "utf-8")) ||
      (e = put_text(o, *varid, "comment",
                    "\"0x\" and 16 lowercase hex digits of the 64-bit hash, as the run summary prints it; equal text = "
                    "equal "
                    "bits; empty: never written. The number: int(h, 16) in Python, strtoull(h, NULL, 16) in C")))
    return e;
  return 0;
}

void ncout_format_hash(uint64_t h, char out[NCOUT_HASH_LEN + 1])
{
  snprintf(out, NCOUT_HASH_LEN + 1, "0x%016llx", (unsigned long long)h);
}

/* The per-step (step, replica) variables: state_hash (text), ksp_its (int), then doubles. */
#define REC(f) offsetof(ncout_step_rec, f)
static const struct {
  const char *name, *long_name;
  size_t      offset;
} step_vars[NSTEPVARS] = {
  {"state_hash", "hash of the solver state bits after the step", REC(state_hash)},
  {"ksp_its", "Krylov iterations of the step's linear solves", REC(ksp_its)},
  {"ksp_rnorm", "final Krylov residual norm", REC(ksp_rnorm)},
  {"start_residual", "start residual of the step's solve in the Krylov method's norm, ||B(b - A x0)|| / ||B b||",
   REC(start_residual)},
  {"increment_error", "relative L2 error of the learned guess's predicted increment", REC(increment_error)},
  {"closure_error", "relative error of the surrogate closure term q = c v^2 against the exact one", REC(closure_error)},
  {"closure_drift", "relative L2 difference of the fields from the exact-term run", REC(closure_drift)},
  {"churn_10",
   "fraction of grid points where this replica's network, on replica 0's inputs, differs from replica 0's by more than "
   "10% of replica 0's RMS prediction error",
   REC(churn_10)},
  {"churn_50", "as churn_10, at 50% of the RMS prediction error", REC(churn_50)},
  {"churn", "as churn_10, at 100% of the RMS prediction error", REC(churn)},
  {"vc", "V_c: fraction of field values bitwise different from replica 0", REC(vc)},
  {"vermv", "V_ermv: mean element-wise relative difference from replica 0", REC(vermv)},
  {"rel_l2", "relative L2 difference of the fields from replica 0", REC(rel_l2)},
  {"max_abs", "maximum absolute difference of the fields from replica 0", REC(max_abs)},
  {"max_ulp", "maximum distance of the fields from replica 0 in units in the last place", REC(max_ulp)},
  {"digits", "decimal digits of agreement with replica 0 (17: bitwise equal)", REC(digits)},
};

/* Global attributes; numbers as numbers (ncout_attr.numeric). */
static int put_attrs(ncout *o, const ncout_attr *attrs, int n)
{
  int e;
  for (int a = 0; a < n; a++) {
    const ncout_attr *at = &attrs[a];
    char             *end = NULL;
    if (at->numeric == 1) {
      long long v = strtoll(at->value, &end, 10);
      if (at->value[0] && !*end) {
        NCCHECK(nc_put_att_longlong(o->ncid, NC_GLOBAL, at->name, NC_INT64, 1, &v), "cannot write attribute %s",
                at->name);
        continue;
      }
    } else if (at->numeric == 2) {
      double v = strtod(at->value, &end);
      if (at->value[0] && !*end) {
        NCCHECK(nc_put_att_double(o->ncid, NC_GLOBAL, at->name, NC_DOUBLE, 1, &v), "cannot write attribute %s",
                at->name);
        continue;
      }
    }
    if ((e = put_text(o, NC_GLOBAL, at->name, at->value))) return e;
  }
  return 0;
}

int ncout_write_attrs(ncout *o, const ncout_attr *attrs, int n)
{
  int e;
  NCCHECK(nc_redef(o->ncid), "cannot enter define mode");
  if ((e = put_attrs(o, attrs, n))) return e;
  NCCHECK(nc_enddef(o->ncid), "cannot leave define mode");
  return 0;
}

static int define(ncout *o, const ncout_info *info)
{
  int id = o->ncid, sr[2], er[2], f4[4], e;
  size_t nt = (size_t)(o->nsteps - o->first_step + 1); /* 0 (a restart at the last step) makes it unlimited: harmless */
  NCCHECK(nc_def_dim(id, "step", nt, &o->d_step), "cannot define dimension step");
  NCCHECK(nc_def_dim(id, "snapshot", (size_t)o->nsnap, &o->d_snap), "cannot define dimension snapshot");
  NCCHECK(nc_def_dim(id, "epoch", NC_UNLIMITED, &o->d_epoch), "cannot define dimension epoch");
  NCCHECK(nc_def_dim(id, "replica", (size_t)info->nreplicas, &o->d_rep), "cannot define dimension replica");
  NCCHECK(nc_def_dim(id, "y", (size_t)info->ny, &o->d_y), "cannot define dimension y");
  NCCHECK(nc_def_dim(id, "x", (size_t)info->nx, &o->d_x), "cannot define dimension x");
  NCCHECK(nc_def_dim(id, "hash_strlen", NCOUT_HASH_LEN, &o->d_hash), "cannot define dimension hash_strlen");
  sr[0] = o->d_step, sr[1] = o->d_rep, er[0] = o->d_epoch, er[1] = o->d_rep;
  f4[0] = o->d_snap, f4[1] = o->d_rep, f4[2] = o->d_y, f4[3] = o->d_x;

  /* Coordinates. x and y carry no axis attribute: CF reads axis X/Y as
   * longitude/latitude (or projection coordinates in metres); these are grid
   * units. Model time is nondimensional, so it is no CF time axis either. */
  int vy, vx, vrep;
  if ((e = def_var(o, "step", NC_INT, 1, &o->d_step, "1", "time step number (0: initial state)", &o->v_step)) ||
      (e = def_var(o, "time", NC_DOUBLE, 1, &o->d_step, "1", "model time after the step (nondimensional)",
                   &o->v_time)) ||
      (e = def_var(o, "snapshot_step", NC_INT, 1, &o->d_snap, "1", "time step of the field snapshot",
                   &o->v_snap_step)) ||
      (e = def_var(o, "snapshot_time", NC_DOUBLE, 1, &o->d_snap, "1", "model time of the field snapshot",
                   &o->v_snap_time)) ||
      (e = def_var(o, "epoch", NC_INT, 1, &o->d_epoch, "1", "training epoch number", &o->v_epoch)) ||
      (e = def_var(o, "epoch_step", NC_INT, 1, &o->d_epoch, "1", "time step during which the epoch ran",
                   &o->v_epoch_step)) ||
      (e = def_var(o, "replica", NC_INT, 1, &o->d_rep, "1", "replica number (0: reference)", &vrep)) ||
      (e = def_var(o, "y", NC_DOUBLE, 1, &o->d_y, "1", "y coordinate of the grid point", &vy)) ||
      (e = def_var(o, "x", NC_DOUBLE, 1, &o->d_x, "1", "x coordinate of the grid point", &vx)))
    return e;

  char comment[192];
  snprintf(comment, sizeof comment,
           "snapshot k: the fields at step snapshot_step[k] (every %d steps and the last; step 0 is the initial state)",
           info->output_every);
  size_t chunk[4] = {1, 1, (size_t)info->ny, (size_t)info->nx};
  for (int c = 0; c < info->ncomp; c++) {
    char ln[128];
    snprintf(ln, sizeof ln, "field component %s", info->comp_names[c]);
    if ((e = def_data(o, info->comp_names[c], NC_DOUBLE, 4, f4, ln, "snapshot_step snapshot_time", &o->v_field[c])))
      return e;
    NCCHECK(nc_def_var_chunking(id, o->v_field[c], NC_CHUNKED, chunk), "cannot chunk %s", info->comp_names[c]);
    if ((e = put_text(o, o->v_field[c], "comment", comment))) return e;
  }
  if ((e = def_hash(o, step_vars[0].name, o->d_step, step_vars[0].long_name, "time", &o->v_rec[0]))) return e;
  for (int k = 1; k < NSTEPVARS; k++) {
    o->v_rec[k] = -1; /* not in this file: the closure's variables outside closure runs */
    if (!info->closure && (step_vars[k].offset == REC(closure_error) || step_vars[k].offset == REC(closure_drift)))
      continue;
    if ((e = def_data(o, step_vars[k].name, k == 1 ? NC_INT : NC_DOUBLE, 2, sr, step_vars[k].long_name, "time",
                      &o->v_rec[k])))
      return e;
  }
  for (int g = 0; g < NCOUT_NGUESS; g++) {
    char name[64], ln[160];
    snprintf(name, sizeof name, "ksp_its_%s", ncout_guess_names[g]);
    snprintf(ln, sizeof ln, "Krylov iterations of replica 0's system from the %s initial guess (-1: not run)",
             ncout_guess_names[g]);
    if ((e = def_data(o, name, NC_INT, 1, &o->d_step, ln, "time", &o->v_gits[g]))) return e;
    snprintf(name, sizeof name, "start_residual_%s", ncout_guess_names[g]);
    snprintf(ln, sizeof ln,
             "||B (b - A x0)|| / ||B b|| (B: the KSP's norm) of the %s initial guess on replica 0's system",
             ncout_guess_names[g]);
    if ((e = def_data(o, name, NC_DOUBLE, 1, &o->d_step, ln, "time", &o->v_gr0[g]))) return e;
  }
  if ((e = def_data(o, "loss", NC_DOUBLE, 2, er, "training loss of the epoch", "epoch_step", &o->v_loss)) ||
      (e = def_hash(o, "weights_hash", o->d_epoch, "hash of the network weight bits after the epoch", "epoch_step",
                    &o->v_whash)) ||
      (e = def_data(o, "weights_vc", NC_DOUBLE, 2, er, "V_c of the network weights against replica 0", "epoch_step",
                    &o->v_wvc)) ||
      (e = def_data(o, "weights_rel_l2", NC_DOUBLE, 2, er, "relative L2 distance of the network weights from replica 0",
                    "epoch_step", &o->v_wrel)) ||
      (e = def_data(o, "first_divergent_step", NC_INT, 1, &o->d_rep,
                    "first step whose state bits differ from replica 0 (-1: never)", NULL, &o->v_fds)) ||
      (e = def_data(o, "first_divergent_epoch", NC_INT, 1, &o->d_rep,
                    "first epoch whose weight bits differ from replica 0 (-1: never)", NULL, &o->v_fde)) ||
      (e = def_data(o, "last_step", NC_INT, 0, NULL,
                    "the last step the file holds records of: a run that stopped early (a signal, an unsolved step, a "
                    "non-finite state) leaves the later steps and snapshots unwritten",
                    NULL, &o->v_last)))
    return e;

  char history[96];
  time_t now = time(NULL);
  strftime(history, sizeof history, "%Y-%m-%dT%H:%M:%SZ created by miniapp", gmtime(&now));
  if ((e = put_text(o, NC_GLOBAL, "Conventions", "CF-1.8")) ||
      (e = put_text(o, NC_GLOBAL, "title", "FPNA coupled mini-app run: PETSc solver + online-trained surrogate")) ||
      (e = put_text(o, NC_GLOBAL, "institution", "unspecified")) ||
      (e = put_text(o, NC_GLOBAL, "source", "miniapp")) || (e = put_text(o, NC_GLOBAL, "history", history)))
    return e;
  if ((e = put_attrs(o, info->attrs, info->nattrs))) return e; /* after the defaults: the caller's values win */
  NCCHECK(nc_enddef(id), "cannot leave define mode");

  /* The coordinates known now: step and snapshot_step are written up front; time and snapshot_time with each step. */
  int n = (int)nt > info->nreplicas ? (int)nt : info->nreplicas, *iv = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!iv) return ncout_fail_(o, ENOMEM, "cannot allocate");
  for (int i = 0; i < (int)nt; i++) iv[i] = o->first_step + i;
  e = nt ? nc_put_var_int(id, o->v_step, iv) : 0;
  for (int r = 0; r < info->nreplicas; r++) iv[r] = r;
  if (!e) e = nc_put_var_int(id, vrep, iv);
  if (!e && o->nsnap) e = nc_put_var_int(id, o->v_snap_step, o->snap);
  free(iv);
  NCCHECK(e, "cannot write step/replica/snapshot_step");
  if ((e = ncout_set_last_step_(o, o->first_step - 1))) return e; /* nothing yet */
  for (int j = 0; j < info->ny; j++) o->buf[j] = (j + info->y0) * info->dy;
  NCCHECK(nc_put_var_double(id, vy, o->buf), "cannot write y");
  for (int i = 0; i < info->nx; i++) o->buf[i] = (i + info->x0) * info->dx;
  NCCHECK(nc_put_var_double(id, vx, o->buf), "cannot write x");
  return 0;
}

static void destroy(ncout *o)
{
  if (!o) return;
  free(o->v_field), free(o->snap), free(o->buf), free(o->hbuf), free(o->path), free(o);
}

int ncout_create(const char *path, const ncout_info *info, ncout **out)
{
  *out = NULL;
  int sane = info->nx > 0 && info->ny > 0 && info->ncomp > 0 && info->nreplicas > 0 && info->nsteps >= 0 &&
             info->output_every > 0 && info->first_step >= 0 && info->first_step <= info->nsteps + 1 &&
             info->first_epoch >= 0;
  ncout *o = calloc(1, sizeof *o);
  size_t nbuf = (size_t)info->nx * (size_t)info->ny;
  if (nbuf < (size_t)info->nreplicas) nbuf = (size_t)info->nreplicas;
  if (o && sane) {
    o->path = strdup(path), o->partial = o->af.tmp;
    o->nsteps = info->nsteps, o->every = info->output_every, o->first_step = info->first_step;
    for (int k = o->first_step; k <= o->nsteps; k++) o->nsnap += ncout_snapshot_step(k, o->nsteps, o->every);
    o->snap = malloc(sizeof(int) * (size_t)(o->nsnap ? o->nsnap : 1));
    for (int k = o->first_step, n = 0; o->snap && k <= o->nsteps; k++)
      if (ncout_snapshot_step(k, o->nsteps, o->every)) o->snap[n++] = k;
    o->v_field = calloc((size_t)info->ncomp, sizeof(int));
    o->buf = malloc(nbuf * sizeof(double));
    o->hbuf = malloc((size_t)info->nreplicas * NCOUT_HASH_LEN + 1);
  }
  if (!sane || !o || !o->path || !o->snap || !o->v_field || !o->buf || !o->hbuf) {
    snprintf(create_msg, sizeof create_msg, "%s: cannot create (%s)", path,
             sane ? strerror(ENOMEM)
                  : "empty grid, no components, no replicas, output_every < 1 or steps out of range");
    destroy(o);
    return sane ? ENOMEM : NC_EINVAL;
  }
  o->nx = info->nx, o->ny = info->ny, o->ncomp = info->ncomp, o->nrep = info->nreplicas,
  o->first_epoch = info->first_epoch;

  /* The unique temporary first (mkstemp): HDF5 reports a missing directory as "Permission denied". */
  ncout_init();
  int e = afile_begin(&o->af, path, 0);
  if (e) ncout_fail_(o, e, "cannot create a temporary file next to it");
  else {
    errno = 0;
    e = nc_create(o->partial, NC_NETCDF4 | NC_CLOBBER, &o->ncid);
    if (e) ncout_fail_(o, e, "cannot create %s", o->partial);
    else e = define(o, info); /* on failure the handle is left open on purpose: closing (even nc_abort) a
                                  file whose header could not be written (full disk) crashes in NetCDF's
                                  open-object report; the run ends with an error and HDF5's exit clean-up
                                  is off (ncout_init), so nothing touches it again */
    if (e) afile_discard(&o->af);
  }
  if (e) {
    snprintf(create_msg, sizeof create_msg, "%s", o->msg);
    destroy(o);
    return e;
  }
  *out = o;
  return 0;
}

int ncout_set_last_step_(ncout *o, int step)
{
  o->last = step;
  NCCHECK(nc_put_var_int(o->ncid, o->v_last, &step), "cannot write last_step");
  return 0;
}

static int check_step(ncout *o, int step, const char *what)
{
  if (step < o->first_step || step > o->nsteps)
    return ncout_fail_(o, NC_EINVALCOORDS, "%s: step %d outside %d..%d", what, step, o->first_step, o->nsteps);
  return 0;
}

/* The snapshot index of `step`, or -1 when it has none. */
int ncout_snapshot_index_(const ncout *o, int step)
{
  int lo = 0, hi = o->nsnap - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (o->snap[mid] == step) return mid;
    if (o->snap[mid] < step) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

int ncout_write_step(ncout *o, int step, double t, const ncout_step_rec *recs, const ncout_guess_rec *guesses)
{
  int e;
  if ((e = check_step(o, step, "write_step"))) return e;
  size_t i = (size_t)(step - o->first_step), start[3] = {i, 0, 0}, count[3] = {1, (size_t)o->nrep, NCOUT_HASH_LEN};
  NCCHECK(nc_put_var1_double(o->ncid, o->v_time, &i, &t), "cannot write time at step %d", step);
  int k = ncout_snapshot_index_(o, step);
  if (k >= 0) {
    size_t ks = (size_t)k;
    NCCHECK(nc_put_var1_double(o->ncid, o->v_snap_time, &ks, &t), "cannot write snapshot_time at step %d", step);
  }
  for (int g = 0; g < NCOUT_NGUESS; g++) {
    NCCHECK(nc_put_var1_int(o->ncid, o->v_gits[g], &i, &guesses[g].its), "cannot write ksp_its_%s at step %d",
            ncout_guess_names[g], step);
    NCCHECK(nc_put_var1_double(o->ncid, o->v_gr0[g], &i, &guesses[g].start_residual),
            "cannot write start_residual_%s at step %d", ncout_guess_names[g], step);
  }

  /* One row of nrep values per variable, gathered through buf (int rows fit in nrep doubles) or hbuf (hashes). */
  int *its = (int *)o->buf;
  for (int v = 0; v < NSTEPVARS; v++) {
    if (o->v_rec[v] < 0) continue;
    for (int r = 0; r < o->nrep; r++) {
      const char *p = (const char *)&recs[r] + step_vars[v].offset;
      if (v == 0) {
        uint64_t h;
        memcpy(&h, p, sizeof h);
        ncout_format_hash(h, o->hbuf + (size_t)r * NCOUT_HASH_LEN);
      } else if (v == 1) memcpy(&its[r], p, sizeof its[r]);
      else memcpy(&o->buf[r], p, sizeof o->buf[r]);
    }
    e = v == 0 ? nc_put_vara_text(o->ncid, o->v_rec[v], start, count, o->hbuf)
      : v == 1 ? nc_put_vara_int(o->ncid, o->v_rec[v], start, count, its)
               : nc_put_vara_double(o->ncid, o->v_rec[v], start, count, o->buf);
    if (e) return ncout_fail_(o, e, "cannot write %s at step %d", step_vars[v].name, step);
  }
  /* the latest record (a step re-done after a rollback ends the file there again) */
  return ncout_set_last_step_(o, step);
}

int ncout_write_fields(ncout *o, int step, int replica, const double *field)
{
  int e, k;
  if ((e = check_step(o, step, "write_fields"))) return e;
  if ((k = ncout_snapshot_index_(o, step)) < 0)
    return ncout_fail_(o, NC_EINVALCOORDS, "write_fields: step %d is not a snapshot step (every %d and %d)", step,
                       o->every, o->nsteps);
  if (replica < 0 || replica >= o->nrep)
    return ncout_fail_(o, NC_EINVALCOORDS, "write_fields: replica %d outside 0..%d", replica, o->nrep - 1);
  size_t n = (size_t)o->nx * (size_t)o->ny;
  size_t start[4] = {(size_t)k, (size_t)replica, 0, 0}, count[4] = {1, 1, (size_t)o->ny, (size_t)o->nx};
  for (int c = 0; c < o->ncomp; c++) { /* de-interlace [y][x][ncomp] into one [y][x] plane per component */
    for (size_t i = 0; i < n; i++) o->buf[i] = field[i * (size_t)o->ncomp + (size_t)c];
    NCCHECK(nc_put_vara_double(o->ncid, o->v_field[c], start, count, o->buf),
            "cannot write fields of replica %d at step %d", replica, step);
  }
  return 0;
}

int ncout_write_epoch(ncout *o, int epoch, int step, const ncout_epoch_rec *recs)
{
  if (epoch < o->first_epoch)
    return ncout_fail_(o, NC_EINVALCOORDS, "write_epoch: epoch %d before the first, %d", epoch, o->first_epoch);
  size_t e1 = (size_t)(epoch - o->first_epoch), start[3] = {e1, 0, 0}, count[3] = {1, (size_t)o->nrep, NCOUT_HASH_LEN};
  NCCHECK(nc_put_var1_int(o->ncid, o->v_epoch, &e1, &epoch), "cannot write epoch %d", epoch);
  NCCHECK(nc_put_var1_int(o->ncid, o->v_epoch_step, &e1, &step), "cannot write epoch_step of epoch %d", epoch);
  for (int r = 0; r < o->nrep; r++) ncout_format_hash(recs[r].weights_hash, o->hbuf + (size_t)r * NCOUT_HASH_LEN);
  NCCHECK(nc_put_vara_text(o->ncid, o->v_whash, start, count, o->hbuf), "cannot write weights_hash of epoch %d", epoch);
  const struct {
    int varid;
    size_t offset;
    const char *name;
  } dv[3] = {{o->v_loss, offsetof(ncout_epoch_rec, loss), "loss"},
             {o->v_wvc, offsetof(ncout_epoch_rec, weights_vc), "weights_vc"},
             {o->v_wrel, offsetof(ncout_epoch_rec, weights_rel_l2), "weights_rel_l2"}};
  for (int k = 0; k < 3; k++) {
    for (int r = 0; r < o->nrep; r++) memcpy(&o->buf[r], (const char *)&recs[r] + dv[k].offset, sizeof(double));
    NCCHECK(nc_put_vara_double(o->ncid, dv[k].varid, start, count, o->buf), "cannot write %s of epoch %d",
            dv[k].name, epoch);
  }
  return 0;
}

int ncout_write_final(ncout *o, const int *first_div_step, const int *first_div_epoch)
{
  NCCHECK(nc_put_var_int(o->ncid, o->v_fds, first_div_step), "cannot write first_divergent_step");
  NCCHECK(nc_put_var_int(o->ncid, o->v_fde, first_div_epoch), "cannot write first_divergent_epoch");
  return 0;
}

int ncout_close(ncout **po, int keep, char *err, size_t errlen)
{
  ncout *o = *po;
  int e = 0;
  if (!o) return 0;
  *po = NULL;
  errno = 0;
  if (!keep) (void)nc_abort(o->ncid); /* to be deleted: no need to flush it */
  else if ((e = nc_close(o->ncid))) ncout_fail_(o, e, "cannot close %s", o->partial);
  if (keep && !e && (e = afile_commit(&o->af))) ncout_fail_(o, e, "cannot sync and rename %s into place", o->partial);
  if (!keep || e) afile_discard(&o->af);
  if (e && err && errlen) snprintf(err, errlen, "%s", o->msg);
  destroy(o);
  return e;
}

const char *ncout_errmsg(const ncout *o) { return o ? o->msg : create_msg; }

const char *ncout_strerror(int err) { return nc_strerror(err); }
