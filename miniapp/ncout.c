/* miniapp/ncout.c: the run's NetCDF-4 output file (layout in ncout.h and
 * docs/output.md). Rank 0 only, plain C; it writes what the driver hands it
 * and decides nothing about what or when to write. The file is a unique
 * temporary (kernels/atomicfile.h) renamed into place by ncout_close. */
#define _GNU_SOURCE
#include "ncout.h"
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

enum { NSTEPVARS = 14 }; /* state_hash, ksp_its and the twelve doubles of ncout_step_rec */

const char *const ncout_guess_names[NCOUT_NGUESS] = {"none", "extrapolation", "fischer", "learned", "combined"};

struct ncout {
  int    ncid, nx, ny, ncomp, nrep, nsteps, nepochs;
  int    d_time, d_epoch, d_rep, d_y, d_x;
  int    v_time, v_step, v_gits[NCOUT_NGUESS], v_gr0[NCOUT_NGUESS];
  int    v_epoch, v_epoch_step, v_loss, v_whash, v_wvc, v_wrel;
  int    v_fds, v_fde;
  int    v_rec[NSTEPVARS];
  int   *v_field;  /* ncomp */
  double *buf;     /* max(nx * ny, nreplicas) doubles */
  char  *path, *partial; /* partial: af.tmp */
  afile  af;
  char   msg[512];
};

static char create_msg[512]; /* why the last ncout_create failed (o is NULL then) */

/* The text of err. HDF5 reports a full disk as "HDF error" (and, when it
 * cannot even create the file, "Permission denied"): the errno of the failed
 * write, or a file system without a free block, says what it was. */
static const char *reason(const ncout *o, int err, int sys)
{
  if (err < 0 && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG || sys == EIO)) return strerror(sys);
  if (afile_diagnose(o->af.tmp[0] ? o->af.tmp : o->path, err) == ENOSPC) return strerror(ENOSPC);
  return err == AFILE_ENOTREG ? afile_strerror(err) : nc_strerror(err);
}

/* Record the one-line reason "<path>: <what> (<reason>)" and return err. */
static int fail(ncout *o, int err, const char *fmt, ...)
{
  int sys = errno; /* of the failed call: NCCHECK cleared it before */
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(o->msg, sizeof o->msg, "%s: %s (%s)", o->path, what, reason(o, err, sys));
  return err;
}

#define NCCHECK(call, ...) do { errno = 0; int e_ = (call); if (e_) return fail(o, e_, __VA_ARGS__); } while (0)

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
  if (!dladdr((void *)nc_create, &info) || !info.dli_fname || !(nc = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) return;
  int (*dont_atexit)(void);
  *(void **)&dont_atexit = dlsym(nc, "H5dont_atexit");
  if (dont_atexit) (void)dont_atexit();
  dlclose(nc);
}

static int def_var(ncout *o, const char *name, nc_type type, int ndims, const int *dims, const char *units,
                   const char *long_name, int *varid)
{
  NCCHECK(nc_def_var(o->ncid, name, type, ndims, dims, varid), "cannot define variable %s", name);
  NCCHECK(nc_put_att_text(o->ncid, *varid, "units", strlen(units), units), "cannot write %s:units", name);
  NCCHECK(nc_put_att_text(o->ncid, *varid, "long_name", strlen(long_name), long_name), "cannot write %s:long_name", name);
  int coord = !strcmp(name, "time") || !strcmp(name, "x") || !strcmp(name, "y"); /* CF: no _FillValue on coordinates */
  if (type == NC_DOUBLE && !coord) { /* NaN marks "never written" for every other double */
    double nan = NAN;
    NCCHECK(nc_def_var_fill(o->ncid, *varid, 0, &nan), "cannot set %s:_FillValue", name);
  }
  return 0;
}

static int put_text(ncout *o, int varid, const char *name, const char *value)
{
  NCCHECK(nc_put_att_text(o->ncid, varid, name, strlen(value), value), "cannot write attribute %s", name);
  return 0;
}

