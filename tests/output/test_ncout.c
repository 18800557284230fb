/* tests/output/test_ncout.c: writes a small run file through ncout_* (odd
 * sizes, 3 replicas, fields every 3 steps) and reads it back through the
 * NetCDF API: layout, CF attributes, values bit for bit, a snapshot dimension
 * with exactly the snapshot steps and no unwritten (NaN) snapshot, hashes as
 * the summary's text; a restarted run's file (only the steps and epochs it
 * ran); then the partial-file discipline and the one-line errors.
 * Usage: test_ncout WORKDIR. */
#define _POSIX_C_SOURCE 200809L
#include "ncout.h"

#include <glob.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NX = 7, NY = 5, NC = 2, NR = 3, NSTEPS = 4, EVERY = 3, NEP = 2, NSNAP = 3 }; /* snapshots at steps 0, 3 (every 3), 4 (last) */

static int nfail;
#define CHECK(cond) do { if (!(cond)) { nfail++; printf("FAIL line %d: %s\n", __LINE__, #cond); } } while (0)
#define NC(call) do { int e_ = (call); if (e_) { printf("FAIL line %d: %s: %s\n", __LINE__, #call, nc_strerror(e_)); exit(1); } } while (0)

static int exists(const char *p) { struct stat s; return stat(p, &s) == 0; }

/* Is this process's unique temporary "<path>.partial-<pid>.<host>.XXXXXX" there? */
static int partial_exists(const char *path)
{
  char pattern[1200];
  glob_t g;
  snprintf(pattern, sizeof pattern, "%s.partial-%ld.*", path, (long)getpid());
  int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
  if (n) globfree(&g);
  return n > 0;
}

/* Values chosen to catch conversions: high-bit hashes, -0, subnormals, huge. */
static double fval(int step, int r, int j, int i, int c) { return (step + 1) * 1000.0 + r * 100 + j * 10 + i + c * 0.5 + 1e-13 * r; }
static double dval(int step, int r, int k) { return k == 0 ? -0.0 : k == 1 ? 4.9e-324 * (r + 1) : (step + 0.1) * (k + 1) + r / 3.0; }
static uint64_t hval(int step, int r) { return UINT64_C(0xFEDCBA9876543210) + (uint64_t)step * 977 + (uint64_t)r; }

static void fill_step(int step, ncout_step_rec *rec)
{
  for (int r = 0; r < NR; r++) {
    ncout_step_rec *s = &rec[r];
    s->state_hash = hval(step, r), s->ksp_its = 10 * step + r;
    double *d[14] = {&s->ksp_rnorm, &s->start_residual, &s->increment_error, &s->closure_error, &s->closure_drift, &s->churn_10, &s->churn_50, &s->churn,
                     &s->vc, &s->vermv, &s->rel_l2, &s->max_abs, &s->max_ulp, &s->digits};
    for (int k = 0; k < 14; k++) *d[k] = dval(step, r, k);
  }
}

static int vid(int ncid, const char *name)
{
  int v;
  NC(nc_inq_varid(ncid, name, &v));
  return v;
}

