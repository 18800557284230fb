/* miniapp/report.h: the driver's input checks and output: one-line errors,
 * options-file and output-path checks, unused-option detection, the run
 * banner and the YAML summary (written to a temporary name, then renamed). */
#ifndef MINIAPP_REPORT_H
#define MINIAPP_REPORT_H

#include "solver.h"

int            ReportPrecheckOptionsFiles(int argc, char **argv); /* before PetscInitialize */
PetscErrorCode ReportOneLineErrorHandler(MPI_Comm, int, const char *, const char *, PetscErrorCode, PetscErrorType, const char *, void *);
PetscErrorCode ReportApplyAtomicSeed(void);
PetscErrorCode ReportCheckWritable(MPI_Comm comm, const char *option, const char *path);
PetscErrorCode ReportCheckUnusedOptions(PetscBool final);
PetscErrorCode ReportBanner(MPI_Comm comm, Solver s);
PetscErrorCode ReportSummary(MPI_Comm comm, Solver s, PetscReal mms_l2, PetscReal mms_max, PetscBool ok, const char *why, double seconds, const char *path);

#endif
