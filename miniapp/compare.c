/* miniapp/compare.c: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc].
 * Compares replica 0 of each run B with replica 0 of the reference run A, the
 * way the driver compares replicas inside one run: state hashes per step,
 * field metrics (metrics.h) at the steps both files hold snapshots, loss V_s
 * and weight hashes per epoch. Prints one table line per B; -o also writes the
 * series to a NetCDF file (layout in docs/output.md). Not a driver: no MPI.
 * Every variable's shape is checked before it is read, the runs' step and
 * epoch series must line up, and -o may not name an input (pathcheck.h); the
 * -o file is a unique temporary renamed into place (atomicfile.h). */
#define _POSIX_C_SOURCE 200809L
#include "atomicfile.h"
#include "metrics.h"
#include "ncout.h"
#include "pathcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netcdf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOT_COMPARED (-1) /* hash_equal / weights_equal: no record on one side (a flag value, not a fill) */
#define UNKNOWN      (-2) /* first divergent step/epoch: none found, but not every common one could be compared */

#include "compare_impl.h"

typedef struct {
  metrics_t   *m;     /* A's nt steps; NaN where fields were not compared */
  signed char *heq;   /* A's nt steps */
  double      *lvs;   /* A's nep epochs */
  signed char *weq;   /* A's nep epochs */
  int          fds, fde, last; /* first divergent step/epoch (-1: none, UNKNOWN: not every common one compared), last compared time index (-1: none) */
  double       growth, efold;
} result;

static afile out_file;     /* the -o temporary, removed by die() */
static int  *open_ids;      /* NetCDF files open (inputs, then -o), closed by die() */
static int   nopen;

