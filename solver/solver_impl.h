/* solver/solver_impl.h: the Solver's private state, shared by solver.c,
 * operator.c and the scenario files. */
#ifndef MINIAPP_SOLVER_IMPL_H
#define MINIAPP_SOLVER_IMPL_H

#include "solver.h"
#include "fault.h"
#include "reduce.h"
#include "optrange.h"
#include "step_cuda.h" /* step_scan_t, step_heat_t */

/* The gather operator's halo on 2+ ranks (halo.c): the owned block's edges, e, and the neighbours', g, each the
 * W column, the E column, the S row, the N row (kernels/vec_cuda.h vec_cuda_halo_pack's layout), at off[0..4]. */
typedef struct {
  PetscMPIInt nbr[4]; /* W, E, S, N: the neighbouring blocks' ranks (MPI_PROC_NULL beyond a Dirichlet edge) */
  PetscInt    off[5];
  double     *e, *g; /* g stays 0 where no neighbour writes */
} OpHalo;

/* Matrix-free operator y_c = u_c - coef_c * Lap_h(u_c) on the DMDA. */
typedef struct {
  DM            da;
  Vec           uloc; /* ghosted work vector; outer Dirichlet ghosts stay 0 */
  PetscInt      dof, M, N, xm, ym; /* the grid; the owned block */
  PetscBool     periodic, one_rank; /* both directions periodic (Gray-Scott) or both Dirichlet (heat); one rank */
  PetscReal     coef[2], ihx2, ihy2;
  PetscScalar  *zeros; /* one rank, Dirichlet: a row of zeros, the rows beyond the edge */
  PetscBool     scatter; /* face fluxes scatter-added (atomic build)       */
  scatter_plan *plan;    /* face contributions -> owned cells (+ one sink) */
  double       *flux;    /* [2 * nface] signed face fluxes                 */
  double       *lap;     /* [nowned + 1] Laplacian accumulator             */
  double       *lap_dev; /* its device twin (-solver_device cuda, one rank), or NULL */
  OpHalo       *halo;    /* 2+ ranks, the gather form: the halo (halo.c), or NULL before the first product */
  struct OpDevHalo *devhalo; /* its device strips (opdev.c), or NULL */
  size_t        nface;
  /* ABFT check 1^T(Ax) = (A^T 1)^T x (SolverSetChecks) */
  PetscBool     check;
  Vec           csum;    /* A 1 = A^T 1 (A is symmetric), formed at the first check */
  PetscReal     cmax;    /* max |csum| */
  PetscInt      nchecks, nfail;
  PetscReal     worst;   /* largest |1^T y - csum^T x| / threshold since the last query */
  fault_ctx    *fault;   /* the operator fault site's hook (OperatorSetFaults): NULL unless faults are injected */
} OpCtx;

/* The solver's default Krylov method: CG with the iteration's tail fused
 * (fusedcg.c); the same iterates as KSPCG. */
#define KSPFPNACG "fpnacg"
PetscErrorCode KSPFPNACGRegister(void);
PetscErrorCode SolverRHSNorm(Solver s, KSP ksp, Vec b, PetscReal *nb); /* solvecheck.c */

PetscErrorCode SolverWeakGrid(Solver s, PetscInt tile, PetscInt *M, PetscInt *N); /* -weak_tile (solveropts.c) */
PetscErrorCode SolverPickVecType(Solver s);                                        /* solveropts.c */
PetscErrorCode OperatorCreate(DM da, PetscBool scatter, Mat *A);
/* halo.c: x's edges out and the neighbours' in (op->halo->g); Sendrecv alone for edges already in op->halo->e */
PetscErrorCode OpHaloCreate(OpCtx *op);
PetscErrorCode OpHaloExchange(OpCtx *op, const PetscScalar *x);
PetscErrorCode OpHaloSendrecv(OpCtx *op);
void           OpHaloDestroy(OpCtx *op);
/* opdev.c: the product on the device, where OperatorOnDevice says it runs there */
PetscBool      OperatorOnDevice(Vec x, Vec y); /* both vectors fpnacuda: every form runs there */
PetscErrorCode OperatorDevMult(OpCtx *op, Vec x, Vec y, red_atomic_state *ord); /* ord: the scatter form's order */
void           OperatorDevFree(OpCtx *op);
/* x's halo on 2+ ranks: the neighbours' edges of x on the device, *g (kernels/vec_cuda.h vec_cuda_halo_pack) */
PetscErrorCode OperatorDevExchange(Mat A, Vec x, const double **g);
PetscErrorCode OperatorSetCoefficients(Mat A, const PetscReal coef[], PetscReal hx, PetscReal hy);
PetscErrorCode OperatorDestroyContext(Mat A);
PetscErrorCode OperatorSetCheck(Mat A, PetscBool on);
PetscErrorCode OperatorSetFaults(Mat A, fault_ctx *f);
/* since the last call */
PetscErrorCode OperatorGetCheckResult(Mat A, PetscInt *nchecks, PetscInt *nfail, PetscReal *worst);

