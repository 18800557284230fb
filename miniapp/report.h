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
} ReportVerdict;
PetscErrorCode ReportSummary(MPI_Comm comm, Coupled c, const ReportVerdict *v, double seconds, const char *path);

#endif
