/* miniapp/cli/cli_impl.h: what the files of the command-line layer share and
 * no program needs: the declared options (optdecl.c), the strict check
 * (optstrict.c), the options-file pre-check (optfiles.c), the register's
 * early entry and finalize (outpath.c). */
#ifndef MINIAPP_CLI_IMPL_H
#define MINIAPP_CLI_IMPL_H

#include "cli.h"

typedef enum { T_INT, T_INTS, T_REAL, T_REALS, T_BOOL, T_CHOICE, T_TEXT } OptType;

/* names: blank-separated, without the dash; a choice may list its words
 * after '=' for the message. prefixed: also read as <prefix>name. */
typedef struct {
  unsigned    groups;
  PetscBool   prefixed;
  OptType     type;
  const char *names;
} OptDecl;
extern const OptDecl opt_decl[];
extern const size_t  opt_ndecl;

/* The true/false words PETSc reads (1, 0, true, false, yes, no, on, off). */
int OptBoolWord(const char *v);
/* Every option in the database judged by its declared type, once, after
 * PetscInitialize and before any object reads it. */
PetscErrorCode OptStrictCheck(unsigned groups);
/* PETSc's own parse errors that name no option, naming it; 1 if line was written. */
int OptStrictExplain(const char *mess, char *line, size_t len);

/* Before PetscInitialize: every options file PETSc will read is readable,
 * text, includes no cycle, and is registered as an input; the files PETSc's
 * early options write (-history, -info, -log_trace, -malloc_view) are checked
 * against them and the tool's file options. 1 after one line "<tool>: error: ...". */
int  ReportPrecheckOptionsFiles(int argc, char **argv);
void ReportPrecheckSetTool(const char *name, const char *const inputs[], const char *const outputs[]);

int            OutPathRegisterInputEarly(const char *option, const char *path); /* plain C: 0 or ENOMEM */
PetscErrorCode OutPathRegisterPETScOutputs(void); /* -log_view :FILE, -ksp_view ascii:FILE, -history FILE */
/* Before PetscFinalize: when OutPathCheck did not pass, PETSc's own file
 * outputs are cleared (-log_view :FILE is written even after an error). */
PetscErrorCode OutPathFinalize(void);

#endif
