/* tests/output/make_runs.c: small run files with controlled differences for
 * the miniapp-compare and plot tests, and a reader that checks a comparison
 * file. Not a model: fields are smooth made-up values.
 *   make_runs DIR                  writes DIR/{ref,same,div,single,grid,comps,novar,corrupt}.nc
 *   make_runs --check-compare F    checks F = miniapp-compare -o of ref.nc same.nc div.nc */
#include "metrics.h"
#include "ncout.h"

#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NY = 4, NSTEPS = 6, EVERY = 2, NMAX = 8 * NY * 2 };

typedef struct {
  const char *name, *solver, *device;
  int         nx, ncomp, nrep;
  int         div_step, div_epoch; /* replica 0 departs from ref here (-1: never) */
} variant;

static void die(const char *what)
{
  fprintf(stderr, "make_runs: %s\n", what);
  exit(1);
}

/* Replica r's field at `step`, [y][x][ncomp]: replica 0 is scaled by
 * 1 + 1e-12 * 10^(step - div_step) from div_step on (rel_l2 grows one decade
 * per step); replica r >= 1 likewise by 1e-13 * r * 10^(step - 3) from step 3. */
static void field(const variant *v, int step, int r, double *f)
{
  double s = 1;
  if (r == 0 && v->div_step >= 0 && step >= v->div_step) s += 1e-12 * pow(10, step - v->div_step);
  if (r > 0 && step >= 3) s += 1e-13 * r * pow(10, step - 3);
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < v->nx; i++)
      for (int c = 0; c < v->ncomp; c++) f[(j * v->nx + i) * v->ncomp + c] = (1 + 0.1 * j + 0.01 * i + 0.5 * c + 0.001 * step) * s;
}

static uint64_t hash(const double *f, size_t n) /* FNV-1a over the bits */
{
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)f;
  for (size_t k = 0; k < n * sizeof *f; k++) h = (h ^ p[k]) * 1099511628211ULL;
  return h;
}

static void write_run(const char *dir, const variant *v)
{
  static const char *comps[2] = {"u", "v"};
  char path[1024], ranks[] = "1", threads[] = "2";
  const ncout_attr attrs[5] = {{"solver_reduction", v->solver, 0}, {"surrogate_reduction", "deterministic", 0},
                               {"mpi_ranks", ranks, 1}, {"omp_threads", threads, 1}, {"device", v->device, 0}};
  ncout_info info = {.nx = v->nx, .ny = NY, .ncomp = v->ncomp, .nreplicas = v->nrep, .nsteps = NSTEPS, .closure = 1,
                     .output_every = EVERY, .dx = 1.0 / v->nx, .dy = 1.0 / NY, .x0 = 0.5, .y0 = 0.5,
                     .comp_names = comps, .attrs = attrs, .nattrs = 5};
  snprintf(path, sizeof path, "%s/%s", dir, v->name);
  ncout *o;
  if (ncout_create(path, &info, &o)) die(ncout_errmsg(NULL));
  size_t n = (size_t)v->nx * NY * (size_t)v->ncomp;
  double f0[NMAX], f[NMAX];
  ncout_step_rec rec[4];
  ncout_epoch_rec er[4];
  int fds[4] = {-1, -1, -1, -1}, fde[4] = {-1, -1, -1, -1}, err = 0;
  for (int step = 0; step <= NSTEPS; step++) {
    field(v, step, 0, f0);
    for (int r = 0; r < v->nrep; r++) {
      field(v, step, r, f);
      metrics_acc acc;
      metrics_t   m;
      metrics_reset(&acc), metrics_add(&acc, n, f0, f), metrics_finish(&acc, &m);
      rec[r] = (ncout_step_rec){.state_hash = hash(f, n), .ksp_its = 12 - step / 2 + r, .ksp_rnorm = 1e-9 * (step + 1),
                                .closure_error = 0.01 / (step + 1), .churn = r ? 0.1 * step : 0, .vc = m.vc,
                                .vermv = m.vermv, .rel_l2 = m.rel_l2, .max_abs = m.max_abs, .max_ulp = m.max_ulp,
                                .digits = m.digits};
      if (rec[r].state_hash != rec[0].state_hash && fds[r] < 0) fds[r] = step;
      if (!err && ncout_snapshot_step(step, NSTEPS, EVERY)) err = ncout_write_fields(o, step, r, f);
    }
    ncout_guess_rec g[NCOUT_NGUESS];
    for (int k = 0; k < NCOUT_NGUESS; k++) g[k] = (ncout_guess_rec){k == 0 ? 20 - step : k == 2 ? (step == 0 ? -1 : 15 - step) : 10, 1e-3};
    if (!err) err = ncout_write_step(o, step, 0.5 * step, rec, g);
    if (step >= 1) { /* epoch step - 1, run during `step` */
      int e = step - 1;
      for (int r = 0; r < v->nrep; r++) {
        int moved = (r == 0 && v->div_epoch >= 0 && e >= v->div_epoch) || (r > 0 && e >= 4);
        er[r] = (ncout_epoch_rec){.loss = (1.0 / (e + 1)) * (moved ? 1 + 1e-6 : 1), .weights_vc = moved ? 0.5 : 0,
                                  .weights_rel_l2 = moved ? 1e-7 : 0, .weights_hash = 1000u + (unsigned)e + (moved ? 7777u : 0)};
        if (moved && r > 0 && fde[r] < 0) fde[r] = e;
      }
      if (!err) err = ncout_write_epoch(o, e, step, er);
    }
  }
  if (!err) err = ncout_write_final(o, fds, fde);
  if (err) die(ncout_errmsg(o));
  char msg[512];
  if (ncout_close(&o, 1, msg, sizeof msg)) die(msg);
}

