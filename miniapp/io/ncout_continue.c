/* miniapp/io/ncout_continue.c: a restarted run continues the run file of the
 * run it continues. The new file (created with first_step 0, first_epoch 0:
 * the layout of an uninterrupted run) receives the old file's records of
 * steps 0..upto_step, of the snapshots among them and of epochs
 * 0..upto_epoch-1, bit for bit; the run then writes the rest. The old file
 * is only read: it is replaced when the new one is complete (ncout_close),
 * so a failed continuation loses nothing. Also ncout_commit: the records so
 * far under the file's name mid-run (at a checkpoint), so that a killed run
 * leaves a file to continue. Not here: deciding to continue
 * (coupling_output.c). */
#include "ncout_impl.h"

#include <errno.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The length of dimension `name` of file id (0 when absent). */
static size_t dimlen(int id, const char *name)
{
  int    d;
  size_t n = 0;
  if (nc_inq_dimid(id, name, &d) || nc_inq_dimlen(id, d, &n)) return 0;
  return n;
}

/* The last step file id holds records of: its last_step, or in a file written
 * before last_step existed, the last step whose replica-0 state_hash was
 * written (-1: none). */
static int last_written(int id, size_t nstep)
{
  int v, last = -1;
  if (!nc_inq_varid(id, "last_step", &v)) return nc_get_var_int(id, v, &last) ? -1 : last;
  if (nc_inq_varid(id, "state_hash", &v)) return -1;
  for (size_t k = nstep; k-- > 0;) {
    char   h[NCOUT_HASH_LEN];
    size_t start[3] = {k, 0, 0}, count[3] = {1, 1, NCOUT_HASH_LEN};
    if (!nc_get_vara_text(id, v, start, count, h) && h[0]) return (int)k; /* steps from 0: record k is step k */
  }
  return -1;
}

/* Copy rows src_row[k] -> dst_row[k] (k < nrows) of variable `name`, whose
 * first dimension is the record one, from file pid to o. */
static int copy_rows(ncout *o, int pid, const char *prev, const char *name, const size_t *src_row,
                     const size_t *dst_row, size_t nrows)
{
  int     pv, ov, nd, dims[NC_MAX_VAR_DIMS];
  nc_type t;
  size_t  start[NC_MAX_VAR_DIMS] = {0}, count[NC_MAX_VAR_DIMS], row = 1, esz;
  void   *buf;

  if (nc_inq_varid(pid, name, &pv) || nc_inq_varid(o->ncid, name, &ov)) return 0; /* a variable only one of them has */
  if (nc_inq_var(pid, pv, NULL, &t, &nd, dims, NULL))
    return ncout_fail_(o, NC_EBADID, "%s: cannot read variable %s", prev, name);
  for (int k = 1; k < nd; k++) {
    if (nc_inq_dimlen(pid, dims[k], &count[k]))
      return ncout_fail_(o, NC_EBADDIM, "%s: cannot read variable %s", prev, name);
    row *= count[k];
  }
  esz = t == NC_DOUBLE ? sizeof(double) : t == NC_INT ? sizeof(int) : t == NC_CHAR ? 1 : 0;
  if (!esz) return ncout_fail_(o, NC_EBADTYPE, "%s: variable %s has an unexpected type", prev, name);
  if (!(buf = malloc(row * esz))) return ncout_fail_(o, NC_ENOMEM, "cannot continue it");
  count[0] = 1;
  for (size_t k = 0; k < nrows; k++) {
    int e;
    start[0] = src_row[k];
    e = nc_get_vara(pid, pv, start, count, buf);
    start[0] = dst_row[k];
    if (!e) e = nc_put_vara(o->ncid, ov, start, count, buf);
    if (e) {
      free(buf);
      return ncout_fail_(o, e, "cannot copy %s's %s, record %zu", prev, name, src_row[k]);
    }
  }
  free(buf);
  return 0;
}

/* The layouts the file's steps ran on: global attributes segment_first_step,
 * segment_mpi_ranks and segment_omp_threads, one entry per run that wrote
 * it (the old file's entries, or its own mpi_ranks and omp_threads as one,
 * then this run's from step upto_step + 1; entries past upto_step dropped:
 * those steps are this run's now), and a line of history: the
 * scalar mpi_ranks and omp_threads say only this run's. */
