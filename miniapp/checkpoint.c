/* miniapp/checkpoint.c: checkpoint/restart of the coupled run.
 *
 *   -checkpoint FILE        write FILE at the end of the run, every
 *                           -checkpoint_every N steps, and when SIGTERM or
 *                           SIGUSR1 arrives (what batch schedulers send before
 *                           an allocation ends): the current step finishes,
 *                           the checkpoint is written and the run exits with
 *                           code 3 (CHECKPOINT_EXIT_SIGNAL)
 *   -restart FILE           continue the run FILE holds; -ts_max_steps stays
 *                           the total number of steps counted from the start
 *
 * The file (solver/ckpt.h) holds everything a later step reads: every
 * replica's solver state, step, model time and iteration history, its
 * network (weights, Adam moments and step, normalization), its atomic-order
 * state, its guess state (the last increment and its RMS, the scale of the
 * last correction, the GuessSpace's past increments, Gram matrix and Fischer
 * basis) and closure flag; the side runs' atomic-order state and the
 * guesses' tallies; the exact-term run of the closure; the epoch counter and
 * the divergence record so far. Fields are stored in natural grid order, so a
 * restart may use other ranks and threads. Its first record describes the
 * run; a restart refuses, with one line, a checkpoint whose build strategies,
 * scenario, grid, physics, coupling, replicas, guess space, network size or
 * atomic-order seed differ from the run's. Options that only steer what
 * comes next (-ts_max_steps, -train_every, -surrogate_lr, outputs ...) may
 * change. Timings are of the process that measured them and start again. */
#include "coupling_impl.h"
#include "buildinfo.h"
#include "outpath.h"
#include "vecred.h"

#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t pending_signal;

static void OnSignal(int sig) { pending_signal = sig; }

/* The counters and records of the run that later steps and the summary use. */
typedef struct {
  int64_t epoch, switches, last_switch, active_steps, inc_err_n[2];
  double  drift_max, inc_err_sum[2];
} CouplingCounters;

