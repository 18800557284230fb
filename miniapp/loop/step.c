/* miniapp/loop/step.c: one time step of the coupled loop, as its phases:
 * every replica's guess or closure phase and solve (StepReplicas), the
 * observation and the run file's record (StepObserve), the training epochs
 * (StepTrain). The loop itself, and what follows a failure, are in
 * coupling.c and recovery.c. */
#include "coupling_impl.h"

#include <math.h>

/* E epochs on every replica's (feat, target); each epoch observed and
 * recorded. Training, observation and output are timed apart (the FOM and
 * the training rates count the training alone). */
PetscErrorCode StepTrain(Coupled c, PetscInt step)
{
  ncout_epoch_rec rec[MAX_REPLICAS];

  PetscFunctionBegin;
  for (PetscInt e = 0; e < c->train_epochs; e++) {
    double t0 = MPI_Wtime();
    PetscCall(PetscLogEventBegin(c->ev_train, 0, 0, 0, 0));
    for (PetscInt r = 0; r < c->nrep; r++) {
      Replica *p = &c->rep[r];
      PetscBool armed;
      PetscCall(FaultsArm(c, r, -1, c->epoch, &armed));
      PetscCall(FeaturesTrain(c, p, &c->last_loss[r]));
      if (armed) PetscCall(FaultsCollect(c));
      p->trained = PETSC_TRUE;
      c->times.train_samples += (double)c->M * c->N; /* every rank's points: not rank 0's times the ranks */
    }
    PetscCall(PetscLogEventEnd(c->ev_train, 0, 0, 0, 0));
    c->times.train += MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    PetscCall(ObserveEpoch(c, step, rec));
    c->times.metrics += MPI_Wtime() - t0;
    if (c->output[0]) CALL_ASIDE(c, OutputEpoch(c, step, rec));
    c->epoch++, c->times.epochs++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The step's solve, with the fault armed when it targets this one. */
static PetscErrorCode Solve(Coupled c, Replica *p, Vec guess)
{
  PetscBool armed;
  PetscInt  step;

  PetscFunctionBegin;
  PetscCall(SolverGetStep(p->solver, &step, NULL, NULL, NULL));
  PetscCall(FaultsArm(c, (PetscInt)(p - c->rep), step + 1, -1, &armed));
  PetscCall(SolverStep(p->solver, guess, &p->its));
  if (armed) PetscCall(FaultsCollect(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* guess mode, one replica: predict, (replica 0: compare the guesses), solve
 * from the -guess guess, keep the training pair. */
static PetscErrorCode StepGuess(Coupled c, Replica *p, PetscInt step, PetscBool *train, PetscBool *predicted)
{
  PetscBool had_d;
  double    t0;

  PetscFunctionBegin;
  PetscCall(FeaturesGuess(c, p));
  if (p->trained && p->have_d) {
    PetscCall(FeaturesPredict(c, p, step));
    PetscCall(FeaturesCorrection(c, p));
    *predicted = PETSC_TRUE;
  }
  if (p == &c->rep[0]) PetscCall(GuessesCompare(c));
  t0 = MPI_Wtime();
  PetscCall(PetscLogEventBegin(c->ev_solve, 0, 0, 0, 0));
  PetscCall(GuessForm(c, p, c->guess, p->x0));
  PetscCall(Solve(c, p, p->x0));
  PetscCall(PetscLogEventEnd(c->ev_solve, 0, 0, 0, 0));
  t0 = MPI_Wtime() - t0;
  c->times.solve += t0;
  PetscCall(SolverGetLastResidual(p->solver, &p->rnorm));
  PetscCall(SolverGetLastStartResidual(p->solver, &p->r0));
  had_d = p->have_d;
  PetscCall(FeaturesGuessTarget(c, p));
  if (had_d && (step + 1) % c->train_every == 0) *train = PETSC_TRUE;
  if (p == &c->rep[0]) {
    PetscCall(GuessesRecordMain(c, t0));
    if (isfinite(p->inc_err)) c->inc_err_sum[0] += p->inc_err, c->inc_err_n[0]++;
    if (isfinite(p->extrap_err)) c->inc_err_sum[1] += p->extrap_err, c->inc_err_n[1]++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One replica's step: the coupling's phase before the solve, the solve. */
static PetscErrorCode StepReplica(Coupled c, Replica *p, PetscInt step, PetscBool *train, PetscBool *predicted)
{
  double t0;

  PetscFunctionBegin;
  *predicted = PETSC_FALSE, *train = PETSC_FALSE;
  if (c->mode == COUPLING_GUESS) {
    PetscCall(StepGuess(c, p, step, train, predicted));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (c->mode == COUPLING_CLOSURE) PetscCall(ClosureBeforeSolve(c, p, step, train, predicted));
  t0 = MPI_Wtime();
  PetscCall(PetscLogEventBegin(c->ev_solve, 0, 0, 0, 0));
  PetscCall(Solve(c, p, NULL));
  PetscCall(PetscLogEventEnd(c->ev_solve, 0, 0, 0, 0));
  c->times.solve += MPI_Wtime() - t0;
  PetscCall(SolverGetLastResidual(p->solver, &p->rnorm));
  PetscCall(SolverGetLastStartResidual(p->solver, &p->r0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every replica from state `step` to step + 1, in lockstep; then the
 * exact-term run beside a closure. *train: the step trains the networks,
 * *predicted: a network predicted this step. */
PetscErrorCode StepReplicas(Coupled c, PetscInt step, PetscBool *train, PetscBool *predicted)
{
  PetscFunctionBegin;
  *train = *predicted = PETSC_FALSE;
  for (PetscInt r = 0; r < c->nrep; r++) {
    PetscCall(StepReplica(c, &c->rep[r], step, train, predicted));
    /* this process's work, re-done steps included (a rollback restores the solvers' counts) */
    c->times.its += c->rep[r].its;
  }
  c->times.steps++;
  if (c->mode == COUPLING_CLOSURE) PetscCall(ClosureAfterStep(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The replicas' state `step` observed (timed as metrics) and recorded in the
 * run file (timed as output). */
PetscErrorCode StepObserve(Coupled c, PetscInt step, PetscBool predicted)
{
  ncout_step_rec rec[MAX_REPLICAS];
  double         t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(ObserveStep(c, step, predicted, rec));
  c->times.metrics += MPI_Wtime() - t0;
  if (c->output[0]) CALL_ASIDE(c, OutputStep(c, step, rec));
  PetscFunctionReturn(PETSC_SUCCESS);
}
