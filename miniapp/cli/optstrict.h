/* miniapp/cli/optstrict.h: strict options without symbol interposition. Each
 * program declares which groups of options it reads; OptStrictCheck then
 * judges every option in PETSc's database against their names and types,
 * once, before any work (optstrict.c). */
#ifndef MINIAPP_OPTSTRICT_H
#define MINIAPP_OPTSTRICT_H

#include <petscsys.h>
#include <stddef.h>
#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

/* Who reads an option (optstrict.c lists the names and types of each group). */
enum {
  OPTS_PETSC     = 1,  /* PetscInitialize/Finalize, logging, memory, debuggers, devices: every program */
  OPTS_SOLVER    = 2,  /* solver/ and the PETSc objects it sets from options (KSP, PC, DMDA) */
  OPTS_SURROGATE = 4,  /* surrogate/ */
  OPTS_DRIVER    = 8,  /* miniapp/: coupling, report, checkpoint, faults */
  OPTS_TRAIN     = 16, /* surrogate-train */
  OPTS_BENCH     = 32  /* bench_solver, bench_surrogate */
};
#define OPTS_MINIAPP (OPTS_PETSC | OPTS_SOLVER | OPTS_SURROGATE | OPTS_DRIVER)

/* Every option in the database (command line, options files, PETSC_OPTIONS),
 * judged by its declared type: an error naming the option, in one line
 * through the error handler pushed, for an integer that does not fit
 * PetscInt, text that is not a number, a number out of a double's range, a
 * flag that is not a true/false word, and a number or a choice given
 * without a value. Undeclared options: a number no reader could hold. */
PetscErrorCode OptStrictCheck(unsigned groups);
/* Options no code has read (PETSc's "unused"): an error naming the first,
 * with the nearest known name. final = PETSC_FALSE (after set-up, before the
 * work) lets through what PETSc reads only later (viewers, monitors, logs);
 * final = PETSC_TRUE (after the work) lets nothing through. */
PetscErrorCode OptStrictCheckUnused(PetscBool final);
/* Up to three declared names nearest to the unknown option "-name" (of the
 * groups last checked), as "-a, -b or -c" (empty when none is near). */
void OptStrictSuggest(const char *unknown, char *buf, size_t len);
/* PETSc's own parse errors ("Input string 12abc has no integer value",
 * "Unknown logical value: maybe") do not name the option: the same error
 * naming it, from the options database. 1 if line was written. */
int OptStrictExplain(const char *mess, char *line, size_t len);

#endif
