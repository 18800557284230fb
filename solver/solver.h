/* solver/solver.h: the PETSc implicit PDE solver (DMDA grid, matrix-free
 * stencil, Jacobi-preconditioned Krylov, theta/IMEX time stepping) whose
 * reductions obey the compile-time switch. Knows nothing of the surrogate:
 * the coupling loop talks to it through this header only. */
#ifndef MINIAPP_SOLVER_H
#define MINIAPP_SOLVER_H

#include <petscdmda.h>
#include <petscksp.h>
#include <stdint.h>

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
/* Advance one step. With guess != NULL it is the Krylov initial guess
 * (-guess_projection, default on: its increment over the current state,
 * scaled to minimize the energy-norm error);
 * otherwise the current state is. Returns the Krylov iterations. */
PetscErrorCode SolverStep(Solver s, Vec guess, PetscInt *its);
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
PetscErrorCode SolverRepeatCheck(Solver s, PetscInt n, PetscReal *mean, PetscReal *var, PetscInt *its_min, PetscInt *its_max);
PetscErrorCode SolverGetState(Solver s, Vec *u); /* borrowed */
PetscErrorCode SolverGetDM(Solver s, DM *da);
PetscErrorCode SolverGetStep(Solver s, PetscInt *step, PetscInt *max_steps, PetscReal *t, PetscReal *dt);
PetscErrorCode SolverGetScenario(Solver s, const char **name);
PetscErrorCode SolverGetIterations(Solver s, PetscInt *total, const PetscInt **per_step);
PetscErrorCode SolverGetKSP(Solver s, KSP *ksp);
/* 64-bit hash of the state's bytes in natural grid order: independent of
 * the MPI decomposition (see kernels/hashrng.h hash_term). */
PetscErrorCode SolverStateHash(Solver s, uint64_t *hash);
/* Scenario verification: MMS error (heat; negative when not applicable),
 * and whether the scenario's own checks passed. */
PetscErrorCode SolverVerify(Solver s, PetscReal *mms_l2, PetscReal *mms_max, PetscBool *ok, char *why, size_t len);
PetscErrorCode SolverWriteSummary(Solver s, FILE *f); /* YAML lines, rank 0 */
PetscErrorCode SolverDestroy(Solver *s);

#endif
