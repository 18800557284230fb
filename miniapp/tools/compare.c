/* miniapp/tools/compare.c: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc].
 * Compares replica 0 of each run B with replica 0 of the reference run A, the
 * way the driver compares replicas inside one run: state hashes per step,
 * field metrics (metrics.h) at the steps both files hold snapshots, loss V_s
 * and weight hashes per epoch. Prints one table line per B; -o also writes the
 * series to a NetCDF file (layout in docs/output.md). Not a driver: no MPI.
 * Every variable's shape is checked before it is read, the runs' step and
 * epoch series must line up; the -o file is compare_output.c's. */
#define _POSIX_C_SOURCE 200809L
#include "metrics.h"
#include "ncout.h"
#include "buildinfo.h"

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
#include <sys/stat.h>
#include <unistd.h>

#include "compare_impl.h"

static int *open_ids; /* NetCDF files open (inputs, then -o), closed by die() */
static int  nopen;

void die(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("miniapp-compare: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  while (nopen > 0) nc_close(open_ids[--nopen]);
  compare_output_discard();
  exit(1);
}

void compare_track(int ncid, int open)
{
  if (open) open_ids[nopen++] = ncid;
  else nopen--;
}

void *xcalloc(size_t n, size_t size)
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
static void read_hashes(const run *r, const char *name, int d_rows, int d_rep, int d_hash, const char *expect, size_t n,
                        hash_t *out)
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

/* A run file's step coordinates (step, snapshot_step) rise strictly: every
 * series is matched by it, and a repeated or unsorted one would pair the
 * wrong records. */
static void increasing(const run *r, const char *name, size_t n, const int *v)
{
  for (size_t i = 1; i < n; i++)
    if (v[i] <= v[i - 1])
      die("%s: %s[%zu] is %d after %d: not a run file's series (the miniapp writes it rising strictly)", r->path, name,
          i, v[i], v[i - 1]);
}

static void open_run(run *r, const char *path)
{
  size_t nx, ny, nrep, hlen;
  int e, d_step, d_snap, d_rep, d_y, d_x, d_epoch, d_hash, nvars;
  struct stat st;
  r->path = path;
  /* a FIFO would block the open */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) die("%s: not a regular file", path);
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
  increasing(r, "step", r->nt, r->step);
  increasing(r, "snapshot_step", r->nsnap, r->snap_step);
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
    if (hash_written(a->hash[i]) && hash_written(b->hash[j]))
      res->heq[i] = !memcmp(a->hash[i], b->hash[j], NCOUT_HASH_LEN), hashed++;
    if (res->heq[i] == 0 && res->fds < 0) res->fds = a->step[i];
    size_t sa = advance(a->snap_step, a->nsnap, &ka, a->step[i]), sb = advance(b->snap_step, b->nsnap, &kb, a->step[i]);
    if (sa == a->nsnap || sb == b->nsnap) continue; /* no snapshot of this step on one side */
    if (!read_fields(a, sa, fa) || !read_fields(b, sb, fb)) continue;
    metrics_acc acc;
    metrics_reset(&acc);
    metrics_add(&acc, n, fa, fb);
    metrics_finish(&acc, m);
    /* fields whose bits differ (a NaN, -0 against +0 too): the states do, whatever a hash says */
    if (m->vc > 0 && (res->fds < 0 || a->step[i] < res->fds)) res->fds = a->step[i];
    res->last = (int)i;
    xs[np] = a->step[i], ys[np] = m->rel_l2, np++;
  }
  /* "never" only when every step of two whole runs was compared */
  if (res->fds < 0 && (common == 0 || hashed < common || common < a->nt || common < b->nt || a->stopped || b->stopped))
    res->fds = UNKNOWN;
  metrics_growth_t g;
  /* over the exponential window only; no floor: two files do not say where their difference entered */
  res->growth = metrics_growth(np, xs, ys, 0, &g);
  res->efold  = g.efold;
  free(xs), free(ys);

  size_t ecommon = 0, ehashed = 0;
  for (size_t e = 0; e < a->nep; e++) {
    res->lvs[e] = NAN, res->weq[e] = NOT_COMPARED;
    if (e >= b->nep) continue;
    ecommon++;
    res->lvs[e] = metrics_vs(a->loss[e], b->loss[e]);
    if (hash_written(a->whash[e]) && hash_written(b->whash[e]))
      res->weq[e] = !memcmp(a->whash[e], b->whash[e], NCOUT_HASH_LEN), ehashed++;
    else continue;
    if (!res->weq[e] && res->fde < 0) res->fde = a->epoch[e];
  }
  /* no epochs (no network), some not compared, or a run stopped */
  if (res->fde < 0 &&
      (ecommon == 0 || ehashed < ecommon || ecommon < a->nep || ecommon < b->nep || a->stopped || b->stopped))
    res->fde = UNKNOWN;
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
  if (nc_inq_att(r->ncid, NC_GLOBAL, seg, &t, &n) || t == NC_CHAR || t == NC_STRING || n < 2 || n > 64 ||
      nc_get_att_longlong(r->ncid, NC_GLOBAL, seg, v))
    return;
  for (size_t i = 1; i < n; i++) differ |= v[i] != v[0];
  if (!differ) return;
  for (size_t i = 0; i < n && o < len; i++) o += (size_t)snprintf(s + o, len - o, i ? ",%lld" : "%lld", v[i]);
}

