/* solver/solver.h: the PETSc implicit PDE solver (DMDA grid, matrix-free
 * stencil, Jacobi-preconditioned Krylov, theta/IMEX time stepping) whose
 * reductions obey the compile-time switch. Knows nothing of the surrogate:
 * the coupling loop talks to it through this header only. */
#ifndef MINIAPP_SOLVER_H
#define MINIAPP_SOLVER_H

#include <petscdmda.h>
#include <petscksp.h>
#include <stdint.h>

#include "ckpt.h"
#include "reduce.h" /* red_atomic_state */

#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

typedef struct _p_Solver *Solver;

PetscErrorCode SolverCreate(MPI_Comm comm, Solver *s);
PetscErrorCode SolverSetFromOptions(Solver s);
/* Benchmarks only: override the Vec type ("fpna_atomic", ..., "standard" for
 * PETSc's stock vectors) and the operator summation (scatter or gather). */
PetscErrorCode SolverSetReductionOverride(Solver s, const char *vectype, PetscBool scatter_operator);
PetscErrorCode SolverSetUp(Solver s);
/* Advance one step. With guess != NULL it is the Krylov initial guess (used
 * as it is; see GuessSpace for energy-norm projections); otherwise the
 * current state is. Returns the Krylov iterations. */
PetscErrorCode SolverStep(Solver s, Vec guess, PetscInt *its);
/* The right-hand side b of the coming step's system A u^{n+1} = b (computed
 * from the current state once per step; borrowed), and the operator A. */
PetscErrorCode SolverGetRHS(Solver s, Vec *b);
PetscErrorCode SolverGetOperator(Solver s, Mat *A);
/* A KSP configured as the solver's own (type, PC, tolerances, options), for
 * solving the same systems side by side, e.g. with a KSPGuess attached. */
PetscErrorCode SolverCreateKSP(Solver s, KSP *ksp);
/* Solve the coming step's system with ksp from x (in: guess, out: solution)
 * without advancing the solver: iterations and the start residual
 * ||b - A x0|| / ||b|| of the guess it actually started from. */
PetscErrorCode SolverTrialSolve(Solver s, KSP ksp, Vec x, PetscInt *its, PetscReal *r0);
PetscErrorCode SolverGetLastStartResidual(Solver s, PetscReal *r0); /* of the last SolverStep */

/* Every solve is checked (solvecheck.c): after it, the true residual
 * ||B(b - A x)|| / ||B b|| in the Krylov method's own norm must be at most
 * SOLVER_CHECK_FACTOR x max(rtol, SOLVER_CHECK_FLOOR), and the method must
 * not report divergence; -ksp_rtol above SOLVER_RTOL_MAX is refused. The
 * record covers the run's solves and the side-by-side trial solves, and the
 * finiteness of the state after each step; SolverVerify fails on any
 * failure, and the record travels in the checkpoint. */
#define SOLVER_CHECK_FACTOR 10.0
#define SOLVER_CHECK_FLOOR  1e-12
#define SOLVER_RTOL_MAX     1e-4
typedef enum { SOLVER_FAIL_SOLVE, SOLVER_FAIL_TRIAL, SOLVER_FAIL_NONFINITE } SolverFailKind;
typedef struct {
  int64_t nsolves, nfail;  /* solves checked; failures (solves and non-finite states) */
  int64_t nfail_run;       /* of them, the run's own solves and states (not trial solves) */
  int64_t fail_step;       /* the first failure: the step whose system it was (1-based) */
  int32_t fail_reason;     /* its KSPConvergedReason */
  int32_t fail_kind;       /* SolverFailKind */
  int64_t fail_its;
  double  fail_res, fail_bound;
  double  worst;           /* largest true residual / bound (NaN: a non-finite residual) */
} SolverSolveRecord;
PetscErrorCode SolverCheckSolve(Solver s, KSP ksp, Vec b, Vec x, PetscBool trial, PetscBool *ok);
PetscErrorCode SolverRepeatSolved(Solver s, KSP ksp, Vec b, Vec x, PetscBool *ok);
PetscErrorCode SolverCheckStateFinite(Solver s, PetscBool *ok);
/* The scenario's own check of the current state alone (Gray-Scott's bounds,
 * heat's MMS error): what SolverVerify starts with, without its record of
 * the solves; nothing is counted. */
