/* miniapp/tools/compare_output.c: miniapp-compare's -o file, the comparison
 * series as NetCDF (layout in docs/output.md): checked not to name an input
 * or a device before any work (pathcheck.h), written to a unique temporary
 * and renamed into place (atomicfile.h). Not the comparison (compare.c). */
#define _POSIX_C_SOURCE 200809L
#include "atomicfile.h"
#include "compare_impl.h"
#include "pathcheck.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static afile       out_file; /* the -o temporary, removed by die() */
static const char *out_path;

void compare_output_discard(void) { afile_discard(&out_file); }

static void nccheck(int e, const char *what)
{
  if (!e) return;
  int sys = errno; /* HDF5 says "HDF error" for a full disk: the failed write's errno, or the file system, says so */
  if (e < 0 && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG || sys == EIO))
    die("%s: cannot write %s (%s)", out_path, what, strerror(sys));
  if (afile_diagnose(out_file.tmp, e) == ENOSPC) die("%s: cannot write %s (%s)", out_path, what, strerror(ENOSPC));
  die("%s: cannot write %s (%s)", out_path, what, nc_strerror(e));
}

static void text_att(int ncid, int id, const char *name, const char *value)
{
  nccheck(nc_put_att_text(ncid, id, name, strlen(value), value), name);
}

/* A variable with long_name, units unless NULL, and auxiliary coordinates
 * unless NULL. Doubles get _FillValue NaN (not compared); the rest none:
 * every value is written, and integer flags read as integers (xarray turns a
 * variable with a _FillValue into floats). */
static int def(int ncid, const char *name, nc_type t, int nd, const int *dims, const char *units, const char *ln,
               const char *coords)
{
  int id;
  nccheck(nc_def_var(ncid, name, t, nd, dims, &id), name);
  if (units) text_att(ncid, id, "units", units);
  text_att(ncid, id, "long_name", ln);
  if (coords) text_att(ncid, id, "coordinates", coords);
  if (t == NC_DOUBLE && coords) {
    double nan = NAN;
    nccheck(nc_def_var_fill(ncid, id, 0, &nan), name);
  } else if (t != NC_DOUBLE) nccheck(nc_def_var_fill(ncid, id, 1, NULL), name);
  return id;
}

/* A CF flag variable: -1 not compared, 0 differs, 1 equal. */
static int def_flag(int ncid, const char *name, const int *dims, const char *ln, const char *coords)
{
  static const signed char values[3] = {NOT_COMPARED, 0, 1};
  int id = def(ncid, name, NC_BYTE, 2, dims, NULL, ln, coords);
  nccheck(nc_put_att_schar(ncid, id, "flag_values", NC_BYTE, 3, values), name);
  text_att(ncid, id, "flag_meanings", "not_compared differs equal");
  return id;
}

static void gattr(int ncid, const char *name, const char *value) { text_att(ncid, NC_GLOBAL, name, value); }

/* Before any work: -o must not destroy data (an input, a device, a
 * directory), and its temporary must be creatable. */
const char *compare_output_prepare(const char *path, const char *const *inputs, int n)
{
  char     msg[2 * AFILE_PATH_MAX + 256];
  pathset *ps = pathset_create();
  int      e  = ps ? pathset_add(ps, PATH_OUTPUT, "-o", path) : ENOMEM;
  for (int i = 0; i < n && !e; i++) e = pathset_add(ps, PATH_INPUT, "file", inputs[i]);
  if (e) die("out of memory");
  if (pathset_check(ps, msg, sizeof msg)) die("%s", msg);
  pathset_destroy(&ps);
  if ((e = afile_begin(&out_file, path, 0))) die("-o %s: cannot create a file there (%s)", path, afile_strerror(e));
  out_path = path;
  return out_file.tmp;
}

/* The comparison file's global attributes: CF conventions, its history, the reference run. */
static void global_attributes(int ncid, const run *a)
{
  char   s[256], history[96];
  time_t now = time(NULL);
  strftime(history, sizeof history, "%Y-%m-%dT%H:%M:%SZ created by miniapp-compare", gmtime(&now));
  gattr(ncid, "Conventions", "CF-1.8");
  gattr(ncid, "title", "miniapp-compare: runs compared with a reference run (replica 0 of each)");
  gattr(ncid, "institution", "unspecified");
  gattr(ncid, "source", "miniapp-compare");
  gattr(ncid, "history", history);
  gattr(ncid, "reference_file", a->path);
  attr(a, "solver_reduction", s, sizeof s), gattr(ncid, "reference_solver_reduction", s);
  attr(a, "surrogate_reduction", s, sizeof s), gattr(ncid, "reference_surrogate_reduction", s);
}

