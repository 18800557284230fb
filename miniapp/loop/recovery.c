/* miniapp/loop/recovery.c: what follows a failed phase of a step (an
 * unsolved system, a non-finite value, a detected fault): stop the run as
 * INVALID, or with -fault_action rollback re-do the step from the last
 * checkpoint; and where a restarted run starts. */
#include "coupling_impl.h"

/* Did a replica's (or the exact-term run's) own solve fail, its state or
 * its network stop being finite? why: which, in one line. */
PetscErrorCode RecoveryFailed(Coupled c, PetscBool *failed, char *why, size_t len)
{
  SolverSolveRecord q;
  char              w[512];

  PetscFunctionBegin;
  PetscCall(NetFailure(c, why, len));
  *failed = (PetscBool)(why[0] != 0);
  for (PetscInt r = 0; r <= c->nrep && !*failed; r++) {
    Solver s = r < c->nrep ? c->rep[r].solver : c->exact;
    if (!s) continue;
    PetscCall(SolverGetSolveRecord(s, &q));
    if (!q.nfail_run) continue;
    *failed = PETSC_TRUE;
    PetscCall(SolverSolveFailure(s, w, sizeof w));
    if (r == c->nrep) PetscCall(PetscSNPrintf(why, len, "the exact-term run, %s", w));
    else if (c->nrep > 1) PetscCall(PetscSNPrintf(why, len, "replica %" PetscInt_FMT ", %s", r, w));
    else PetscCall(PetscSNPrintf(why, len, "%s", w));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After a phase of step `step` (the solves, then the training): an unsolved
 * system, a non-finite state or network stops the run (nothing after it can
 * be VALID), unless -fault_action rollback re-does the step from the last
 * checkpoint; after the last phase (final) the fault detectors judge the
 * step. epoch0: the first epoch of the step. */
PetscErrorCode RecoveryJudge(Coupled c, PetscInt step, PetscInt epoch0, PetscBool final, StepVerdict *v)
{
  PetscBool failed, rollback = PETSC_FALSE;
  char      why[640];

  PetscFunctionBegin;
  *v = STEP_ON;
  PetscCall(RecoveryFailed(c, &failed, why, sizeof why));
  if (failed) {
    PetscCall(FaultsAfterStep(c, step, epoch0, &rollback)); /* the detectors' record of this step first */
    if (!rollback) PetscCall(FaultsFailedStep(c, step, why, &rollback));
    if (!rollback) PetscCall(PetscFPrintf(c->comm, stderr, "miniapp: %s; the run stops here and is INVALID\n", why));
    *v = rollback ? STEP_REDO : STEP_STOP;
  } else if (final) {
    PetscCall(FaultsAfterStep(c, step, epoch0, &rollback));
    if (rollback) *v = STEP_REDO;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -fault_action rollback: back to the last checkpoint; *step becomes the
 * loop index that re-does the step after it. */
PetscErrorCode RecoveryRollback(Coupled c, PetscInt *step)
{
  PetscFunctionBegin;
  PetscCall(CheckpointRollback(c));
  PetscCall(SolverGetStep(c->rep[0].solver, step, NULL, NULL, NULL));
  PetscCall(FaultsRolledBack(c, *step)); /* a state the fault had reached: not a recovery */
  (*step)--;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where the loop starts: step 0 observed, or (a restart) the step after the
 * checkpoint's, unless the run it continues had stopped INVALID: then
 * *first = nsteps, nothing to continue. */
PetscErrorCode RecoveryStart(Coupled c, PetscInt *first, PetscInt nsteps)
{
  PetscBool failed;
  char      why[640];

  PetscFunctionBegin;
  if (*first == 0) PetscCall(StepObserve(c, 0, PETSC_FALSE));
  else {
    PetscCall(RecoveryFailed(c, &failed, why, sizeof why));
    if (failed) {
      PetscCall(PetscFPrintf(c->comm, stderr,
                             "miniapp: the run this checkpoint holds stopped INVALID (%s): nothing to continue\n",
                             why));
      *first = nsteps;
    }
  }
  if (c->fault.action == FAULT_ACTION_ROLLBACK) PetscCall(CheckpointWrite(c)); /* the first good state */
  PetscFunctionReturn(PETSC_SUCCESS);
}