static int add_segment(ncout *o, int pid, int upto_step)
{
  static const char *const seg[3] = {"segment_first_step", "segment_mpi_ranks", "segment_omp_threads"};
  static const char *const one[3] = {NULL, "mpi_ranks", "omp_threads"};
  long long               *v[3] = {NULL, NULL, NULL}, now[3] = {upto_step + 1, 0, 0};
  size_t                   n = 0, len;
  char                    *hist = NULL, stamp[96];
  int                      e = 0;
  time_t                   t = time(NULL);

  for (int k = 1; k < 3; k++)
    if (nc_get_att_longlong(o->ncid, NC_GLOBAL, one[k], &now[k])) now[k] = 0;
  if (!nc_inq_attlen(pid, NC_GLOBAL, seg[0], &n) && n > 0) {
    for (int k = 0; k < 3 && !e; k++) {
      if (nc_inq_attlen(pid, NC_GLOBAL, seg[k], &len) || len != n || !(v[k] = malloc((n + 1) * sizeof **v)) ||
          nc_get_att_longlong(pid, NC_GLOBAL, seg[k], v[k]))
        e = ncout_fail_(o, NCOUT_EMISMATCH, "its %s does not match its %s; name another -output", seg[k], seg[0]);
    }
  } else {
    n = 1;
    for (int k = 0; k < 3 && !e; k++) {
      if (!(v[k] = malloc(2 * sizeof **v))) e = ncout_fail_(o, NC_ENOMEM, "cannot continue it");
      else if (k == 0) v[k][0] = 0;
      else if (nc_get_att_longlong(pid, NC_GLOBAL, one[k], &v[k][0])) v[k][0] = 0; /* a file without it: 0, unknown */
    }
  }
  /* a run whose steps this one makes again (its file was ahead of the checkpoint) */
  while (!e && n > 1 && v[0][n - 1] > upto_step) n--;
  if (!e && nc_inq_attlen(pid, NC_GLOBAL, "history", &len)) len = 0;
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
  if (!e && !(hist = calloc(len + 200, 1))) e = ncout_fail_(o, NC_ENOMEM, "cannot continue it");
  if (!e && len && nc_get_att_text(pid, NC_GLOBAL, "history", hist)) len = 0;
  if (!e) {
    snprintf(hist + len, 200, "%s%s continued from step %d by miniapp (%lld rank(s), %lld thread(s))", len ? "\n" : "",
             stamp, upto_step, now[1], now[2]);
    for (int k = 0; k < 3; k++) v[k][n] = now[k];
    if ((e = nc_redef(o->ncid))) e = ncout_fail_(o, e, "cannot record the runs that wrote it");
    for (int k = 0; k < 3 && !e; k++)
      if ((e = nc_put_att_longlong(o->ncid, NC_GLOBAL, seg[k], NC_INT64, n + 1, v[k])))
        e = ncout_fail_(o, e, "cannot write attribute %s", seg[k]);
    if (!e && (e = nc_put_att_text(o->ncid, NC_GLOBAL, "history", strlen(hist), hist)))
      e = ncout_fail_(o, e, "cannot write attribute history");
    if (!e && (e = nc_enddef(o->ncid))) e = ncout_fail_(o, e, "cannot leave define mode");
  }
  free(v[0]), free(v[1]), free(v[2]), free(hist);
  return e;
}