static void print_row(int w, const run *r, const char *fs, const char *fe, const char *g, const char *rl,
                      const char *dg)
{
  char sol[64], sur[64], red[130], ranks[64], threads[64], dev[64], sdev[16], devs[96], kern[32] = "";
  attr(r, "solver_reduction", sol, sizeof sol), attr(r, "surrogate_reduction", sur, sizeof sur);
  per_segment(r, "segment_mpi_ranks", "mpi_ranks", ranks, sizeof ranks),
    per_segment(r, "segment_omp_threads", "omp_threads", threads, sizeof threads);
  attr(r, "device", dev, sizeof dev), attr(r, "cuda_kernels", kern, sizeof kern);
  attr(r, "solver_device", sdev, sizeof sdev); /* "-": a file from before the attribute */
  /* solver/surrogate, and the kernel set: the deterministic bits depend on it */
  if (!strcmp(dev, "cuda") && (!strcmp(kern, "tiled") || !strcmp(kern, "gemm")))
    snprintf(devs, sizeof devs, "%s/cuda:%s", sdev, kern);
  else snprintf(devs, sizeof devs, "%s/%s", sdev, dev);
  snprintf(red, sizeof red, "%s/%s", sol, sur);
  printf("%-*s %-27s %5s %7s %-14s %10s %11s %16s %12s %6s\n", w, r->path, red, ranks, threads, devs, fs, fe, g, rl,
         dg);
}

static void print_table(const run *a, const run *b, const result *res, int nb)
{
  int w = (int)strlen(a->path);
  for (int p = 0; p < nb; p++)
    if ((int)strlen(b[p].path) > w) w = (int)strlen(b[p].path);
  printf("%-*s %-27s %5s %7s %-14s %10s %11s %16s %12s %6s\n", w, "file", "solver/surrogate", "ranks", "threads",
         "devices", "first_step", "first_epoch", "growth[dec/step]", "final_rel_l2", "digits");
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
      printf("# %s stopped at step %d (its run was to reach step %d): a row with it compares the steps and epochs both "
             "files hold; past them no divergence is seen (\"-\" where none was found before)\n",
             r->path, r->nt ? r->step[r->nt - 1] : -1, r->planned);
  }
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
    } else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-version")) {
      printf("miniapp-compare %s (source revision %s)\n", MINIAPP_VERSION, MINIAPP_REVISION);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1])
      die("unknown option '%s' (usage: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc])", argv[i]);
    else files[nf++] = argv[i];
  }
  if (nf < 2) die("need at least two files, got %d (usage: miniapp-compare A.nc B.nc [C.nc ...] [-o compare.nc])", nf);

  ncout_init();
  const char *partial = out ? compare_output_prepare(out, files, nf) : NULL;
  run *runs = xcalloc((size_t)nf, sizeof *runs);
  for (int f = 0; f < nf; f++) open_run(&runs[f], files[f]);
  for (int f = 1; f < nf; f++) compare_check_runs(&runs[0], &runs[f]);
  result *res = xcalloc((size_t)nf - 1, sizeof *res);
  for (int f = 1; f < nf; f++) compare(&runs[0], &runs[f], &res[f - 1]);
  print_table(&runs[0], runs + 1, res, nf - 1);
  if (out) compare_output_write(partial, &runs[0], runs + 1, res, nf - 1);
  while (nopen > 0) nc_close(open_ids[--nopen]);
  /* the table on stdout is the result: a full disk behind a redirect is an error */
  if (fflush(stdout) == EOF || ferror(stdout))
    die("writing standard output failed (%s)", strerror(errno ? errno : EIO));
  return 0;
}
