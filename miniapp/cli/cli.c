/* miniapp/cli/cli.c: the start and end every program shares, the one-line
 * error handler, the range readers and the rule check (cli.h). Not the
 * options' types (optstrict.c) nor the options files (optfiles.c). */
#include "cli_impl.h"
#include "buildinfo.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const CliProgram *program;
static int               said, up; /* an error line printed; PetscInitialize done */

/* Where (n, fun, mess) is a failed allocation: the function that asked for
 * the memory; NULL for any other error. */
static const char *OutOfMemory(PetscErrorCode n, const char *fun, const char *mess)
{
  /* PETSc 3.18's PetscMallocAlign raises its failure with the line number as
   * the error code and the caller's name as the message */
  if (fun && !strncmp(fun, "PetscMalloc", 11)) return mess && mess[0] ? mess : fun;
  return n == PETSC_ERR_MEM ? (fun ? fun : "?") : NULL;
}

/* PETSc's messages in the words of this program's user: out of memory, a
 * grid split too fine, a type PETSc does not know, a parse error that names
 * no option (OptStrictExplain). */
static void Translate(PetscErrorCode n, const char *fun, const char *mess, char *line, size_t len)
{
  char        dir, cls[32], type[256];
  int         M, m, k;
  PetscMPIInt size = 1;
  const char *where = OutOfMemory(n, fun, mess);

  if (where) snprintf(line, len, "out of memory (in %s): %s", where, program->oom_hint);
  else if (mess && sscanf(mess, "Partition in %c direction is too fine! %d %d", &dir, &M, &m) == 3) {
    if (PetscInitializeCalled) MPI_Comm_size(PETSC_COMM_WORLD, &size);
    snprintf(line, len,
             "%d MPI ranks cannot share the grid: -da_grid_%c %d is split over %d ranks in %c, fewer points than "
             "ranks; "
             "use fewer ranks or a larger grid",
             (int)size, dir, M, m, dir);
  } else if (OptStrictExplain(mess, line, len)) return;
  else if (mess && (k = sscanf(mess, "Unable to find requested %31s type %255[^\n]", cls, type)) >= 1) { /* -ksp_type */
    for (char *q = cls; *q; q++) *q = (char)tolower((unsigned char)*q);
    if (k == 1) snprintf(line, len, "-%s_type: given without a value (see -help for the types)", cls);
    else snprintf(line, len, "-%s_type %s: unknown %s type (see -help for the types)", cls, type, cls);
  } else snprintf(line, len, "%s", mess && mess[0] ? mess : "PETSc error (no message)");
}

/* One line per error, from the first rank that sees it (rank 0 for
 * collective errors), instead of PETSc's multi-line trace. */
static PetscErrorCode OneLine(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                              PetscErrorType p, const char *mess, void *ctx)
{
  PetscMPIInt rank = 0;
  char        text[1024];

  (void)line, (void)file, (void)ctx;
  if (p != PETSC_ERROR_INITIAL) return n;
  if (comm != PETSC_COMM_SELF) MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    Translate(n, fun, mess, text, sizeof text);
    fprintf(stderr, "%s: error: %s\n", program->name, text);
    fflush(stderr);
  }
  said = 1;
  return n;
}

/* OMP_NUM_THREADS as the OpenMP runtime reads it, judged as an option is:
 * a list of thread counts (one per nesting level), each in [1, 1024] (the
 * bound of -threads). libgomp warns of a bad value and runs on its default,
 * and takes a huge one at its word (100000 threads crashed in the first
 * parallel region). With -threads N > 0 (the miniapp's) the variable is not
 * used. */
