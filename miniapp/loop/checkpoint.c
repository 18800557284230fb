/* miniapp/loop/checkpoint.c: checkpoint/restart of the coupled run.
 *
 *   -checkpoint FILE        write FILE at the end of the run, every
 *                           -checkpoint_every N steps, and when SIGTERM,
 *                           SIGUSR1 (what batch schedulers send before an
 *                           allocation ends) or SIGXCPU (a CPU-time limit,
 *                           ulimit -S -t) arrives: the current step finishes,
 *                           the -output file and the checkpoint are written
 *                           and the run exits with code 3. Each
 *                           -checkpoint_every checkpoint commits the -output
 *                           file first (coupling_output.c), so that a run
 *                           killed at any moment leaves a file that a restart
 *                           from its checkpoint continues
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
#include "atomicfile.h"
#include "cli.h"
#include "buildinfo.h"
#include "report.h"
#include "vecred.h"

#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t pending_signal;

static void OnSignal(int sig) { pending_signal = sig; }

/* The signals that ask for a checkpoint (with -checkpoint). */
static const int ckpt_signals[] = {SIGTERM, SIGUSR1, SIGXCPU};
#define NCKPT (sizeof ckpt_signals / sizeof *ckpt_signals)

static void CheckpointSignalSet(sigset_t *set)
{
  sigemptyset(set);
  for (size_t k = 0; k < NCKPT; k++) sigaddset(set, ckpt_signals[k]);
}

const char *CheckpointSignalName(int sig)
{
  return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : sig == SIGXCPU ? "SIGXCPU" : "a signal";
}

/* What every signal does that PETSc's handler takes and that is no fault of
 * the program (PETSc 3.18 catches HUP, QUIT, TERM where MPI is not Open MPI,
 * URG, PIPE; it printed a stack trace and aborted MPI, exit 59, leaving the
 * outputs' partial files): SIGPIPE (stdout closed early, miniapp | head) and
 * SIGXFSZ (past a ulimit -f) ignored, the failed write says it in one line;
 * SIGURG ignored, its default; the signals that stop a run (HUP, INT, QUIT,
 * USR1/2, ALRM, TERM, XCPU, VTALRM, PROF) stop it with one line, the partial
 * files removed and exit 128 + the signal's number (kernels/atomicfile.c),
 * where -checkpoint does not take them (CheckpointSetFromOptions). Called
 * again wherever PETSc's handler is removed: PetscPopSignalHandler restores
 * the default of each signal it took. Faults (SEGV, BUS, FPE, ILL, SYS,
 * TRAP) stay PETSc's: its trace says where. A signal the process was
 * started with ignored (nohup, a shell's background job) stays ignored,
 * except that -checkpoint takes SIGTERM, SIGUSR1 and SIGXCPU. */
static const int petsc_takes[] = {SIGHUP, SIGQUIT, SIGTERM};
static int        ignored_at_start[sizeof petsc_takes / sizeof *petsc_takes]; /* nohup, a shell's background job */

