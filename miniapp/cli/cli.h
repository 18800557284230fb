/* miniapp/cli/cli.h: the command-line layer every program of the project
 * shares (the miniapp, surrogate-train, bench_solver, bench_surrogate): one
 * start and end around the work, the readers of numeric options with their
 * ranges, the rules between options, the check of unused options, the
 * register of the files a run reads and writes, and the miniapp's -help. */
#ifndef MINIAPP_CLI_H
#define MINIAPP_CLI_H

#include <petscsys.h>
#include "optrange.h"
#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

/* Who reads an option (optdecl.c lists the names and types of each group). */
enum {
  OPTS_PETSC     = 1,  /* PetscInitialize/Finalize, logging, memory, debuggers, devices: every program */
  OPTS_SOLVER    = 2,  /* solver/ and the PETSc objects it sets from options (KSP, PC, DMDA) */
  OPTS_SURROGATE = 4,  /* surrogate/ */
  OPTS_DRIVER    = 8,  /* miniapp/: coupling, report, checkpoint, faults */
  OPTS_TRAIN     = 16, /* surrogate-train */
  OPTS_BENCH     = 32  /* bench_solver, bench_surrogate */
};
#define OPTS_MINIAPP (OPTS_PETSC | OPTS_SOLVER | OPTS_SURROGATE | OPTS_DRIVER)

typedef struct {
  const char        *name;     /* errors read "<name>: error: <message>", one line from rank 0 */
  const char        *help;     /* PetscInitialize's help text, or NULL */
  unsigned           groups;   /* the options it reads (OPTS_*) */
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
 * by its declared type (optstrict.c) and OMP_NUM_THREADS as a list of thread
 * counts. A nonzero return has been said in one line (CLI_DONE: the version
 * printed); the program then returns CliFinalize(that return). */
PetscErrorCode CliInitialize(int *argc, char ***argv, const CliProgram *p);
/* After the work, whatever its result ierr: partial outputs removed, PETSc's
 * own unchecked file outputs cleared, PetscFinalize if PETSc is up. The exit
 * status: 0, or 1 after an error. */
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

/* Options no code has read (PETSc's "unused"): an error naming the first,
 * with the nearest known names. final = PETSC_FALSE (after set-up, before the
 * work) lets through what PETSc reads only later (viewers, monitors, logs);
 * final = PETSC_TRUE (after the work) lets nothing through. */
PetscErrorCode OptStrictCheckUnused(PetscBool final);

/* The register of the files a run reads and writes (outpath.c; the rules are
 * kernels/pathcheck.h's: an output is not an input, not another output, not a
 * directory or device, in a directory that takes a new file). Every module
 * registers its files from its SetFromOptions with the option naming them;
 * the program calls OutPathCheck once all options are read, before any
 * SetUp (collective; rank 0 looks). Writing goes through kernels/atomicfile.h. */
PetscErrorCode OutPathRegisterInput(const char option[], const char path[]);
PetscErrorCode OutPathRegisterOutput(const char option[], const char path[]);
PetscErrorCode OutPathCheck(MPI_Comm comm);
/* The options files the pre-check read, in order (for the report). */
int ReportOptionsFilesRead(const char ***files);

/* -help with the mini-app's own sections first (help.c). */
void HelpCapture(void);       /* before PetscInitialize: keep PETSc's help text */
void HelpCaptureStdout(void); /* after it, with -help: and what PETSc prints to stdout */
void HelpFlush(void);         /* print it, ours first; later help lines print directly */

#endif