/* A run file without state_hash, written directly (ncout always writes every variable). */
static void write_novar(const char *dir)
{
  char path[1024];
  int id, d[7], v, e;
  snprintf(path, sizeof path, "%s/novar.nc", dir);
  e = nc_create(path, NC_NETCDF4 | NC_CLOBBER, &id);
  if (!e) e = nc_def_dim(id, "snapshot", 4, &d[0]);
  if (!e) e = nc_def_dim(id, "replica", 1, &d[1]);
  if (!e) e = nc_def_dim(id, "y", NY, &d[2]);
  if (!e) e = nc_def_dim(id, "x", 6, &d[3]);
  if (!e) e = nc_def_dim(id, "step", NSTEPS + 1, &d[4]);
  if (!e) e = nc_def_dim(id, "epoch", NC_UNLIMITED, &d[5]);
  if (!e) e = nc_def_dim(id, "hash_strlen", NCOUT_HASH_LEN, &d[6]);
  if (!e) e = nc_def_var(id, "u", NC_DOUBLE, 4, d, &v);
  if (!e) e = nc_def_var(id, "v", NC_DOUBLE, 4, d, &v);
  if (!e) e = nc_def_var(id, "step", NC_INT, 1, &d[4], &v);
  if (!e) e = nc_def_var(id, "time", NC_DOUBLE, 1, &d[4], &v);
  if (!e) e = nc_def_var(id, "snapshot_step", NC_INT, 1, &d[0], &v);
  if (!e) e = nc_close(id);
  if (e) die(nc_strerror(e));
}

/* ---- --check-compare --------------------------------------------------- */

static int nfail;
#define CHECK(cond) do { if (!(cond)) { nfail++; printf("FAIL line %d: %s\n", __LINE__, #cond); } } while (0)

static int get(int ncid, const char *name, nc_type t, void *out)
{
  int v, e = nc_inq_varid(ncid, name, &v);
  if (!e) e = t == NC_DOUBLE ? nc_get_var_double(ncid, v, out) : t == NC_INT ? nc_get_var_int(ncid, v, out)
                                                                              : nc_get_var_schar(ncid, v, out);
  if (e) nfail++, printf("FAIL: variable %s: %s\n", name, nc_strerror(e));
  return e;
}