int ncout_continue(ncout *o, const char *prev, int upto_step, int upto_epoch, const uint64_t *state_hash,
                   int *prev_last)
{
  int     pid, e = 0, nv, every = -1, last = -1, *steps = NULL, *snaps = NULL, *epochs = NULL;
  size_t  nstep, nsnap, nepoch, *src = NULL, *dst = NULL, n = 0;
  nc_type t;

  if (o->first_step != 0 || o->first_epoch != 0 || upto_step < 0 || upto_step > o->nsteps || upto_epoch < 0)
    return ncout_fail_(o, NC_EINVAL, "cannot continue it: not a file laid out from step 0");
  if ((e = nc_open(prev, NC_NOWRITE, &pid))) return ncout_fail_(o, e, "cannot read it to continue it");
  nstep = dimlen(pid, "step"), nsnap = dimlen(pid, "snapshot"), nepoch = dimlen(pid, "epoch");
  /* the file of this very run: same layout, every record up to the restart
   * step from step 0 on, the same output schedule, the same states there */
  if (dimlen(pid, "replica") != (size_t)o->nrep || dimlen(pid, "x") != (size_t)o->nx ||
      dimlen(pid, "y") != (size_t)o->ny)
    e = ncout_fail_(o, NCOUT_EMISMATCH,
                    "not the run file of the run this one continues (%zu replicas of %zu x %zu points, this run %d of "
                    "%d x %d); name another -output",
                    dimlen(pid, "replica"), dimlen(pid, "x"), dimlen(pid, "y"), o->nrep, o->nx, o->ny);
  else if (nc_inq_att(pid, NC_GLOBAL, "output_every", &t, NULL) ||
           nc_get_att_int(pid, NC_GLOBAL, "output_every", &every) || every != o->every)
    e = ncout_fail_(o, NCOUT_EMISMATCH,
                    "written with -output_every %d, this run has %d: continue it with the same, or name another "
                    "-output",
                    every, o->every);
  /* the last written step decides, not the step dimension (the whole run's): the file a run killed after its
   * commit left (ncout_commit) holds the steps to that commit and ends there */
  if (!e) last = last_written(pid, nstep);
  if (!e && last < upto_step) /* no run of this version leaves it so: its file is committed before its checkpoint */
    e = ncout_fail_(o, NCOUT_EMISMATCH,
                    "holds steps up to %d, behind the checkpoint's step %d: steps %d..%d are in neither, and no "
                    "restart from this checkpoint can make them; "
                    "restart from a checkpoint of step %d or before, or name another -output (for the steps from %d "
                    "on)",
                    last, upto_step, last + 1, upto_step, last, upto_step + 1);
  else if (!e && (nstep < (size_t)upto_step + 1 || nepoch < (size_t)upto_epoch))
    e = ncout_fail_(o, NCOUT_EMISMATCH,
                    "holds %zu epochs by step %d, fewer than the checkpoint's %d: not the file of the run this one "
                    "continues; name another -output",
                    nepoch, last, upto_epoch);
  steps  = malloc((nstep + 1) * sizeof *steps);
  snaps  = malloc((nsnap + 1) * sizeof *snaps);
  epochs = malloc((nepoch + 1) * sizeof *epochs);
  src    = malloc((nstep + nsnap + nepoch + 1) * sizeof *src);
  dst    = malloc((nstep + nsnap + nepoch + 1) * sizeof *dst);
  if (!e && (!steps || !snaps || !epochs || !src || !dst)) e = ncout_fail_(o, NC_ENOMEM, "cannot continue it");
  if (!e) {
    int vs, vn, ve;
    if (nc_inq_varid(pid, "step", &vs) || nc_get_var_int(pid, vs, steps) || nc_inq_varid(pid, "snapshot_step", &vn) ||
        (nsnap && nc_get_var_int(pid, vn, snaps)) || nc_inq_varid(pid, "epoch", &ve) ||
        (nepoch && nc_get_var_int(pid, ve, epochs)))
      e = ncout_fail_(o, NCOUT_EMISMATCH,
                      "not a miniapp run file (no step, snapshot_step or epoch); name another -output");
    for (int k = 0; !e && k <= upto_step; k++)
      if (steps[k] != k)
        e = ncout_fail_(o, NCOUT_EMISMATCH,
                        "does not hold the steps from 0 on (record %d is step %d); name another -output", k, steps[k]);
    for (int k = 0; !e && k < upto_epoch; k++)
      if (epochs[k] != k)
        e = ncout_fail_(o, NCOUT_EMISMATCH, "does not hold the epochs from 0 on; name another -output");
  }
  if (!e && state_hash) { /* its hashes at the restart step are the checkpoint's states */
    int  vh;
    char h[NCOUT_HASH_LEN + 1], want[NCOUT_HASH_LEN + 1];
    for (int r = 0; !e && r < o->nrep; r++) {
      size_t start[3] = {(size_t)upto_step, (size_t)r, 0}, count[3] = {1, 1, NCOUT_HASH_LEN};
      ncout_format_hash(state_hash[r], want);
      if (nc_inq_varid(pid, "state_hash", &vh) || nc_get_vara_text(pid, vh, start, count, h))
        e = ncout_fail_(o, NC_ENOTVAR, "cannot read its state_hash");
      else if (!h[0]) /* "": never written */
        e = ncout_fail_(o, NCOUT_EMISMATCH,
                        "has no record of replica %d at step %d, the checkpoint's: not the file of the run this one "
                        "continues; name another -output",
                        r, upto_step);
      else if (memcmp(h, want, NCOUT_HASH_LEN))
        e = ncout_fail_(o, NCOUT_EMISMATCH,
                        "holds another run (replica %d's state_hash at step %d is %.18s, the checkpoint's %s); name "
                        "another -output",
                        r, upto_step, h, want);
    }
  }
  if (!e && last > o->nsteps) /* this run's file, gone on further than this run goes: its later steps would be lost */
    e = ncout_fail_(o, NCOUT_EMISMATCH,
                    "holds steps up to %d, past this run's last step %d: continuing it would drop steps %d..%d; name "
                    "another -output",
                    last, o->nsteps, o->nsteps + 1, last);
  if (!e && nc_inq_nvars(pid, &nv)) e = ncout_fail_(o, NC_EBADID, "cannot read it to continue it");
  for (int v = 0; !e && v < nv; v++) {
    char name[NC_MAX_NAME + 1], dname[NC_MAX_NAME + 1];
    int  nd, d0;
    if (nc_inq_varname(pid, v, name) || nc_inq_varndims(pid, v, &nd) || !nd || nc_inq_vardimid(pid, v, &d0) ||
        nc_inq_dimname(pid, d0, dname))
      continue;
    n = 0;
    if (!strcmp(dname, "step"))
      for (int k = 0; k <= upto_step; k++) src[n] = dst[n] = (size_t)k, n++;
    else if (!strcmp(dname, "snapshot"))
      for (size_t k = 0; k < nsnap; k++) {
        int i = snaps[k] <= upto_step ? ncout_snapshot_index_(o, snaps[k]) : -1;
        if (i >= 0) src[n] = k, dst[n] = (size_t)i, n++;
      }
    else if (!strcmp(dname, "epoch"))
      for (int k = 0; k < upto_epoch; k++) src[n] = dst[n] = (size_t)k, n++;
    if (n && !strcmp(name, dname)) continue; /* the coordinate itself: written by define (epoch: by its records) */
    if (n) e = copy_rows(o, pid, prev, name, src, dst, n);
  }
  if (!e && upto_epoch) { /* the epoch coordinate, an unlimited dimension: its values come with the records */
    for (int k = 0; k < upto_epoch; k++) src[k] = dst[k] = (size_t)k;
    e = copy_rows(o, pid, prev, "epoch", src, dst, (size_t)upto_epoch);
  }
  if (!e) e = add_segment(o, pid, upto_step);
  if (!e) e = ncout_set_last_step_(o, upto_step); /* the records copied */
  *prev_last = last;
  free(steps), free(snaps), free(epochs), free(src), free(dst);
  nc_close(pid);
  return e;
}

int ncout_commit(ncout *o)
{
  int e;
  errno = 0;
  if ((e = nc_close(o->ncid))) return ncout_fail_(o, e, "cannot close %s", o->partial);
  o->ncid = -1;
  if ((e = afile_commit_copy(&o->af))) ncout_fail_(o, e, "cannot commit a copy of %s", o->partial);
  /* the same file again: NetCDF-4 keeps the ids of dimensions and variables (their order of definition) */
  int e2 = nc_open(o->partial, NC_WRITE, &o->ncid);
  if (e2) o->ncid = -1;
  if (!e && e2) e = ncout_fail_(o, e2, "cannot reopen %s", o->partial);
  return e;
}