/* The per-step (time, replica) variables: state_hash (uint64), ksp_its (int), then doubles. */
#define REC(f) offsetof(ncout_step_rec, f)
static const struct {
  const char *name, *long_name;
  size_t      offset;
} step_vars[NSTEPVARS] = {
  {"state_hash", "hash of the solver state bits after the step", REC(state_hash)},
  {"ksp_its", "Krylov iterations of the step's linear solves", REC(ksp_its)},
  {"ksp_rnorm", "final Krylov residual norm", REC(ksp_rnorm)},
  {"start_residual", "start residual of the step's solve, ||b - A x0|| / ||b||", REC(start_residual)},
  {"increment_error", "relative L2 error of the learned guess's predicted increment", REC(increment_error)},
  {"closure_error", "relative error of the surrogate closure term q = c v^2 against the exact one", REC(closure_error)},
  {"closure_drift", "relative L2 difference of the fields from the exact-term run", REC(closure_drift)},
  {"churn", "fraction of grid points whose surrogate prediction differs from replica 0", REC(churn)},
  {"vc", "V_c: fraction of field values bitwise different from replica 0", REC(vc)},
  {"vermv", "V_ermv: mean element-wise relative difference from replica 0", REC(vermv)},
  {"rel_l2", "relative L2 difference of the fields from replica 0", REC(rel_l2)},
  {"max_abs", "maximum absolute difference of the fields from replica 0", REC(max_abs)},
  {"max_ulp", "maximum distance of the fields from replica 0 in units in the last place", REC(max_ulp)},
  {"digits", "decimal digits of agreement with replica 0 (17: bitwise equal)", REC(digits)},
};

