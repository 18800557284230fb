/* solver/solver.c: the Solver object: options, DMDA + MatShell + KSP set-up,
 * one implicit step at a time, the decomposition-independent state hash.
 * Scenario physics lives in heat.c / grayscott.c, the operator in operator.c,
 * the switch-obeying reductions in vecred.c. */
#include "solver_impl.h"
#include <petsc/private/kspimpl.h> /* viewFinalRes */
#include "solver_reduction.h"
#include "vecred.h"
#include "hashrng.h"
#include "fault.h"

#include <string.h>

static const ScenarioOps *const scenarios[] = {&HeatScenario, &GrayScottScenario};
static const char *const        scenario_names[] = {"heat", "grayscott"};

PetscErrorCode SolverCreate(MPI_Comm comm, Solver *s)
{
  PetscFunctionBegin;
  PetscCall(VecFPNARegister());
  PetscCall(KSPFPNACGRegister());
  PetscCall(PetscNew(s));
  (*s)->comm    = comm;
  (*s)->b_step  = -1;
  (*s)->bnorm_step = -1;
  (*s)->ops     = &GrayScottScenario;
  (*s)->scatter = (PetscBool)SOLVER_OPERATOR_SCATTER;
  PetscCall(PetscStrncpy((*s)->vectype, VECFPNA, sizeof((*s)->vectype)));
  (*s)->order = &(*s)->own_order;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverSetReductionOverride(Solver s, const char *vectype, PetscBool scatter)
{
  PetscFunctionBegin;
  PetscCheck(!s->setup, s->comm, PETSC_ERR_ORDER, "call before SolverSetUp");
  PetscCall(PetscStrncpy(s->vectype, vectype, sizeof(s->vectype)));
  s->scatter = scatter;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetDefaults(KSP ksp);

PetscErrorCode SolverSetFromOptions(Solver s)
{
  PetscInt  sc = 1, M, N;
  PetscBool set;

  PetscFunctionBegin;
  PetscOptionsBegin(s->comm, NULL, "Solver options", NULL);
  PetscCall(PetscOptionsEList("-scenario", "Scenario", NULL, scenario_names, 2, scenario_names[sc], &sc, NULL));
  s->ops = scenarios[sc];
  M = N           = s->ops == &HeatScenario ? 64 : 128;
  s->dt           = s->ops == &HeatScenario ? 0.01 : 1.0;
  s->max_steps    = s->ops == &HeatScenario ? 10 : 200;
  PetscCall(PetscOptionsInt("-da_grid_x", "Grid points in x, 3 .. 65536, at most 2^30 unknowns in all (heat: interior points, default 64)", NULL, M, &M, NULL));
  PetscCall(PetscOptionsInt("-da_grid_y", "Grid points in y (heat: default 64)", NULL, N, &N, NULL));
  PetscCall(PetscOptionsInt("-ts_max_steps", "Number of time steps (heat: default 10)", NULL, s->max_steps, &s->max_steps, NULL));
  PetscCall(PetscOptionsReal("-ts_dt", "Time step (heat: default 0.01)", NULL, s->dt, &s->dt, NULL));
  {
    PetscReal rtol = 1e-10;
    PetscCall(PetscOptionsReal("-ksp_rtol", "Krylov relative tolerance, at most 1e-4: every solve's true residual is verified against 10 x max(-ksp_rtol, 1e-12)", "KSPSetTolerances", rtol, &rtol, NULL));
  }
  PetscCall(PetscOptionsBool("-solver_stock_vec", "Use PETSc's stock vectors (reductions outside the switch), for comparison", NULL, s->stock, &s->stock, &set));
  PetscOptionsEnd();
  { /* the atomic strategy's seeded order (read, with its range, where the run's options are: io/report.c) */
    PetscInt aseed = 0;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-atomic_order_seed", &aseed, NULL));
    PetscCheck(aseed >= 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-atomic_order_seed %" PetscInt_FMT ": must be >= 0", aseed);
    s->own_order = (red_atomic_state){(uint64_t)aseed, 0};
  }
  PetscCheck(M >= 3 && M <= 65536, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-da_grid_x %" PetscInt_FMT ": must be in [3, 65536]", M);
  PetscCheck(N >= 3 && N <= 65536, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-da_grid_y %" PetscInt_FMT ": must be in [3, 65536]", N);
  PetscCheck((double)M * N * s->ops->dof <= (double)(1 << 30), s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-da_grid_x %" PetscInt_FMT " x -da_grid_y %" PetscInt_FMT ": more than 2^30 unknowns", M, N);
  PetscCheck(s->dt > 0 && PetscIsNormalReal(s->dt) && s->dt <= 1e6, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ts_dt %g: must be a positive time step of at most 1e6 (and not subnormal)", (double)s->dt);
  PetscCheck(s->max_steps >= 0 && s->max_steps <= 100000000, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ts_max_steps %" PetscInt_FMT ": must be in [0, 1e8]", s->max_steps);
  if (s->stock) PetscCall(PetscStrncpy(s->vectype, VECSTANDARD, sizeof(s->vectype)));
  s->M = M, s->N = N, s->dof = s->ops->dof;
  PetscCall(PetscStrncpy(s->scenario, s->ops->name, sizeof(s->scenario)));
  PetscCall(s->ops->setfromoptions(s));
  PetscCall(PetscOptionsHasHelp(NULL, &set));
  if (set) { /* -help lists every option: the other scenario's, and the Krylov solver's */
    struct _p_Solver scratch = *s;
    KSP              ksp;
    for (size_t k = 0; k < sizeof scenarios / sizeof *scenarios; k++)
      if (scenarios[k] != s->ops) PetscCall(scenarios[k]->setfromoptions(&scratch));
    PetscCall(KSPCreate(s->comm, &ksp));
    PetscCall(KSPSetDefaults(ksp));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At iteration 0 the iterate is the initial guess (a KSPGuess has formed it
 * by then): its residual norm, in the Krylov method's own norm, relative to
 * b in the same norm, is the start residual. It is the norm the method has
 * just computed: no operator product of our own (with -ksp_norm_type none
 * there is none, and the residual is formed here). */
static PetscErrorCode StartResidualMonitor(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  Solver      s = (Solver)ctx;
  Vec         b;
  PetscReal   nb;
  KSPNormType nt;

  PetscFunctionBegin;
  if (it && s->fault) { /* -inject site=iterate: the iterate after iteration `it` */
    Vec x;
    PetscCall(KSPGetSolution(ksp, &x));
    PetscCall(SolverFaultHit(s, FAULT_ITERATE, x));
  }
  if (it) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetRhs(ksp, &b));
  PetscCall(KSPGetNormType(ksp, &nt));
  if (nt == KSP_NORM_NONE) {
    Vec               r;
    red_atomic_state  scratch, *mine;
    PetscCall(VecFPNAOrderScratch(s->u, &scratch, &mine)); /* invisible to the run */
    PetscCall(KSPBuildResidual(ksp, s->gw[0], s->gw[1], &r));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    PetscCall(VecNorm(b, NORM_2, &nb));
    PetscCall(VecFPNAOrderRestore(s->u, mine));
  } else PetscCall(SolverRHSNorm(s, ksp, b, &nb));
  s->r0 = nb > 0 ? rnorm / nb : rnorm;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver's Krylov defaults (CG with the fused tail, fpnacg, + Jacobi,
 * rtol 1e-10, nonzero initial guess), then the -ksp_ and -pc_ options (also
 * what -help lists; -ksp_type cg gives PETSc's own CG, with the same bits). */
static PetscErrorCode KSPSetDefaults(KSP ksp)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPSetType(ksp, KSPFPNACG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A KSP on the solver's operator, configured as the solver's own (CG +
 * Jacobi, rtol 1e-10 on ||b||, nonzero initial guess, then the -ksp_ and
 * -pc_ options), with the start-residual monitor. */
PetscErrorCode SolverCreateKSP(Solver s, KSP *ksp)
{
  PetscFunctionBegin;
  PetscCall(SolverCheckChebyshevBounds(s)); /* before PETSc reads them */
  PetscCall(KSPCreate(s->comm, ksp));
  PetscCall(KSPSetOperators(*ksp, s->A, s->A));
  PetscCall(KSPSetDefaults(*ksp));
  PetscCall(SolverMonitorsInvisible(s, *ksp));
  /* -ksp_view_final_residual computes a norm after each solve, drawing from the atomic order: printed by the solve
   * check instead (SolverCheckSolve), invisibly */
  s->view_final_res = (PetscBool)(s->view_final_res || (*ksp)->viewFinalRes);
  (*ksp)->viewFinalRes = PETSC_FALSE;
  PetscCall(SolverCheckKSPType(s, *ksp));
  PetscCall(SolverCheckPCType(s, *ksp));
  {
    PetscReal rtol, atol, dtol;
    PetscInt  maxit;
    PetscCall(KSPGetTolerances(*ksp, &rtol, &atol, &dtol, &maxit));
    PetscCheck(dtol >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ksp_divtol %g: must be at least 1 (a solve is called diverged once its residual exceeds this times the first; below 1 every solve would)", (double)dtol);
    PetscCheck(rtol > 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ksp_rtol %g: must be positive (with none, every solve runs to -ksp_atol or -ksp_max_it)", (double)rtol);
    PetscCheck(atol >= 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ksp_atol %g: must not be negative", (double)atol);
    PetscCheck(maxit >= 1, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ksp_max_it %" PetscInt_FMT ": must be at least 1", maxit);
    PetscCheck(rtol <= SOLVER_RTOL_MAX, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "-ksp_rtol %g: at most %g (every solve's true residual is verified against %.0f x -ksp_rtol; a looser tolerance lets a state that never moved pass)", (double)rtol, SOLVER_RTOL_MAX, SOLVER_CHECK_FACTOR);
  }
  PetscCall(KSPMonitorSet(*ksp, StartResidualMonitor, s, NULL));
  PetscCall(KSPSetUp(*ksp));
  /* the method's work vectors (KSPCreateVecs makes them from a layout, not from u) draw from the solver's order */
  for (PetscInt i = 0; i < (*ksp)->nwork; i++) PetscCall(VecFPNASetOrderSlot((PetscObject)(*ksp)->work[i], &s->order));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s->range widened by the state's values now (a NaN stays): the scenario's
 * bounds hold at every step, not only at the last (a Gray-Scott state that
 * left them and came back read VALID). */
static PetscErrorCode WidenRange(Solver s)
{
  const PetscScalar *a;
  PetscInt           n;
  PetscReal          r[2]; /* -min, max: one MPI_MAX */

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(s->u, &n));
  PetscCall(VecGetArrayRead(s->u, &a));
  r[0] = -s->range[0], r[1] = s->range[1];
  for (PetscInt i = 0; i < n; i++) {
    PetscReal v = PetscRealPart(a[i]);
    if (v != v) r[0] = r[1] = v; /* NaN: kept by every later comparison below */
    else {
      if (-v > r[0]) r[0] = -v;
      if (v > r[1]) r[1] = v;
    }
  }
  PetscCall(VecRestoreArrayRead(s->u, &a));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, r, 2, MPIU_REAL, MPIU_MAX, s->comm)); /* a NaN on one rank: its MPI_MAX may drop it, the finite-state check stops such a run */
  s->range[0] = -r[0], s->range[1] = r[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetRange(Solver s, PetscReal range[2])
{
  range[0] = s->range[0], range[1] = s->range[1];
  return PETSC_SUCCESS;
}

PetscErrorCode SolverSetUp(Solver s)
{
  PetscReal coef[2] = {0, 0};

  PetscFunctionBegin;
  PetscCall(SolverCheckSplit(s));
  PetscCall(DMDACreate2d(s->comm, s->ops->boundary, s->ops->boundary, DMDA_STENCIL_STAR, s->M, s->N, PETSC_DECIDE, PETSC_DECIDE, s->dof, 1, NULL, NULL, &s->da));
  PetscCall(DMSetVecType(s->da, s->vectype));
  PetscCall(VecFPNASetOrderSlot((PetscObject)s->da, &s->order)); /* every vector of the grid draws from the solver's order */
  PetscCall(DMSetFromOptions(s->da));
  PetscCall(DMSetUp(s->da));
  { /* PETSc's DM options may change the grid (-da_refine, -da_refine_x, ..): everything else (the
     * summary, the spacing, the limits, the restart keys) knows the grid of -da_grid_x/-da_grid_y */
    PetscInt M, N, dof, sw;
    PetscCall(DMDAGetInfo(s->da, NULL, &M, &N, NULL, NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, NULL));
    PetscCheck(M == s->M && N == s->N && dof == s->dof && sw == 1, s->comm, PETSC_ERR_ARG_WRONG,
               "PETSc's grid options (-da_refine, -da_refine_x, -da_refine_y, ..) made the grid %" PetscInt_FMT " x %" PetscInt_FMT ", not -da_grid_x %" PetscInt_FMT " -da_grid_y %" PetscInt_FMT ": give the grid with -da_grid_x and -da_grid_y alone",
               M, N, s->M, s->N);
  }
  PetscCall(DMCreateGlobalVector(s->da, &s->u));
  PetscCall(VecDuplicate(s->u, &s->b));
  for (int i = 0; i < 2; i++) PetscCall(VecDuplicate(s->u, &s->gw[i]));
  PetscCall(OperatorCreate(s->da, s->scatter, &s->A));
  PetscCall(MatShellSetVecType(s->A, s->vectype));
  PetscCall(s->ops->coefficients(s, coef));
  PetscCall(OperatorSetCoefficients(s->A, coef, s->hx, s->hy));

  PetscCall(SolverCreateKSP(s, &s->ksp));

  PetscCall(PetscCalloc1(s->max_steps + 1, &s->its));
  PetscCall(s->ops->initial(s, s->u));
  s->range[0] = PETSC_MAX_REAL, s->range[1] = -PETSC_MAX_REAL;
  PetscCall(WidenRange(s));
  s->setup = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetRHS(Solver s, Vec *b)
{
  PetscFunctionBegin;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "call SolverSetUp first");
  if (s->b_step != s->step) {
    PetscCall(s->ops->rhs(s, s->u, s->b));
    s->bnorm_step = -1; /* its norm is computed when first needed */
  }
  s->b_step = s->step;
  *b        = s->b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solve this step's system with ksp from x (in: the guess; out: the
 * solution) without advancing; a KSPGuess attached to ksp forms its own. */
static PetscErrorCode Solve(Solver s, KSP ksp, Vec x, PetscBool trial, PetscInt *its, PetscReal *r0)
{
  Vec       b = NULL;
  PetscInt  n = 0;
  PetscBool ok;

  PetscFunctionBegin;
  PetscCall(SolverGetRHS(s, &b));
  s->r0 = NAN;
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &n));
  PetscCall(SolverCheckSolve(s, ksp, b, x, trial, &ok)); /* a failure is recorded: the run stops, INVALID */
  if (its) *its = n;
  if (r0) *r0 = s->r0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverTrialSolve(Solver s, KSP ksp, Vec x, PetscInt *its, PetscReal *r0)
{
  PetscFunctionBegin;
  PetscCheck(s->step < s->max_steps, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "all %" PetscInt_FMT " steps are done", s->max_steps);
  PetscCall(Solve(s, ksp, x, PETSC_TRUE, its, r0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverStep(Solver s, Vec guess, PetscInt *its)
{
  PetscInt n = 0;

  PetscFunctionBegin;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "call SolverSetUp first");
  PetscCheck(s->step < s->max_steps, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "all %" PetscInt_FMT " steps are done", s->max_steps);
  Vec b = NULL;
  PetscCall(SolverGetRHS(s, &b)); /* from u^n, before a guess replaces it */
  if (guess) PetscCall(VecCopy(guess, s->u));
  PetscCall(Solve(s, s->ksp, s->u, PETSC_FALSE, &n, &s->last_r0));
  PetscCall(KSPGetResidualNorm(s->ksp, &s->rnorm));
  if (s->fault) PetscCall(SolverFaultHit(s, FAULT_STATE, s->u)); /* -inject site=state: u^{n+1} as the step leaves it */
  s->its[s->step++] = n;
  {
    PetscBool finite;
    PetscCall(SolverCheckStateFinite(s, &finite));
  }
  PetscCall(WidenRange(s));
  s->its_total += n;
  s->t += s->dt;
  if (its) *its = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverSetChecks(Solver s, PetscBool on)
{
  PetscFunctionBegin;
  PetscCall(OperatorSetCheck(s->A, on));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverSetAtomicOrder(Solver s, red_atomic_state *ord)
{
  s->order = ord ? ord : &s->own_order;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverGetAtomicOrder(Solver s, red_atomic_state **ord)
{
  *ord = s->order;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverSetFaults(Solver s, fault_ctx *f)
{
  PetscFunctionBegin;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "call SolverSetUp first");
  s->fault = f;
  PetscCall(OperatorSetFaults(s->A, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetCheckResult(Solver s, PetscInt *nchecks, PetscInt *nfail, PetscReal *worst)
{
  PetscFunctionBegin;
  PetscCall(OperatorGetCheckResult(s->A, nchecks, nfail, worst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetLastStartResidual(Solver s, PetscReal *r0)
{
  *r0 = s->last_r0;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverGetOperator(Solver s, Mat *A)
{
  *A = s->A;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverSolveAll(Solver s)
{
  PetscFunctionBegin;
  while (s->step < s->max_steps) PetscCall(SolverStep(s, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverStateHash(Solver s, uint64_t *hash)
{
  const PetscScalar ***a;
  PetscInt             xs, ys, xm, ym;
  uint64_t             h = 0;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayDOFRead(s->da, s->u, &a));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++)
      for (PetscInt c = 0; c < s->dof; c++) h += hash_term(((uint64_t)j * s->M + i) * s->dof + c, a[j][i][c]);
  PetscCall(DMDAVecRestoreArrayDOFRead(s->da, s->u, &a));
  PetscCallMPI(MPI_Allreduce(&h, hash, 1, MPI_UINT64_T, MPI_SUM, s->comm)); /* integer: exact */
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
    PetscCall(PetscSNPrintf(why + n, len - n, "%sall %lld solves verified (true residual <= %.0f x max(-ksp_rtol, %g); worst %.2g of it)", n ? "; " : "", (long long)s->solves.nsolves, SOLVER_CHECK_FACTOR, SOLVER_CHECK_FLOOR, s->solves.worst));
  } else PetscCall(PetscSNPrintf(why + n, len - n, "%sno step run (-ts_max_steps %" PetscInt_FMT "): only the initial state was checked", n ? "; " : "", s->max_steps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverHasClosure(Solver s, PetscBool *has)
{
  *has = (PetscBool)(s->ops->closure != NULL);
  return PETSC_SUCCESS;
}

PetscErrorCode SolverComputeClosure(Solver s, Vec w, PetscScalar q[])
{
  PetscFunctionBegin;
  PetscCheck(s->ops->closure, s->comm, PETSC_ERR_SUP, "scenario %s has no closure term", s->scenario);
  PetscCall(s->ops->closure(s, w, q));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverSetClosure(Solver s, const PetscScalar q[])
{
  PetscInt xm, ym;

  PetscFunctionBegin;
  PetscCheck(s->ops->closure || !q, s->comm, PETSC_ERR_SUP, "scenario %s has no closure term to replace", s->scenario);
  PetscCall(DMDAGetCorners(s->da, NULL, NULL, NULL, &xm, &ym, NULL));
  if (!q) PetscCall(PetscFree(s->closure));
  else {
    if (!s->closure) PetscCall(PetscMalloc1(xm * ym, &s->closure));
    PetscCall(PetscArraycpy(s->closure, q, xm * ym));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* HPCG-style repeat check: solve the last step's system n times from a zero
 * initial guess and return the mean and variance of the final residual
 * norms and the iteration range. The state is left untouched. */
PetscErrorCode SolverRepeatCheck(Solver s, PetscInt n, PetscReal *mean, PetscReal *var, PetscInt *its_min, PetscInt *its_max, PetscInt *nfailed)
{
  Vec       x;
  PetscReal r[64], m = 0, v = 0;
  PetscInt  its;
  PetscBool has;

  PetscFunctionBegin;
  PetscCheck(n >= 2 && n <= 64, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "repeat count %" PetscInt_FMT ": must be in [2, 64]", n);
  PetscCall(SolverHasLastSystem(s, &has));
  PetscCheck(has, s->comm, PETSC_ERR_ORDER, "the repeat check needs a step solved by this run (a restart at the last step solves none)");
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

PetscErrorCode SolverGetLastResidual(Solver s, PetscReal *rnorm)
{
  *rnorm = s->rnorm;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverGetState(Solver s, Vec *u) { *u = s->u; return PETSC_SUCCESS; }
PetscErrorCode SolverGetDM(Solver s, DM *da) { *da = s->da; return PETSC_SUCCESS; }
PetscErrorCode SolverGetKSP(Solver s, KSP *ksp) { *ksp = s->ksp; return PETSC_SUCCESS; }
PetscErrorCode SolverGetScenario(Solver s, const char **name) { *name = s->scenario; return PETSC_SUCCESS; }

PetscErrorCode SolverGetSolveCount(Solver s, PetscInt64 *n)
{
  *n = (PetscInt64)s->solves.nsolves;
  return PETSC_SUCCESS;
}

/* v in the fewest digits that read back as v (0.08, not 0.080000000000000002) */
static const char *Shortest(double v, char b[32])
{
  for (int p = 1; p <= 17; p++) {
    snprintf(b, 32, "%.*g", p, v);
    if (strtod(b, NULL) == v) break;
  }
  return b;
}

PetscErrorCode SolverGetParameters(Solver s, char *buf, size_t len)
{
  char a[32], b[32], c[32], d[32], e[32];

  PetscFunctionBegin;
  if (!strcmp(s->scenario, "grayscott"))
    PetscCall(PetscSNPrintf(buf, len, "-gs_Du %s -gs_Dv %s -gs_F %s -gs_k %s -gs_h %s -gs_seed %" PetscInt_FMT, Shortest((double)s->Du, a), Shortest((double)s->Dv, b), Shortest((double)s->F, c), Shortest((double)s->k, d),
                            Shortest((double)s->hx, e), s->gs_seed));
  else PetscCall(PetscSNPrintf(buf, len, "-heat_D %s -heat_theta %s", Shortest((double)s->D, a), Shortest((double)s->theta, b)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode SolverUsesStockVectors(Solver s, PetscBool *stock) { *stock = s->stock; return PETSC_SUCCESS; }

PetscErrorCode SolverGetStep(Solver s, PetscInt *step, PetscInt *max_steps, PetscReal *t, PetscReal *dt)
{
  if (step) *step = s->step;
  if (max_steps) *max_steps = s->max_steps;
  if (t) *t = s->t;
  if (dt) *dt = s->dt;
  return PETSC_SUCCESS;
}

PetscErrorCode SolverGetIterations(Solver s, PetscInt *total, const PetscInt **per_step)
{
  if (total) *total = s->its_total;
  if (per_step) *per_step = s->its;
  return PETSC_SUCCESS;
}

/* The solver's part of the run summary, as YAML "key: value" lines (rank 0). */
PetscErrorCode SolverWriteSummary(Solver s, FILE *f)
{
  KSPType ksp;
  PCType  pc;
  PC      p;

  PetscFunctionBegin;
  PetscCall(KSPGetType(s->ksp, &ksp));
  PetscCall(KSPGetPC(s->ksp, &p));
  PetscCall(PCGetType(p, &pc));
  PetscCall(PetscFPrintf(s->comm, f, "scenario: %s\ngrid: [%" PetscInt_FMT ", %" PetscInt_FMT "]\ncomponents: %" PetscInt_FMT "\n", s->scenario, s->M, s->N, s->dof));
  PetscCall(PetscFPrintf(s->comm, f, "steps: %" PetscInt_FMT "\ndt: %.17g\nfinal_time: %.17g\n", s->step, (double)s->dt, (double)s->t));
  PetscCall(PetscFPrintf(s->comm, f, "ksp_type: %s\npc_type: %s\nvec_type: %s\noperator_summation: %s\n", ksp, pc, s->vectype, s->scatter ? "scatter" : "gather"));
  PetscCall(PetscFPrintf(s->comm, f, "ksp_iterations_total: %" PetscInt_FMT "\nksp_iterations: [", s->its_total));
  for (PetscInt i = 0; i < s->step; i++) PetscCall(PetscFPrintf(s->comm, f, "%s%" PetscInt_FMT, i ? ", " : "", s->its[i]));
  PetscCall(PetscFPrintf(s->comm, f, "]\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDescribe(Solver s, char buf[], size_t len)
{
  size_t n = strlen(buf);

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf + n, len - n, "scenario: %s\ngrid: %" PetscInt_FMT " x %" PetscInt_FMT "\ncomponents: %" PetscInt_FMT "\nsolver_reduction: %s\ndt: %.17g\n", s->scenario, s->M, s->N, s->dof,
                         s->stock ? "stock" : red_strategy_name(SOLVER_STRATEGY), (double)s->dt));
  n = strlen(buf);
  if (s->ops == &HeatScenario) PetscCall(PetscSNPrintf(buf + n, len - n, "heat_D: %.17g\nheat_theta: %.17g\n", (double)s->D, (double)s->theta));
  else PetscCall(PetscSNPrintf(buf + n, len - n, "gs_Du: %.17g\ngs_Dv: %.17g\ngs_F: %.17g\ngs_k: %.17g\n", (double)s->Du, (double)s->Dv, (double)s->F, (double)s->k));
  n = strlen(buf);
  PetscCall(PetscSNPrintf(buf + n, len - n, "grid_spacing: %.17g %.17g\noperator_summation: %s\n", (double)s->hx, (double)s->hy, s->scatter ? "scatter" : "gather"));
  if (s->ksp) { /* the Krylov method as configured: type, preconditioner, stopping rule */
    KSPType     kt;
    PCType      pt;
    PC          pc;
    KSPNormType nt;
    PetscReal   rtol, atol, dtol;
    PetscInt    maxit;
    PetscCall(KSPGetType(s->ksp, &kt));
    PetscCall(KSPGetPC(s->ksp, &pc));
    PetscCall(PCGetType(pc, &pt));
    PetscCall(KSPGetNormType(s->ksp, &nt));
    PetscCall(KSPGetTolerances(s->ksp, &rtol, &atol, &dtol, &maxit));
    n = strlen(buf);
    PetscCall(PetscSNPrintf(buf + n, len - n, "ksp: %s %s %s\nksp_tolerances: %.17g %.17g %.17g %" PetscInt_FMT "\n", kt, pt, KSPNormTypes[nt], (double)rtol, (double)atol, (double)dtol, maxit));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  int64_t step, its_total;
  double  t, rnorm, last_r0;
} SolverClock;

/* Either direction (ckpt.h); reading checks that the step is within
 * -ts_max_steps before the iteration history it sizes is read. */
PetscErrorCode SolverCheckpoint(Solver s, Ckpt ck, const char prefix[])
{
  char        name[64];
  SolverClock k = {s->step, s->its_total, s->t, s->rnorm, s->last_r0};
  int64_t    *its;

  PetscFunctionBegin;
  PetscCheck(s->setup, s->comm, PETSC_ERR_ORDER, "call SolverSetUp first");
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/clock", prefix));
  PetscCall(CkptData(ck, name, &k, sizeof k));
  PetscCheck(k.step >= 0 && k.step <= s->max_steps, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %s: the checkpoint is at step %lld, beyond -ts_max_steps %" PetscInt_FMT " (the total number of steps, counted from the start)", CkptOption(ck), CkptPath(ck),
             (long long)k.step, s->max_steps);
  PetscCall(PetscMalloc1(k.step + 1, &its));
  for (PetscInt i = 0; i < k.step && CkptIsWriting(ck); i++) its[i] = s->its[i];
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/its", prefix));
  {
    PetscErrorCode ierr = CkptData(ck, name, its, (size_t)k.step * sizeof *its);
    for (PetscInt i = 0; i < k.step && !ierr && !CkptIsWriting(ck); i++) s->its[i] = (PetscInt)its[i];
    PetscCall(PetscFree(its));
    PetscCall(ierr);
  }
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/u", prefix));
  PetscCall(CkptVec(ck, name, s->da, s->u));
  PetscCall(PetscSNPrintf(name, sizeof name, "%s/solves", prefix)); /* a failure stays a failure after a restart */
  PetscCall(CkptData(ck, name, &s->solves, sizeof s->solves));
  {
    char rname[64];
    PetscCall(PetscSNPrintf(rname, sizeof rname, "%s/range", prefix)); /* so does a state that left the scenario's bounds */
    PetscCall(CkptData(ck, rname, s->range, sizeof s->range));
  }
  if (!CkptIsWriting(ck)) {
    PetscCheck(SolverSolveRecordValid(&s->solves, k.step), s->comm, PETSC_ERR_FILE_UNEXPECTED, "%s %s: the record %s holds counts or a failure that no run writes (a damaged or forged file)", CkptOption(ck), CkptPath(ck), name);
    s->step = (PetscInt)k.step, s->its_total = (PetscInt)k.its_total, s->t = k.t, s->rnorm = k.rnorm, s->last_r0 = k.last_r0;
    s->b_step = s->bnorm_step = -1;
    PetscCall(PetscFree(s->closure));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDestroy(Solver *s)
{
  PetscFunctionBegin;
  if (!*s) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*s)->A) PetscCall(OperatorDestroyContext((*s)->A));
  PetscCall(MatDestroy(&(*s)->A));
  PetscCall(KSPDestroy(&(*s)->ksp));
  PetscCall(VecDestroy(&(*s)->u));
  PetscCall(VecDestroy(&(*s)->b));
  PetscCall(PetscFree((*s)->closure));
  for (int i = 0; i < 2; i++) PetscCall(VecDestroy(&(*s)->gw[i]));
  PetscCall(DMDestroy(&(*s)->da));
  PetscCall(PetscFree((*s)->its));
  PetscCall(PetscFree(*s));
  PetscFunctionReturn(PETSC_SUCCESS);
}