void die(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("miniapp-compare: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  while (nopen > 0) nc_close(open_ids[--nopen]);
  afile_discard(&out_file);
  exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  if (!p) die("out of memory");
  return p;
}

/* ---- reading one run ---------------------------------------------------- */

static int dim(const run *r, const char *name, size_t *len)
{
  int id, e = nc_inq_dimid(r->ncid, name, &id);
  if (!e) e = nc_inq_dimlen(r->ncid, id, len);
  if (e) die("%s: missing dimension '%s'", r->path, name);
  return id;
}

static int var(const run *r, const char *name)
{
  int id;
  if (nc_inq_varid(r->ncid, name, &id)) die("%s: missing variable '%s'", r->path, name);
  return id;
}

static void check(const run *r, int e, const char *name)
{
  if (e) die("%s: cannot read '%s' (%s)", r->path, name, nc_strerror(e));
}

/* The variable's id, after checking that its dimensions are exactly dims[nd]
 * (a file written by anything else may shape it otherwise; reading it by the
 * expected shape would overrun the buffers). */
static int shaped(const run *r, const char *name, int nd, const int *dims, const char *expect)
{
  int id = var(r, name), n, d[NC_MAX_VAR_DIMS], same;
  check(r, nc_inq_varndims(r->ncid, id, &n), name);
  check(r, nc_inq_vardimid(r->ncid, id, d), name); /* n <= NC_MAX_VAR_DIMS */
  same = n == nd;
  for (int k = 0; same && k < nd; k++) same = d[k] == dims[k];
  if (!same) {
    char   got[256] = "";
    size_t len;
    for (int k = 0; k < n && k < NC_MAX_VAR_DIMS && strlen(got) < 200; k++) {
      char dn[NC_MAX_NAME + 1] = "?";
      nc_inq_dim(r->ncid, d[k], dn, &len);
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", k ? ", " : "", dn);
    }
    die("%s: variable '%s' has dimensions (%s), expected (%s)", r->path, name, got, expect);
  }
  return id;
}

/* Replica 0's column of a (step|epoch, replica) double variable. */
static void read_col(const run *r, const char *name, int d_rows, int d_rep, const char *expect, size_t n, double *out)
{
  size_t start[2] = {0, 0}, count[2] = {n, 1};
  int dims[2] = {d_rows, d_rep}, id = shaped(r, name, 2, dims, expect);
  if (n) check(r, nc_get_vara_double(r->ncid, id, start, count, out), name);
}

/* Replica 0's hashes of a (step|epoch, replica, hash_strlen) text variable. */
static void read_hashes(const run *r, const char *name, int d_rows, int d_rep, int d_hash, const char *expect, size_t n, hash_t *out)
{
  size_t start[3] = {0, 0, 0}, count[3] = {n, 1, NCOUT_HASH_LEN};
  int dims[3] = {d_rows, d_rep, d_hash}, id = shaped(r, name, 3, dims, expect);
  if (n) check(r, nc_get_vara_text(r->ncid, id, start, count, &out[0][0]), name);
}

/* A 1-D int or double variable on dimension d (named dn) into out[n]. */
static void read_1d(const run *r, const char *name, int d, const char *dn, size_t n, nc_type t, void *out)
{
  int id = shaped(r, name, 1, &d, dn);
  if (n) check(r, t == NC_INT ? nc_get_var_int(r->ncid, id, out) : nc_get_var_double(r->ncid, id, out), name);
}

static void open_run(run *r, const char *path)
{
  size_t nx, ny, nrep, hlen;
  int e, d_step, d_snap, d_rep, d_y, d_x, d_epoch, d_hash, nvars;
  struct stat st;
  r->path = path;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) die("%s: not a regular file", path); /* a FIFO would block the open */
  if ((e = nc_open(path, NC_NOWRITE, &r->ncid))) die("%s: cannot open (%s)", path, nc_strerror(e));
  open_ids[nopen++] = r->ncid;
  d_step = dim(r, "step", &r->nt), d_rep = dim(r, "replica", &nrep), d_y = dim(r, "y", &ny), d_x = dim(r, "x", &nx);
  d_snap = dim(r, "snapshot", &r->nsnap), d_epoch = dim(r, "epoch", &r->nep), d_hash = dim(r, "hash_strlen", &hlen);
  if (nrep < 1) die("%s: no replicas", path);
  if (nx < 1 || ny < 1 || nx * ny > ((size_t)1 << 31)) die("%s: grid %zu x %zu is empty or too large", path, nx, ny);
  if (hlen != NCOUT_HASH_LEN) die("%s: dimension 'hash_strlen' is %zu, expected %d", path, hlen, NCOUT_HASH_LEN);
  r->nx = (int)nx, r->ny = (int)ny;

  /* Components: the (snapshot, replica, y, x) variables, in file order. */
  check(r, nc_inq_nvars(r->ncid, &nvars), "variables");
  r->fieldvar = xcalloc((size_t)nvars, sizeof *r->fieldvar);
  r->comp = xcalloc((size_t)nvars, sizeof *r->comp);
  for (int v = 0; v < nvars; v++) {
    int nd, d[NC_MAX_VAR_DIMS];
    check(r, nc_inq_var(r->ncid, v, r->comp[r->ncomp], NULL, &nd, d, NULL), "variables");
    if (nd == 4 && d[0] == d_snap && d[1] == d_rep && d[2] == d_y && d[3] == d_x) r->fieldvar[r->ncomp++] = v;
  }
  if (r->ncomp == 0) die("%s: missing variable: no field (snapshot, replica, y, x) variables", path);

  r->step = xcalloc(r->nt, sizeof *r->step), r->time = xcalloc(r->nt, sizeof *r->time);
  read_1d(r, "step", d_step, "step", r->nt, NC_INT, r->step);
  read_1d(r, "time", d_step, "step", r->nt, NC_DOUBLE, r->time);
  r->snap_step = xcalloc(r->nsnap, sizeof *r->snap_step);
  read_1d(r, "snapshot_step", d_snap, "snapshot", r->nsnap, NC_INT, r->snap_step);
  r->hash = xcalloc(r->nt, sizeof *r->hash);
  read_hashes(r, "state_hash", d_step, d_rep, d_hash, "step, replica, hash_strlen", r->nt, r->hash);
  { /* a run that stopped early (last_step): its later steps and snapshots were never written, so they are not in it */
    int vl, last;
    if (!nc_inq_varid(r->ncid, "last_step", &vl) && !nc_get_var_int(r->ncid, vl, &last)) {
      r->planned = r->nt ? r->step[r->nt - 1] : -1;
      while (r->nt > 0 && r->step[r->nt - 1] > last) r->nt--, r->stopped = 1;
      while (r->nsnap > 0 && r->snap_step[r->nsnap - 1] > last) r->nsnap--;
    }
  }
  r->epoch = xcalloc(r->nep, sizeof *r->epoch);
  read_1d(r, "epoch", d_epoch, "epoch", r->nep, NC_INT, r->epoch);
  r->loss = xcalloc(r->nep, sizeof *r->loss);
  read_col(r, "loss", d_epoch, d_rep, "epoch, replica", r->nep, r->loss);
  r->whash = xcalloc(r->nep, sizeof *r->whash);
  read_hashes(r, "weights_hash", d_epoch, d_rep, d_hash, "epoch, replica, hash_strlen", r->nep, r->whash);
}