PetscErrorCode CheckpointSetFromOptions(Coupled c)
{
  PetscBool set_ck, set_rs;

  PetscFunctionBegin;
  c->checkpoint_every = 0, c->restart_step = -1;
  PetscOptionsBegin(c->comm, NULL, "Checkpoint/restart", NULL);
  PetscCall(PetscOptionsString("-checkpoint", "Write a checkpoint to this file at the end, every -checkpoint_every steps and on SIGTERM/SIGUSR1 (then exit 3)", NULL, c->checkpoint, c->checkpoint, sizeof c->checkpoint, &set_ck));
  PetscCall(PetscOptionsInt("-checkpoint_every", "Also write the checkpoint every N steps (0: only at the end and on a signal)", NULL, c->checkpoint_every, &c->checkpoint_every, NULL));
  PetscCall(PetscOptionsString("-restart", "Continue the run held by this checkpoint file", NULL, c->restart, c->restart, sizeof c->restart, &set_rs));
  PetscOptionsEnd();
  PetscCheck(!set_ck || c->checkpoint[0], c->comm, PETSC_ERR_ARG_WRONG, "-checkpoint: needs a file name");
  PetscCheck(!set_rs || c->restart[0], c->comm, PETSC_ERR_ARG_WRONG, "-restart: needs a file name");
  PetscCheck(c->checkpoint_every >= 0, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-checkpoint_every %" PetscInt_FMT ": must be >= 0", c->checkpoint_every);
  PetscCheck(!c->checkpoint_every || c->checkpoint[0], c->comm, PETSC_ERR_ARG_WRONG, "-checkpoint_every %" PetscInt_FMT ": needs -checkpoint FILE", c->checkpoint_every);
  if (c->checkpoint[0]) PetscCall(OutPathRegisterOutput("-checkpoint", c->checkpoint));
  if (c->restart[0]) {
    /* continuing in place (-restart ck -checkpoint ck) is safe: the file is
     * read whole before the run and replaced atomically */
    char a[PETSC_MAX_PATH_LEN], b[PETSC_MAX_PATH_LEN];
    if (!(c->checkpoint[0] && realpath(c->restart, a) && realpath(c->checkpoint, b) && !strcmp(a, b))) PetscCall(OutPathRegisterInput("-restart", c->restart));
  }
  if (c->checkpoint[0]) { /* a scheduler's warning becomes a checkpoint (under Open MPI's mpirun use
                           * SIGUSR1: mpirun forwards it, while on SIGTERM it kills the ranks soon after) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnSignal;
    sa.sa_flags   = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What a restart must agree on, as "key: value" lines. */
static PetscErrorCode Describe(Coupled c, char buf[], size_t len)
{
  size_t n;

  PetscFunctionBegin;
  buf[0] = 0;
  PetscCall(SolverDescribe(c->rep[0].solver, buf, len));
  n = strlen(buf);
  PetscCall(PetscSNPrintf(buf + n, len - n, "surrogate_reduction: %s\ncoupling: %s\nreplicas: %" PetscInt_FMT "\natomic_order_seed: %llu\n", SurrogateGetStrategyName(), CouplingModeNames[c->mode], c->nrep,
                         (unsigned long long)c->base_order.seed));
  n = strlen(buf);
  if (c->rep[0].net) PetscCall(PetscSNPrintf(buf + n, len - n, "surrogate_weights: %" PetscInt_FMT "\nsurrogate_inputs: %" PetscInt_FMT "\n", c->nweights, c->n_in));
  n = strlen(buf);
  if (c->mode == COUPLING_GUESS)
    PetscCall(PetscSNPrintf(buf + n, len - n, "guess: %s\nguess_history: %" PetscInt_FMT "\nguess_projection: %d\ncoupling_baselines: %d\n", c->guess == GUESS_COMBINED ? "combined" : "learned", c->history, (int)c->projection, (int)c->baselines));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The value of "key: " in a description (empty when absent). */
static void Value(const char *desc, const char *key, char *val, size_t len)
{
  size_t      kl = strlen(key);
  const char *p  = desc;

  val[0] = 0;
  for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (!strncmp(p, key, kl) && p[kl] == ':' && p[kl + 1] == ' ') {
      size_t vl = strcspn(p + kl + 2, "\n");
      if (vl >= len) vl = len - 1;
      memcpy(val, p + kl + 2, vl), val[vl] = 0;
      return;
    }
}

/* Everything after the description, in either direction (CkptData/CkptVec):
 * one list, so that what is written is what is read. */
static PetscErrorCode State(Coupled c, Ckpt ck, PetscInt step)
{
  char             name[64];
  PetscBool        writing = CkptIsWriting(ck);
  size_t           nr      = (size_t)c->nrep;
  CouplingCounters k       = {c->epoch, c->switches, c->last_switch, c->active_steps, {c->inc_err_n[0], c->inc_err_n[1]}, c->drift_max, {c->inc_err_sum[0], c->inc_err_sum[1]}};
  struct {
    const char *name;
    void       *data;
    size_t      size;
  } recs[] = {
    {"coupling/counters", &k, sizeof k},
    {"coupling/base_order", &c->base_order, sizeof c->base_order},
    {"coupling/tally", c->tally, sizeof c->tally},
    {"record/first_div_step", c->first_div_step, nr * sizeof *c->first_div_step},
    {"record/first_div_epoch", c->first_div_epoch, nr * sizeof *c->first_div_epoch},
    {"record/last_state", c->last_state, nr * sizeof *c->last_state},
    {"record/last_weights", c->last_weights, nr * sizeof *c->last_weights},
    {"record/last_churn", c->last_churn, nr * sizeof *c->last_churn},
    {"record/last_loss", c->last_loss, nr * sizeof *c->last_loss},
    {"record/rel_l2", c->rel_hist, (size_t)(step + 1) * nr * sizeof *c->rel_hist}, /* step <= -ts_max_steps: checked by the caller */
  };

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof recs / sizeof *recs; i++) PetscCall(CkptData(ck, recs[i].name, recs[i].data, recs[i].size));
  if (!writing) {
    c->epoch = (PetscInt)k.epoch, c->switches = (PetscInt)k.switches, c->last_switch = (PetscInt)k.last_switch, c->active_steps = (PetscInt)k.active_steps;
    c->inc_err_n[0] = (PetscInt)k.inc_err_n[0], c->inc_err_n[1] = (PetscInt)k.inc_err_n[1];
    c->drift_max = k.drift_max, c->inc_err_sum[0] = k.inc_err_sum[0], c->inc_err_sum[1] = k.inc_err_sum[1];
    for (int g = 0; g < GUESS_NKINDS; g++) c->tally[g].seconds = 0; /* seconds are this process's, as every timing */
  }
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p        = &c->rep[r];
    double   flags[5] = {(double)p->trained, (double)p->closure_on, (double)p->have_d, (double)p->se, (double)p->sd};
    DM       da;
    PetscCall(SolverGetDM(p->solver, &da));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/solver", r));
    PetscCall(SolverCheckpoint(p->solver, ck, name));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/order", r));
    PetscCall(CkptData(ck, name, &p->order, sizeof p->order));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/flags", r));
    PetscCall(CkptData(ck, name, flags, sizeof flags));
    if (!writing) p->trained = (PetscBool)(flags[0] != 0), p->closure_on = (PetscBool)(flags[1] != 0), p->have_d = (PetscBool)(flags[2] != 0), p->se = flags[3], p->sd = flags[4];
    if (p->d) {
      PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/d", r));
      PetscCall(CkptVec(ck, name, da, p->d));
    }
    if (p->space) {
      PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/space", r));
      PetscCall(GuessSpaceCheckpoint(p->space, ck, name));
    }
    if (p->net) { /* the surrogate's own checkpoint bytes */
      unsigned char *buf = NULL;
      size_t         len = 0;
      PetscBool      found;
      char           what[PETSC_MAX_PATH_LEN + 64];
      PetscErrorCode ierr;
      PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/net", r));
      if (writing) { /* rank 0 alone builds the bytes: every rank learns of a failure before the next collective */
        int bad = SurrogateSerialize(p->net, &buf, &len) != PETSC_SUCCESS;
        PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, c->comm));
        PetscCheck(!bad, c->comm, PETSC_ERR_MEM, "-checkpoint %s: cannot serialize replica %" PetscInt_FMT "'s network (out of memory?)", c->checkpoint, r);
      } else {
        PetscCall(CkptGetLength(ck, name, &len, &found));
        if (!found) PetscCall(CkptGet(ck, name, NULL, 0)); /* the error naming the missing record */
        PetscCall(PetscMalloc1(len + 1, &buf));
      }
      ierr = CkptData(ck, name, buf, len);
      if (!ierr && !writing) ierr = PetscSNPrintf(what, sizeof what, "%s %s: replica %" PetscInt_FMT "'s network", CkptOption(ck), CkptPath(ck), r);
      if (!ierr && !writing) ierr = SurrogateDeserialize(p->net, buf, len, what);
      PetscCall(PetscFree(buf));
      PetscCall(ierr);
    }
  }
  if (c->exact) PetscCall(SolverCheckpoint(c->exact, ck, "exact"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckpointWrite(Coupled c)
{
  Ckpt           ck;
  char           desc[4096], *all = NULL;
  PetscInt       step;
  PetscReal      t;
  PetscErrorCode ierr;
  double         t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(SolverGetStep(c->rep[0].solver, &step, NULL, &t, NULL));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  PetscCall(PetscSNPrintf(desc, sizeof desc, "miniapp checkpoint of a coupled run (see docs/reliability.md)\nstep: %" PetscInt_FMT "\ntime: %.17g\nepoch: %" PetscInt_FMT "\nmpi_ranks: %d\nomp_threads: %d\nminiapp_version: %s\nsource_revision: %s\noptions: %.1500s\n",
                         step, (double)t, c->epoch, c->size, omp_get_max_threads(), MINIAPP_VERSION, MINIAPP_REVISION, all ? all : ""));
  PetscCall(PetscFree(all));
  {
    size_t n = strlen(desc);
    PetscCall(Describe(c, desc + n, sizeof desc - n));
  }
  PetscCall(CkptCreateWrite(c->comm, "-checkpoint", c->checkpoint, &ck));
  ierr = CkptPut(ck, "description", desc, strlen(desc) + 1);
  if (!ierr) ierr = State(c, ck, step);
  PetscCall(CkptClose(&ck, (PetscBool)!ierr)); /* the first error wins; an error here is the commit's */
  PetscCall(ierr);
  c->times.output += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every replica (and the side runs) from the checkpoint file path; option
 * names it in messages. */
static PetscErrorCode Read(Coupled c, const char option[], const char path[], int64_t *stepp)
{
  Ckpt           ck;
  char           mine[4096], *theirs;
  size_t         len;
  PetscBool      found;
  PetscErrorCode ierr;
  int64_t        step = -1;
  PetscInt       nsteps;

  PetscFunctionBegin;
  PetscCall(CkptCreateRead(c->comm, option, path, &ck));
  ierr = CkptGetLength(ck, "description", &len, &found);
  if (!ierr && !found) {
    PetscCall(CkptClose(&ck, PETSC_FALSE));
    SETERRQ(c->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: has no description record (not a checkpoint of a coupled run)", option, path);
  }
  PetscCall(ierr);
  PetscCall(PetscMalloc1(len + 1, &theirs));
  ierr = CkptGet(ck, "description", theirs, len);
  theirs[len] = 0;
  /* the run the file continues must be this one: every key Describe gives
   * (scenario first, so that its own keys are compared only within one) */
  if (!ierr) ierr = Describe(c, mine, sizeof mine);
  for (const char *line = mine; !ierr && *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] ? 1 : 0)) {
    char   key[64], a[256], b[256];
    size_t kl = strcspn(line, ":");
    if (kl >= sizeof key || line[kl] != ':') break; /* Describe writes "key: value" lines only */
    memcpy(key, line, kl), key[kl] = 0;
    Value(theirs, key, a, sizeof a);
    Value(mine, key, b, sizeof b);
    if (strcmp(a, b)) {
      PetscCall(PetscFree(theirs));
      PetscCall(CkptClose(&ck, PETSC_FALSE));
      SETERRQ(c->comm, PETSC_ERR_ARG_INCOMP, "%s %s: the checkpoint was written with %s %s, this run has %s (restart with the options and build that wrote it)", option, path, key, a[0] ? a : "(none)", b[0] ? b : "(none)");
    }
  }
  if (!ierr) { /* its step, before any record sized by it is read */
    char v[64];
    char *end;
    Value(theirs, "step", v, sizeof v);
    step = strtoll(v, &end, 10);
    if (!v[0] || *end) step = -1; /* not a whole number: corrupt */
  }
  PetscCall(PetscFree(theirs));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, NULL, NULL));
  if (!ierr && !(step >= 0 && step <= nsteps)) {
    PetscCall(CkptClose(&ck, PETSC_FALSE));
    PetscCheck(step >= 0, c->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: corrupt description (no step)", option, path);
    SETERRQ(c->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %s: the checkpoint is at step %lld, beyond -ts_max_steps %" PetscInt_FMT " (the total number of steps, counted from the start)", option, path, (long long)step, nsteps);
  }
  if (!ierr) ierr = State(c, ck, (PetscInt)step);
  PetscCall(CkptClose(&ck, PETSC_FALSE));
  PetscCall(ierr);
  for (PetscInt r = 0; r < c->nrep; r++) { /* replicas advance in lockstep */
    PetscInt sr;
    PetscCall(SolverGetStep(c->rep[r].solver, &sr, NULL, NULL, NULL));
    PetscCheck(sr == step, c->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: corrupt (replica %" PetscInt_FMT " is at step %" PetscInt_FMT ", the description says %lld)", option, path, r, sr, (long long)step);
  }
  *stepp = step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckpointRestore(Coupled c)
{
  int64_t step;

  PetscFunctionBegin;
  PetscCall(Read(c, "-restart", c->restart, &step));
  c->restart_step = (PetscInt)step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -fault_action rollback: the last checkpoint this run wrote. */
PetscErrorCode CheckpointRollback(Coupled c)
{
  int64_t step;

  PetscFunctionBegin;
  PetscCall(Read(c, "-checkpoint", c->checkpoint, &step));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a step: the signal that asks for a checkpoint, agreed on by all ranks. */
PetscErrorCode CheckpointSignalled(Coupled c, int *sig)
{
  int s = pending_signal;

  PetscFunctionBegin;
  *sig = 0;
  if (!c->checkpoint[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Allreduce(&s, sig, 1, MPI_INT, MPI_MAX, c->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