static PetscErrorCode CheckThreadsEnv(unsigned groups)
{
  const char *env = getenv("OMP_NUM_THREADS");
  PetscInt    t   = 0;
  PetscBool   set = PETSC_FALSE;

  PetscFunctionBegin;
  /* the miniapp's -threads; its type is checked already */
  if (groups & OPTS_DRIVER) PetscCall(PetscOptionsGetInt(NULL, NULL, "-threads", &t, &set));
  if (!env || (set && t > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  const char *q = env;
  do {
    char         *end;
    unsigned long v;
    errno = 0;
    v     = (*q >= '0' && *q <= '9') ? strtoul(q, &end, 10) : 0;
    PetscCheck(v >= 1 && v <= 1024 && !errno && (*end == 0 || *end == ','), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "OMP_NUM_THREADS=%s: must be a thread count in [1, 1024] (or a list of them, one per nesting level); "
               "unset it or give -threads N", env);
    q = end + (*end == ',');
  } while (q[-1] == ',');
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The GNU spellings a user tries first, read as PETSc's. */
static void GnuSpellings(int argc, char **argv)
{
  static char help[] = "-help", version[] = "-version";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) argv[i] = help;
    else if (!strcmp(argv[i], "--version")) argv[i] = version;
  }
}

/* -version alone: the program, the project's version and revision, PETSc's. */
static PetscErrorCode Version(const CliProgram *p, PetscBool *done)
{
  PetscBool v = PETSC_FALSE, h = PETSC_FALSE;
  char      petsc[128];

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (p->own_version) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsHasName(NULL, NULL, "-version", &v));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-help", &h));
  if (!v || h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscGetVersion(petsc, sizeof petsc));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s (source revision %s); %s\n", p->name, MINIAPP_VERSION,
                        MINIAPP_REVISION, petsc));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CliInitialize(int *argc, char ***argv, const CliProgram *p)
{
  PetscErrorCode ierr;
  PetscBool      done = PETSC_FALSE;

  program = p;
  GnuSpellings(*argc, *argv);
  if (p->inputs) ReportPrecheckSetTool(p->name, p->inputs, p->outputs);
  if (ReportPrecheckOptionsFiles(*argc, *argv)) return PETSC_ERR_FILE_OPEN; /* said */
  (void)PetscPushErrorHandler(OneLine, NULL); /* errors inside PetscInitialize (a file PETSc cannot parse) too */
  if ((ierr = PetscInitialize(argc, argv, NULL, p->help))) {
    if (!said) fprintf(stderr, "%s: error: PetscInitialize failed\n", p->name);
    return ierr;
  }
  up = 1;
  if (p->started) p->started();
  ierr = PetscPushErrorHandler(OneLine, NULL);
  /* first: cleared by OutPathFinalize if the run stops before OutPathCheck */
  if (!ierr) ierr = OutPathRegisterPETScOutputs();
  if (!ierr) ierr = OptStrictCheck(p->groups);     /* every option by its declared type, before anything reads it */
  /* after the types: -threads abc is "not an integer", and a tool without -threads says "unknown option" */
  if (!ierr) ierr = CheckThreadsEnv(p->groups);
  if (!ierr) ierr = Version(p, &done);
  return !ierr && done ? CLI_DONE : ierr;
}

int CliFinalize(PetscErrorCode ierr)
{
  if (!up) return 1;
  (void)OutPathFinalize(); /* before PetscFinalize, which writes -log_view files */
  (void)PetscFinalize();   /* also after an error: MPI ends cleanly, no launcher noise */
  return ierr && ierr != CLI_DONE ? 1 : 0;
}

/* A value read, against its range. */
static PetscErrorCode CheckRange(MPI_Comm comm, opt_range r)
{
  char msg[512];

  PetscFunctionBegin;
  PetscCheck(!opt_range_refuse(&r, msg, sizeof msg), comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CliInt(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, PetscInt lo,
                      PetscInt hi, const char *why, PetscInt *v, PetscBool *set)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsInt(name, text, NULL, *v, v, set));
  PetscCall(CheckRange(PetscOptionsObject->comm, (opt_range){name, (double)*v, lo == PETSC_MIN_INT ? -OPT_NONE : lo,
                                                             hi == PETSC_MAX_INT ? OPT_NONE : hi, OPT_INT, why}));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CliReal(PetscOptionItems *PetscOptionsObject, const char *name, const char *text, double lo, double hi,
                       unsigned flags, const char *why, PetscReal *v, PetscBool *set)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsReal(name, text, NULL, *v, v, set));
  PetscCall(CheckRange(PetscOptionsObject->comm, (opt_range){name, (double)*v, lo, hi, flags, why}));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CliCheckRules(MPI_Comm comm, const CliRule *rules, size_t n)
{
  PetscFunctionBegin;
  for (size_t k = 0; k < n; k++) {
    char value[256] = "";
    if (!rules[k].broken) continue;
    if (rules[k].with_value) PetscCall(PetscOptionsGetString(NULL, NULL, rules[k].option, value, sizeof value, NULL));
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s%s%s: %s", rules[k].option, value[0] ? " " : "", value, rules[k].text);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
