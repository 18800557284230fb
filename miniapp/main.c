/* miniapp/main.c: the driver. Reads as its phases: set-up (options, banner),
 * run (time steps), verify (scenario checks -> VALID/INVALID), report (YAML
 * summary on stdout and, with -summary FILE, in a file written atomically).
 * Exit code: 0 VALID, 2 INVALID, 1 bad input or a failed run. */
#include "solver.h"
#include "vecred.h"
#include "report.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void openblas_set_num_threads(int); /* OpenBLAS, which PETSc uses for BLAS-1 */

static const char help[] = "FPNA coupled mini-app: PETSc implicit PDE solver whose reductions obey a compile-time\n"
                           "atomic/deterministic/reproducible switch. Options (all via the PETSc options database,\n"
                           "e.g. -options_file inputs/<deck>.opts); see README.md.\n\n";

typedef struct {
  PetscInt  threads;
  char      summary[PETSC_MAX_PATH_LEN];
  PetscBool help;
} Inputs;

static PetscErrorCode SetUpInputs(Inputs *in)
{
  PetscFunctionBegin;
  in->threads    = 0;
  in->summary[0] = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Mini-app driver", NULL);
  PetscCall(PetscOptionsInt("-threads", "OpenMP threads per rank (0: OMP_NUM_THREADS or the runtime's default)", NULL, in->threads, &in->threads, NULL));
  PetscCall(PetscOptionsString("-summary", "Also write the YAML summary to this file", NULL, in->summary, in->summary, sizeof in->summary, NULL));
  PetscOptionsEnd();
  PetscCall(PetscOptionsHasHelp(NULL, &in->help));
  PetscCheck(in->threads >= 0 && in->threads <= 1024, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-threads %" PetscInt_FMT ": must be in [0, 1024]", in->threads);
  if (in->threads > 0) omp_set_num_threads((int)in->threads);
  PetscCall(ReportApplyAtomicSeed());
  if (in->summary[0]) PetscCall(ReportCheckWritable(PETSC_COMM_WORLD, "-summary", in->summary));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Run(int *status)
{
  Inputs    in;
  Solver    solver;
  PetscReal l2, mx;
  PetscBool ok;
  char      why[256];
  double    t0;

  PetscFunctionBegin;
  /* set-up */
  PetscCall(SetUpInputs(&in));
  PetscCall(SolverCreate(PETSC_COMM_WORLD, &solver));
  PetscCall(SolverSetFromOptions(solver));
  PetscCall(SolverSetUp(solver));
  if (in.help) {
    PetscCall(SolverDestroy(&solver));
    *status = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ReportCheckUnusedOptions(PETSC_FALSE));
  PetscCall(ReportBanner(PETSC_COMM_WORLD, solver));

  /* run */
  t0 = MPI_Wtime();
  PetscCall(SolverSolveAll(solver));
  t0 = MPI_Wtime() - t0;

  /* verify */
  PetscCall(SolverVerify(solver, &l2, &mx, &ok, why, sizeof why));
  PetscCall(ReportCheckUnusedOptions(PETSC_TRUE));

  /* report */
  PetscCall(ReportSummary(PETSC_COMM_WORLD, solver, l2, mx, ok, why, t0, in.summary));
  PetscCall(SolverDestroy(&solver));
  *status = ok ? 0 : 2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  int            status = 1;
  PetscErrorCode ierr;

  if (ReportPrecheckOptionsFiles(argc, argv)) return 1;
  ierr = PetscInitialize(&argc, &argv, NULL, help);
  if (ierr) return 1;
  /* PETSc's vector ops call OpenBLAS, whose own threads would fight the
   * OpenMP ones: one BLAS thread per rank unless the user says otherwise. */
  if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
  ierr = PetscPushErrorHandler(ReportOneLineErrorHandler, NULL);
  if (!ierr) ierr = Run(&status);
  if (ierr) status = 1;
  (void)PetscFinalize();
  return status;
}
