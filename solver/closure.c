/* solver/closure.c: the scenario's closure term (Gray-Scott's reaction rate
 * factor): its exact value, and a model's values that replace it in the
 * right-hand side (on the device too, with -solver_device cuda). */
#include "solver_impl.h"

PetscErrorCode SolverHasClosure(Solver s, PetscBool *has)
{
  *has = (PetscBool)(s->ops->closure != NULL);
  return PETSC_SUCCESS;
}

static PetscErrorCode NeedClosure(Solver s)
{
  PetscFunctionBegin;
  PetscCheck(s->ops->closure, s->comm, PETSC_ERR_SUP, "scenario %s has no closure term", s->scenario);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverComputeClosure(Solver s, Vec w, PetscScalar q[])
{
  PetscFunctionBegin;
  PetscCall(NeedClosure(s));
  PetscCall(s->ops->closure(s, w, q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverSetClosure(Solver s, const PetscScalar q[])
{
  PetscInt xm, ym;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, NULL, NULL, NULL, &xm, &ym, NULL));
  if (!q) PetscCall(PetscFree(s->closure));
  else {
    PetscCall(NeedClosure(s));
    if (!s->closure) PetscCall(PetscMalloc1(xm * ym, &s->closure));
    PetscCall(PetscArraycpy(s->closure, q, xm * ym));
    PetscCall(SolverDevSetClosure(s, q, xm * ym));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
