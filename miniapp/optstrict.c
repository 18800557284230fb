/* miniapp/optstrict.c: strict numeric options, for every option read
 * anywhere in the driver process: ours, the solver's, the surrogate's and
 * PETSc's own (-ksp_max_it, -da_grid_x in DMSetFromOptions, ...).
 *
 * PETSc 3.18 reads an integer with strtol and casts the long to a 32-bit
 * PetscInt, so -da_grid_x 4294967299 runs a grid of 3 and 2147483648 comes
 * back as -2147483648; it treats an option given without a value
 * (-da_grid_x as the last argument, -ts_dt alone on a line of an options
 * file, -da_grid_x "") as not given at all, so the default is used silently;
 * and its parse errors ("Input string 12abc has no integer value") do not
 * name the option. All of it happens in PetscOptionsGetInt/IntArray/Real/
 * RealArray/Bool/EList/Enum, through which PetscOptionsInt() and friends
 * read. This file defines those functions in the executable: the dynamic linker binds
 * every call to them to these definitions, including the calls inside
 * libpetsc (which go through its PLT), and each checks the raw text, naming
 * the option in one line, before handing over to PETSc's own (dlsym
 * RTLD_NEXT). The reliability_options test proves the interposition is in
 * effect (it fails if a build links PETSc statically or with -Bsymbolic).
 * Plain strings may legitimately be empty; they are checked where they are
 * used (file names: outpath.h). */
#define _GNU_SOURCE
#include "outpath.h" /* PETSc, PETSC_SUCCESS */
#include "optstrict.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* PETSc's own definition of name, looked up once. */
static void *Real(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "miniapp: error: %s: PETSc's definition not found (statically linked PETSc?)\n", name);
    abort();
  }
  return f;
}

/* Errors can come before PetscInitialize has finished (options read during
 * initialization): then PETSC_COMM_WORLD is not usable yet. */
static MPI_Comm ErrComm(void) { return PetscInitializeCalled ? PETSC_COMM_WORLD : PETSC_COMM_SELF; }

/* "-" + prefix + name without its dash: the option as the user wrote it. */
static void FullName(const char pre[], const char name[], char *buf, size_t len) { snprintf(buf, len, "-%s%s", pre ? pre : "", name[0] == '-' ? name + 1 : name); }

/* Words PETSc's string-to-number conversions accept besides numbers. */
static int Keyword(const char *s)
{
  static const char *const words[] = {"default", "petsc_default", "decide", "petsc_decide", "determine", "petsc_determine", "infinity", "petsc_infinity", "ninfinity", "petsc_ninfinity", "mouse"};
  for (size_t k = 0; k < sizeof words / sizeof *words; k++)
    if (!strcasecmp(s, words[k])) return 1;
  return 0;
}

typedef enum { TEXT_OK, TEXT_NOT_NUMBER, TEXT_RANGE } TextStatus;

static TextStatus IntText(const char *s)
{
  char     *end;
  long long v;
  if (Keyword(s)) return TEXT_OK;
  errno = 0;
  v     = strtoll(s, &end, 10);
  if (end == s || *end || isspace((unsigned char)*s)) return TEXT_NOT_NUMBER;
  if (errno == ERANGE || v < PETSC_MIN_INT || v > PETSC_MAX_INT) return TEXT_RANGE;
  return TEXT_OK;
}

static TextStatus RealText(const char *s)
{
  char  *end;
  double v;
  if (Keyword(s)) return TEXT_OK;
  errno = 0;
  v     = strtod(s, &end);
  if (end == s || *end || isspace((unsigned char)*s)) return TEXT_NOT_NUMBER;
  if (errno == ERANGE && isinf(v)) return TEXT_RANGE;
  return TEXT_OK;
}

