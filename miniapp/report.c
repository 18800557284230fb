/* miniapp/report.c: input checks that give one clear line, and the run's
 * banner and YAML summary. Output files are written under a temporary name
 * and renamed on success, so a failed run never leaves a complete-looking
 * file behind. */
#include "report.h"
#include "vecred.h"
#include "reduce.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef MINIAPP_SURROGATE_REDUCTION_NAME
#define MINIAPP_SURROGATE_REDUCTION_NAME "unknown"
#endif
#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "unknown"
#endif

/* PETSc would fail on an unreadable -options_file inside PetscInitialize with
 * a multi-line trace; check it first and say it in one line. */
int ReportPrecheckOptionsFiles(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-options_file")) continue;
    if (i + 1 >= argc) {
      fprintf(stderr, "miniapp: error: -options_file needs a file name\n");
      return 1;
    }
    FILE *f = fopen(argv[i + 1], "r");
    if (!f) {
      fprintf(stderr, "miniapp: error: -options_file %s: cannot read (%s)\n", argv[i + 1], strerror(errno));
      return 1;
    }
    fclose(f);
  }
  return 0;
}

/* One line per error, from the first rank that sees it (rank 0 for
 * collective errors), instead of PETSc's multi-line trace. */
PetscErrorCode ReportOneLineErrorHandler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  PetscMPIInt rank = 0;
  if (p != PETSC_ERROR_INITIAL) return n;
  if (comm != PETSC_COMM_SELF) MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    fprintf(stderr, "miniapp: error: %s\n", mess && mess[0] ? mess : "PETSc error (no message)");
    fflush(stderr);
  }
  return n;
}

PetscErrorCode ReportApplyAtomicSeed(void)
{
  PetscInt seed = 0;

  PetscFunctionBegin;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Reductions", NULL);
  PetscCall(PetscOptionsInt("-atomic_order_seed", "Atomic strategy: 0 = real atomics (completion order), N > 0 = replay a pseudo-random combination order drawn from N", NULL, seed, &seed, NULL));
  PetscOptionsEnd();
  PetscCheck(seed >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-atomic_order_seed %" PetscInt_FMT ": must be >= 0", seed);
  red_set_atomic_order_seed((uint64_t)seed);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportCheckWritable(MPI_Comm comm, const char *option, const char *path)
{
  PetscMPIInt rank;
  int         err = 0;
  char        tmp[PETSC_MAX_PATH_LEN + 16];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", path));
    FILE *f = fopen(tmp, "w");
    if (!f) err = errno;
    else fclose(f), remove(tmp);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "%s %s: cannot write there (%s)", option, path, strerror(err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A misspelled option would be silently ignored by PETSc: make it an error.
 * Before the run, options that PETSc reads only later (viewers, monitors,
 * -options_left) are let through; after the run every option must be used. */
PetscErrorCode ReportCheckUnusedOptions(PetscBool final)
{
  PetscInt n;
  char   **names, **values;

  PetscFunctionBegin;
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt i = 0; i < n; i++) {
    const char *nm = names[i];
    if (strstr(nm, "options_left") || strstr(nm, "options_file")) continue;
    if (!final && (strstr(nm, "view") || strstr(nm, "monitor") || strstr(nm, "reason") || strstr(nm, "log"))) continue;
    PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-%s: unknown or unused option (misspelled? not used by this scenario?); see -help", nm);
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportBanner(MPI_Comm comm, Coupled c)
{
  PetscMPIInt size;
  const char *sc;
  PetscInt    steps;

  Solver      s;

  PetscFunctionBegin;
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SolverGetScenario(s, &sc));
  PetscCall(SolverGetStep(s, NULL, &steps, NULL, NULL));
  PetscCall(PetscPrintf(comm, "FPNA mini-app %s | solver reduction: %s | surrogate reduction: %s | ranks %d x threads %d | scenario %s, %" PetscInt_FMT " steps\n", MINIAPP_VERSION, VecFPNACompiledStrategy(),
                        MINIAPP_SURROGATE_REDUCTION_NAME, size, omp_get_max_threads(), sc, steps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteSummary(MPI_Comm comm, FILE *f, Coupled c, const ReportVerdict *v, double seconds)
{
  PetscMPIInt size;
  uint64_t    hash;
  Solver      s;

  PetscFunctionBegin;
  PetscCall(CoupledGetSolver(c, 0, &s));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(SolverStateHash(s, &hash));
  PetscCall(PetscFPrintf(comm, f, "miniapp_version: %s\nsolver_reduction: %s\nsurrogate_reduction: %s\n", MINIAPP_VERSION, VecFPNACompiledStrategy(), MINIAPP_SURROGATE_REDUCTION_NAME));
  PetscCall(PetscFPrintf(comm, f, "atomic_order_seed: %llu\nmpi_ranks: %d\nomp_threads: %d\n", (unsigned long long)red_get_atomic_order_seed(), size, omp_get_max_threads()));
  PetscCall(SolverWriteSummary(s, f));
  PetscCall(PetscFPrintf(comm, f, "reduction_calls: %lld\n", (long long)VecFPNAGetReductionCount()));
  PetscCall(CoupledWriteSummary(c, f));
  if (v->mms_l2 >= 0) PetscCall(PetscFPrintf(comm, f, "mms_error_l2: %.6e\nmms_error_max: %.6e\n", (double)v->mms_l2, (double)v->mms_max));
  PetscCall(PetscFPrintf(comm, f, "state_hash: \"0x%016llx\"\nsolve_seconds: %.6f\n", (unsigned long long)hash, seconds));
  PetscCall(PetscFPrintf(comm, f, "verification_detail: \"%s\"\nverification: %s\n", v->why, v->ok ? "VALID" : "INVALID"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReportSummary(MPI_Comm comm, Coupled c, const ReportVerdict *v, double seconds, const char *path)
{
  PetscMPIInt rank;
  FILE       *f = NULL;
  int         err = 0;
  char        tmp[PETSC_MAX_PATH_LEN + 16];

  PetscFunctionBegin;
  PetscCall(WriteSummary(comm, PETSC_STDOUT, c, v, seconds));
  if (!path || !path[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(tmp, sizeof tmp, "%s.tmp", path));
  if (rank == 0 && !(f = fopen(tmp, "w"))) err = errno;
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "-summary %s: cannot write there (%s)", path, strerror(err));
  PetscCall(WriteSummary(comm, f, c, v, seconds));
  if (rank == 0) {
    if (fclose(f) || rename(tmp, path)) err = errno, remove(tmp);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_WRITE, "-summary %s: writing failed (%s)", path, strerror(err));
  PetscFunctionReturn(PETSC_SUCCESS);
}