static void att_is(int ncid, const char *name, const char *want)
{
  char buf[1024] = "";
  size_t n;
  if (nc_inq_attlen(ncid, NC_GLOBAL, name, &n) || n >= sizeof buf || nc_get_att_text(ncid, NC_GLOBAL, name, buf))
    buf[0] = 0;
  else buf[n] = 0;
  if (!strstr(buf, want)) nfail++, printf("FAIL: global attribute %s = '%s', want '%s'\n", name, buf, want);
}

/* Row p of a (pair, label_strlen) text variable is `want` ('\0'-padded). */
static void label_is(int ncid, const char *name, int p, const char *want)
{
  char buf[256] = "";
  int v, d[2];
  size_t len = 0;
  if (nc_inq_varid(ncid, name, &v) || nc_inq_vardimid(ncid, v, d) || nc_inq_dimlen(ncid, d[1], &len) || len >= sizeof buf ||
      nc_get_vara_text(ncid, v, (size_t[2]){(size_t)p, 0}, (size_t[2]){1, len}, buf))
    len = 0;
  buf[len] = 0;
  if (strcmp(buf, want)) nfail++, printf("FAIL: %s[%d] = '%s', want '%s'\n", name, p, buf, want);
}

/* A CF flag variable: byte, flag_values -1 0 1 with their meanings, no _FillValue (reads as integers). */
static void flag_is(int ncid, const char *name)
{
  int v, nofill = 0;
  nc_type t = NC_NAT;
  signed char fv[3] = {0, 0, 0};
  char m[64] = "";
  size_t n = 0, nm = 0;
  int ok = !nc_inq_varid(ncid, name, &v) && !nc_inq_vartype(ncid, v, &t) && t == NC_BYTE &&
           !nc_inq_attlen(ncid, v, "flag_values", &n) && n == 3 && !nc_get_att_schar(ncid, v, "flag_values", fv) &&
           fv[0] == -1 && fv[1] == 0 && fv[2] == 1 && !nc_inq_attlen(ncid, v, "flag_meanings", &nm) && nm < sizeof m &&
           !nc_get_att_text(ncid, v, "flag_meanings", m) && (m[nm] = 0, !strcmp(m, "not_compared differs equal")) &&
           nc_inq_attlen(ncid, v, "_FillValue", &n) == NC_ENOTATT && !nc_inq_attlen(ncid, v, "long_name", &n) &&
           nc_inq_attlen(ncid, v, "scale_factor", &n) == NC_ENOTATT && !nc_inq_var_fill(ncid, v, &nofill, NULL);
  if (!ok) nfail++, printf("FAIL: %s is not a CF flag variable (byte, flag_values -1 0 1, flag_meanings, no _FillValue)\n", name);
}

