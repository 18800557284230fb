/* miniapp/loop/coupling.c: the coupled run (coupling.h): options, set-up,
 * the time loop, results. A step's phases are in step.c, what follows a
 * failed phase in recovery.c; replicas advance in lockstep, each with its own
 * solver, network and atomic order, so replica r is the run a separate
 * process would make (docs/architecture.md). */
#include "coupling_impl.h"
#include "cli.h"
#include "vecred.h"
#include "yamlfmt.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

const char *const CouplingModeNames[] = {"none", "guess", "closure"};
static const char *const guess_choices[] = {"learned", "combined", "projection"};
static const GuessKind   guess_kinds[]   = {GUESS_LEARNED, GUESS_COMBINED, GUESS_PROJECTION};
static const char *const learn_choices[] = {"increment", "residual"};

/* ---- options and set-up ------------------------------------------------- */

PetscErrorCode CoupledCreate(MPI_Comm comm, Coupled *c)
{
  PetscClassId cid;

  PetscFunctionBegin;
  PetscCall(PetscNew(c));
  (*c)->comm = comm;
  PetscCallMPI(MPI_Comm_rank(comm, &(*c)->rank));
  PetscCallMPI(MPI_Comm_size(comm, &(*c)->size));
  PetscCall(PetscClassIdRegister("Coupled loop", &cid));
  PetscCall(PetscLogEventRegister("CplSolve", cid, &(*c)->ev_solve));
  PetscCall(PetscLogEventRegister("CplFeatures", cid, &(*c)->ev_feat));
  PetscCall(PetscLogEventRegister("CplPredict", cid, &(*c)->ev_pred));
  PetscCall(PetscLogEventRegister("CplTrain", cid, &(*c)->ev_train));
  PetscCall(PetscLogEventRegister("CplMetrics", cid, &(*c)->ev_metrics));
  PetscCall(PetscLogEventRegister("CplOutput", cid, &(*c)->ev_out));
  PetscCall(PetscLogEventRegister("CplGuessCompare", cid, &(*c)->ev_base));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateSolver(Coupled c, Solver *s)
{
  PetscFunctionBegin;
  PetscCall(SolverCreate(c->comm, s));
  PetscCall(SolverSetFromOptions(*s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledSetFromOptions(Coupled c)
{
  PetscInt  mode = COUPLING_NONE, nrep = 1, guess = 1;
  PetscBool set, has;

  PetscFunctionBegin;
  c->train_every = 1, c->train_epochs = 4, c->output_every = 10;
  c->history = 4, c->projection = PETSC_TRUE;
  c->warmup = 300, c->closure_tol = 0.01, c->drift_tol = 0.1, c->pattern_factor = 1.25;
  PetscOptionsBegin(c->comm, NULL, "Coupled loop", NULL);
  PetscCall(PetscOptionsEList("-coupling", "How the surrogate feeds the solver", NULL, CouplingModeNames, 3,
                              CouplingModeNames[mode], &mode, NULL));
  PetscCall(
    CliInt(PetscOptionsObject, "-train_every", "Train every K steps", 1, PETSC_MAX_INT, NULL, &c->train_every, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-train_epochs", "Epochs (full-batch Adam steps) per training", 1, 100000, NULL,
                   &c->train_epochs, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-replicas",
                   "Run the coupled loop R times in lockstep and compare with replica 0", 1, MAX_REPLICAS, NULL, &nrep,
                   NULL));
  PetscCall(PetscOptionsString("-output", "NetCDF output file", NULL, c->output, c->output, sizeof c->output, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-output_every", "Write the fields every N steps (and the last)", 1,
                   PETSC_MAX_INT, NULL, &c->output_every, NULL));
  PetscCall(PetscOptionsEList("-guess",
                              "guess: the initial guess that drives the run (learned: extrapolation + the network's "
                              "correction; combined: energy-norm projection over past increments and the network; "
                              "projection: the same without the network)",
                              NULL, guess_choices, 3, guess_choices[guess], &guess, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-guess_history",
                   "guess: past increments in the combined guess's space (0..32; >= 9 contains Fischer's)", 0, 32, NULL,
                   &c->history, NULL));
  {
    PetscInt learn = 0;
    PetscCall(PetscOptionsEList("-guess_learn",
                                "guess: what the network learns (increment: the extrapolation's error from u^n, d^n; "
                                "residual: the projection's error from u^n, d^n and the projection's residual)",
                                NULL, learn_choices, 2, learn_choices[learn], &learn, NULL));
    c->learn_residual = (PetscBool)(learn == 1);
  }
  PetscCall(PetscOptionsBool("-guess_projection",
                             "guess: scale the extrapolated and learned guesses along their direction to the "
                             "energy-norm best point", NULL, c->projection, &c->projection, NULL));
  c->baselines = (PetscBool)(mode == COUPLING_GUESS);
  PetscCall(PetscOptionsBool("-coupling_baselines",
                             "guess: also solve each step's system from every other guess (none, extrapolation, "
                             "fischer, learned, combined); on by default with -coupling guess",
                             NULL, c->baselines, &c->baselines, &set));
  PetscCall(CliInt(PetscOptionsObject, "-closure_warmup",
                   "closure: steps before the learned term may replace the exact one", 1, PETSC_MAX_INT, NULL,
                   &c->warmup, NULL));
  PetscCall(
    CliReal(PetscOptionsObject, "-closure_tol",
            "closure: the learned term is used only while its relative error on the current state is at most this", 0,
            OPT_NONE, OPT_LO_OPEN | OPT_FINITE, NULL, &c->closure_tol, NULL));
  /* verification bounds are capped: beyond these a changed pattern would pass */
  PetscCall(
    CliReal(PetscOptionsObject, "-closure_drift_tol",
            "closure: verification bound on the fields' relative L2 drift from the exact-term run (at most 0.5)", 0,
            0.5, OPT_LO_OPEN, "a relative L2 drift of 0.5 is already another state", &c->drift_tol, NULL));
  /* where it goes: a terminal, whatever stdout is (redirected to a file, piped to grep) */
  c->progress = (PetscBool)isatty(STDERR_FILENO);
  PetscCall(PetscOptionsBool("-progress",
                             "A progress line on stderr every few seconds (default: on when stderr is a terminal)",
                             NULL, c->progress, &c->progress, NULL));
  c->progress_every = 3;
  PetscCall(CliReal(PetscOptionsObject, "-progress_interval", "Seconds between progress lines (0: every step)", 0,
                    OPT_NONE, OPT_FINITE, "a number of seconds", &c->progress_every, NULL));
  PetscCall(CliReal(PetscOptionsObject, "-closure_pattern_factor",
                    "closure: verification bound (factor) on the change of std(v) and of its RMS wavenumber (1 .. 2)",
                    1, 2, 0, "a factor of 2 in std(v) or in its wavenumber is already another pattern",
                    &c->pattern_factor, NULL));
  PetscOptionsEnd();
  c->mode  = (CouplingMode)mode;
  c->guess = guess_kinds[guess];
  c->nrep  = nrep;
  PetscCall(CheckpointSetFromOptions(c));
  PetscCall(FaultsSetFromOptions(c));

  for (PetscInt r = 0; r < c->nrep; r++) PetscCall(CreateSolver(c, &c->rep[r].solver));
  PetscCall(SolverHasClosure(c->rep[0].solver, &has));
  if (c->mode == COUPLING_CLOSURE && has) PetscCall(CreateSolver(c, &c->exact));
  PetscCall(PetscOptionsHasHelp(NULL, &set));
  if (set && c->mode == COUPLING_NONE) { /* -help lists the network's options too */
    Surrogate net;
    PetscCall(SurrogateCreate(c->comm, &net));
    PetscCall(SurrogateSetFromOptions(net));
    PetscCall(SurrogateDestroy(&net));
  }
  if (c->mode != COUPLING_NONE) {
    SurrogateDevice dev = SURROGATE_DEVICE_AUTO;
    for (PetscInt r = 0; r < c->nrep; r++) {
      PetscCall(SurrogateCreate(c->comm, &c->rep[r].net));
      PetscCall(SurrogateSetFromOptions(c->rep[r].net));
      if (r > 0) PetscCall(SurrogateSetDevice(c->rep[r].net, dev)); /* one "no GPU" line, not R */
      else {
        int cuda = SurrogateCUDAAvailable();
        PetscCall(SurrogateGetDevice(c->rep[0].net, &dev));
        if (dev == SURROGATE_DEVICE_AUTO) dev = cuda == 1 ? SURROGATE_DEVICE_CUDA : SURROGATE_DEVICE_CPU;
      }
    }
  }
  PetscCall(CoupledCheckRules(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledSetUp(Coupled c)
{
  red_atomic_state *own;
  uint64_t          seed;
  DM                da;

  PetscFunctionBegin;
  PetscCall(MemoryCheck(c)); /* before anything is allocated */
  for (PetscInt r = 0; r < c->nrep; r++) PetscCall(SolverSetUp(c->rep[r].solver));
  PetscCall(SolverGetDM(c->rep[0].solver, &da));
  PetscCall(DMDAGetInfo(da, NULL, &c->M, &c->N, NULL, NULL, NULL, NULL, &c->dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &c->xs, &c->ys, NULL, &c->xm, &c->ym, NULL));
  c->npts = c->xm * c->ym;
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p = &c->rep[r];
    Vec      u;
    PetscCall(SolverGetState(p->solver, &u));
    PetscCall(VecDuplicate(u, &p->prev));
    PetscCall(VecDuplicate(u, &p->w));
    PetscCall(VecDuplicate(u, &p->x0));
    if (c->mode == COUPLING_GUESS) {
      PetscCall(VecDuplicate(u, &p->d));
      PetscCall(VecDuplicate(u, &p->z));
      if (c->learn_residual) {
        PetscCall(VecDuplicate(u, &p->xp));
        PetscCall(VecDuplicate(u, &p->rp));
      }
      /* d^n: the learned guess projects on {d^n, z} */
      PetscCall(GuessSpaceCreate(p->solver, PetscMax(c->history, 1), &p->space));
      { /* d^0 = 0 is read before it is written: on the device (with the solver there) at set-up, not in the loop */
        double *dd;
        PetscCall(VecFPNADeviceArray(p->d, VEC_DEVICE_READ, &dd));
      }
    }
    if (c->mode == COUPLING_CLOSURE) PetscCall(PetscMalloc2(c->npts, &p->q, c->npts, &p->qexact));
    p->closure_err = p->inc_err = p->drift = p->r0 = p->rnorm = NAN;
    if (p->net) {
      PetscCall(FeaturesSetUp(c, p));
      PetscCall(SurrogateSetUp(p->net));
      PetscCall(SurrogateGetNumWeights(p->net, &c->nweights));
      { /* the batch and the predictions cross to a GPU every step: page-locked there (SurrogateHostMalloc) */
        size_t nf = (size_t)c->npts * c->n_in, no = (size_t)c->npts * c->n_out;
        PetscCall(SurrogateHostMalloc(p->net, (nf + 2 * no) * sizeof(float), &p->feat));
        p->out = p->feat + nf, p->target = p->out + no;
        PetscCall(PetscMalloc1(c->nweights, &p->w32));
      }
      if (r == 0 && c->nrep > 1) PetscCall(PetscMalloc1((size_t)c->npts * c->n_out, &c->churn_out));
    }
  }
  /* each replica owns its seeded atomic order: replica r replays seed + r,
   * as a separate run with -atomic_order_seed seed + r would, its solver and
   * its network drawing from the one order in turn as in that run. The side
   * runs (the comparison solves, the exact-term run) draw from base_order.
   * What the set-up drew, from the objects' own orders, counts for nothing. */
  PetscCall(SolverGetAtomicOrder(c->rep[0].solver, &own));
  seed = own->seed;
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p = &c->rep[r];
    p->order   = (red_atomic_state){seed ? seed + (uint64_t)r : 0, 0};
    PetscCall(SolverSetAtomicOrder(p->solver, &p->order));
    if (p->net) PetscCall(SurrogateSetAtomicOrder(p->net, &p->order));
  }
  c->base_order = (red_atomic_state){seed, 0};
  for (PetscInt r = 0; r < c->nrep; r++) c->first_div_step[r] = c->first_div_epoch[r] = -1;
  c->netfail.step = -1;
  {
    PetscInt nsteps;
    PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, NULL, NULL));
    PetscCall(PetscMalloc1((size_t)(nsteps + 1) * c->nrep, &c->rel_hist));
    for (PetscInt i = 0; i < (nsteps + 1) * c->nrep; i++) c->rel_hist[i] = NAN;
  }
  if (c->mode == COUPLING_GUESS) PetscCall(GuessesSetUp(c));
  else for (int k = 0; k < GUESS_NKINDS; k++) c->tally[k] = (GuessTally){.its_step = -1, .r0_step = NAN};
  if (c->mode == COUPLING_CLOSURE) PetscCall(ClosureSetUp(c));
  if (c->restart[0]) PetscCall(CheckpointRestore(c));
  PetscCall(FaultsSetUp(c));
  if (c->output[0]) PetscCall(OutputCreate(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the loop ------------------------------------------------------------- */

/* Every few seconds on rank 0: step k of N, iterations, loss, elapsed and
 * remaining time (a terminal: one line rewritten in place). */
static void Progress(Coupled c, PetscInt step, PetscInt first, PetscInt nsteps, double t0, PetscBool last)
{
  double now = MPI_Wtime(), el = now - t0, rem;
  int    tty = isatty(STDERR_FILENO);

  if (!c->progress || c->rank || (!last && now - c->progress_at < c->progress_every)) return;
  if (last && (c->progress_at == 0 || c->progress_step == step)) return; /* nothing shown yet, or this step already */
  c->progress_at = now, c->progress_step = step;
  rem = step > first ? el / (double)(step - first) * (double)(nsteps - step) : 0;
  fprintf(stderr, "%sstep %" PetscInt_FMT " of %" PetscInt_FMT " (%.0f%%) | KSP its %" PetscInt_FMT, tty ? "\r" : "",
          step, nsteps, 100.0 * (double)step / (double)PetscMax(nsteps, 1), c->rep[0].its);
  if (c->rep[0].net && c->epoch) fprintf(stderr, " | loss %.3e", (double)c->last_loss[0]);
  fprintf(stderr, " | %.0f s elapsed, ~%.0f s left%s", el, rem, tty ? "\033[K" : "\n");
  if (tty && last) fputc('\n', stderr);
  fflush(stderr);
}

/* From step 0, or from the restart's step (its record is in the run that
 * wrote the checkpoint), to -ts_max_steps: each step as its phases (step.c),
 * each phase judged (recovery.c), then the periodic checkpoint. */
PetscErrorCode CoupledRun(Coupled c)
{
  PetscInt   nsteps, first, done;
  double     t0 = MPI_Wtime();
  PetscInt64 copies0;

  PetscFunctionBegin;
  c->times.steps = c->times.its = c->times.epochs = 0; /* counted as they run */
  PetscCall(SolverGetStep(c->rep[0].solver, &first, &nsteps, NULL, NULL));
  PetscCall(RecoveryStart(c, &first, nsteps));
  copies0 = VecFPNADeviceCopies(), c->copies_aside = 0;
  for (PetscInt step = first; step < nsteps; step++) {
    PetscBool   train, predicted;
    PetscInt    epoch0 = c->epoch;
    StepVerdict v;

    PetscCall(StepReplicas(c, step, &train, &predicted)); /* guess or closure, solve: state step + 1 */
    PetscCall(StepObserve(c, step + 1, predicted));
    PetscCall(RecoveryJudge(c, step + 1, epoch0, (PetscBool)!train, &v));
    if (v == STEP_ON && train) {
      PetscCall(StepTrain(c, step + 1));
      PetscCall(RecoveryJudge(c, step + 1, epoch0, PETSC_TRUE, &v)); /* a network that stopped being finite, a fault */
    }
    if (v == STEP_STOP) break; /* verify and report what happened */
    if (v == STEP_REDO) { /* the last good state, then on from there */
      PetscCall(RecoveryRollback(c, &step));
      continue;
    }
    Progress(c, step + 1, first, nsteps, t0, PETSC_FALSE);
    CALL_ASIDE(c, CheckpointAfterStep(c, step + 1, nsteps));
    if (c->stop_signal) break;
  }
  c->loop_copies = VecFPNADeviceCopies() - copies0 - c->copies_aside;
  if (c->checkpoint[0]) CheckpointIgnoreSignals(); /* the decision is taken: later signals change nothing */
  PetscCall(SolverGetStep(c->rep[0].solver, &done, NULL, NULL, NULL));
  Progress(c, done, first, nsteps, t0, PETSC_TRUE);
  /* a fault past the detectors, before the record is written out */
  if (!c->stop_signal) PetscCall(FaultsScenarioCheck(c));
  PetscCall(CheckpointAtEnd(c));
  c->times.total = MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledDestroy(Coupled *cp)
{
  Coupled c = *cp;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(OutputDestroy(c));
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p = &c->rep[r];
    PetscCall(GuessSpaceDestroy(&p->space));
    PetscCall(SolverDestroy(&p->solver));
    /* before the surrogate: it knows how the batch was allocated */
    if (p->net) PetscCall(SurrogateHostFree(p->net, &p->feat));
    p->out = p->target = NULL;
    PetscCall(BatchDestroy(p));
    PetscCall(SurrogateDestroy(&p->net));
    PetscCall(VecDestroy(&p->prev));
    PetscCall(VecDestroy(&p->d));
    PetscCall(VecDestroy(&p->z));
    PetscCall(VecDestroy(&p->xp));
    PetscCall(VecDestroy(&p->rp));
    PetscCall(VecDestroy(&p->x0));
    PetscCall(VecDestroy(&p->w));
    PetscCall(PetscFree2(p->q, p->qexact));
    PetscCall(PetscFree(p->w32));
  }
  PetscCall(GuessesDestroy(c));
  PetscCall(SolverDestroy(&c->exact));
  PetscCall(PetscFree(c->rel_hist));
  PetscCall(PetscFree(c->churn_out));
  PetscCall(PetscFree(*cp));
  PetscFunctionReturn(PETSC_SUCCESS);
}
