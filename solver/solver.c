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

PetscErrorCode SolverCheckSetUp(Solver s, PetscBool done, const char *caller)
{
  PetscFunctionBegin;
  PetscCheck(s->setup == done, s->comm, PETSC_ERR_ORDER, "%s: call it %s SolverSetUp()", caller,
             done ? "after" : "before");
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
  PetscCall(SolverCheckSetUp(s, PETSC_FALSE, PETSC_FUNCTION_NAME));
  PetscCall(PetscStrncpy(s->vectype, vectype, sizeof(s->vectype)));
  s->scatter = scatter;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetDefaults(KSP ksp);

PetscErrorCode SolverSetFromOptions(Solver s)
{
  PetscInt  sc = 1, M, N, tile = 0;
  PetscBool set, tset;

  PetscFunctionBegin;
  PetscOptionsBegin(s->comm, NULL, "Solver options", NULL);
  PetscCall(PetscOptionsEList("-scenario", "Scenario", NULL, scenario_names, 2, scenario_names[sc], &sc, NULL));
  s->ops = scenarios[sc];
  M = N           = s->ops == &HeatScenario ? 64 : 128;
  s->dt           = s->ops == &HeatScenario ? 0.01 : 1.0;
  s->max_steps    = s->ops == &HeatScenario ? 10 : 200;
  PetscCall(
    PetscOptionsInt("-da_grid_x",
                    "Grid points in x, 3 .. 65536, at most 2^30 unknowns in all (heat: interior points, default 64)",
                    NULL, M, &M, NULL));
  PetscCall(PetscOptionsInt("-da_grid_y", "Grid points in y (heat: default 64)", NULL, N, &N, NULL));
  PetscCall(PetscOptionsInt("-weak_tile",
                            "Weak scaling: each rank a T x T tile, the grid (px T) x (py T) for the ranks' px x py "
                            "split (MPI_Dims_create); instead of -da_grid_x/-da_grid_y",
                            NULL, tile, &tile, &tset));
  PetscCall(PetscOptionsInt("-ts_max_steps", "Number of time steps (heat: default 10)", NULL, s->max_steps,
                            &s->max_steps, NULL));
  PetscCall(PetscOptionsReal("-ts_dt", "Time step (heat: default 0.01)", NULL, s->dt, &s->dt, NULL));
  {
    PetscReal rtol = 1e-10;
    PetscCall(PetscOptionsReal("-ksp_rtol",
                               "Krylov relative tolerance, at most 1e-4: every solve's true residual is verified "
                               "against 10 x max(-ksp_rtol, 1e-12)",
                               "KSPSetTolerances", rtol, &rtol, NULL));
  }
  PetscCall(PetscOptionsBool("-solver_stock_vec",
                             "Use PETSc's stock vectors (reductions outside the switch), for comparison", NULL,
                             s->stock, &s->stock, &set));
  {
    const char *const devices[] = {"cpu", "cuda", "auto"};
    PetscInt          d         = s->device ? 1 : 0;
    PetscCall(PetscOptionsEList("-solver_device",
                                "Where the solver's vectors compute: cpu, cuda (the same bits; one rank: the whole "
                                "step on the device) or auto (cuda where a device is usable)",
                                NULL, devices, 3, devices[d], &d, NULL));
    s->device = (PetscBool)(d == 1), s->device_auto = (PetscBool)(d == 2);
  }
  PetscOptionsEnd();
  if (tset) PetscCall(SolverWeakGrid(s, tile, &M, &N));
  {
    PetscInt aseed = 0; /* the atomic strategy's seeded order (also read, with its range, by io/report.c) */
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-atomic_order_seed", &aseed, NULL));
    const opt_range r[] = {
      {"-atomic_order_seed", aseed, 0, OPT_NONE, OPT_INT, NULL},
      {"-da_grid_x", M, 3, 65536, OPT_INT, NULL},
      {"-da_grid_y", N, 3, 65536, OPT_INT, NULL},
      {"-da_grid_y", N, 3, (double)(1 << 30) / ((double)M * s->ops->dof), OPT_INT,
       "with -da_grid_x: 2^30 unknowns at most"},
      {"-ts_dt", s->dt, 0, 1e6, OPT_LO_OPEN | OPT_NORMAL, "a time step, not subnormal"},
      {"-ts_max_steps", s->max_steps, 0, 1e8, OPT_INT, NULL},
    };
    PetscCall(SolverCheckRanges(s, r, sizeof r / sizeof *r));
    s->own_order = (red_atomic_state){(uint64_t)aseed, 0};
  }
  PetscCall(SolverPickVecType(s));
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
    const opt_range r[] = {
      {"-ksp_divtol", dtol, 1, OPT_NONE, 0,
       "a solve is called diverged once its residual exceeds this times the first; below 1 every solve would"},
      {"-ksp_rtol", rtol, 0, OPT_NONE, OPT_LO_OPEN, "with none, every solve runs to -ksp_atol or -ksp_max_it"},
      {"-ksp_atol", atol, 0, OPT_NONE, 0, NULL},
      {"-ksp_max_it", maxit, 1, OPT_NONE, OPT_INT, NULL},
    };
    PetscCall(SolverCheckRanges(s, r, sizeof r / sizeof *r));
    PetscCheck(rtol <= SOLVER_RTOL_MAX, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-ksp_rtol %g: at most %g (every solve's true residual is verified against %.0f x -ksp_rtol; a looser "
               "tolerance lets a state that never moved pass)",
               (double)rtol, SOLVER_RTOL_MAX, SOLVER_CHECK_FACTOR);
  }
  PetscCall(KSPMonitorSet(*ksp, StartResidualMonitor, s, NULL));
  PetscCall(KSPSetUp(*ksp));
  PetscCall(SolverDevWarm(s, *ksp));
  /* the method's work vectors (KSPCreateVecs makes them from a layout, not from u) draw from the solver's order */
  for (PetscInt i = 0; i < (*ksp)->nwork; i++) PetscCall(VecFPNASetOrderSlot((PetscObject)(*ksp)->work[i], &s->order));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s->range widened by the state's values now (a NaN stays): the scenario's
 * bounds hold at every step, not only at the last (a Gray-Scott state that
 * left them and came back read VALID). */
/* The run's range widened by the state's scan: in effect the index-order
 * loop "a NaN v makes both v, else a strictly larger -v or v replaces -min
 * or max", so a tie keeps the first value met (+0 or -0) and the last NaN
 * stays. */
static PetscErrorCode WidenRange(Solver s, const step_scan_t *sc)
{
  PetscReal r[2] = {-s->range[0], s->range[1]}; /* -min, max: one MPI_MAX */

  PetscFunctionBegin;
  if (sc->nan) r[0] = r[1] = sc->nanv; /* kept by every later comparison */
  else {
    if (-sc->lo > r[0]) r[0] = -sc->lo;
    if (sc->hi > r[1]) r[1] = sc->hi;
  }
  /* a NaN on one rank: its MPI_MAX may drop it, the finite-state check stops such a run */
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, r, 2, MPIU_REAL, MPIU_MAX, s->comm));
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
  PetscCall(DMDACreate2d(s->comm, s->ops->boundary, s->ops->boundary, DMDA_STENCIL_STAR, s->M, s->N,
                         s->px ? s->px : PETSC_DECIDE, s->py ? s->py : PETSC_DECIDE, s->dof, 1, NULL, NULL, &s->da));
  PetscCall(DMSetVecType(s->da, s->vectype));
  /* every vector of the grid draws from the solver's order */
  PetscCall(VecFPNASetOrderSlot((PetscObject)s->da, &s->order));
  PetscCall(DMSetFromOptions(s->da));
  PetscCall(DMSetUp(s->da));
  { /* PETSc's DM options may change the grid (-da_refine, -da_refine_x, ..): everything else (the
     * summary, the spacing, the limits, the restart keys) knows the grid of -da_grid_x/-da_grid_y */
    PetscInt M, N, dof, sw;
    PetscCall(DMDAGetInfo(s->da, NULL, &M, &N, NULL, NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, NULL));
    PetscCheck(M == s->M && N == s->N && dof == s->dof && sw == 1, s->comm, PETSC_ERR_ARG_WRONG,
               "PETSc's grid options (-da_refine, -da_refine_x, -da_refine_y, ..) made the grid %" PetscInt_FMT
               " x %" PetscInt_FMT ", not -da_grid_x %" PetscInt_FMT " -da_grid_y %" PetscInt_FMT
               ": give the grid with -da_grid_x and -da_grid_y alone",
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
  {
    step_scan_t sc;
    PetscCall(SolverStateScan(s, &sc));
    PetscCall(WidenRange(s, &sc));
  }
  s->setup = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverGetRHS(Solver s, Vec *b)
{
  PetscFunctionBegin;
  PetscCall(SolverCheckSetUp(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
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

static PetscErrorCode StepsLeft(Solver s)
{
  PetscFunctionBegin;
  PetscCheck(s->step < s->max_steps, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "all %" PetscInt_FMT " steps are done",
             s->max_steps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverTrialSolve(Solver s, KSP ksp, Vec x, PetscInt *its, PetscReal *r0)
{
  PetscFunctionBegin;
  PetscCall(StepsLeft(s));
  PetscCall(Solve(s, ksp, x, PETSC_TRUE, its, r0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverStep(Solver s, Vec guess, PetscInt *its)
{
  PetscInt n = 0;

  PetscFunctionBegin;
  PetscCall(SolverCheckSetUp(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(StepsLeft(s));
  Vec b = NULL;
  PetscCall(SolverGetRHS(s, &b)); /* from u^n, before a guess replaces it */
  if (guess) PetscCall(VecCopy(guess, s->u));
  PetscCall(Solve(s, s->ksp, s->u, PETSC_FALSE, &n, &s->last_r0));
  PetscCall(KSPGetResidualNorm(s->ksp, &s->rnorm));
  if (s->fault) PetscCall(SolverFaultHit(s, FAULT_STATE, s->u)); /* -inject site=state: u^{n+1} as the step leaves it */
  s->its[s->step++] = n;
  {
    step_scan_t sc;
    PetscCall(SolverStateScan(s, &sc)); /* one pass, where the state is */
    PetscCall(SolverRecordStateFinite(s, &sc, NULL));
    PetscCall(WidenRange(s, &sc));
  }
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
  PetscCall(SolverCheckSetUp(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
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

PetscErrorCode SolverUsesStockVectors(Solver s, PetscBool *stock) { *stock = s->stock; return PETSC_SUCCESS; }
PetscErrorCode SolverUsesDevice(Solver s, PetscBool *device) { *device = s->device; return PETSC_SUCCESS; }

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
  SolverDevDestroy(*s);
  PetscCall(PetscFree(*s));
  PetscFunctionReturn(PETSC_SUCCESS);
}