static int define(ncout *o, const ncout_info *info)
{
  int id = o->ncid, tr[2], er[2], f4[4];
  NCCHECK(nc_def_dim(id, "time", (size_t)info->nsteps + 1, &o->d_time), "cannot define dimension time");
  NCCHECK(nc_def_dim(id, "epoch", NC_UNLIMITED, &o->d_epoch), "cannot define dimension epoch");
  NCCHECK(nc_def_dim(id, "replica", (size_t)info->nreplicas, &o->d_rep), "cannot define dimension replica");
  NCCHECK(nc_def_dim(id, "y", (size_t)info->ny, &o->d_y), "cannot define dimension y");
  NCCHECK(nc_def_dim(id, "x", (size_t)info->nx, &o->d_x), "cannot define dimension x");
  tr[0] = o->d_time, tr[1] = o->d_rep, er[0] = o->d_epoch, er[1] = o->d_rep;
  f4[0] = o->d_time, f4[1] = o->d_rep, f4[2] = o->d_y, f4[3] = o->d_x;

  int vy, vx, vrep, e;
  if ((e = def_var(o, "time", NC_DOUBLE, 1, &o->d_time, "1", "model time", &o->v_time))) return e;
  if ((e = def_var(o, "step", NC_INT, 1, &o->d_time, "1", "time step number (0: initial state)", &o->v_step))) return e;
  if ((e = def_var(o, "epoch", NC_INT, 1, &o->d_epoch, "1", "training epoch number", &o->v_epoch))) return e;
  if ((e = def_var(o, "replica", NC_INT, 1, &o->d_rep, "1", "replica number (0: reference)", &vrep))) return e;
  if ((e = def_var(o, "y", NC_DOUBLE, 1, &o->d_y, "1", "y coordinate of the grid point", &vy))) return e;
  if ((e = def_var(o, "x", NC_DOUBLE, 1, &o->d_x, "1", "x coordinate of the grid point", &vx))) return e;
  if ((e = put_text(o, vy, "axis", "Y")) || (e = put_text(o, vx, "axis", "X")) || (e = put_text(o, o->v_time, "axis", "T")) ||
      (e = put_text(o, o->v_time, "standard_name", "time")))
    return e;

  char comment[128];
  snprintf(comment, sizeof comment, "written every %d steps and at the last step; NaN (never written) elsewhere",
           info->output_every);
  size_t chunk[4] = {1, 1, (size_t)info->ny, (size_t)info->nx};
  for (int c = 0; c < info->ncomp; c++) {
    char ln[128];
    snprintf(ln, sizeof ln, "field component %s", info->comp_names[c]);
    if ((e = def_var(o, info->comp_names[c], NC_DOUBLE, 4, f4, "1", ln, &o->v_field[c]))) return e;
    NCCHECK(nc_def_var_chunking(id, o->v_field[c], NC_CHUNKED, chunk), "cannot chunk %s", info->comp_names[c]);
    if ((e = put_text(o, o->v_field[c], "comment", comment))) return e;
  }
  for (int k = 0; k < NSTEPVARS; k++) {
    nc_type t = k == 0 ? NC_UINT64 : k == 1 ? NC_INT : NC_DOUBLE;
    if ((e = def_var(o, step_vars[k].name, t, 2, tr, "1", step_vars[k].long_name, &o->v_rec[k]))) return e;
  }
  for (int g = 0; g < NCOUT_NGUESS; g++) {
    char name[64], ln[160];
    snprintf(name, sizeof name, "ksp_its_%s", ncout_guess_names[g]);
    snprintf(ln, sizeof ln, "Krylov iterations of replica 0's system from the %s initial guess (-1: not run)", ncout_guess_names[g]);
    if ((e = def_var(o, name, NC_INT, 1, &o->d_time, "1", ln, &o->v_gits[g]))) return e;
    snprintf(name, sizeof name, "start_residual_%s", ncout_guess_names[g]);
    snprintf(ln, sizeof ln, "||b - A x0|| / ||b|| of the %s initial guess on replica 0's system", ncout_guess_names[g]);
    if ((e = def_var(o, name, NC_DOUBLE, 1, &o->d_time, "1", ln, &o->v_gr0[g]))) return e;
  }
  if ((e = def_var(o, "epoch_step", NC_INT, 1, &o->d_epoch, "1", "time step during which the epoch ran",
                   &o->v_epoch_step)) ||
      (e = def_var(o, "loss", NC_DOUBLE, 2, er, "1", "training loss of the epoch", &o->v_loss)) ||
      (e = def_var(o, "weights_hash", NC_UINT64, 2, er, "1", "hash of the network weight bits after the epoch",
                   &o->v_whash)) ||
      (e = def_var(o, "weights_vc", NC_DOUBLE, 2, er, "1", "V_c of the network weights against replica 0",
                   &o->v_wvc)) ||
      (e = def_var(o, "weights_rel_l2", NC_DOUBLE, 2, er, "1",
                   "relative L2 distance of the network weights from replica 0", &o->v_wrel)) ||
      (e = def_var(o, "first_divergent_step", NC_INT, 1, &o->d_rep, "1",
                   "first step whose state bits differ from replica 0 (-1: never)", &o->v_fds)) ||
      (e = def_var(o, "first_divergent_epoch", NC_INT, 1, &o->d_rep, "1",
                   "first epoch whose weight bits differ from replica 0 (-1: never)", &o->v_fde)))
    return e;

  char history[96];
  time_t now = time(NULL);
  strftime(history, sizeof history, "%Y-%m-%dT%H:%M:%SZ created by miniapp", gmtime(&now));
  if ((e = put_text(o, NC_GLOBAL, "Conventions", "CF-1.8")) ||
      (e = put_text(o, NC_GLOBAL, "title", "FPNA coupled mini-app run: PETSc solver + online-trained surrogate")) ||
      (e = put_text(o, NC_GLOBAL, "institution", "unspecified")) ||
      (e = put_text(o, NC_GLOBAL, "source", "miniapp")) || (e = put_text(o, NC_GLOBAL, "history", history)))
    return e;
  for (int a = 0; a < info->nattrs; a++) { /* after the defaults: the caller's values win */
    const ncout_attr *at = &info->attrs[a];
    char             *end;
    long long         v = at->numeric ? strtoll(at->value, &end, 10) : 0;
    if (at->numeric && at->value[0] && !*end) /* numbers as numbers */
      NCCHECK(nc_put_att_longlong(id, NC_GLOBAL, at->name, NC_INT64, 1, &v), "cannot write attribute %s", at->name);
    else if ((e = put_text(o, NC_GLOBAL, at->name, at->value))) return e;
  }
  NCCHECK(nc_enddef(id), "cannot leave define mode");

  /* Coordinates known now; step(time) is written up front so skipped steps still have their number. */
  int *iv = malloc(sizeof(int) * (size_t)(info->nsteps + 1 > info->nreplicas ? info->nsteps + 1 : info->nreplicas));
  if (!iv) return fail(o, ENOMEM, "cannot allocate");
  for (int i = 0; i <= info->nsteps; i++) iv[i] = i;
  e = nc_put_var_int(id, o->v_step, iv);
  if (!e) e = nc_put_var_int(id, vrep, iv);
  free(iv);
  NCCHECK(e, "cannot write step/replica");
  for (int j = 0; j < info->ny; j++) o->buf[j] = (j + info->y0) * info->dy;
  NCCHECK(nc_put_var_double(id, vy, o->buf), "cannot write y");
  for (int i = 0; i < info->nx; i++) o->buf[i] = (i + info->x0) * info->dx;
  NCCHECK(nc_put_var_double(id, vx, o->buf), "cannot write x");
  return 0;
}