void compare_output_write(const char *partial, const run *a, const run *b, const result *res, int nb)
{
  static const char *mname[6] = {"vc", "vermv", "rel_l2", "max_abs", "max_ulp", "digits"};
  static const size_t moff[6] = {offsetof(metrics_t, vc),      offsetof(metrics_t, vermv),
                                 offsetof(metrics_t, rel_l2),  offsetof(metrics_t, max_abs),
                                 offsetof(metrics_t, max_ulp), offsetof(metrics_t, digits)};
  static const char *mlong[6] = {
    "V_c: fraction of field values bitwise different from the reference",
    "V_ermv: mean element-wise relative difference from the reference",
    "relative L2 difference of the fields from the reference",
    "maximum absolute difference of the fields from the reference",
    "maximum distance of the fields from the reference in units in the last place",
    "decimal digits of agreement with the reference (17: bitwise equal)"};
  static const char *lname[3] = {"pair_name", "pair_solver_reduction", "pair_surrogate_reduction"};
  static const char *llong[3]    = {"compared file, as named on the command line",
                                    "solver reduction strategy of the compared file",
                                    "surrogate reduction strategy of the compared file"};
  static const char *step_coords = "time pair_name pair_solver_reduction pair_surrogate_reduction";
  static const char *pair_coords = "pair_name pair_solver_reduction pair_surrogate_reduction";
  int ncid, e;

  /* The labels of each pair: file, solver and surrogate strategy (text, padded to the longest). */
  char (*label)[3][AFILE_PATH_MAX] = xcalloc((size_t)nb, sizeof *label);
  size_t llen = 1;
  for (int p = 0; p < nb; p++) {
    snprintf(label[p][0], sizeof label[p][0], "%s", b[p].path);
    attr(&b[p], "solver_reduction", label[p][1], sizeof label[p][1]);
    attr(&b[p], "surrogate_reduction", label[p][2], sizeof label[p][2]);
    for (int k = 0; k < 3; k++)
      if (strlen(label[p][k]) > llen) llen = strlen(label[p][k]);
  }

  errno = 0;
  nccheck(nc_create(partial, NC_NETCDF4 | NC_CLOBBER, &ncid), "the file (create)");
  compare_track(ncid, 1);

  int d_pair, d_step, d_epoch, d_len, pt[2], pe[2], pl[2], v_pair, v_lab[3], v_step, v_time, v_epoch, v_m[6], v_heq,
    v_lvs, v_weq, v_fds, v_fde, v_gr;
  nccheck(nc_def_dim(ncid, "pair", (size_t)nb, &d_pair), "pair");
  nccheck(nc_def_dim(ncid, "step", a->nt, &d_step), "step");
  nccheck(nc_def_dim(ncid, "epoch", a->nep, &d_epoch), "epoch"); /* 0 epochs: NetCDF makes it unlimited */
  nccheck(nc_def_dim(ncid, "label_strlen", llen, &d_len), "label_strlen");
  pt[0] = pe[0] = pl[0] = d_pair, pt[1] = d_step, pe[1] = d_epoch, pl[1] = d_len;
  v_pair = def(ncid, "pair", NC_INT, 1, &d_pair, "1", "index of the compared file (0: the second file named)", NULL);
  for (int k = 0; k < 3; k++) {
    v_lab[k] = def(ncid, lname[k], NC_CHAR, 2, pl, NULL, llong[k], NULL);
    text_att(ncid, v_lab[k], "_Encoding", "utf-8");
  }
  v_step = def(ncid, "step", NC_INT, 1, &d_step, "1", "time step number of the reference", NULL);
  v_time  = def(ncid, "time", NC_DOUBLE, 1, &d_step, "1", "model time of the reference after the step (nondimensional)",
                NULL);
  v_epoch = def(ncid, "epoch", NC_INT, 1, &d_epoch, "1", "training epoch number of the reference", NULL);
  for (int k = 0; k < 6; k++) v_m[k] = def(ncid, mname[k], NC_DOUBLE, 2, pt, "1", mlong[k], step_coords);
  v_heq = def_flag(ncid, "hash_equal", pt, "state_hash equal to the reference's at the step", step_coords);
  v_lvs = def(ncid, "loss_vs", NC_DOUBLE, 2, pe, "1", "V_s of the training loss: 1 - |loss / reference loss|",
              pair_coords);
  v_weq = def_flag(ncid, "weights_equal", pe, "weights_hash equal to the reference's after the epoch", pair_coords);
  v_fds = def(ncid, "first_divergent_step", NC_INT, 1, &d_pair, "1",
              "first step whose state bits differ (-1: never; -2: none found, but not every step of two whole runs was "
              "compared with both hashes)",
              pair_coords);
  v_fde = def(ncid, "first_divergent_epoch", NC_INT, 1, &d_pair, "1",
              "first epoch whose weight bits differ (-1: never; -2: none found, but no epochs, or not every epoch of "
              "two whole runs was compared with both hashes)",
              pair_coords);
  v_gr  = def(ncid, "growth_rate", NC_DOUBLE, 1, &d_pair, "1",
              "least-squares slope of log10(rel_l2) against step over the longest window ending where the record "
              "ends that grows as one exponential (docs/metrics.md), decades per step; NaN: not measurable",
              pair_coords);

  global_attributes(ncid, a);
  nccheck(nc_enddef(ncid), "definitions");

  int *iv = xcalloc((size_t)nb, sizeof *iv);
  char *row = xcalloc(llen, 1);
  for (int p = 0; p < nb; p++) {
    size_t start[2] = {(size_t)p, 0}, count[2] = {1, llen};
    iv[p] = p;
    for (int k = 0; k < 3; k++) { /* padded with '\0', as NetCDF-C and Python read text */
      memset(row, 0, llen);
      memcpy(row, label[p][k], strlen(label[p][k]));
      nccheck(nc_put_vara_text(ncid, v_lab[k], start, count, row), lname[k]);
    }
  }
  nccheck(nc_put_var_int(ncid, v_pair, iv), "pair");
  if (a->nt) {
    nccheck(nc_put_var_int(ncid, v_step, a->step), "step");
    nccheck(nc_put_var_double(ncid, v_time, a->time), "time");
  }
  if (a->nep) nccheck(nc_put_var_int(ncid, v_epoch, a->epoch), "epoch");
  double *col = xcalloc(a->nt, sizeof *col);
  for (int p = 0; p < nb; p++) {
    const result *r = &res[p];
    size_t start[2] = {(size_t)p, 0}, ct[2] = {1, a->nt}, ce[2] = {1, a->nep}, i1 = (size_t)p;
    if (a->nt) {
      for (int k = 0; k < 6; k++) {
        for (size_t i = 0; i < a->nt; i++) memcpy(&col[i], (const char *)&r->m[i] + moff[k], sizeof col[i]);
        nccheck(nc_put_vara_double(ncid, v_m[k], start, ct, col), mname[k]);
      }
      nccheck(nc_put_vara_schar(ncid, v_heq, start, ct, r->heq), "hash_equal");
    }
    if (a->nep) {
      nccheck(nc_put_vara_double(ncid, v_lvs, start, ce, r->lvs), "loss_vs");
      nccheck(nc_put_vara_schar(ncid, v_weq, start, ce, r->weq), "weights_equal");
    }
    nccheck(nc_put_var1_int(ncid, v_fds, &i1, &r->fds), "first_divergent_step");
    nccheck(nc_put_var1_int(ncid, v_fde, &i1, &r->fde), "first_divergent_epoch");
    nccheck(nc_put_var1_double(ncid, v_gr, &i1, &r->growth), "growth_rate");
  }
  errno = 0;
  compare_track(ncid, 0); /* closed now, whatever the outcome */
  nccheck(nc_close(ncid), "the file (close)");
  if ((e = afile_commit(&out_file)))
    die("%s: cannot sync and rename %s into place (%s)", out_path, partial, afile_strerror(e));
  free(iv), free(col), free(row), free(label);
}