typedef struct _ScenarioOps ScenarioOps;
struct _p_Solver {
  MPI_Comm           comm;
  const ScenarioOps *ops;
  char               scenario[32];
  DM                 da;
  Mat                A;
  KSP                ksp;
  Vec                u, b, uprev;
  PetscScalar       *closure;  /* set: the closure term q per owned point replaces the scenario's */
  struct SolverDev  *dev;      /* the step's device scratch (stepdev.c), or NULL */
  Vec                gw[2];    /* work vectors of the start-residual monitor */
  PetscInt           b_step;   /* b holds the system of this step (-1: none yet) */
  PetscReal          r0, last_r0; /* start residual / ||b||: of the last solve, of the last step */
  PetscReal          rnorm;    /* residual norm of the last solve */
  /* the smallest and largest state value over the run: the initial state and every step's (NaN once one was NaN) */
  PetscReal          range[2];
  SolverSolveRecord  solves;   /* every solve checked (solvecheck.c) */
  PetscReal          bnorm;    /* b of step bnorm_step in the KSP's norm bnorm_type (SolverRHSNorm) */
  PetscInt           bnorm_step, bnorm_type;
  PetscInt           M, N, dof, step, max_steps, its_total, *its;
  PetscReal          t, dt, Lx, Ly, hx, hy;
  PetscBool          setup, stock, device; /* device: -solver_device cuda (or auto, a device found) */
  PetscBool          device_auto;           /* -solver_device auto: resolved by SolverPickVecType */
  PetscInt           px, py;                /* -weak_tile: the ranks' split; else 0 (PETSc's) */
  PetscBool          view_final_res; /* -ksp_view_final_residual: printed by SolverCheckSolve, invisibly */
  char               vectype[32];
  PetscBool          scatter;
  fault_ctx         *fault; /* the state and iterate sites' hook (SolverSetFaults): NULL unless faults are injected */
  red_atomic_state   own_order; /* -atomic_order_seed, from call 0 */
  /* what every vector of the solver draws from: own_order or its owner's (SolverSetAtomicOrder) */
  red_atomic_state *order;
  /* heat */
  PetscReal          D, theta, mms_tol;
  /* Gray-Scott */
  PetscReal          Du, Dv, F, k;
  PetscInt           gs_seed;
};

struct _ScenarioOps {
  const char    *name;
  PetscInt       dof;
  DMBoundaryType boundary;
  PetscErrorCode (*setfromoptions)(Solver);
  PetscErrorCode (*coefficients)(Solver, PetscReal coef[]);
  PetscErrorCode (*initial)(Solver, Vec u);
  PetscErrorCode (*rhs)(Solver, Vec u, Vec b); /* b for the step t -> t+dt */
  PetscErrorCode (*closure)(Solver, Vec u, PetscScalar *q); /* nonlinear closure term per owned point, or NULL */
  PetscErrorCode (*verify)(Solver, PetscReal *l2, PetscReal *mx, PetscBool *ok, char *why, size_t len);
};

extern const ScenarioOps HeatScenario, GrayScottScenario;

/* solvecheck.c: option monitors draw nothing from the atomic order */
PetscErrorCode SolverMonitorsInvisible(Solver s, KSP ksp);
/* solvecheck.c: the state or iterate site on x (s->fault not NULL) */
PetscErrorCode SolverFaultHit(Solver s, fault_site site, Vec x);
/* A side computation arms no fault: its sites stay quiet (and count no
 * call) from Hold to Resume, which restores what Hold returned. */
static inline int SolverFaultsHold(Solver s)
{
  int armed = s->fault ? s->fault->armed : -1;
  if (s->fault) s->fault->armed = -1;
  return armed;
}
static inline void SolverFaultsResume(Solver s, int armed)
{
  if (s->fault) s->fault->armed = armed;
}

/* stepdev.c: the step outside the solve on the device. *done false: not
 * there (a host solver, or heat on 2+ ranks), the host's code does it. */
PetscErrorCode SolverDevGSRHS(Solver s, Vec w, Vec b, PetscBool *done);
PetscErrorCode SolverDevHeatRHS(Solver s, Vec u, Vec b, step_heat_t *h,
                                PetscErrorCode (*tables)(Solver, double *sx, double *cy, double *sx1, double *cy1),
                                PetscBool *done);
PetscErrorCode SolverDevSetClosure(Solver s, const PetscScalar *q, PetscInt n); /* q NULL: space only */
/* The state's scan (kernels/step.h) where it lives: device or host. */
PetscErrorCode SolverStateScan(Solver s, step_scan_t *sc);
/* solvecheck.c: a state with a non-finite entry on some rank (sc: this rank's scan) fails the run */
PetscErrorCode SolverRecordStateFinite(Solver s, const step_scan_t *sc, PetscBool *ok);
PetscErrorCode SolverDevWarm(Solver s, KSP ksp); /* a KSP's set-up: its preconditioner on the device */
void           SolverDevDestroy(Solver s);

/* solveropts.c: option checks, one line naming the option */
PetscErrorCode SolverCheckKSPType(Solver s, KSP ksp);
PetscErrorCode SolverCheckPCType(Solver s, KSP ksp);
PetscErrorCode SolverCheckChebyshevBounds(Solver s);
PetscErrorCode SolverCheckSplit(Solver s);
/* The call order: caller (PETSC_FUNCTION_NAME) needs SolverSetUp done (or not yet). */
PetscErrorCode SolverCheckSetUp(Solver s, PetscBool done, const char *caller);
/* The options read, each against its range (kernels/optrange.h): the first outside is refused in one line. */
PetscErrorCode SolverCheckRanges(Solver s, const opt_range *r, size_t n);

#endif
