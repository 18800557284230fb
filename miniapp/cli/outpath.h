/* miniapp/cli/outpath.h: the driver's register of the files a run reads and
 * writes, and the one check, before any work, that no output destroys data
 * (the rules are kernels/pathcheck.h's: not an input, not another output,
 * not a directory or device, a directory that takes a new file). Every module
 * that reads or writes a file registers it from its SetFromOptions, with the
 * option that names it:
 *     PetscCall(OutPathRegisterOutput("-checkpoint", path));
 *     PetscCall(OutPathRegisterInput("-restart", path));
 * and main() calls OutPathCheck() once all options are read, before any
 * SetUp. Writing itself goes through kernels/atomicfile.h. */
#ifndef MINIAPP_OUTPATH_H
#define MINIAPP_OUTPATH_H

#include <petscsys.h>

#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

PetscErrorCode OutPathRegisterInput(const char option[], const char path[]);
PetscErrorCode OutPathRegisterOutput(const char option[], const char path[]);
/* The same for code that runs before PetscInitialize (the options-file
 * pre-check): plain C, returns 0 or ENOMEM. */
int            OutPathRegisterInputEarly(const char *option, const char *path);
/* Outputs that PETSc itself writes when asked in the options: viewers such
 * as -log_view :FILE or -ksp_view ascii:FILE, and -history FILE. */
PetscErrorCode OutPathRegisterPETScOutputs(void);
/* Collective on comm; rank 0 looks at the file system. One error line
 * naming the option(s) when an output is unsafe. */
PetscErrorCode OutPathCheck(MPI_Comm comm);
/* Before PetscFinalize: when OutPathCheck did not pass (the run stopped
 * earlier or was refused), clear PETSc's own file outputs (-log_view :FILE
 * is written in PetscFinalize even after an error) so nothing unchecked is
 * written; then forget the register. */
PetscErrorCode OutPathFinalize(void);

/* optfiles.c, before PetscInitialize: every options file PETSc will read is
 * readable, text, not a directory, includes no cycle; each is registered as
 * an input. The files PETSc's own early options write (-history, -info,
 * -log_trace, -malloc_view) are checked against them and the tool's file
 * options. Prints one line "<tool>: error: ..." and returns 1 otherwise. */
int  ReportPrecheckOptionsFiles(int argc, char **argv);
int  ReportOptionsFilesRead(const char ***files); /* the options files the pre-check read, in order */
/* Another tool than the miniapp: its name and its file options (NULL-ended
 * lists, static), before ReportPrecheckOptionsFiles. */
void ReportPrecheckSetTool(const char *name, const char *const inputs[], const char *const outputs[]);

#endif