static void destroy(ncout *o)
{
  if (!o) return;
  free(o->v_field), free(o->buf), free(o->path), free(o);
}

int ncout_create(const char *path, const ncout_info *info, ncout **out)
{
  *out = NULL;
  ncout *o = calloc(1, sizeof *o);
  size_t nbuf = (size_t)info->nx * (size_t)info->ny;
  if (nbuf < (size_t)info->nreplicas) nbuf = (size_t)info->nreplicas;
  if (o) o->path = strdup(path), o->partial = o->af.tmp;
  if (o && info->ncomp > 0) o->v_field = calloc((size_t)info->ncomp, sizeof(int));
  if (o && nbuf > 0) o->buf = malloc(nbuf * sizeof(double));
  int sane = info->nx > 0 && info->ny > 0 && info->ncomp > 0 && info->nreplicas > 0 && info->nsteps >= 0;
  if (!sane || !o || !o->path || !o->v_field || !o->buf) {
    snprintf(create_msg, sizeof create_msg, "%s: cannot create (%s)", path,
             sane ? strerror(ENOMEM) : "empty grid, no components, no replicas or negative nsteps");
    destroy(o);
    return sane ? ENOMEM : NC_EINVAL;
  }
  o->nx = info->nx, o->ny = info->ny, o->ncomp = info->ncomp, o->nrep = info->nreplicas, o->nsteps = info->nsteps;
  o->nepochs = info->first_epoch > 0 ? info->first_epoch : 0;

  /* The unique temporary first (mkstemp): HDF5 reports a missing directory as "Permission denied". */
  ncout_init();
  int e = afile_begin(&o->af, path, 0);
  if (e) fail(o, e, "cannot create a temporary file next to it");
  else {
    errno = 0;
    e = nc_create(o->partial, NC_NETCDF4 | NC_CLOBBER, &o->ncid);
    if (e) fail(o, e, "cannot create %s", o->partial);
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

static int check_step(ncout *o, int step, const char *what)
{
  if (step < 0 || step > o->nsteps)
    return fail(o, NC_EINVALCOORDS, "%s: step %d outside 0..%d", what, step, o->nsteps);
  return 0;
}

int ncout_write_step(ncout *o, int step, double t, const ncout_step_rec *recs, const ncout_guess_rec *guesses)
{
  int e;
  if ((e = check_step(o, step, "write_step"))) return e;
  size_t i = (size_t)step, start[2] = {i, 0}, count[2] = {1, (size_t)o->nrep};
  NCCHECK(nc_put_var1_double(o->ncid, o->v_time, &i, &t), "cannot write time at step %d", step);
  for (int g = 0; g < NCOUT_NGUESS; g++) {
    NCCHECK(nc_put_var1_int(o->ncid, o->v_gits[g], &i, &guesses[g].its), "cannot write ksp_its_%s at step %d", ncout_guess_names[g], step);
    NCCHECK(nc_put_var1_double(o->ncid, o->v_gr0[g], &i, &guesses[g].start_residual), "cannot write start_residual_%s at step %d", ncout_guess_names[g], step);
  }

  /* One row of nrep values per variable, gathered through buf (uint64 and int rows fit in nrep doubles). */
  unsigned long long *h = (unsigned long long *)o->buf;
  int *its = (int *)o->buf;
  for (int k = 0; k < NSTEPVARS; k++) {
    for (int r = 0; r < o->nrep; r++) {
      const char *p = (const char *)&recs[r] + step_vars[k].offset;
      if (k == 0) memcpy(&h[r], p, sizeof h[r]);
      else if (k == 1) memcpy(&its[r], p, sizeof its[r]);
      else memcpy(&o->buf[r], p, sizeof o->buf[r]);
    }
    e = k == 0 ? nc_put_vara_ulonglong(o->ncid, o->v_rec[k], start, count, h)
      : k == 1 ? nc_put_vara_int(o->ncid, o->v_rec[k], start, count, its)
               : nc_put_vara_double(o->ncid, o->v_rec[k], start, count, o->buf);
    if (e) return fail(o, e, "cannot write %s at step %d", step_vars[k].name, step);
  }
  return 0;
}

int ncout_write_fields(ncout *o, int step, int replica, const double *field)
{
  int e;
  if ((e = check_step(o, step, "write_fields"))) return e;
  if (replica < 0 || replica >= o->nrep)
    return fail(o, NC_EINVALCOORDS, "write_fields: replica %d outside 0..%d", replica, o->nrep - 1);
  size_t n = (size_t)o->nx * (size_t)o->ny;
  size_t start[4] = {(size_t)step, (size_t)replica, 0, 0}, count[4] = {1, 1, (size_t)o->ny, (size_t)o->nx};
  for (int c = 0; c < o->ncomp; c++) { /* de-interlace [y][x][ncomp] into one [y][x] plane per component */
    for (size_t i = 0; i < n; i++) o->buf[i] = field[i * (size_t)o->ncomp + (size_t)c];
    NCCHECK(nc_put_vara_double(o->ncid, o->v_field[c], start, count, o->buf),
            "cannot write fields of replica %d at step %d", replica, step);
  }
  return 0;
}

int ncout_write_epoch(ncout *o, int step, const ncout_epoch_rec *recs)
{
  size_t e1 = (size_t)o->nepochs, start[2] = {e1, 0}, count[2] = {1, (size_t)o->nrep};
  int ep = o->nepochs;
  NCCHECK(nc_put_var1_int(o->ncid, o->v_epoch, &e1, &ep), "cannot write epoch %d", ep);
  NCCHECK(nc_put_var1_int(o->ncid, o->v_epoch_step, &e1, &step), "cannot write epoch_step of epoch %d", ep);
  unsigned long long *h = (unsigned long long *)o->buf;
  for (int r = 0; r < o->nrep; r++) h[r] = recs[r].weights_hash;
  NCCHECK(nc_put_vara_ulonglong(o->ncid, o->v_whash, start, count, h), "cannot write weights_hash of epoch %d", ep);
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
            dv[k].name, ep);
  }
  o->nepochs++;
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
  else if ((e = nc_close(o->ncid))) fail(o, e, "cannot close %s", o->partial);
  if (keep && !e && (e = afile_commit(&o->af))) fail(o, e, "cannot sync and rename %s into place", o->partial);
  if (!keep || e) afile_discard(&o->af);
  if (e && err && errlen) snprintf(err, errlen, "%s", o->msg);
  destroy(o);
  return e;
}

const char *ncout_errmsg(const ncout *o) { return o ? o->msg : create_msg; }

const char *ncout_strerror(int err) { return nc_strerror(err); }