PetscErrorCode SolverCheckScenario(Solver s, PetscBool *ok, char *why, size_t len);
PetscErrorCode SolverGetSolveRecord(Solver s, SolverSolveRecord *rec);
PetscErrorCode SolverSolveFailure(Solver s, char *why, size_t len); /* "" when every check passed */
/* one a run at this step could have written (a checkpoint's) */
PetscBool      SolverSolveRecordValid(const SolverSolveRecord *rec, int64_t step);

/* Energy-norm guesses (solver/guess.c). A GuessSpace keeps the last m
 * increments d_j = u^{j+1} - u^j of a run and PETSc's Fischer guess
 * (model 1, 10 past solutions), both updated by GuessSpacePush after each
 * step, and projects: x0 = u + V a, the point closest to the solution of
 * the coming step in the A-norm, V = {the nhist newest d_j} + {u} + {the
 * direction to Fischer's guess} + {extra if not NULL}. Never further from
 * the solution, in that norm, than any point of u + span(V). */
typedef struct _p_GuessSpace *GuessSpace;
PetscErrorCode GuessSpaceCreate(Solver s, PetscInt m, GuessSpace *g);
PetscInt       GuessSpaceVectorCount(PetscInt m); /* the solver-sized vectors GuessSpaceCreate(s, m) makes */
PetscErrorCode GuessSpacePush(GuessSpace g, Vec d); /* after SolverStep: d = u^{n+1} - u^n */
PetscErrorCode GuessSpaceProject(GuessSpace g, PetscInt nhist, PetscBool with_u, PetscBool with_fischer, Vec extra,
                                 Vec x0);
PetscErrorCode GuessSpaceFischer(GuessSpace g, Vec x); /* Fischer's own guess for the coming step */
PetscErrorCode GuessSpaceGetSize(GuessSpace g, PetscInt *n);
PetscErrorCode GuessSpaceReset(GuessSpace g);
/* Checkpoint (ckpt.h), writing or reading as ck was opened: everything later
 * steps use, as records "<prefix>/..." */
PetscErrorCode GuessSpaceCheckpoint(GuessSpace g, Ckpt ck, const char prefix[]);
PetscErrorCode GuessSpaceDestroy(GuessSpace *g);
PetscErrorCode SolverSolveAll(Solver s); /* the remaining steps */
/* The scenario's closure term: a factor of the nonlinear part of its
 * explicit reaction (Gray-Scott: the rate factor c of q = c v^2, exactly
 * c = u; one value per owned point, row-major over the owned block of
 * SolverGetDM's DMDAGetCorners; heat has none), and a replacement for it in
 * the steps that follow (a closure model; NULL restores the exact term).
 * The linear feed and kill terms and the v^2 structure stay exact. */
PetscErrorCode SolverHasClosure(Solver s, PetscBool *has);
PetscErrorCode SolverComputeClosure(Solver s, Vec w, PetscScalar q[]);
PetscErrorCode SolverSetClosure(Solver s, const PetscScalar q[]); /* copied */
PetscErrorCode SolverGetLastResidual(Solver s, PetscReal *rnorm); /* of the last solve */
/* HPCG-style repeat check: the last step's system solved n times from zero;
 * mean and variance of the final residual norms, iteration range. */
PetscErrorCode SolverHasLastSystem(Solver s, PetscBool *has); /* a step solved by this process (not only restored) */
PetscErrorCode SolverRepeatCheck(Solver s, PetscInt n, PetscReal *mean, PetscReal *var, PetscInt *its_min,
                                 PetscInt *its_max, PetscInt *nfailed);
/* Algorithm-based fault detection (Huang-Abraham): every operator product
 * y = A x is checked by 1^T y = (A^T 1)^T x with a threshold from the build's
 * rounding bounds (operator.c); the result since the last query: products
 * checked, failed, and the largest |difference| / threshold. The check never
 * changes the run's bits. Fault injection sites (kernels/fault.h): the state
 * after the solve, the Krylov iterate, the operator's output. */
PetscErrorCode SolverSetChecks(Solver s, PetscBool on);
/* The fault experiment's hooks (kernels/fault.h): its sites (state, iterate,
 * operator) report to f; NULL (the default) removes them. After SolverSetUp. */