static int check_compare(const char *path)
{
  enum { NT = NSTEPS + 1, NE = NSTEPS, NP = 2 };
  int ncid, d, step[NT], fds[NP], fde[NP], ep[NE];
  size_t len;
  double m[NP][NT], lvs[NP][NE], gr[NP], t[NT];
  signed char heq[NP][NT], weq[NP][NE];
  if (nc_open(path, NC_NOWRITE, &ncid)) die("cannot open the comparison file");
  const char *dn[3] = {"pair", "step", "epoch"};
  const size_t dl[3] = {NP, NT, NE};
  for (int k = 0; k < 3; k++) CHECK(!nc_inq_dimid(ncid, dn[k], &d) && !nc_inq_dimlen(ncid, d, &len) && len == dl[k]);
  if (nfail) return 1; /* the arrays below assume these sizes */

  CHECK(!get(ncid, "step", NC_INT, step) && step[0] == 0 && step[NSTEPS] == NSTEPS);
  CHECK(!get(ncid, "time", NC_DOUBLE, t) && t[0] == 0 && t[NSTEPS] == 0.5 * NSTEPS); /* make_runs: t = 0.5 step */
  CHECK(!get(ncid, "epoch", NC_INT, ep) && ep[0] == 0 && ep[NE - 1] == NE - 1);
  CHECK(!get(ncid, "first_divergent_step", NC_INT, fds) && fds[0] == -1 && fds[1] == 2);
  CHECK(!get(ncid, "first_divergent_epoch", NC_INT, fde) && fde[0] == -1 && fde[1] == 3);
  CHECK(!get(ncid, "growth_rate", NC_DOUBLE, gr) && isnan(gr[0]) && isnan(gr[1])); /* 4 snapshots: no exponential window (test_metrics checks the fit) */
  flag_is(ncid, "hash_equal");
  flag_is(ncid, "weights_equal");
  CHECK(!get(ncid, "hash_equal", NC_BYTE, heq));
  for (int s = 0; s < NT; s++) CHECK(heq[0][s] == 1 && heq[1][s] == (s < 2));
  CHECK(!get(ncid, "weights_equal", NC_BYTE, weq));
  for (int e = 0; e < NE; e++) CHECK(weq[0][e] == 1 && weq[1][e] == (e < 3));
  CHECK(!get(ncid, "loss_vs", NC_DOUBLE, lvs) && lvs[0][0] == 0 && lvs[1][2] == 0 && fabs(lvs[1][3] + 1e-6) < 1e-12);
  const char *names[6] = {"vc", "vermv", "rel_l2", "max_abs", "max_ulp", "digits"};
  for (int k = 0; k < 6; k++) {
    if (get(ncid, names[k], NC_DOUBLE, m)) continue;
    for (int s = 0; s < NT; s++) /* fields at the snapshot steps 0, 2, 4, 6 only */
      if (s % EVERY) CHECK(isnan(m[0][s]) && isnan(m[1][s]));
      else if (k == 5) CHECK(m[0][s] == 17 && (s < 2 ? m[1][s] == 17 : m[1][s] < 17));
      else if (k == 0) CHECK(m[0][s] == 0 && m[1][s] == (s < 2 ? 0 : 1));
  }
  get(ncid, "rel_l2", NC_DOUBLE, m);
  CHECK(fabs(m[1][4] / 1e-10 - 1) < 1e-3 && m[0][4] == 0);
  att_is(ncid, "Conventions", "CF-1.8");
  att_is(ncid, "reference_file", "ref.nc");
  att_is(ncid, "reference_solver_reduction", "deterministic");
  label_is(ncid, "pair_name", 0, "same.nc");
  label_is(ncid, "pair_name", 1, "div.nc");
  label_is(ncid, "pair_solver_reduction", 0, "reproducible");
  label_is(ncid, "pair_solver_reduction", 1, "atomic");
  label_is(ncid, "pair_surrogate_reduction", 1, "deterministic");
  CHECK(nc_inq_attlen(ncid, NC_GLOBAL, "pair1_file", &len) == NC_ENOTATT); /* labels are variables now */
  nc_close(ncid);
  printf("%s: %d failed checks\n", nfail ? "FAIL" : "PASS", nfail);
  return nfail != 0;
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--check-compare")) return check_compare(argv[2]);
  if (argc != 2) die("usage: make_runs DIR | make_runs --check-compare FILE");
  const variant v[] = {
    {"ref.nc", "deterministic", "cpu", 6, 2, 2, -1, -1},
    {"same.nc", "reproducible", "cpu", 6, 2, 2, -1, -1},
    {"div.nc", "atomic", "gpu", 6, 2, 2, 2, 3},
    {"single.nc", "deterministic", "cpu", 6, 2, 1, -1, -1},
    {"grid.nc", "deterministic", "cpu", 7, 2, 2, -1, -1},
    {"comps.nc", "deterministic", "cpu", 6, 1, 2, -1, -1},
  };
  for (size_t k = 0; k < sizeof v / sizeof *v; k++) write_run(argv[1], &v[k]);
  write_novar(argv[1]);
  char path[1024];
  snprintf(path, sizeof path, "%s/corrupt.nc", argv[1]);
  FILE *f = fopen(path, "w");
  if (!f || fputs("this is a text file, not NetCDF\n", f) < 0 || fclose(f)) die("cannot write corrupt.nc");
  return 0;
}