/* A global attribute as text ("-" when absent). */
void attr(const run *r, const char *name, char *s, size_t len)
{
  nc_type t;
  size_t n;
  double v;
  snprintf(s, len, "-");
  if (nc_inq_att(r->ncid, NC_GLOBAL, name, &t, &n)) return;
  if (t == NC_CHAR && n < len) {
    if (!nc_get_att_text(r->ncid, NC_GLOBAL, name, s)) s[n] = 0;
  } else if (t == NC_STRING && n == 1) {
    char *p = NULL;
    if (!nc_get_att_string(r->ncid, NC_GLOBAL, name, &p)) snprintf(s, len, "%s", p);
    if (p) nc_free_string(1, &p);
  } else if (t != NC_CHAR && n == 1 && !nc_get_att_double(r->ncid, NC_GLOBAL, name, &v)) {
    snprintf(s, len, "%g", v);
  }
}

/* Replica 0's plane of every component at snapshot index k into
 * f[ncomp][ny*nx]; 0 if any plane is all NaN (the fill of a snapshot never
 * written). */
static int read_fields(const run *r, size_t k, double *f)
{
  size_t n = (size_t)r->nx * (size_t)r->ny, start[4] = {k, 0, 0, 0}, count[4] = {1, 1, (size_t)r->ny, (size_t)r->nx};
  int written = 1;
  for (int c = 0; c < r->ncomp; c++) {
    double *p = f + (size_t)c * n;
    check(r, nc_get_vara_double(r->ncid, r->fieldvar[c], start, count, p), r->comp[c]);
    size_t i = 0;
    while (i < n && isnan(p[i])) i++;
    if (i == n) written = 0;
  }
  return written;
}

/* ---- comparing ------------------------------------------------------------ */

/* The index of `step` in steps[n] (guess first), n if absent. */
static size_t find_step(const int *steps, size_t n, size_t guess, int step)
{
  if (guess < n && steps[guess] == step) return guess;
  for (size_t j = 0; j < n; j++)
    if (steps[j] == step) return j;
  return n;
}

/* The index of `step` in the increasing steps[n], moving *pos forward; n if absent. */
static size_t advance(const int *steps, size_t n, size_t *pos, int step)
{
  while (*pos < n && steps[*pos] < step) (*pos)++;
  return *pos < n && steps[*pos] == step ? *pos : n;
}

static int hash_written(const char *h) { return h[0] != 0; }

