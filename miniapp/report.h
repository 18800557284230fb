/* miniapp/report.h: the driver's input checks and output: one-line errors,
 * options-file and output-path checks, unused-option detection, the run
 * banner and the YAML summary (written to a temporary name, then renamed). */
#ifndef MINIAPP_REPORT_H
#define MINIAPP_REPORT_H

#include "coupling.h"

int            ReportPrecheckOptionsFiles(int argc, char **argv); /* before PetscInitialize */
PetscErrorCode ReportOneLineErrorHandler(MPI_Comm, int, const char *, const char *, PetscErrorCode, PetscErrorType, const char *, void *);
PetscErrorCode ReportApplyAtomicSeed(void);
PetscErrorCode ReportCheckWritable(MPI_Comm comm, const char *option, const char *path);
PetscErrorCode ReportCheckUnusedOptions(PetscBool final);
PetscErrorCode ReportBanner(MPI_Comm comm, Coupled c);
/* The run's verdict, collected from the solver's and the coupled loop's checks. */
typedef struct {
  PetscReal mms_l2, mms_max; /* heat; negative when not applicable */
  PetscBool ok;
  char      why[512];
  /* filled by ReportVerify */
  uint64_t  state_hash, weights_hash;
  char      golden_state[96], golden_weights[96];
  PetscReal repeat_mean, repeat_var; /* negative: not run */
  PetscInt  repeat_its_min, repeat_its_max;
} ReportVerdict;

typedef struct {
  char     path[PETSC_MAX_PATH_LEN], deck[256];
  char     golden_state[32], golden_weights[32];
  PetscInt repeat;
} ReportOptions;
PetscErrorCode ReportSummary(MPI_Comm comm, Coupled c, const ReportVerdict *v, double seconds, const char *path);

/* The proxy-app report (-report FILE.yaml, also printed) and its checks:
 * golden hashes (reproducible build) and the HPCG-style repeat check. */
PetscErrorCode ReportGetOptions(ReportOptions *o);
PetscErrorCode ReportVerify(Coupled c, const ReportOptions *o, ReportVerdict *v);
PetscErrorCode ReportWrite(MPI_Comm comm, Coupled c, const ReportOptions *o, const ReportVerdict *v, double seconds);

#endif