void CheckpointDefaultSignals(void)
{
  for (size_t k = 0; k < sizeof petsc_takes / sizeof *petsc_takes; k++) {
    struct sigaction old;
    if (!sigaction(petsc_takes[k], NULL, &old) && old.sa_handler != SIG_IGN && old.sa_handler != OnSignal)
      signal(petsc_takes[k], ignored_at_start[k] ? SIG_IGN : SIG_DFL);
  }
  signal(SIGURG, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  afile_handle_signals("miniapp");
}

/* The counters and records of the run that later steps and the summary use. */
typedef struct {
  int64_t epoch, switches, last_switch, active_steps, inc_err_n[2];
  double  drift_max, inc_err_sum[2];
} CouplingCounters;

PetscErrorCode CheckpointSetFromOptions(Coupled c)
{
  PetscFunctionBegin;
  c->checkpoint_every = 0, c->restart_step = -1;
  PetscOptionsBegin(c->comm, NULL, "Checkpoint/restart", NULL);
  PetscCall(PetscOptionsString("-checkpoint",
                               "Write a checkpoint to this file at the end, every -checkpoint_every steps and on "
                               "SIGTERM/SIGUSR1/SIGXCPU (then exit 3)", NULL, c->checkpoint, c->checkpoint,
                               sizeof c->checkpoint, NULL));
  PetscCall(
    CliInt(PetscOptionsObject, "-checkpoint_every",
           "Also write the checkpoint every N steps, and the -output file before it (0: only at the end and on a "
           "signal)",
           0, PETSC_MAX_INT, NULL, &c->checkpoint_every, NULL));
  PetscCall(PetscOptionsString("-restart", "Continue the run held by this checkpoint file", NULL, c->restart,
                               c->restart, sizeof c->restart, NULL));
  PetscOptionsEnd();
  c->commit_output = (PetscBool)(c->checkpoint_every > 0); /* as given: -fault_action rollback may add its own */
  if (c->checkpoint[0]) PetscCall(OutPathRegisterOutput("-checkpoint", c->checkpoint));
  if (c->restart[0]) {
    /* continuing in place (-restart ck -checkpoint ck) is safe: the file is
     * read whole before the run and replaced atomically */
    char a[PETSC_MAX_PATH_LEN], b[PETSC_MAX_PATH_LEN];
    int  missing = access(c->restart, F_OK) ? errno : 0;
    /* a missing file first: with -checkpoint naming it too, it was 'the input: refusing to overwrite an input' */
    PetscCheck(!missing, c->comm, PETSC_ERR_FILE_OPEN, "-restart %s: cannot open the checkpoint (%s)", c->restart,
               strerror(missing));
    if (!(c->checkpoint[0] && realpath(c->restart, a) && realpath(c->checkpoint, b) && !strcmp(a, b)))
      PetscCall(OutPathRegisterInput("-restart", c->restart));
  }
  if (c->checkpoint[0]) { /* a scheduler's warning becomes a checkpoint (under Open MPI's mpirun use
                           * SIGUSR1: mpirun forwards it, while on SIGTERM it kills the ranks soon after) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnSignal;
    sa.sa_flags   = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < NCKPT; k++) sigaction(ckpt_signals[k], &sa, NULL);
  }
  { /* a signal held since start-up is delivered now: to OnSignal with -checkpoint, else it stops the run */
    sigset_t set;
    CheckpointSignalSet(&set);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

void CheckpointBlockSignals(void)
{
  sigset_t set;
  for (size_t k = 0; k < sizeof petsc_takes / sizeof *petsc_takes; k++) { /* as given, before PETSc takes them */
    struct sigaction old;
    ignored_at_start[k] = !sigaction(petsc_takes[k], NULL, &old) && old.sa_handler == SIG_IGN;
  }
  CheckpointSignalSet(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* before MPI starts its threads: they inherit it */
}

/* Everything after the description, in either direction (CkptData/CkptVec):
 * one list, so that what is written is what is read. */
static PetscErrorCode State(Coupled c, Ckpt ck, PetscInt step, PetscBool rollback)
{
  char             name[64];
  PetscBool        writing = CkptIsWriting(ck);
  size_t           nr      = (size_t)c->nrep;
  CouplingCounters k       = {c->epoch,
                              c->switches,
                              c->last_switch,
                              c->active_steps,
                              {c->inc_err_n[0], c->inc_err_n[1]},
                              c->drift_max,
                              {c->inc_err_sum[0], c->inc_err_sum[1]}};
  struct {
    const char *name;
    void       *data;
    size_t      size;
  } recs[] = {
    {"coupling/counters", &k, sizeof k},
    {"coupling/base_order", &c->base_order, sizeof c->base_order},
    {"coupling/tally", c->tally, sizeof c->tally},
    {"coupling/netfail", &c->netfail, sizeof c->netfail},
    {"record/first_div_step", c->first_div_step, nr * sizeof *c->first_div_step},
    {"record/first_div_epoch", c->first_div_epoch, nr * sizeof *c->first_div_epoch},
    {"record/last_state", c->last_state, nr * sizeof *c->last_state},
    {"record/last_weights", c->last_weights, nr * sizeof *c->last_weights},
    {"record/last_churn", c->last_churn, sizeof c->last_churn},
    {"record/churn_scale", &c->churn_scale, sizeof c->churn_scale},
    {"record/last_loss", c->last_loss, nr * sizeof *c->last_loss},
    {"record/rel_l2", c->rel_hist,
     (size_t)(step + 1) * nr * sizeof *c->rel_hist}, /* step <= -ts_max_steps: checked by the caller */
  };

  /* this process's, as every timing: kept over a rollback (the re-done steps took time too), none after a restart */
  double seconds[GUESS_NKINDS];
  PetscFunctionBegin;
  for (int g = 0; g < GUESS_NKINDS; g++) seconds[g] = rollback ? c->tally[g].seconds : 0;
  for (size_t i = 0; i < sizeof recs / sizeof *recs; i++)
    PetscCall(CkptData(ck, recs[i].name, recs[i].data, recs[i].size));
  { /* the fault record: what was injected and detected stays with the run
     * that restarts (its settings are this run's: restart keys); a rollback
     * keeps what this process has seen (the fault fired once, was detected) */
    FaultState keep = c->fault;
    PetscCall(CkptData(ck, "faults/record", &c->fault, sizeof c->fault));
    if (rollback) c->fault = keep;
    /* the options a restart may change */
    c->fault.on = keep.on, c->fault.checks = keep.checks, c->fault.spec = keep.spec, c->fault.action = keep.action,
    c->fault.noise_factor = keep.noise_factor, c->fault.noise_window = keep.noise_window;
  }
  if (!writing) {
    c->epoch = (PetscInt)k.epoch, c->switches = (PetscInt)k.switches, c->last_switch = (PetscInt)k.last_switch,
    c->active_steps = (PetscInt)k.active_steps;
    c->inc_err_n[0] = (PetscInt)k.inc_err_n[0], c->inc_err_n[1] = (PetscInt)k.inc_err_n[1];
    c->drift_max = k.drift_max, c->inc_err_sum[0] = k.inc_err_sum[0], c->inc_err_sum[1] = k.inc_err_sum[1];
    for (int g = 0; g < GUESS_NKINDS; g++) c->tally[g].seconds = seconds[g];
  }
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p        = &c->rep[r];
    double   flags[6] = {(double)p->trained, (double)p->closure_on, (double)p->have_d,
                         (double)p->se,      (double)p->sd,         (double)p->drift};
    DM       da;
    PetscCall(SolverGetDM(p->solver, &da));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/solver", r));
    PetscCall(SolverCheckpoint(p->solver, ck, name));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/order", r));
    PetscCall(CkptData(ck, name, &p->order, sizeof p->order));
    PetscCall(PetscSNPrintf(name, sizeof name, "rep%" PetscInt_FMT "/flags", r));
    PetscCall(CkptData(ck, name, flags, sizeof flags));
    if (!writing)
      p->trained = (PetscBool)(flags[0] != 0), p->closure_on = (PetscBool)(flags[1] != 0),
      p->have_d = (PetscBool)(flags[2] != 0), p->se = flags[3], p->sd = flags[4], p->drift = flags[5];
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
        PetscCheck(!bad, c->comm, PETSC_ERR_MEM,
                   "-checkpoint %s: cannot serialize replica %" PetscInt_FMT "'s network (out of memory?)",
                   c->checkpoint, r);
      } else {
        PetscCall(CkptGetLength(ck, name, &len, &found));
        if (!found) PetscCall(CkptGet(ck, name, NULL, 0)); /* the error naming the missing record */
        PetscCall(PetscMalloc1(len + 1, &buf));
      }
      ierr = CkptData(ck, name, buf, len);
      if (!ierr && !writing)
        ierr = PetscSNPrintf(what, sizeof what, "%s %s: replica %" PetscInt_FMT "'s network", CkptOption(ck),
                             CkptPath(ck), r);
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
  RestartKeys    keys = {NULL, 0, 0};
  char           desc[4096], *all = NULL;
  PetscInt       step;
  PetscReal      t;
  PetscErrorCode ierr;
  double         t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(SolverGetStep(c->rep[0].solver, &step, NULL, &t, NULL));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  /* for people only: one line */
  for (char *q = all; q && *q; q++) if ((unsigned char)*q < 32) *q = ' ';
  PetscCall(PetscSNPrintf(desc, sizeof desc,
                          "miniapp checkpoint of a coupled run (see docs/reliability.md)\nstep: %" PetscInt_FMT
                          "\ntime: %.17g\nepoch: %" PetscInt_FMT "\nmpi_ranks: %d\nomp_threads: %d\nminiapp_version: "
                                                                 "%s\nsource_revision: %s\noptions: %.1500s\n",
                          step, (double)t, c->epoch, c->size, omp_get_max_threads(), MINIAPP_VERSION, MINIAPP_REVISION,
                          all ? all : ""));
  PetscCall(PetscFree(all));
  PetscCall(RestartKeysBuild(c, &keys));
  ierr = CkptCreateWrite(c->comm, "-checkpoint", c->checkpoint, &ck);
  if (!ierr) {
    ierr = CkptPut(ck, "description", desc, strlen(desc) + 1);
    if (!ierr) ierr = CkptPut(ck, "keys", keys.b, keys.n);
    if (!ierr) ierr = State(c, ck, step, PETSC_FALSE);
    PetscErrorCode ierr2 = CkptClose(&ck, (PetscBool)!ierr); /* commit only a complete file */
    if (!ierr) ierr = ierr2; /* the first error wins; else the commit's */
  }
  PetscCall(PetscFree(keys.b));
  PetscCall(ierr);
  c->times.output += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run's last checkpoint. A failed run's state, which no restart can
 * continue, never replaces a checkpoint (one this run rolls forward from,
 * or its last -checkpoint_every); where there is none it is written, so
 * that a requeued restart says the run failed. */
PetscErrorCode CheckpointWriteLast(Coupled c, PetscBool failed)
{
  PetscBool   exists = PETSC_FALSE;
  struct stat st;

  PetscFunctionBegin;
  if (failed && c->rank == 0) exists = (PetscBool)!stat(c->checkpoint, &st);
  PetscCallMPI(MPI_Bcast(&exists, 1, MPIU_BOOL, 0, c->comm));
  if (failed && exists)
    PetscCall(PetscFPrintf(c->comm, stderr,
                           "miniapp: -checkpoint %s: kept as it was; the run is INVALID and no restart could continue "
                           "its last state\n",
                           c->checkpoint));
  else PetscCall(CheckpointWrite(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every replica (and the side runs) from the checkpoint file path; option
 * names it in messages. */
static PetscErrorCode Read(Coupled c, const char option[], const char path[], int64_t *stepp)
{
  Ckpt           ck;
  RestartKeys    mine = {NULL, 0, 0};
  char          *theirs = NULL, v[64], *end;
  const char    *sv;
  size_t         len, svl;
  PetscBool      found;
  PetscErrorCode ierr;
  int64_t        step = -1;
  int            have;
  PetscInt       nsteps;

  PetscFunctionBegin;
  PetscCall(CkptCreateRead(c->comm, option, path, &ck));
  ierr = CkptGetLength(ck, "keys", &len, &found);
  if (!ierr && !found) {
    PetscCall(CkptClose(&ck, PETSC_FALSE));
    SETERRQ(c->comm, PETSC_ERR_FILE_UNEXPECTED,
            "%s %s: has no keys record (not a checkpoint of a coupled run, or one written by a version before 0.2)",
            option, path);
  }
  if (!ierr) ierr = PetscMalloc1(len + 1, &theirs);
  if (!ierr) ierr = CkptGet(ck, "keys", theirs, len);
  /* the run the file continues must be this one: every key of either */
  if (!ierr) ierr = RestartKeysBuild(c, &mine);
  if (!ierr) ierr = RestartKeysCompare(c, option, path, &mine, theirs, len);
  if (!ierr) { /* its step, before any record sized by it is read */
    RestartKeysFind(theirs, len, "step", &sv, &svl, &have);
    if (have == 1 && svl > 0 && svl < sizeof v) {
      memcpy(v, sv, svl), v[svl] = 0;
      step = strtoll(v, &end, 10);
      if (*end) step = -1; /* not a whole number: corrupt */
    }
  }
  PetscCall(PetscFree(theirs));
  PetscCall(PetscFree(mine.b));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, NULL, NULL));
  if (!ierr && !(step >= 0 && step <= nsteps)) {
    PetscCall(CkptClose(&ck, PETSC_FALSE));
    PetscCheck(step >= 0, c->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: corrupt keys record (no step)", option, path);
    SETERRQ(c->comm, PETSC_ERR_ARG_OUTOFRANGE,
            "%s %s: the checkpoint is at step %lld, beyond -ts_max_steps %" PetscInt_FMT
            " (the total number of steps, counted from the start)",
            option, path, (long long)step, nsteps);
  }
  if (!ierr) ierr = State(c, ck, (PetscInt)step, (PetscBool)!strcmp(option, "-checkpoint"));
  PetscCall(CkptClose(&ck, PETSC_FALSE));
  PetscCall(ierr);
  for (PetscInt r = 0; r < c->nrep; r++) { /* replicas advance in lockstep */
    PetscInt sr;
    PetscCall(SolverGetStep(c->rep[r].solver, &sr, NULL, NULL, NULL));
    PetscCheck(sr == step, c->comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s %s: corrupt (replica %" PetscInt_FMT " is at step %" PetscInt_FMT ", the keys say %lld)", option,
               path, r, sr, (long long)step);
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

/* The stop decision is taken (or the run completed): from here on SIGTERM,
 * SIGUSR1 and SIGXCPU are ignored until exit, so that the exit code stays the
 * one decided (3 after the checkpoint, or 0/2). PETSc's signal handler is
 * removed first: PetscFinalize would otherwise pop it and restore the
 * default action (death, exit 143) while MPI finalizes; the other signals it
 * took get the miniapp's handling again. The main thread blocks the three
 * while the dispositions change. */
void CheckpointIgnoreSignals(void)
{
  struct sigaction sa;
  sigset_t         set, old;

  CheckpointSignalSet(&set);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  for (int k = 0; k < 4; k++) (void)PetscPopSignalHandler(); /* an empty stack returns at once */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < NCKPT; k++) sigaction(ckpt_signals[k], &sa, NULL);
  CheckpointDefaultSignals(); /* after: the three stay ignored */
  pthread_sigmask(SIG_SETMASK, &old, NULL); /* pending ones are discarded: ignored */
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

/* After step `step` (of nsteps) is done and judged: a stop signal ends the
 * loop (its checkpoint at the end); every -checkpoint_every steps the run
 * file is committed, then the checkpoint written. */
PetscErrorCode CheckpointAfterStep(Coupled c, PetscInt step, PetscInt nsteps)
{
  PetscFunctionBegin;
  PetscCall(CheckpointSignalled(c, &c->stop_signal));
  if (c->stop_signal) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->checkpoint_every && step % c->checkpoint_every == 0 && step < nsteps) {
    if (c->output[0] && c->commit_output) PetscCall(OutputCommit(c));
    PetscCall(CheckpointWrite(c));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The run file before the checkpoint, here and at every -checkpoint_every: a
 * run killed between the two leaves its file ahead of its checkpoint, and a
 * restart from it makes those steps again; the other way round they would be
 * in neither. The last checkpoint is always written (-checkpoint). */
PetscErrorCode CheckpointAtEnd(Coupled c)
{
  PetscFunctionBegin;
  if (c->output[0]) PetscCall(OutputFinish(c));
  if (c->stop_signal) PetscCall(CheckpointWrite(c));
  else if (c->checkpoint[0]) {
    PetscBool failed;
    char      why[640];
    PetscCall(RecoveryFailed(c, &failed, why, sizeof why));
    PetscCall(CheckpointWriteLast(c, failed));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