static int bits_eq(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* The hash text the summary prints: "0x" and 16 lowercase hex digits. */
static void hex(uint64_t h, char out[NCOUT_HASH_LEN + 1]) { snprintf(out, NCOUT_HASH_LEN + 1, "0x%016llx", (unsigned long long)h); }

static int has_att(int ncid, int varid, const char *name)
{
  size_t n;
  return nc_inq_attlen(ncid, varid, name, &n) == 0;
}

static void check_text_att(int ncid, int varid, const char *name, const char *want)
{
  char buf[512] = "";
  size_t n = 0;
  int e = nc_inq_attlen(ncid, varid, name, &n);
  if (!e && n < sizeof buf) e = nc_get_att_text(ncid, varid, name, buf), buf[n] = 0;
  if (e || (want && strcmp(buf, want))) {
    nfail++;
    printf("FAIL: attribute %s of variable %d: '%s', want '%s'\n", name, varid, buf, want ? want : "(present)");
  }
}

static void write_file(const char *path, ncout **po)
{
  static const char *comps[NC] = {"u", "v"};
  static const ncout_attr attrs[3] = {{"solver_reduction", "deterministic", 0}, {"scenario", "grayscott test", 0}, {"mpi_ranks", "3", 1}};
  ncout_info info = {.nx = NX, .ny = NY, .ncomp = NC, .nreplicas = NR, .nsteps = NSTEPS, .output_every = EVERY, .closure = 1,
                     .dx = 0.25, .dy = 0.5, .x0 = 0.5, .y0 = 0.5, .comp_names = comps, .attrs = attrs, .nattrs = 3};
  int e = ncout_create(path, &info, po);
  if (e) { printf("FAIL: ncout_create: %s\n", ncout_errmsg(NULL)); exit(1); }
  ncout *o = *po;
  ncout_step_rec rec[NR];
  double field[NY * NX * NC];
  int ep = 0;
  for (int step = 0; step <= NSTEPS; step++) {
    fill_step(step, rec);
    ncout_guess_rec g[NCOUT_NGUESS];
    for (int k = 0; k < NCOUT_NGUESS; k++) g[k] = (ncout_guess_rec){k == 0 && step == 2 ? -1 : 20 + 10 * k + step, dval(step, k, 2)};
    CHECK(ncout_write_step(o, step, 0.125 * step, rec, g) == 0);
    if (ncout_snapshot_step(step, NSTEPS, EVERY))
      for (int r = 0; r < NR; r++) {
        for (int j = 0; j < NY; j++)
          for (int i = 0; i < NX; i++)
            for (int c = 0; c < NC; c++) field[(j * NX + i) * NC + c] = fval(step, r, j, i, c);
        CHECK(ncout_write_fields(o, step, r, field) == 0);
      }
    if (step == 1 || step == 3) { /* epochs 0 and 1 */
      ncout_epoch_rec er[NR];
      for (int r = 0; r < NR; r++)
        er[r] = (ncout_epoch_rec){.loss = 0.5 / (ep + 1) + r * 1e-17, .weights_vc = r * 0.25, .weights_rel_l2 = r * 1e-9,
                                  .weights_hash = hval(100 + ep, r)};
      CHECK(ncout_write_epoch(o, ep, step, er) == 0);
      ep++;
    }
  }
  const int fds[NR] = {-1, 2, 4}, fde[NR] = {-1, 1, -1};
  CHECK(ncout_write_final(o, fds, fde) == 0);
}

static void read_back(const char *path)
{
  int ncid, fmt, v, nvars, unlim;
  size_t len;
  NC(nc_open(path, NC_NOWRITE, &ncid));
  NC(nc_inq_format(ncid, &fmt));
  CHECK(fmt == NC_FORMAT_NETCDF4);
  const char *dn[7] = {"step", "epoch", "replica", "y", "x", "snapshot", "hash_strlen"};
  const size_t dl[7] = {NSTEPS + 1, NEP, NR, NY, NX, NSNAP, NCOUT_HASH_LEN};
  for (int d = 0; d < 7; d++) {
    int id;
    NC(nc_inq_dimid(ncid, dn[d], &id));
    NC(nc_inq_dimlen(ncid, id, &len));
    if (len != dl[d]) nfail++, printf("FAIL: dimension %s = %zu, want %zu\n", dn[d], len, dl[d]);
    if (d == 1) {
      NC(nc_inq_unlimdim(ncid, &unlim));
      CHECK(unlim == id);
    }
  }

  /* Every documented variable is there with long_name, and units unless it is text (the hashes). */
  const char *names[] = {"time", "step", "snapshot_step", "snapshot_time", "epoch", "replica", "y", "x", "u", "v", "state_hash", "ksp_its", "ksp_rnorm",
                         "start_residual", "increment_error", "closure_error", "closure_drift", "churn_10", "churn_50", "churn", "vc", "vermv", "rel_l2", "max_abs", "max_ulp", "digits",
                         "ksp_its_none", "start_residual_none", "ksp_its_extrapolation", "start_residual_extrapolation",
                         "ksp_its_fischer", "start_residual_fischer", "ksp_its_learned", "start_residual_learned", "ksp_its_combined",
                         "start_residual_combined", "ksp_its_projection", "start_residual_projection", "epoch_step", "loss", "weights_hash", "weights_vc",
                         "weights_rel_l2", "first_divergent_step", "first_divergent_epoch", "last_step"};
  int nn = (int)(sizeof names / sizeof *names);
  NC(nc_inq_nvars(ncid, &nvars));
  CHECK(nvars == nn);
  for (int k = 0; k < nn; k++) {
    if (nc_inq_varid(ncid, names[k], &v)) { nfail++, printf("FAIL: variable %s missing\n", names[k]); continue; }
    if (!strstr(names[k], "_hash")) check_text_att(ncid, v, "units", NULL);
    check_text_att(ncid, v, "long_name", NULL);
  }
  /* CF: x, y are grid units, not longitude/latitude (no axis); model time is no dated time axis */
  CHECK(!has_att(ncid, vid(ncid, "x"), "axis") && !has_att(ncid, vid(ncid, "y"), "axis"));
  CHECK(!has_att(ncid, vid(ncid, "time"), "standard_name") && nc_inq_dimid(ncid, "time", &v) == NC_EBADDIM);
  check_text_att(ncid, vid(ncid, "time"), "units", "1");
  /* auxiliary coordinates named where xarray and CF look for them */
  check_text_att(ncid, vid(ncid, "u"), "coordinates", "snapshot_step snapshot_time");
  check_text_att(ncid, vid(ncid, "ksp_rnorm"), "coordinates", "time");
  check_text_att(ncid, vid(ncid, "state_hash"), "coordinates", "time");
  check_text_att(ncid, vid(ncid, "ksp_its_fischer"), "coordinates", "time");
  check_text_att(ncid, vid(ncid, "loss"), "coordinates", "epoch_step");
  check_text_att(ncid, vid(ncid, "weights_hash"), "coordinates", "epoch_step");
  check_text_att(ncid, vid(ncid, "state_hash"), "_Encoding", "utf-8");
  v = vid(ncid, "x");
  double xs[NX], ys[NY];
  NC(nc_get_var_double(ncid, v, xs));
  for (int i = 0; i < NX; i++) CHECK(xs[i] == (i + 0.5) * 0.25);
  v = vid(ncid, "y");
  NC(nc_get_var_double(ncid, v, ys));
  for (int j = 0; j < NY; j++) CHECK(ys[j] == (j + 0.5) * 0.5);

  /* Coordinates and per-step values, bit for bit. */
  int ival[NSTEPS + 1], iv2[NSTEPS + 1][NR];
  double t[NSTEPS + 1], d2[NSTEPS + 1][NR];
  char h[NSTEPS + 1][NR][NCOUT_HASH_LEN], want[NCOUT_HASH_LEN + 1];
  v = vid(ncid, "time"); NC(nc_get_var_double(ncid, v, t));
  v = vid(ncid, "step"); NC(nc_get_var_int(ncid, v, ival));
  for (int s = 0; s <= NSTEPS; s++) CHECK(t[s] == 0.125 * s && ival[s] == s);
  v = vid(ncid, "replica"); NC(nc_get_var_int(ncid, v, ival));
  for (int r = 0; r < NR; r++) CHECK(ival[r] == r);
  v = vid(ncid, "state_hash"); NC(nc_get_var_text(ncid, v, &h[0][0][0]));
  v = vid(ncid, "ksp_its"); NC(nc_get_var_int(ncid, v, &iv2[0][0]));
  for (int s = 0; s <= NSTEPS; s++)
    for (int r = 0; r < NR; r++) {
      hex(hval(s, r), want);
      if (memcmp(h[s][r], want, NCOUT_HASH_LEN)) nfail++, printf("FAIL: state_hash[%d][%d] = '%.18s', want '%s'\n", s, r, h[s][r], want);
      CHECK(iv2[s][r] == 10 * s + r);
    }
  const char *dnames[14] = {"ksp_rnorm", "start_residual", "increment_error", "closure_error", "closure_drift", "churn_10", "churn_50", "churn",
                            "vc", "vermv", "rel_l2", "max_abs", "max_ulp", "digits"};
  for (int k = 0; k < 14; k++) {
    v = vid(ncid, dnames[k]); NC(nc_get_var_double(ncid, v, &d2[0][0]));
    for (int s = 0; s <= NSTEPS; s++)
      for (int r = 0; r < NR; r++)
        if (!bits_eq(d2[s][r], dval(s, r, k))) nfail++, printf("FAIL: %s[%d][%d] = %a\n", dnames[k], s, r, d2[s][r]);
  }
  for (int k = 0; k < NCOUT_NGUESS; k++) {
    char name[64];
    double r0[NSTEPS + 1];
    snprintf(name, sizeof name, "ksp_its_%s", ncout_guess_names[k]);
    v = vid(ncid, name); NC(nc_get_var_int(ncid, v, ival));
    for (int s = 0; s <= NSTEPS; s++) CHECK(ival[s] == (k == 0 && s == 2 ? -1 : 20 + 10 * k + s));
    snprintf(name, sizeof name, "start_residual_%s", ncout_guess_names[k]);
    v = vid(ncid, name); NC(nc_get_var_double(ncid, v, r0));
    for (int s = 0; s <= NSTEPS; s++) CHECK(bits_eq(r0[s], dval(s, k, 2)));
  }

  /* Epochs. */
  double loss[NEP][NR], wvc[NEP][NR], wrel[NEP][NR];
  char wh[NEP][NR][NCOUT_HASH_LEN];
  v = vid(ncid, "epoch"); NC(nc_get_var_int(ncid, v, ival));
  CHECK(ival[0] == 0 && ival[1] == 1);
  v = vid(ncid, "epoch_step"); NC(nc_get_var_int(ncid, v, ival));
  CHECK(ival[0] == 1 && ival[1] == 3);
  v = vid(ncid, "loss"); NC(nc_get_var_double(ncid, v, &loss[0][0]));
  v = vid(ncid, "weights_vc"); NC(nc_get_var_double(ncid, v, &wvc[0][0]));
  v = vid(ncid, "weights_rel_l2"); NC(nc_get_var_double(ncid, v, &wrel[0][0]));
  v = vid(ncid, "weights_hash"); NC(nc_get_var_text(ncid, v, &wh[0][0][0]));
  for (int e = 0; e < NEP; e++)
    for (int r = 0; r < NR; r++) {
      hex(hval(100 + e, r), want);
      CHECK(bits_eq(loss[e][r], 0.5 / (e + 1) + r * 1e-17) && wvc[e][r] == r * 0.25 && bits_eq(wrel[e][r], r * 1e-9) &&
            !memcmp(wh[e][r], want, NCOUT_HASH_LEN));
    }
  v = vid(ncid, "first_divergent_step"); NC(nc_get_var_int(ncid, v, ival));
  CHECK(ival[0] == -1 && ival[1] == 2 && ival[2] == 4);
  v = vid(ncid, "first_divergent_epoch"); NC(nc_get_var_int(ncid, v, ival));
  CHECK(ival[0] == -1 && ival[1] == 1 && ival[2] == -1);
  v = vid(ncid, "last_step"); NC(nc_get_var_int(ncid, v, ival)); /* every step written: the last one */
  CHECK(ival[0] == NSTEPS);

  /* Snapshots: exactly steps 0, 3 (every 3) and 4 (last), each with its model time. */
  double st[NSNAP];
  v = vid(ncid, "snapshot_step"); NC(nc_get_var_int(ncid, v, ival));
  CHECK(ival[0] == 0 && ival[1] == 3 && ival[2] == 4);
  v = vid(ncid, "snapshot_time"); NC(nc_get_var_double(ncid, v, st));
  CHECK(st[0] == 0 && st[1] == 0.125 * 3 && st[2] == 0.125 * 4);
  CHECK(!has_att(ncid, v, "_FillValue") && !has_att(ncid, vid(ncid, "time"), "_FillValue") && !has_att(ncid, vid(ncid, "x"), "_FillValue"));

  /* Fields on (snapshot, replica, y, x), chunked (1, 1, y, x): every value
   * bit for bit, so no snapshot is NaN (unwritten). */
  static double f[NSNAP][NR][NY][NX];
  const int snap_steps[NSNAP] = {0, 3, 4};
  const char *comps[NC] = {"u", "v"};
  for (int c = 0; c < NC; c++) {
    int storage, nofill;
    size_t chunk[4];
    double fill;
    NC(nc_inq_varid(ncid, comps[c], &v));
    NC(nc_inq_var_chunking(ncid, v, &storage, chunk));
    CHECK(storage == NC_CHUNKED && chunk[0] == 1 && chunk[1] == 1 && chunk[2] == NY && chunk[3] == NX);
    NC(nc_inq_var_fill(ncid, v, &nofill, &fill));
    CHECK(!nofill && isnan(fill));
    NC(nc_get_var_double(ncid, v, &f[0][0][0][0]));
    int bad = 0, dims[4], dsnap;
    NC(nc_inq_vardimid(ncid, v, dims));
    NC(nc_inq_dimid(ncid, "snapshot", &dsnap));
    CHECK(dims[0] == dsnap);
    for (int k = 0; k < NSNAP; k++)
      for (int r = 0; r < NR; r++)
        for (int j = 0; j < NY; j++)
          for (int i = 0; i < NX; i++) bad += !bits_eq(f[k][r][j][i], fval(snap_steps[k], r, j, i, c));
    if (bad) nfail++, printf("FAIL: %d wrong values in field %s\n", bad, comps[c]);
  }

  /* Global attributes: CF defaults and the caller's. */
  check_text_att(ncid, NC_GLOBAL, "Conventions", "CF-1.8");
  check_text_att(ncid, NC_GLOBAL, "title", NULL);
  check_text_att(ncid, NC_GLOBAL, "institution", NULL);
  check_text_att(ncid, NC_GLOBAL, "source", NULL);
  check_text_att(ncid, NC_GLOBAL, "history", NULL);
  check_text_att(ncid, NC_GLOBAL, "solver_reduction", "deterministic");
  check_text_att(ncid, NC_GLOBAL, "scenario", "grayscott test");
  { /* numbers as numbers; CF coordinates: no _FillValue */
    nc_type   t;
    long long v = 0;
    int       vt, vx;
    size_t    n;
    if (nc_inq_atttype(ncid, NC_GLOBAL, "mpi_ranks", &t) || t != NC_INT64 || nc_get_att_longlong(ncid, NC_GLOBAL, "mpi_ranks", &v) || v != 3) nfail++, printf("FAIL: mpi_ranks is not the integer 3\n");
    NC(nc_inq_varid(ncid, "time", &vt));
    NC(nc_inq_varid(ncid, "x", &vx));
    if (!nc_inq_attlen(ncid, vt, "_FillValue", &n) || !nc_inq_attlen(ncid, vx, "_FillValue", &n)) nfail++, printf("FAIL: a coordinate has a _FillValue\n");
  }
  NC(nc_close(ncid));
}

/* A restarted run (checkpoint at step 3 of 7, 5 epochs done): the file holds
 * steps 4..7, the snapshots among them (6, 7) and epochs from 5, nothing
 * unwritten; steps before its first are refused. */
static void restarted(const char *dir)
{
  static const char *comps[1] = {"u"};
  ncout_info info = {.nx = 3, .ny = 2, .ncomp = 1, .nreplicas = 1, .nsteps = 7, .output_every = 3, .dx = 1, .dy = 1,
                     .comp_names = comps, .first_step = 4, .first_epoch = 5};
  char path[1024], err[512];
  ncout *o;
  snprintf(path, sizeof path, "%s/restarted.nc", dir);
  if (ncout_create(path, &info, &o)) { nfail++, printf("FAIL: restarted create: %s\n", ncout_errmsg(NULL)); return; }
  ncout_step_rec rec = {.state_hash = 42};
  ncout_guess_rec g[NCOUT_NGUESS] = {{0}};
  ncout_epoch_rec er = {.loss = 1, .weights_hash = 7};
  double field[6] = {1, 2, 3, 4, 5, 6};
  CHECK(ncout_write_step(o, 3, 0.0, &rec, g) != 0); /* in the earlier run's file */
  printf("before the first step: %s\n", ncout_errmsg(o));
  CHECK(ncout_write_fields(o, 5, 0, field) != 0);   /* not a snapshot step */
  printf("not a snapshot step: %s\n", ncout_errmsg(o));
  CHECK(ncout_write_epoch(o, 4, 4, &er) != 0);      /* before the first epoch */
  for (int step = 4; step <= 7; step++) {
    rec.ksp_its = step;
    CHECK(ncout_write_step(o, step, 0.5 * step, &rec, g) == 0);
    if (ncout_snapshot_step(step, 7, 3)) CHECK(ncout_write_fields(o, step, 0, field) == 0);
    if (step == 5 || step == 7) CHECK(ncout_write_epoch(o, step == 5 ? 5 : 6, step, &er) == 0);
  }
  CHECK(ncout_write_final(o, (int[1]){-1}, (int[1]){-1}) == 0);
  CHECK(ncout_close(&o, 1, err, sizeof err) == 0);

  int ncid, v, iv[4];
  size_t len;
  double t[4], st[2], u[2][2][3];
  NC(nc_open(path, NC_NOWRITE, &ncid));
  NC(nc_inq_dimid(ncid, "step", &v)); NC(nc_inq_dimlen(ncid, v, &len)); CHECK(len == 4);
  NC(nc_inq_dimid(ncid, "snapshot", &v)); NC(nc_inq_dimlen(ncid, v, &len)); CHECK(len == 2);
  NC(nc_inq_dimid(ncid, "epoch", &v)); NC(nc_inq_dimlen(ncid, v, &len)); CHECK(len == 2);
  NC(nc_get_var_int(ncid, vid(ncid, "step"), iv)); CHECK(iv[0] == 4 && iv[3] == 7);
  NC(nc_get_var_double(ncid, vid(ncid, "time"), t)); CHECK(t[0] == 2 && t[3] == 3.5);
  NC(nc_get_var_int(ncid, vid(ncid, "ksp_its"), iv)); CHECK(iv[0] == 4 && iv[3] == 7);
  NC(nc_get_var_int(ncid, vid(ncid, "snapshot_step"), iv)); CHECK(iv[0] == 6 && iv[1] == 7);
  NC(nc_get_var_double(ncid, vid(ncid, "snapshot_time"), st)); CHECK(st[0] == 3 && st[1] == 3.5);
  NC(nc_get_var_double(ncid, vid(ncid, "u"), &u[0][0][0])); CHECK(u[0][0][0] == 1 && u[1][1][2] == 6);
  NC(nc_get_var_int(ncid, vid(ncid, "epoch"), iv)); CHECK(iv[0] == 5 && iv[1] == 6);
  NC(nc_get_var_int(ncid, vid(ncid, "epoch_step"), iv)); CHECK(iv[0] == 5 && iv[1] == 7);
  NC(nc_close(ncid));
}

int main(int argc, char **argv)
{
  if (argc != 2) { printf("usage: test_ncout WORKDIR\n"); return 2; }
  char path[1024], err[512] = "";
  mkdir(argv[1], 0777);

  /* 1. Write, check the partial discipline, close with keep = 1, read back. */
  snprintf(path, sizeof path, "%s/run.nc", argv[1]);
  remove(path);
  ncout *o = NULL;
  write_file(path, &o);
  CHECK(!exists(path) && partial_exists(path));
  CHECK(ncout_close(&o, 1, err, sizeof err) == 0 && o == NULL);
  CHECK(exists(path) && !partial_exists(path));
  read_back(path);

  restarted(argv[1]);

  /* 2. keep = 0 leaves no file at all. */
  snprintf(path, sizeof path, "%s/discard.nc", argv[1]);
  remove(path);
  write_file(path, &o);
  CHECK(ncout_close(&o, 0, err, sizeof err) == 0 && o == NULL);
  CHECK(!exists(path) && !partial_exists(path));

  /* 3. An unwritable path: nonzero, no handle, one line naming the path. */
  snprintf(path, sizeof path, "%s/no/such/dir/run.nc", argv[1]);
  static const char *comps[1] = {"u"};
  ncout_info info = {.nx = 3, .ny = 2, .ncomp = 1, .nreplicas = 1, .nsteps = 1, .output_every = 1, .dx = 1, .dy = 1,
                     .comp_names = comps};
  int e = ncout_create(path, &info, &o);
  const char *msg = ncout_errmsg(NULL);
  printf("unwritable path: %s\n", msg);
  CHECK(e != 0 && o == NULL && strstr(msg, path) == msg && !strchr(msg, '\n') && strstr(msg, "No such file"));
  ncout_info bad = info;
  bad.output_every = 0;
  CHECK(ncout_create(path, &bad, &o) != 0 && o == NULL);
  bad = info, bad.first_step = 3; /* past nsteps + 1 */
  CHECK(ncout_create(path, &bad, &o) != 0 && o == NULL);
  printf("bad info: %s\n", ncout_errmsg(NULL));

  /* 4. Out-of-range writes and a failed rename: nonzero and one line naming the file. */
  snprintf(path, sizeof path, "%s/isdir.nc", argv[1]);
  mkdir(path, 0777);
  CHECK(ncout_create(path, &info, &o) == 0);
  ncout_step_rec rec = {0};
  ncout_guess_rec g0[NCOUT_NGUESS] = {{0}};
  CHECK(ncout_write_step(o, 2, 0.0, &rec, g0) != 0 && strstr(ncout_errmsg(o), path) == ncout_errmsg(o));
  printf("out of range: %s\n", ncout_errmsg(o));
  CHECK(ncout_write_fields(o, 0, 1, (double[6]){0}) != 0);
  e = ncout_close(&o, 1, err, sizeof err); /* rename onto a directory fails */
  printf("rename onto a directory: %s\n", err);
  CHECK(e != 0 && o == NULL && strstr(err, path) == err && !strchr(err, '\n'));
  CHECK(!partial_exists(path));
  CHECK(*ncout_strerror(e) != 0);

  printf("%s: %d failed checks\n", nfail ? "FAIL" : "PASS", nfail);
  return nfail != 0;
}