static void compare(const run *a, const run *b, result *res)
{
  size_t n = (size_t)a->nx * (size_t)a->ny * (size_t)a->ncomp;
  double *fa = xcalloc(n, sizeof *fa), *fb = xcalloc(n, sizeof *fb);
  double *xs = xcalloc(a->nt + 1, sizeof *xs), *ys = xcalloc(a->nt + 1, sizeof *ys);
  size_t  np = 0;
  res->m = xcalloc(a->nt, sizeof *res->m), res->heq = xcalloc(a->nt, 1);
  res->lvs = xcalloc(a->nep, sizeof *res->lvs), res->weq = xcalloc(a->nep, 1);
  res->fds = res->fde = res->last = -1;
  size_t common = 0, hashed = 0; /* steps both files hold; of them, those whose hashes both files wrote */

  for (size_t i = 0, ka = 0, kb = 0; i < a->nt; i++) {
    size_t j = find_step(b->step, b->nt, i, a->step[i]);
    metrics_t *m = &res->m[i];
    m->vc = m->vermv = m->rel_l2 = m->max_abs = m->max_ulp = m->digits = NAN;
    res->heq[i] = NOT_COMPARED;
    if (j == b->nt) continue;
    common++;
    if (hash_written(a->hash[i]) && hash_written(b->hash[j])) res->heq[i] = !memcmp(a->hash[i], b->hash[j], NCOUT_HASH_LEN), hashed++;
    if (res->heq[i] == 0 && res->fds < 0) res->fds = a->step[i];
    size_t sa = advance(a->snap_step, a->nsnap, &ka, a->step[i]), sb = advance(b->snap_step, b->nsnap, &kb, a->step[i]);
    if (sa == a->nsnap || sb == b->nsnap) continue; /* no snapshot of this step on one side */
    if (!read_fields(a, sa, fa) || !read_fields(b, sb, fb)) continue;
    metrics_acc acc;
    metrics_reset(&acc);
    metrics_add(&acc, n, fa, fb);
    metrics_finish(&acc, m);
    if (m->vc > 0 && (res->fds < 0 || a->step[i] < res->fds)) res->fds = a->step[i]; /* fields whose bits differ (a NaN, -0 against +0 too): the states do, whatever a hash says */
    res->last = (int)i;
    xs[np] = a->step[i], ys[np] = m->rel_l2, np++;
  }
  if (res->fds < 0 && (common == 0 || hashed < common || common < a->nt || common < b->nt || a->stopped || b->stopped)) res->fds = UNKNOWN; /* "never" only when every step of two whole runs was compared */
  metrics_growth_t g;
  res->growth = metrics_growth(np, xs, ys, &g); /* over the exponential window only */
  res->efold  = g.efold;
  free(xs), free(ys);

  size_t ecommon = 0, ehashed = 0;
  for (size_t e = 0; e < a->nep; e++) {
    res->lvs[e] = NAN, res->weq[e] = NOT_COMPARED;
    if (e >= b->nep) continue;
    ecommon++;
    res->lvs[e] = metrics_vs(a->loss[e], b->loss[e]);
    if (hash_written(a->whash[e]) && hash_written(b->whash[e])) res->weq[e] = !memcmp(a->whash[e], b->whash[e], NCOUT_HASH_LEN), ehashed++;
    else continue;
    if (!res->weq[e] && res->fde < 0) res->fde = a->epoch[e];
  }
  if (res->fde < 0 && (ecommon == 0 || ehashed < ecommon || ecommon < a->nep || ecommon < b->nep || a->stopped || b->stopped)) res->fde = UNKNOWN; /* no epochs (no network), some not compared, or a run stopped */
  free(fa), free(fb);
}

/* ---- reporting -------------------------------------------------------------- */

/* A count per segment of a continued run (segment_mpi_ranks, segment_omp_threads):
 * the values joined ("1,2") where the segments differ, else the global attribute
 * (the one value, or "-"). A restart on other ranks showed only the last. */
static void per_segment(const run *r, const char *seg, const char *name, char *s, size_t len)
{
  nc_type   t;
  size_t    n, o = 0;
  long long v[64];
  int       differ = 0;
  attr(r, name, s, len);
  if (nc_inq_att(r->ncid, NC_GLOBAL, seg, &t, &n) || t == NC_CHAR || t == NC_STRING || n < 2 || n > 64 || nc_get_att_longlong(r->ncid, NC_GLOBAL, seg, v)) return;
  for (size_t i = 1; i < n; i++) differ |= v[i] != v[0];
  if (!differ) return;
  for (size_t i = 0; i < n && o < len; i++) o += (size_t)snprintf(s + o, len - o, i ? ",%lld" : "%lld", v[i]);
}