/* The raw text of the option; an error when it was given without one. */
static PetscErrorCode RawValue(PetscOptions options, const char pre[], const char name[], const char *what, const char **value, PetscBool *found)
{
  char full[256];

  PetscFunctionBegin;
  PetscCall(PetscOptionsFindPair(options, pre, name, value, found));
  FullName(pre, name, full, sizeof full);
  PetscCheck(!*found || (*value && (*value)[0]), ErrComm(), PETSC_ERR_ARG_WRONG, "%s: given without a value (needs %s)", full, what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* text is the whole value, or one entry of the list whole. */
static PetscErrorCode CheckInt(const char pre[], const char name[], const char *text, const char *whole)
{
  char       full[256], entry[256] = "";
  TextStatus st = IntText(text);

  PetscFunctionBegin;
  FullName(pre, name, full, sizeof full);
  if (text != whole) snprintf(entry, sizeof entry, " entry %s", text);
  PetscCheck(st != TEXT_NOT_NUMBER, ErrComm(), PETSC_ERR_ARG_WRONG, "%s %s:%s not an integer", full, whole, text != whole ? entry : "");
  PetscCheck(st != TEXT_RANGE, ErrComm(), PETSC_ERR_ARG_OUTOFRANGE, "%s %s:%s does not fit a %d-bit integer (largest %d)", full, whole, entry, (int)(8 * sizeof(PetscInt)), (int)PETSC_MAX_INT);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckReal(const char pre[], const char name[], const char *text, const char *whole)
{
  char       full[256], entry[256] = "";
  TextStatus st = RealText(text);

  PetscFunctionBegin;
  FullName(pre, name, full, sizeof full);
  if (text != whole) snprintf(entry, sizeof entry, " entry %s", text);
  PetscCheck(st != TEXT_NOT_NUMBER, ErrComm(), PETSC_ERR_ARG_WRONG, "%s %s:%s not a number", full, whole, entry);
  PetscCheck(st != TEXT_RANGE, ErrComm(), PETSC_ERR_ARG_OUTOFRANGE, "%s %s:%s out of the range of a double", full, whole, entry);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Each comma-separated entry of a list; integer entries may be ranges a-b. */
static PetscErrorCode CheckList(const char pre[], const char name[], const char *value, PetscBool integer)
{
  char        buf[1024], full[256];
  const char *p = value;

  PetscFunctionBegin;
  FullName(pre, name, full, sizeof full);
  while (1) {
    size_t n = strcspn(p, ",");
    PetscCheck(n > 0, ErrComm(), PETSC_ERR_ARG_WRONG, "%s %s: empty entry in the list", full, value);
    PetscCheck(n < sizeof buf, ErrComm(), PETSC_ERR_ARG_WRONG, "%s: list entry too long", full);
    memcpy(buf, p, n), buf[n] = 0;
    if (integer) {
      char *dash = strchr(buf + 1, '-'); /* "a-b" (a may be negative) */
      if (dash) {
        *dash = 0;
        PetscCall(CheckInt(pre, name, buf, value));
        PetscCall(CheckInt(pre, name, dash + 1, value));
        PetscCheck(strtoll(buf, NULL, 10) <= strtoll(dash + 1, NULL, 10), ErrComm(), PETSC_ERR_ARG_WRONG, "%s %s: the range %s-%s decreases (a-b means a, a+1, ..., b; a list is comma-separated: %s,%s)", full, value, buf, dash + 1, buf, dash + 1);
      } else PetscCall(CheckInt(pre, name, buf, value));
    } else PetscCall(CheckReal(pre, name, buf, value));
    if (!p[n]) break;
    p += n + 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscOptionsGetInt(PetscOptions options, const char pre[], const char name[], PetscInt *ivalue, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], PetscInt *, PetscBool *);
  const char *value;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetInt");
  PetscCall(RawValue(options, pre, name, "an integer", &value, &found));
  if (found) PetscCall(CheckInt(pre, name, value, value));
  PetscCall(real(options, pre, name, ivalue, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscOptionsGetIntArray(PetscOptions options, const char pre[], const char name[], PetscInt ivalue[], PetscInt *nmax, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], PetscInt[], PetscInt *, PetscBool *);
  const char *value;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetIntArray");
  PetscCall(RawValue(options, pre, name, "a list of integers", &value, &found));
  if (found) PetscCall(CheckList(pre, name, value, PETSC_TRUE));
  PetscCall(real(options, pre, name, ivalue, nmax, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscOptionsGetReal(PetscOptions options, const char pre[], const char name[], PetscReal *dvalue, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], PetscReal *, PetscBool *);
  const char *value;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetReal");
  PetscCall(RawValue(options, pre, name, "a number", &value, &found));
  if (found) PetscCall(CheckReal(pre, name, value, value));
  PetscCall(real(options, pre, name, dvalue, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscOptionsGetRealArray(PetscOptions options, const char pre[], const char name[], PetscReal dvalue[], PetscInt *nmax, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], PetscReal[], PetscInt *, PetscBool *);
  const char *value;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetRealArray");
  PetscCall(RawValue(options, pre, name, "a list of numbers", &value, &found));
  if (found) PetscCall(CheckList(pre, name, value, PETSC_FALSE));
  PetscCall(real(options, pre, name, dvalue, nmax, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A flag may come without a value (it means true); a value must be one of
 * PETSc's words for true and false. */
PetscErrorCode PetscOptionsGetBool(PetscOptions options, const char pre[], const char name[], PetscBool *ivalue, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], PetscBool *, PetscBool *);
  static const char *const words[] = {"1", "0", "true", "false", "yes", "no", "on", "off"};
  const char              *value;
  PetscBool                found, ok = PETSC_FALSE;
  char                     full[256];

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetBool");
  PetscCall(PetscOptionsFindPair(options, pre, name, &value, &found));
  if (found && value && value[0]) {
    for (size_t k = 0; k < sizeof words / sizeof *words; k++) ok = (PetscBool)(ok || !strcasecmp(value, words[k]));
    FullName(pre, name, full, sizeof full);
    PetscCheck(ok, ErrComm(), PETSC_ERR_ARG_WRONG, "%s %s: not a true/false value (use 1, 0, true, false, yes, no, on or off)", full, value);
  }
  PetscCall(real(options, pre, name, ivalue, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "one of a, b, c" for the message. */
static const char *OneOf(const char *const *list, PetscInt n)
{
  static char buf[512];
  size_t      o = (size_t)snprintf(buf, sizeof buf, "one of");
  for (PetscInt k = 0; k < n && o < sizeof buf; k++) o += (size_t)snprintf(buf + o, sizeof buf - o, "%s %s", k ? "," : "", list[k]);
  return buf;
}

/* A choice from a list (-scenario, -coupling, -ksp_type's friends): given
 * without a value it would silently keep the default. */
PetscErrorCode PetscOptionsGetEList(PetscOptions options, const char pre[], const char name[], const char *const *list, PetscInt ntext, PetscInt *value, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], const char *const *, PetscInt, PetscInt *, PetscBool *);
  const char *text;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetEList");
  PetscCall(RawValue(options, pre, name, OneOf(list, ntext), &text, &found));
  PetscCall(real(options, pre, name, list, ntext, value, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscOptionsGetEnum(PetscOptions options, const char pre[], const char name[], const char *const *list, PetscEnum *value, PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], const char *const *, PetscEnum *, PetscBool *);
  const char *text;
  PetscBool   found;

  PetscFunctionBegin;
  if (!real) *(void **)&real = Real("PetscOptionsGetEnum");
  PetscInt n = 0;
  while (list[n]) n++; /* PETSc enum lists: the names, the enum's name, its prefix, NULL */
  PetscCall(RawValue(options, pre, name, OneOf(list, n >= 3 ? n - 2 : n), &text, &found));
  PetscCall(real(options, pre, name, list, value, set));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- "did you mean": every option name the process asks for -------------
 * PetscOptionsFindPair is the one lookup behind every PETSc options reader
 * (called through libpetsc's PLT, so this definition sees them all): the
 * names asked for are the options this run knows, and an unused option is
 * compared with them (OptStrictSuggest). */
static char  **asked;
static size_t  nasked, capasked;

static void Remember(const char pre[], const char name[])
{
  char full[256];
  FullName(pre, name, full, sizeof full);
  for (size_t i = 0; i < nasked; i++)
    if (!strcmp(asked[i], full)) return;
  if (nasked == capasked) {
    size_t cap = capasked ? 2 * capasked : 256;
    char **a   = (char **)realloc(asked, cap * sizeof *a);
    if (!a) return;
    asked = a, capasked = cap;
  }
  if ((asked[nasked] = strdup(full))) nasked++;
}

PetscErrorCode PetscOptionsFindPair(PetscOptions options, const char pre[], const char name[], const char *value[], PetscBool *set)
{
  static PetscErrorCode (*real)(PetscOptions, const char[], const char[], const char *[], PetscBool *);
  if (!real) *(void **)&real = Real("PetscOptionsFindPair");
  if (name && name[0]) Remember(pre, name);
  return real(options, pre, name, value, set);
}

/* Edit distance (insertions, deletions, substitutions, adjacent swaps). */
static size_t Distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b), d[64][64];
  if (la >= 64 || lb >= 64) return 1000;
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c) c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[la][lb];
}

/* Up to three known names nearest to the unknown option "-name" (within a
 * third of its length), as "-a, -b or -c"; empty when none is near. */
void OptStrictSuggest(const char *unknown, char *buf, size_t len)
{
  size_t lim = strlen(unknown) / 3, best[3] = {1000, 1000, 1000};
  const char *pick[3] = {NULL, NULL, NULL};

  buf[0] = 0;
  if (lim < 1) lim = 1;
  for (size_t i = 0; i < nasked; i++) {
    size_t dd = Distance(unknown, asked[i]);
    if (dd > lim || !strcmp(unknown, asked[i])) continue;
    for (int k = 0; k < 3; k++)
      if (dd < best[k]) {
        for (int m = 2; m > k; m--) best[m] = best[m - 1], pick[m] = pick[m - 1];
        best[k] = dd, pick[k] = asked[i];
        break;
      }
  }
  for (int k = 0; k < 3 && pick[k]; k++) {
    size_t o = strlen(buf);
    snprintf(buf + o, len - o, "%s%s", k == 0 ? "" : k == 2 || !pick[k + 1] ? " or " : ", ", pick[k]);
  }
}

static const char *oneline_prog = "error";

static PetscErrorCode OneLine(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  PetscMPIInt rank = 0;
  (void)line, (void)fun, (void)file, (void)ctx;
  if (p != PETSC_ERROR_INITIAL) return n;
  if (comm != PETSC_COMM_SELF) MPI_Comm_rank(comm, &rank);
  if (rank == 0) fprintf(stderr, "%s: error: %s\n", oneline_prog, mess && mess[0] ? mess : "PETSc error (no message)");
  return n;
}

int OptStrictOneLineErrors(const char *prog)
{
  oneline_prog = prog;
  return (int)PetscPushErrorHandler(OneLine, NULL);
}
