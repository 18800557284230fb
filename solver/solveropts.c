/* solver/solveropts.c: the solver's option checks that PETSc would answer
 * late, wrongly or in words that name no option: Krylov methods and
 * preconditioners the switch and the matrix-free operator allow, Chebyshev's
 * bounds, the ranks' split of the grid, the weak-scaling grid, the vectors'
 * type and device. Each refusal is one line naming the option. */
#include "solver_impl.h"
#include "solver_reduction.h"
#include "vecred.h"

#include <stdio.h>

/* Krylov methods whose reductions all pass through VecDot/VecNorm/VecMDot
 * (hence through the switch). Pipelined ones reduce with VecDotBegin/End,
 * whose cross-rank sum is PETSc's MPI_Allreduce. */
PetscErrorCode SolverCheckKSPType(Solver s, KSP ksp)
{
  static const char *const ok[] = {KSPFPNACG, KSPCG, KSPGMRES, KSPFGMRES, KSPBCGS, KSPRICHARDSON, KSPCHEBYSHEV};
  KSPType                  type;
  PetscBool                match = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(KSPGetType(ksp, &type));
  PetscCall(PetscStrcmp(type, KSPPREONLY, &match));
  PetscCheck(!match, s->comm, PETSC_ERR_ARG_WRONG,
             "-ksp_type preonly: applies the preconditioner once and cannot start from the previous state; not a "
             "solver for these systems (a fixed-point iteration: -ksp_type richardson)");
  for (size_t i = 0; i < sizeof ok / sizeof *ok && !match; i++) PetscCall(PetscStrcmp(type, ok[i], &match));
  if (!match && SOLVER_STRATEGY != RED_ATOMIC && !s->stock)
    SETERRQ(s->comm, PETSC_ERR_ARG_WRONG,
            "-ksp_type %s: its reductions bypass the %s switch (pipelined/split-phase); use fpnacg, cg, gmres, fgmres, "
            "bcgs, richardson or chebyshev",
            type, red_strategy_name(SOLVER_STRATEGY));
  if (!match)
    PetscCall(PetscPrintf(s->comm, "# note: -ksp_type %s reduces partly outside the reduction switch\n", type));
  PetscCall(PetscStrcmp(type, KSPFGMRES, &match));
  if (match) {
    /* with no norm FGMRES never reports convergence: every solve ran to -ksp_max_it and ended DIVERGED_ITS (INVALID) at
     * a residual of rounding */
    KSPNormType nt;
    PetscCall(KSPGetNormType(ksp, &nt));
    PetscCheck(nt != KSP_NORM_NONE, s->comm, PETSC_ERR_ARG_WRONG,
               "-ksp_type fgmres -ksp_norm_type none: FGMRES then never reports convergence (each solve runs to "
               "-ksp_max_it and fails); drop -ksp_norm_type none");
  }
  PetscCall(PetscStrcmp(type, KSPCHEBYSHEV, &match));
  if (match && SOLVER_STRATEGY == RED_REPRODUCIBLE && !s->stock) {
    /* its eigenvalue estimate starts from PETSc's random vector, drawn per rank */
    const char *pre;
    PetscBool   eig;
    PetscCall(KSPGetOptionsPrefix(ksp, &pre));
    PetscCall(PetscOptionsHasName(NULL, pre, "-ksp_chebyshev_eigenvalues", &eig));
    PetscCheck(eig, s->comm, PETSC_ERR_ARG_WRONG,
               "-ksp_type chebyshev: its eigenvalue estimate starts from a random vector whose values depend on the "
               "ranks' split, so its bits would too; in the reproducible build give the bounds: "
               "-ksp_chebyshev_eigenvalues min,max");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator is matrix-free (solver/operator.c: its products and its
 * diagonal, no assembled matrix): the preconditioners that need more failed
 * inside PETSc with its words ("Could not locate a solver type for
 * factorization type LU and matrix type shell", "Not for parallel matrix
 * type shell") or crashed (eisenstat, kaczmarz). */
PetscErrorCode SolverCheckPCType(Solver s, KSP ksp)
{
  PC        pc;
  PCType    type;
  PetscBool ok;

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &type));
  PetscCall(PetscStrcmp(type, PCJACOBI, &ok));
  if (!ok) PetscCall(PetscStrcmp(type, PCNONE, &ok));
  PetscCheck(ok, s->comm, PETSC_ERR_ARG_WRONG,
             "-pc_type %s: needs an assembled matrix, and the operator is matrix-free (its products and its diagonal); "
             "use -pc_type jacobi (the default) or none",
             type);
  PetscCall(PetscStrcmp(type, PCJACOBI, &ok));
  if (ok) { /* rowmax reads every row's entries: PETSc said only "No method getrowmaxabs for Mat of type shell" */
    PCJacobiType jt;
    PetscCall(PCJacobiGetType(pc, &jt));
    PetscCheck(jt != PC_JACOBI_ROWMAX, s->comm, PETSC_ERR_ARG_WRONG,
               "-pc_jacobi_type rowmax: needs the operator's rows, and the operator is matrix-free; use diagonal (the "
               "default) or rowsum");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverCheckRanges(Solver s, const opt_range *r, size_t n)
{
  char msg[512];

  PetscFunctionBegin;
  PetscCheck(!opt_ranges_refuse(r, n, msg, sizeof msg), s->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Chebyshev's bounds, before PETSc reads them: it refuses bad ones in words
 * that name no option ("Maximum eigenvalue must be larger than minimum"). */
PetscErrorCode SolverCheckChebyshevBounds(Solver s)
{
  PetscReal ev[2];
  PetscInt  n = 2;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetRealArray(NULL, NULL, "-ksp_chebyshev_eigenvalues", ev, &n, &set));
  PetscCheck(!set || (n == 2 && ev[0] > 0 && ev[1] > ev[0]), s->comm, PETSC_ERR_ARG_WRONG,
             "-ksp_chebyshev_eigenvalues: needs min,max with 0 < min < max (the operator is symmetric positive "
             "definite)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What is wrong with the ranks' split p[k] along x and y (given when set[k])
 * of a grid of n[0] x n[1] points on size ranks, in one line; NULL if nothing. */
static const char *SplitProblem(const PetscInt p[2], const PetscBool set[2], const PetscInt n[2], int size, char *msg,
                                size_t len)
{
  static const char *const name[2] = {"-da_processors_x", "-da_processors_y"};

  for (int k = 0; k < 2; k++) {
    const PetscInt q = p[k];
    if (!set[k]) continue;
    if (q < 1)
      return opt_say(msg, len, "%s %" PetscInt_FMT ": the number of ranks along %c, at least 1", name[k], q, "xy"[k]);
    if (q > size) return opt_say(msg, len, "%s %" PetscInt_FMT ": more than the run's %d MPI ranks", name[k], q, size);
    if (q > n[k])
      return opt_say(msg, len,
                 "%s %" PetscInt_FMT ": more ranks than the grid's %" PetscInt_FMT " points along %c (-da_grid_%c)",
                 name[k], q, n[k], "xy"[k], "xy"[k]);
    if (size % q)
      return opt_say(msg, len, "%s %" PetscInt_FMT ": does not divide the run's %d MPI ranks", name[k], q, size);
  }
  if (set[0] && set[1] && p[0] * p[1] != size)
    return opt_say(msg, len,
               "-da_processors_x %" PetscInt_FMT " x -da_processors_y %" PetscInt_FMT " = %" PetscInt_FMT
               " ranks, but the run has %d",
               p[0], p[1], p[0] * p[1], size);
  for (int k = 0; k < 2; k++) /* the other direction's share of a given split: at least one point a rank */
    if (set[k] && n[1 - k] < size / p[k])
      return opt_say(msg, len, "%s %" PetscInt_FMT ": leaves %d ranks along %c for the grid's %" PetscInt_FMT
                 " points (-da_grid_%c)", name[k], p[k], (int)(size / p[k]), "yx"[k], n[1 - k], "yx"[k]);
  return NULL;
}

/* The ranks' split of the grid, when given (-da_processors_x/-y): PETSc's own
 * messages ("Given Bad partition", "Too many processors in X direction: 3 2")
 * name neither the option nor the value, and a negative count means "decide". */
PetscErrorCode SolverCheckSplit(Solver s)
{
  PetscInt    p[2] = {0, 0}, n[2] = {s->M, s->N};
  PetscBool   set[2];
  PetscMPIInt size;
  char        msg[512];
  const char *bad;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-da_processors_x", &p[0], &set[0]));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-da_processors_y", &p[1], &set[1]));
  bad = SplitProblem(p, set, n, (int)size, msg, sizeof msg);
  PetscCheck(!bad, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", bad);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -weak_tile T: the grid grows with the ranks, each rank a T x T tile, the
 * ranks split px x py as MPI_Dims_create splits them (px >= py). */
PetscErrorCode SolverWeakGrid(Solver s, PetscInt tile, PetscInt *M, PetscInt *N)
{
  const char *const grid[] = {"-da_grid_x", "-da_grid_y", "-da_processors_x", "-da_processors_y"};
  PetscMPIInt       size;
  int               dims[2] = {0, 0};
  const opt_range   r       = {"-weak_tile", tile, 3, 65536, OPT_INT, NULL};

  PetscFunctionBegin;
  PetscCall(SolverCheckRanges(s, &r, 1));
  for (int k = 0; k < 4; k++) {
    PetscBool given;
    PetscCall(PetscOptionsHasName(NULL, NULL, grid[k], &given));
    PetscCheck(!given, s->comm, PETSC_ERR_ARG_INCOMP, "-weak_tile: not with %s (the tile and the ranks make the %s)",
               grid[k], k < 2 ? "grid" : "split");
  }
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  PetscCallMPI(MPI_Dims_create(size, 2, dims));
  s->px = dims[0], s->py = dims[1];
  PetscCheck((double)dims[0] * tile <= 65536 && (double)dims[1] * tile <= 65536, s->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-weak_tile %" PetscInt_FMT ": on %d x %d ranks the grid would exceed 65536 points a side", tile, dims[0],
             dims[1]);
  *M = dims[0] * tile, *N = dims[1] * tile;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vectors: fpna (the switch), PETSc's own (-solver_stock_vec) or fpnacuda (-solver_device cuda). */
PetscErrorCode SolverPickVecType(Solver s)
{
  char why[256];

  PetscFunctionBegin;
  if (s->stock) PetscCall(PetscStrncpy(s->vectype, VECSTANDARD, sizeof(s->vectype)));
  if (s->device_auto) { /* the device where one is usable, else the CPU, said in one line */
    s->device = (PetscBool)(!s->stock && VecFPNADeviceUsable(why, sizeof why));
    if (!s->device)
      PetscCall(PetscPrintf(s->comm, "# solver: %s; the solver's vectors on the CPU\n",
                            s->stock ? "-solver_stock_vec" : why));
  }
  if (!s->device) PetscFunctionReturn(PETSC_SUCCESS);
  if (s->stock) PetscCall(PetscStrncpy(why, "not with -solver_stock_vec", sizeof why));
  PetscCheck(!s->stock && VecFPNADeviceUsable(why, sizeof why), s->comm, PETSC_ERR_SUP_SYS, "-solver_device cuda: %s", why);
  PetscCall(PetscStrncpy(s->vectype, VECFPNACUDA, sizeof(s->vectype)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