static void print_row(int w, const run *r, const char *fs, const char *fe, const char *g, const char *rl, const char *dg)
{
  char sol[64], sur[64], red[130], ranks[64], threads[64], dev[64], kern[32] = "";
  attr(r, "solver_reduction", sol, sizeof sol), attr(r, "surrogate_reduction", sur, sizeof sur);
  per_segment(r, "segment_mpi_ranks", "mpi_ranks", ranks, sizeof ranks), per_segment(r, "segment_omp_threads", "omp_threads", threads, sizeof threads);
  attr(r, "device", dev, sizeof dev), attr(r, "cuda_kernels", kern, sizeof kern);
  if (!strcmp(dev, "cuda") && (!strcmp(kern, "tiled") || !strcmp(kern, "gemm"))) snprintf(dev, sizeof dev, "cuda/%s", kern); /* the kernel set: the deterministic bits depend on it */
  snprintf(red, sizeof red, "%s/%s", sol, sur);
  printf("%-*s %-27s %5s %7s %-8s %10s %11s %16s %12s %6s\n", w, r->path, red, ranks, threads, dev, fs, fe, g, rl, dg);
}

static void print_table(const run *a, const run *b, const result *res, int nb)
{
  int w = (int)strlen(a->path);
  for (int p = 0; p < nb; p++)
    if ((int)strlen(b[p].path) > w) w = (int)strlen(b[p].path);
  printf("%-*s %-27s %5s %7s %-8s %10s %11s %16s %12s %6s\n", w, "file", "solver/surrogate", "ranks", "threads",
         "device", "first_step", "first_epoch", "growth[dec/step]", "final_rel_l2", "digits");
  print_row(w, a, "ref", "ref", "-", "-", "-");
  for (int p = 0; p < nb; p++) {
    const result *r = &res[p];
    char fs[16] = "never", fe[16] = "never", g[24] = "-", rl[24] = "-", dg[16] = "-";
    if (r->fds >= 0) snprintf(fs, sizeof fs, "%d", r->fds);
    if (r->fde >= 0) snprintf(fe, sizeof fe, "%d", r->fde);
    if (r->fds == UNKNOWN) snprintf(fs, sizeof fs, "-"); /* not every step compared: no claim */
    if (r->fde == UNKNOWN) snprintf(fe, sizeof fe, "-");
    if (!isnan(r->growth)) snprintf(g, sizeof g, "%.3g", r->growth);
    if (r->last >= 0) {
      snprintf(rl, sizeof rl, "%.3e", r->m[r->last].rel_l2);
      snprintf(dg, sizeof dg, "%.1f", r->m[r->last].digits);
    }
    print_row(w, &b[p], fs, fe, g, rl, dg);
  }
  for (int p = -1; p < nb; p++) { /* what a stopped run's row covers */
    const run *r = p < 0 ? a : &b[p];
    if (r->stopped)
      printf("# %s stopped at step %d (its run was to reach step %d): a row with it compares the steps and epochs both files hold; past them no divergence is seen (\"-\" where none was found before)\n", r->path,
             r->nt ? r->step[r->nt - 1] : -1, r->planned);
  }
}

/* ---- the -o file ---------------------------------------------------------- */

static const char *out_path;