struct fault_ctx;
PetscErrorCode SolverSetFaults(Solver s, struct fault_ctx *f);
/* The seeded atomic order (kernels/reduce.h) the solver's reductions draw
 * from, its vectors' and its KSPs' (SolverCreateKSP) alike: its own (seed
 * -atomic_order_seed) unless ord, an order its owner keeps (NULL: its own
 * again). The solver reads *ord at each reduction. */
PetscErrorCode SolverSetAtomicOrder(Solver s, red_atomic_state *ord);
PetscErrorCode SolverGetAtomicOrder(Solver s, red_atomic_state **ord);
PetscErrorCode SolverGetCheckResult(Solver s, PetscInt *nchecks, PetscInt *nfail, PetscReal *worst);
PetscErrorCode SolverGetState(Solver s, Vec *u); /* borrowed */
/* the smallest and largest state value over the run (NaN once one was NaN) */
PetscErrorCode SolverGetRange(Solver s, PetscReal range[2]);
PetscErrorCode SolverGetDM(Solver s, DM *da);
PetscErrorCode SolverGetStep(Solver s, PetscInt *step, PetscInt *max_steps, PetscReal *t, PetscReal *dt);
PetscErrorCode SolverGetScenario(Solver s, const char **name);
PetscErrorCode SolverGetSolveCount(Solver s, PetscInt64 *n); /* the solves checked (SolverSolveFailure) */
/* The scenario's parameters as used (defaults included), as options text:
 * "-gs_Du 0.16 -gs_Dv 0.08 ..." or "-heat_D 1 -heat_theta 0.5". */
PetscErrorCode SolverGetParameters(Solver s, char *buf, size_t len);
/* -solver_stock_vec: reductions outside the switch */
PetscErrorCode SolverUsesStockVectors(Solver     s, PetscBool *stock);
/* -solver_device cuda: the solver's vectors are fpnacuda (vecred.h) */
PetscErrorCode SolverUsesDevice(Solver s, PetscBool *device);
/* Before SolverSetUp (after SetFromOptions): the largest rank's grid points at least (the grid's over the ranks),
 * the values a point, and the vectors the set-up makes at least, on the host and (-solver_device cuda) the device. */
PetscErrorCode SolverGetMemoryBound(Solver s, PetscInt64 *points, PetscInt *dof, PetscInt *host_vectors,
                                    PetscInt *device_vectors);
/* With the vectors on the device and 2+ ranks: the edges of v's neighbouring blocks on the device, *g (the W and E
 * columns, the S and N rows of kernels/vec_cuda.h vec_cuda_halo_pack; zeros beyond a Dirichlet edge). Collective. */
PetscErrorCode SolverDeviceHalo(Solver s, Vec v, const double **g);
PetscErrorCode SolverGetIterations(Solver s, PetscInt *total, const PetscInt **per_step);
PetscErrorCode SolverGetKSP(Solver s, KSP *ksp);
/* The vector passes (8 bytes per unknown each) one iteration of the Krylov method the last solve ran makes, 0 where
 * no count is kept (solver/fusedcg.c states the rule), and the method's name: "fpnacg, fused product and tail". */
PetscErrorCode SolverGetVectorPasses(Solver s, PetscInt *passes, char *method, size_t len);
/* 64-bit hash of the state's bytes in natural grid order: independent of
 * the MPI decomposition (see kernels/hashrng.h hash_term). */
PetscErrorCode SolverStateHash(Solver s, uint64_t *hash);
/* Scenario verification: MMS error (heat; negative when not applicable),
 * and whether the scenario's own checks passed. */
PetscErrorCode SolverVerify(Solver s, PetscReal *mms_l2, PetscReal *mms_max, PetscBool *ok, char *why, size_t len);
PetscErrorCode SolverWriteSummary(Solver s, FILE *f); /* YAML lines, rank 0 */
/* What a checkpoint must agree on to continue this run: "key: value\n"
 * lines (scenario, grid, components, dt and the physics parameters, the
 * reduction strategy of the build) appended to buf. */
PetscErrorCode SolverDescribe(Solver s, char buf[], size_t len);
/* Checkpoint (ckpt.h), writing or reading as ck was opened: the state,
 * step, time and iteration history as records "<prefix>/..."; reading checks
 * that the step is within -ts_max_steps. */
PetscErrorCode SolverCheckpoint(Solver s, Ckpt ck, const char prefix[]);
PetscErrorCode SolverDestroy(Solver *s);

#endif
