/* miniapp/cli/cli.h: the command-line layer every program of the project
 * shares (the miniapp, surrogate-train, bench_solver, bench_surrogate): one
 * start and end around the work, readers of numeric options with their
 * ranges, and the check of the rules between options. The declared names and
 * types of the options are optstrict.h's, the file checks outpath.h's. */
#ifndef MINIAPP_CLI_H
#define MINIAPP_CLI_H

#include <petscsys.h>
#include "optrange.h"
#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

typedef struct {
  const char        *name;     /* errors read "<name>: error: <message>", one line from rank 0 */
  const char        *help;     /* PetscInitialize's help text, or NULL */
  unsigned           groups;   /* the options it reads (OPTS_* of optstrict.h) */
  const char *const *inputs;   /* its options naming files it reads / writes (NULL-ended), for the pre-check */
  const char *const *outputs;  /* of the options files; NULL lists: the miniapp's (optfiles.c) */
  const char        *oom_hint; /* after "out of memory (in f): " */
  void (*started)(void);       /* called right after PetscInitialize, or NULL */
  PetscBool own_version;       /* it answers -version itself (the miniapp); else CliInitialize does */
} CliProgram;

/* CliInitialize's return when the command line asked for the version alone
 * (-version, --version): printed; the program does no work and CliFinalize
 * returns 0. */
#define CLI_DONE ((PetscErrorCode)-1)

/* Before any work: --help and -h read as -help, --version as -version; the
 * options files checked (optfiles.c), the one-line error handler,
 * PetscInitialize, PETSc's own output files registered, every option judged
 * by its declared type and OMP_NUM_THREADS as a list of thread counts. A
 * nonzero return has been said in one line (CLI_DONE: the version printed);
 * the program then returns CliFinalize(that return). */
PetscErrorCode CliInitialize(int *argc, char ***argv, const CliProgram *p);
/* After the work, whatever its result ierr: partial outputs removed
 * (outpath.h), PetscFinalize if PETSc is up. The exit status: 0, or 1 after
 * an error. */
int CliFinalize(PetscErrorCode ierr);

/* Readers for a PetscOptionsBegin block: the value given, or *v (its
 * default) when none is; a value outside [lo, hi] is refused in one line
 * (kernels/optrange.h: the wording and the flags). PETSC_MIN_INT/MAX_INT and
 * -OPT_NONE/OPT_NONE: no bound on that side. set may be NULL. */
PetscErrorCode CliInt(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, PetscInt lo,
                      PetscInt hi, const char *why, PetscInt *v, PetscBool *set);
PetscErrorCode CliReal(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, double lo, double hi,
                       unsigned flags, const char *why, PetscReal *v, PetscBool *set);

/* A rule between options, one row of a program's table: when broken, the
 * refusal reads "<option>: <text>", with the option's value after its name
 * when with_value (-fault_action rollback: needs -checkpoint FILE). */
typedef struct {
  PetscBool   broken;
  const char *option;
  PetscBool   with_value;
  const char *text;
} CliRule;
/* The first broken rule of the table, refused in one line. */
PetscErrorCode CliCheckRules(MPI_Comm comm, const CliRule *rules, size_t n);

#endif