static void nccheck(int e, const char *what)
{
  if (!e) return;
  int sys = errno; /* HDF5 says "HDF error" for a full disk: the failed write's errno, or the file system, says so */
  if (e < 0 && (sys == ENOSPC || sys == EDQUOT || sys == EFBIG || sys == EIO)) die("%s: cannot write %s (%s)", out_path, what, strerror(sys));
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
static int def(int ncid, const char *name, nc_type t, int nd, const int *dims, const char *units, const char *ln, const char *coords)
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
static const char *prepare_output(const char *path, const char *const *inputs, int n)
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

static void write_output(const char *partial, const run *a, const run *b, const result *res, int nb)
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
  static const char *llong[3] = {"compared file, as named on the command line", "solver reduction strategy of the compared file",
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
  open_ids[nopen++] = ncid;

  int d_pair, d_step, d_epoch, d_len, pt[2], pe[2], pl[2], v_pair, v_lab[3], v_step, v_time, v_epoch, v_m[6], v_heq, v_lvs, v_weq,
      v_fds, v_fde, v_gr;
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
  v_time = def(ncid, "time", NC_DOUBLE, 1, &d_step, "1", "model time of the reference after the step (nondimensional)", NULL);
  v_epoch = def(ncid, "epoch", NC_INT, 1, &d_epoch, "1", "training epoch number of the reference", NULL);
  for (int k = 0; k < 6; k++) v_m[k] = def(ncid, mname[k], NC_DOUBLE, 2, pt, "1", mlong[k], step_coords);
  v_heq = def_flag(ncid, "hash_equal", pt, "state_hash equal to the reference's at the step", step_coords);
  v_lvs = def(ncid, "loss_vs", NC_DOUBLE, 2, pe, "1", "V_s of the training loss: 1 - |loss / reference loss|", pair_coords);
  v_weq = def_flag(ncid, "weights_equal", pe, "weights_hash equal to the reference's after the epoch", pair_coords);
  v_fds = def(ncid, "first_divergent_step", NC_INT, 1, &d_pair, "1", "first step whose state bits differ (-1: never; -2: none found, but not every step of two whole runs was compared with both hashes)", pair_coords);
  v_fde = def(ncid, "first_divergent_epoch", NC_INT, 1, &d_pair, "1", "first epoch whose weight bits differ (-1: never; -2: none found, but no epochs, or not every epoch of two whole runs was compared with both hashes)", pair_coords);
  v_gr = def(ncid, "growth_rate", NC_DOUBLE, 1, &d_pair, "1",
             "least-squares slope of log10(rel_l2) against step over the exponential window (from 100x the first nonzero difference to 1e-2), decades per step; NaN: no such window",
             pair_coords);

  char s[256], history[96];
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
  nopen--; /* closed now, whatever the outcome */
  nccheck(nc_close(ncid), "the file (close)");
  if ((e = afile_commit(&out_file))) die("%s: cannot sync and rename %s into place (%s)", out_path, partial, afile_strerror(e));
  free(iv), free(col), free(row), free(label);
}

int main(int argc, char **argv)
{
  const char *out = NULL, **files = xcalloc((size_t)argc, sizeof *files);
  open_ids = xcalloc((size_t)argc + 1, sizeof *open_ids);
  int nf = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o")) {
      if (++i == argc) die("option -o needs a file name");
      if (out) die("-o given twice (%s and %s): one output file", out, argv[i]);
      out = argv[i];
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc]\n"
             "  compares replica 0 of each file with replica 0 of A (the reference); see docs/output.md\n");
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1]) die("unknown option '%s' (usage: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc])", argv[i]);
    else files[nf++] = argv[i];
  }
  if (nf < 2) die("need at least two files, got %d (usage: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc])", nf);

  ncout_init();
  const char *partial = out ? prepare_output(out, files, nf) : NULL;
  run *runs = xcalloc((size_t)nf, sizeof *runs);
  for (int f = 0; f < nf; f++) open_run(&runs[f], files[f]);
  for (int f = 1; f < nf; f++) compare_check_runs(&runs[0], &runs[f]);
  result *res = xcalloc((size_t)nf - 1, sizeof *res);
  for (int f = 1; f < nf; f++) compare(&runs[0], &runs[f], &res[f - 1]);
  print_table(&runs[0], runs + 1, res, nf - 1);
  if (out) write_output(partial, &runs[0], runs + 1, res, nf - 1);
  while (nopen > 0) nc_close(open_ids[--nopen]);
  /* the table on stdout is the result: a full disk behind a redirect is an error */
  if (fflush(stdout) == EOF || ferror(stdout)) die("writing standard output failed (%s)", strerror(errno ? errno : EIO));
  return 0;
}
