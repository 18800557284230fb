/* solver/verify.c: the solver's half of a run's verdict: the
 * scenario's own check joined with the solves' (solvecheck.c), and the
 * HPCG-style repeat of the last step's solve. */
#include "solver_impl.h"

#include <string.h>

PetscErrorCode SolverCheckScenario(Solver s, PetscBool *ok, char *why, size_t len)
{
  PetscReal l2, mx;

  PetscFunctionBegin;
  PetscCall(s->ops->verify(s, &l2, &mx, ok, why, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverVerify(Solver s, PetscReal *l2, PetscReal *mx, PetscBool *ok, char *why, size_t len)
{
  PetscBool finite;
  size_t    n;

  PetscFunctionBegin;
  PetscCall(s->ops->verify(s, l2, mx, ok, why, len));
  n = strlen(why);
  PetscCall(SolverCheckStateFinite(s, &finite)); /* also a restored state never stepped here */
  if (s->solves.nfail) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why + n, len - n, "%s", n ? "; " : ""));
    n = strlen(why);
    PetscCall(SolverSolveFailure(s, why + n, len - n));
  } else if (s->solves.nsolves) {
    PetscCall(PetscSNPrintf(why + n, len - n,
                            "%sall %lld solves verified (true residual <= %.0f x max(-ksp_rtol, %g); worst %.2g of it)",
                            n ? "; " : "", (long long)s->solves.nsolves, SOLVER_CHECK_FACTOR, SOLVER_CHECK_FLOOR,
                            s->solves.worst));
  } else
    PetscCall(PetscSNPrintf(why + n, len - n,
                            "%sno step run (-ts_max_steps %" PetscInt_FMT "): only the initial state was checked",
                            n ? "; " : "", s->max_steps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* HPCG-style repeat check: solve the last step's system n times from a zero
 * initial guess and return the mean and variance of the final residual
 * norms and the iteration range. The state is left untouched. */
PetscErrorCode SolverRepeatCheck(Solver s, PetscInt n, PetscReal *mean, PetscReal *var, PetscInt *its_min,
                                 PetscInt *its_max, PetscInt *nfailed)
{
  Vec       x;
  PetscReal r[64], m = 0, v = 0;
  PetscInt  its;
  PetscBool has;

  const opt_range count = {"repeat count", (double)n, 2, 64, OPT_INT, NULL}; /* r[] holds 64 */

  PetscFunctionBegin;
  PetscCall(SolverCheckRanges(s, &count, 1));
  PetscCall(SolverHasLastSystem(s, &has));
  PetscCheck(has, s->comm, PETSC_ERR_ORDER,
             "the repeat check needs a step solved by this run (a restart at the last step solves none)");
  PetscCall(VecDuplicate(s->u, &x));
  *its_min = PETSC_MAX_INT, *its_max = 0, *nfailed = 0;
  for (PetscInt k = 0; k < n; k++) {
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(s->ksp, s->b, x));
    PetscBool solved;
    PetscCall(SolverRepeatSolved(s, s->ksp, s->b, x, &solved));
    if (!solved) (*nfailed)++;
    PetscCall(KSPGetIterationNumber(s->ksp, &its));
    PetscCall(KSPGetResidualNorm(s->ksp, &r[k]));
    *its_min = PetscMin(*its_min, its), *its_max = PetscMax(*its_max, its);
    m += r[k];
  }
  m /= n;
  for (PetscInt k = 0; k < n; k++) v += (r[k] - m) * (r[k] - m);
  *mean = m, *var = v / n;
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverHasLastSystem(Solver s, PetscBool *has)
{
  *has = (PetscBool)(s->step > 0 && s->b_step == s->step - 1);
  return PETSC_SUCCESS;
}
