/* solver/solvecheck.c: every linear solve is checked, so that VALID means
 * "every step's system was solved to the requested tolerance". After each
 * solve (the run's own and the side-by-side trial solves) the true residual
 * r = b - A x is formed and measured in the norm the Krylov method itself
 * tests (preconditioned, unpreconditioned or natural), relative to b in the
 * same norm; the solve passes when that is at most SOLVER_CHECK_FACTOR x
 * max(rtol, SOLVER_CHECK_FLOOR) and the method did not report divergence. A
 * method that stops at its iteration limit (-ksp_converged_maxits,
 * -ksp_convergence_test skip, preonly) passes only through the residual.
 * The check draws nothing from the atomic order and arms no fault: it never
 * changes the run's bits; nor do PETSc's monitors given as options
 * (SolverMonitorsInvisible). Not here: what the coupled loop does about a
 * failure (it stops, and the run is INVALID). */
#include "solver_impl.h"
#include "vecdev.h"
#include "fault.h"
#include "reduce.h"
#include "vecred.h"

#include <petsc/private/kspimpl.h> /* the monitors' table */

#include <math.h>

/* ||v|| in the norm the KSP tests: ||B v|| (preconditioned), sqrt(v'B v)
 * (natural) or ||v||. Uses s->gw[1]; v may be s->gw[0]. */
