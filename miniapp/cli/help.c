/* miniapp/cli/help.c: -help with the mini-app's own options first. PETSc prints
 * help lines as each object reads its options, so its own (startup, devices,
 * the Krylov method, the preconditioner, a dozen viewers) came out between
 * ours and the surrogate's came last. Every help line goes through the
 * function pointer PetscHelpPrintf; HelpCapture points it here, where rank 0
 * keeps the text, and HelpFlush prints it: the introduction, the mini-app's
 * sections in a fixed order, then PETSc's in the order it printed them.
 * scripts/options_doc.py turns the mini-app's part into docs/options.md. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEPARATOR "----------------------------------------\n"

static char *text;
static size_t len, cap;
static PetscErrorCode (*saved)(MPI_Comm, const char[], ...);
static PetscErrorCode (*savedvf)(FILE *, const char[], va_list);

/* Formatted as PETSc formats (PetscVSNPrintf: its %g keeps a decimal point,
 * "1." for a real, which tells reals from integers in the help text). */
static int Append(const char *fmt, va_list ap0)
{
  for (;;) {
    size_t  full = 0;
    va_list ap;
    if (text && cap - len > 1) {
      va_copy(ap, ap0);
      PetscErrorCode e = PetscVSNPrintf(text + len, cap - len, fmt, &full, ap);
      va_end(ap);
      if (e) return (int)e;
      if (len + full < cap) {
        len += strlen(text + len);
        return 0;
      }
    }
    size_t want = 2 * (cap + full + 1) + 4096;
    char  *t    = realloc(text, want);
    if (!t) return PETSC_ERR_MEM;
    text = t, cap = want;
  }
}

static PetscErrorCode Capture(MPI_Comm comm, const char fmt[], ...)
{
  PetscMPIInt rank = 0;
  va_list     ap;
  int         e;
  if (comm != MPI_COMM_NULL) (void)MPI_Comm_rank(comm, &rank);
  if (rank) return 0;
  va_start(ap, fmt);
  e = Append(fmt, ap);
  va_end(ap);
  return (PetscErrorCode)e;
}

/* PETSc prints the lists of types (-ksp_type <now cg ...> (one of) ...) with
 * PetscFPrintf to stdout, not through PetscHelpPrintf: in -help mode what goes
 * to stdout is kept too (PetscFPrintf calls this on the comm's rank 0 only). */
static PetscErrorCode CaptureVF(FILE *fd, const char fmt[], va_list ap)
{
  if (fd != stdout) return savedvf(fd, fmt, ap);
  return (PetscErrorCode)Append(fmt, ap);
}

void HelpCapture(void)
{
  if (saved) return;
  saved           = PetscHelpPrintf;
  PetscHelpPrintf = Capture;
}

/* The mini-app's sections (their PetscOptionsBegin titles), in print order. */
static const char *const ours[] = {"Mini-app driver",
                                   "Reductions",
                                   "Solver options",
                                   "Gray-Scott scenario",
                                   "Heat scenario (manufactured solution)",
                                   "Coupled loop",
                                   "Neural surrogate options",
                                   "Proxy-app report and verification",
                                   "Checkpoint/restart",
                                   "Fault injection and detection"};
#define NOURS (sizeof ours / sizeof *ours)

/* Section k of the captured text: the chunk after the k-th separator. */
static int Title(const char *chunk, size_t n, const char *name)
{
  size_t t = strlen(name);
  return n > t && !strncmp(chunk, name, t) && chunk[t] == ':' && chunk[t + 1] == '\n';
}

void HelpCaptureStdout(void)
{
  PetscBool help = PETSC_FALSE;
  if (!saved || savedvf || PetscOptionsHasHelp(NULL, &help) || !help) return;
  savedvf       = PetscVFPrintf;
  PetscVFPrintf = CaptureVF;
}

void HelpFlush(void)
{
  if (!saved) return;
  PetscHelpPrintf = saved, saved = NULL;
  if (savedvf) PetscVFPrintf = savedvf, savedvf = NULL;
  if (!text) return;
  /* chunks: [0] the introduction, then PETSc's banner and one per section */
  const char *c[1024] = {NULL};
  size_t      n[1024] = {0}, nc = 0;
  for (const char *p = text, *end = text + len; p < end && nc < 1024;) {
    const char *q = strstr(p, SEPARATOR);
    if (!q || q > end) q = end;
    c[nc] = p, n[nc++] = (size_t)(q - p);
    p = q + (q < end ? strlen(SEPARATOR) : 0);
  }
  int       used[1024] = {0};
  PetscBool help       = PETSC_FALSE;
  if (!PetscOptionsHasHelp(NULL, &help) && !help) {
    /* not -help: what PETSc printed (-version's banner), without empty sections */
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    free(text);
    text = NULL, len = cap = 0;
    return;
  }
  fwrite(c[0], 1, n[0], stdout);
  printf("==== The mini-app's options (docs/options.md) ====\n");
  for (size_t k = 0; k < NOURS; k++)
    for (size_t i = 1; i < nc; i++)
      if (!used[i] && Title(c[i], n[i], ours[k])) {
        printf(SEPARATOR);
        fwrite(c[i], 1, n[i], stdout);
        used[i] = 1;
      }
  printf("\n==== PETSc's options (startup, the Krylov method, the preconditioner, viewers) ====\n");
  for (size_t i = 1; i < nc; i++)
    if (!used[i] && n[i]) {
      printf(SEPARATOR);
      fwrite(c[i], 1, n[i], stdout);
    }
  fflush(stdout);
  free(text);
  text = NULL, len = cap = 0;
}
