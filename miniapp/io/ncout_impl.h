/* miniapp/io/ncout_impl.h: the run file's private state, shared by ncout.c
 * (create, write, close) and ncout_continue.c (a restarted run continuing
 * the file of the run it continues). */
#ifndef MINIAPP_NCOUT_IMPL_H
#define MINIAPP_NCOUT_IMPL_H

#include "ncout.h"
#include "atomicfile.h"

enum { NSTEPVARS = 16 }; /* state_hash, ksp_its and the fourteen doubles of ncout_step_rec */

struct ncout {
  int    ncid, nx, ny, ncomp, nrep, nsteps, every, first_step, first_epoch, nsnap;
  int    d_step, d_snap, d_epoch, d_rep, d_y, d_x, d_hash;
  int    v_time, v_step, v_snap_step, v_snap_time, v_gits[NCOUT_NGUESS], v_gr0[NCOUT_NGUESS];
  int    v_epoch, v_epoch_step, v_loss, v_whash, v_wvc, v_wrel;
  int    v_fds, v_fde;
  int    v_last, last; /* last_step: the step of the latest step record (first_step - 1: none yet) */
  int    v_rec[NSTEPVARS];
  int   *v_field;  /* ncomp */
  int   *snap;     /* nsnap: the snapshot steps, increasing */
  double *buf;     /* max(nx * ny, nreplicas) doubles */
  char  *hbuf;     /* nreplicas hashes of NCOUT_HASH_LEN characters (+ 1 for snprintf's terminator) */
  char  *path, *partial; /* partial: af.tmp */
  afile  af;
  char   msg[512];
};

/* A file that is not what it should be (ncout_continue): the message is the reason. */
#define NCOUT_EMISMATCH (-1000001)
/* Record the one-line reason "<path>: <what> (<reason>)" and return err. */
int ncout_fail_(ncout *o, int err, const char *fmt, ...);
/* The snapshot index of `step`, or -1 when it has none. */
int ncout_snapshot_index_(const ncout *o, int step);
/* Record that the file's steps end at `step` (last_step). */
int ncout_set_last_step_(ncout *o, int step);

#endif