static PetscErrorCode KSPNormOf(Solver s, KSP ksp, Vec v, PetscReal *nv)
{
  KSPNormType nt;
  PC          pc;
  Vec         w = s->gw[1];

  PetscFunctionBegin;
  PetscCall(KSPGetNormType(ksp, &nt));
  PetscCall(KSPGetPC(ksp, &pc));
  if (nt == KSP_NORM_PRECONDITIONED) {
    PetscCall(PCApply(pc, v, w));
    PetscCall(VecNorm(w, NORM_2, nv));
  } else if (nt == KSP_NORM_NATURAL) {
    PetscScalar d;
    PetscCall(PCApply(pc, v, w));
    PetscCall(VecDot(v, w, &d));
    *nv = PetscSqrtReal(PetscAbsScalar(d));
  } else PetscCall(VecNorm(v, NORM_2, nv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The step's right-hand side in the KSP's norm, once per step (every solve
 * of the step, the trial ones too, shares b). Invisible to the run: no
 * draw from the atomic order. */
PetscErrorCode SolverRHSNorm(Solver s, KSP ksp, Vec b, PetscReal *nb)
{
  KSPNormType      nt;
  red_atomic_state scratch, *mine;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(KSPGetNormType(ksp, &nt));
  if (b == s->b && s->b_step >= 0 && s->bnorm_step == s->b_step && s->bnorm_type == (PetscInt)nt) {
    *nb = s->bnorm;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecFPNAOrderScratch(s->u, &scratch, &mine));
  ierr = KSPNormOf(s, ksp, b, nb);
  PetscCall(VecFPNAOrderRestore(s->u, mine));
  PetscCall(ierr);
  if (b == s->b) s->bnorm = *nb, s->bnorm_step = s->b_step, s->bnorm_type = (PetscInt)nt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||B (b - A x)|| / ||B b||: the quantity the KSP's rtol bounds. */
static PetscErrorCode TrueResidual(Solver s, KSP ksp, Vec b, Vec x, PetscReal *rel)
{
  Vec       r = s->gw[0];
  PetscReal nr, nb;

  PetscFunctionBegin;
  PetscCall(MatMult(s->A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(KSPNormOf(s, ksp, r, &nr));
  PetscCall(SolverRHSNorm(s, ksp, b, &nb));
  *rel = nb > 0 ? nr / nb : nr; /* b = 0: the exact solution is 0, r = -A x */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Did the solve solve its system? A KSP that converged (reason > 0) with a
 * true residual within the check's bound did. So did one that broke down
 * (CG's p.Ap <= 0, BiCG's rho = 0) once its true residual was within the
 * KSP's own tolerance: with no convergence test (-ksp_norm_type none) CG
 * iterates until the residual is rounding and p.Ap loses its sign, a
 * breakdown of a solved system (3.7e-16 in the default deck). Any other
 * divergence (iterations, NaN, a breakdown short of the tolerance) did not. */
static PetscBool Solved(KSPConvergedReason reason, PetscReal rel, PetscReal rtol, PetscReal bound)
{
  PetscBool breakdown = (PetscBool)(reason == KSP_DIVERGED_BREAKDOWN || reason == KSP_DIVERGED_BREAKDOWN_BICG ||
                                    reason == KSP_DIVERGED_INDEFINITE_PC || reason == KSP_DIVERGED_INDEFINITE_MAT);
  return (PetscBool)((reason > 0 && rel <= bound) || (breakdown && rel <= rtol)); /* false for NaN */
}

/* The repeat check's solves (SolverRepeatCheck): solved by the rule above,
 * and not counted in the run's record. */
PetscErrorCode SolverRepeatSolved(Solver s, KSP ksp, Vec b, Vec x, PetscBool *ok)
{
  KSPConvergedReason reason;
  PetscReal          rtol, rel = NAN;

  PetscFunctionBegin;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, NULL));
  *ok = (PetscBool)(reason > 0);
  /* no residual changes these */
  if (reason > 0 || reason == KSP_DIVERGED_ITS || reason == KSP_DIVERGED_NANORINF) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(TrueResidual(s, ksp, b, x, &rel));
  *ok = Solved(reason, rel, rtol, SOLVER_CHECK_FACTOR * PetscMax(rtol, SOLVER_CHECK_FLOOR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverCheckSolve(Solver s, KSP ksp, Vec b, Vec x, PetscBool trial, PetscBool *ok)
{
  KSPConvergedReason reason;
  PetscReal          rtol, rel = NAN, bound;
  PetscInt           its;
  red_atomic_state   scratch, *mine;
  int                armed;
  SolverSolveRecord *q = &s->solves;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, NULL));
  PetscCall(VecFPNAOrderScratch(s->u, &scratch, &mine)); /* invisible to the run: same draws, no fault */
  armed = SolverFaultsHold(s);
  ierr  = TrueResidual(s, ksp, b, x, &rel);
  if (!ierr && s->view_final_res && !trial) {
    /* PETSc's -ksp_view_final_residual, here where it draws nothing (solver.c) */
    PetscReal n2;
    ierr = VecNorm(s->gw[0], NORM_2, &n2); /* r = b - A x, TrueResidual's */
    if (!ierr) ierr = PetscPrintf(s->comm, "  KSP final norm of residual %g\n", (double)n2);
  }
  SolverFaultsResume(s, armed);
  PetscCall(VecFPNAOrderRestore(s->u, mine));
  PetscCall(ierr);
  bound = SOLVER_CHECK_FACTOR * PetscMax(rtol, SOLVER_CHECK_FLOOR);
  *ok   = Solved(reason, rel, rtol, bound);
  q->nsolves++;
  if (rel / bound > q->worst || PetscIsInfOrNanReal(rel))
    q->worst = PetscIsInfOrNanReal(rel) ? (double)NAN : (double)(rel / bound);
  if (*ok) PetscFunctionReturn(PETSC_SUCCESS);
  if (!trial) q->nfail_run++;
  if (!q->nfail++) {
    q->fail_step = s->step + 1, q->fail_reason = (int32_t)reason,
    q->fail_kind = trial ? SOLVER_FAIL_TRIAL : SOLVER_FAIL_SOLVE;
    q->fail_its = its, q->fail_res = rel, q->fail_bound = bound;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The state after a step: every entry finite (min/max skip NaN; this does not). */
PetscErrorCode SolverRecordStateFinite(Solver s, const step_scan_t *sc, PetscBool *ok)
{
  int bad = sc->nonfinite;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, s->comm));
  if (ok) *ok = (PetscBool)!bad;
  if (bad) s->solves.nfail_run++;
  if (bad && !s->solves.nfail++)
    s->solves.fail_step = s->step, s->solves.fail_kind = SOLVER_FAIL_NONFINITE, s->solves.fail_res = NAN;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverCheckStateFinite(Solver s, PetscBool *ok)
{
  step_scan_t sc;

  PetscFunctionBegin;
  PetscCall(SolverStateScan(s, &sc));
  PetscCall(SolverRecordStateFinite(s, &sc, ok));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool SolverSolveRecordValid(const SolverSolveRecord *q, int64_t step)
{
  PetscBool ok = q->nsolves >= 0 && q->nfail >= 0 && q->nfail_run >= 0 && q->nfail_run <= q->nfail &&
                 q->nfail <= q->nsolves + step;
  if (ok && q->nfail > 0) /* the reason indexes PETSc's names (SolverSolveFailure) */
    ok = (q->fail_kind == SOLVER_FAIL_SOLVE || q->fail_kind == SOLVER_FAIL_TRIAL ||
          q->fail_kind == SOLVER_FAIL_NONFINITE) &&
         q->fail_step >= 0 && q->fail_step <= step + 1 && q->fail_reason >= KSP_DIVERGED_PC_FAILED &&
         q->fail_reason <= KSP_CONVERGED_ATOL_NORMAL && q->fail_its >= 0;
  return ok;
}

PetscErrorCode SolverGetSolveRecord(Solver s, SolverSolveRecord *rec)
{
  *rec = s->solves;
  return PETSC_SUCCESS;
}

/* One line on the first failure ("" when none). */
PetscErrorCode SolverSolveFailure(Solver s, char *why, size_t len)
{
  const SolverSolveRecord *q = &s->solves;

  PetscFunctionBegin;
  why[0] = 0;
  if (!q->nfail) PetscFunctionReturn(PETSC_SUCCESS);
  if (q->fail_kind == SOLVER_FAIL_NONFINITE)
    PetscCall(
      PetscSNPrintf(why, len, "step %lld: the state holds a value that is not finite", (long long)q->fail_step));
  else
    PetscCall(PetscSNPrintf(why, len,
                            "step %lld: %s solve did not solve its system (%s after %lld iterations; true relative "
                            "residual %.3g, bound %.3g = %.0f x max(-ksp_rtol, %g))%s",
                            (long long)q->fail_step, q->fail_kind == SOLVER_FAIL_TRIAL ? "a side-by-side" : "the",
                            KSPConvergedReasons[q->fail_reason], (long long)q->fail_its, q->fail_res, q->fail_bound,
                            SOLVER_CHECK_FACTOR, SOLVER_CHECK_FLOOR, q->nfail > 1 ? "; later failures too" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's monitors given as options (-ksp_monitor_true_residual computes a
 * norm) are diagnostics: wrapped so that they draw nothing from the atomic
 * order and arm no fault, they cannot change the run's bits (a restart or a
 * comparison may add or drop them). */
typedef struct {
  Solver s;
  PetscErrorCode (*fn)(KSP, PetscInt, PetscReal, void *);
  PetscErrorCode (*destroy)(void **);
  void *ctx;
} InvisibleMonitorCtx;

static PetscErrorCode InvisibleMonitor(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  InvisibleMonitorCtx *w     = (InvisibleMonitorCtx *)ctx;
  int                  armed;
  red_atomic_state     scratch, *mine;
  PetscErrorCode       ierr;

  PetscFunctionBegin;
  PetscCall(VecFPNAOrderScratch(w->s->u, &scratch, &mine));
  armed = SolverFaultsHold(w->s);
  ierr  = w->fn(ksp, it, rnorm, w->ctx);
  SolverFaultsResume(w->s, armed);
  PetscCall(VecFPNAOrderRestore(w->s->u, mine));
  PetscCall(ierr);
  /* a norm it computed stays cached with the vector, and the method's next VecNorm would take it
   * (-ksp_monitor_solution changed the seeded bits so): forget what it left */
  if (ksp->vec_sol) PetscCall(PetscObjectStateIncrease((PetscObject)ksp->vec_sol));
  if (ksp->vec_rhs) PetscCall(PetscObjectStateIncrease((PetscObject)ksp->vec_rhs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode InvisibleMonitorDestroy(void **ctx)
{
  InvisibleMonitorCtx *w = (InvisibleMonitorCtx *)*ctx;

  PetscFunctionBegin;
  if (w->destroy) PetscCall(w->destroy(&w->ctx));
  PetscCall(PetscFree(w));
  *ctx = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverMonitorsInvisible(Solver s, KSP ksp)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < ksp->numbermonitors; i++) {
    InvisibleMonitorCtx *w;
    if (ksp->monitor[i] == InvisibleMonitor) continue;
    PetscCall(PetscNew(&w));
    w->s = s, w->fn = ksp->monitor[i], w->ctx = ksp->monitorcontext[i], w->destroy = ksp->monitordestroy[i];
    ksp->monitor[i] = InvisibleMonitor, ksp->monitorcontext[i] = w, ksp->monitordestroy[i] = InvisibleMonitorDestroy;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverFaultHit(Solver s, fault_site site, Vec x)
{
  PetscScalar *a;
  PetscInt     lo, n, N;

  PetscFunctionBegin;
  if (!fault_is_armed(s->fault, site)) PetscFunctionReturn(PETSC_SUCCESS);
  if (VecDevIs(x)) { /* where the values are: one entry crosses, not the vector */
    PetscCall(VecDevFaultHit(s->fault, site, x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecGetOwnershipRange(x, &lo, NULL));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetSize(x, &N));
  PetscCall(VecGetArray(x, &a));
  fault_hit_double_(s->fault, site, a, (size_t)n, (long long)lo, (long long)N);
  PetscCall(VecRestoreArray(x, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}
