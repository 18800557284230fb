/* miniapp/cli/optstrict.c: every option given, judged by its declared type
 * (optdecl.c) from its raw text in PETSc's database, once, after
 * PetscInitialize and before any object reads it; PETSc's own parse errors
 * named; unused options refused with the nearest names. PETSc 3.18 casts an
 * integer's long to a 32-bit PetscInt (4294967299 runs as 3), takes an option
 * given without a value as not given (the default, silently), and its parse
 * errors name no option. An undeclared option (PETSc has hundreds) is refused
 * only for a number no reader could hold; plain strings are checked where
 * they are used. No symbol interposition: however PETSc is linked. */
#include "cli_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static unsigned strict_groups = OPTS_MINIAPP; /* of the last check: for the suggestions */

/* Errors can come before PetscInitialize has finished: then
 * PETSC_COMM_WORLD is not usable yet. */
static MPI_Comm ErrComm(void) { return PetscInitializeCalled ? PETSC_COMM_WORLD : PETSC_COMM_SELF; }

/* The word of names[] starting at w matches name (case-insensitive, as
 * PETSc's), up to its end or its '='. */
static int WordIs(const char *w, const char *name)
{
  size_t n = strcspn(w, " ="), m = strlen(name);
  return n == m && !strncasecmp(w, name, n);
}

/* The declaration of option name (without its dash): exact, or a prefixed
 * one ending the name after a '_'. *choices: the words after '=', or NULL. */
static int lookup_own; /* the last Lookup found an option outside PETSc's initialization group */

static int Lookup(unsigned groups, const char *name, OptType *type, const char **choices)
{
  while (*name == '-') name++;
  for (int pass = 0; pass < 2; pass++)
    for (size_t d = 0; d < opt_ndecl; d++) {
      if (!(opt_decl[d].groups & groups) || (pass && !opt_decl[d].prefixed)) continue;
      for (const char *w = opt_decl[d].names; *w; w += strcspn(w, " "), w += *w == ' ') {
        size_t n = strcspn(w, " ="), m = strlen(name);
        if (pass && (m <= n || name[m - n - 1] != '_')) continue;
        if (!WordIs(w, pass ? name + m - n : name)) continue;
        *type      = opt_decl[d].type;
        *choices   = w[n] == '=' ? w + n + 1 : NULL;
        lookup_own = !(opt_decl[d].groups & OPTS_PETSC);
        return 1;
      }
    }
  return 0;
}

/* A refusal: written to msg; returns 1. */
static int Say(char *msg, size_t len, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
  return 1;
}

static int InWords(const char *s, const char *const words[])
{
  for (size_t k = 0; words[k]; k++)
    if (!strcasecmp(s, words[k])) return 1;
  return 0;
}

/* Words PETSc's string-to-number conversions accept besides numbers. */
static int Keyword(const char *s)
{
  static const char *const words[] = {"default",   "petsc_default",  "decide",    "petsc_decide",
                                      "determine", "petsc_determine", "infinity", "petsc_infinity",
                                      "ninfinity", "petsc_ninfinity", "mouse",    NULL};
  return InWords(s, words);
}

int OptBoolWord(const char *v)
{
  static const char *const words[] = {"1", "0", "true", "false", "yes", "no", "on", "off", NULL};
  return InWords(v, words);
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

/* An integer or a real number; text is the whole value, or one entry of the list whole. */
static int NumberBad(const char *full, const char *text, const char *whole, int integer, char *msg, size_t len)
{
  TextStatus st        = integer ? IntText(text) : RealText(text);
  char       entry[256] = "";

  if (st == TEXT_OK) return 0;
  if (text != whole) snprintf(entry, sizeof entry, " entry %s", text);
  if (st == TEXT_NOT_NUMBER)
    return Say(msg, len, "%s %s:%s not %s", full, whole, entry, integer ? "an integer" : "a number");
  if (!integer) return Say(msg, len, "%s %s:%s out of the range of a double", full, whole, entry);
  return Say(msg, len, "%s %s:%s does not fit a %d-bit integer (largest %d)", full, whole, entry,
             (int)(8 * sizeof(PetscInt)), (int)PETSC_MAX_INT);
}

/* Each comma-separated entry of a list; integer entries may be ranges a-b. */
static int ListBad(const char *full, const char *value, int integer, char *msg, size_t len)
{
  char buf[1024];

  for (const char *p = value;; p++) {
    size_t n = strcspn(p, ",");
    if (!n) return Say(msg, len, "%s %s: empty entry in the list", full, value);
    if (n >= sizeof buf) return Say(msg, len, "%s: list entry too long", full);
    memcpy(buf, p, n), buf[n] = 0;
    char *dash = integer ? strchr(buf + 1, '-') : NULL; /* "a-b" (a may be negative) */
    if (dash) *dash = 0;
    if (NumberBad(full, buf, value, integer, msg, len) || (dash && NumberBad(full, dash + 1, value, 1, msg, len)))
      return 1;
    if (dash && strtoll(buf, NULL, 10) > strtoll(dash + 1, NULL, 10))
      return Say(msg, len,
                 "%s %s: the range %s-%s decreases (a-b means a, a+1, ..., b; a list is comma-separated: %s,%s)", full,
                 value, buf, dash + 1, buf, dash + 1);
    if (!p[n]) return 0;
    p += n;
  }
}

/* One option, name without its dash, value NULL when given without one. */
static int OptionBad(unsigned groups, const char *name, const char *value, char *msg, size_t len)
{
  static const char *const needs[] = {"an integer", "a list of integers", "a number", "a list of numbers"};
  char                     full[256], list[512] = "";
  const char              *choices;
  OptType                  type;

  snprintf(full, sizeof full, "-%s", name);
  if (!Lookup(groups, name, &type, &choices)) { /* undeclared: only what no reader could hold */
    if (value && IntText(value) == TEXT_RANGE)
      return Say(msg, len, "%s %s: does not fit a %d-bit integer (largest %d; if %s takes a real number, write %s.0)",
                 full, value, (int)(8 * sizeof(PetscInt)), (int)PETSC_MAX_INT, full, value);
    return value && RealText(value) == TEXT_RANGE && NumberBad(full, value, value, 0, msg, len);
  }
  switch (type) {
  case T_INT:
  case T_INTS:
  case T_REAL:
  case T_REALS: {
    if (!value) return Say(msg, len, "%s: given without a value (needs %s)", full, needs[type]);
    /* PETSc reads PETSC_DEFAULT, DECIDE, ... as -2, -1: the app's options and the solver's objects' would see that
     * number ("-ts_dt -2.: must be positive"); the default is had by leaving the option out. PETSC_INFINITY and the
     * like are numbers: -ksp_divtol infinity */
    size_t vl      = strlen(value);
    int    integer = type == T_INT || type == T_INTS;
    if (lookup_own && Keyword(value) && !(vl >= 8 && !strcasecmp(value + vl - 8, "infinity")))
      return Say(msg, len,
                 "%s %s: needs %s (PETSc reads its keywords as negative numbers; leave the option out for its default)",
                 full, value, needs[type]);
    if (type == T_INT || type == T_REAL) return NumberBad(full, value, value, integer, msg, len);
    return ListBad(full, value, integer, msg, len);
  }
  case T_BOOL: /* a flag may come without a value: it means true */
    return value && !OptBoolWord(value) &&
           Say(msg, len, "%s %s: not a true/false value (use 1, 0, true, false, yes, no, on or off)", full, value);
  case T_CHOICE: /* without a value it would silently keep the default */
    for (size_t i = 0, o = 0; choices && choices[i] && choices[i] != ' ' && o + 3 < sizeof list; i++) {
      if (choices[i] == ',') list[o++] = ',', list[o++] = ' ';
      else list[o++] = choices[i];
      list[o] = 0;
    }
    if (!value)
      return Say(msg, len, "%s: given without a value (%s%s)", full,
                 choices ? "needs one of " : "see -help for the choices", list);
    /* PETSc's own message cut the value (-coupling guess,closure: "Unknown option guess,closu") */
    for (const char *w = choices; w && *w && *w != ' '; w += *w == ',') {
      size_t n = strcspn(w, ", ");
      if (n == strlen(value) && !strncasecmp(w, value, n)) return 0;
      w += n;
    }
    return choices && Say(msg, len, "%s %s: not one of %s", full, value, list);
  case T_TEXT:
    break;
  }
  return 0;
}

/* ---- the options database, read without marking anything used ----------
 * PetscOptionsLeftGet gives the options nothing has read yet with their
 * exact values; the few PETSc read inside PetscInitialize are found in
 * PetscOptionsGetAll's text and looked up (PetscOptionsFindPair marks an
 * option used, harmless for those). */
typedef struct {
  char *name, *value;
} Pair;

static PetscErrorCode GetPairs(Pair **pairs, PetscInt *np)
{
  PetscInt  n, cap;
  char    **names, **values, *all, *tok, *save = NULL;
  Pair     *p;

  PetscFunctionBegin;
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  cap = n + 1;
  for (const char *c = all; *c; c++) cap += *c == ' ';
  PetscCall(PetscCalloc1(cap, &p));
  *np = 0;
  for (PetscInt i = 0; i < n; i++, (*np)++) {
    PetscCall(PetscStrallocpy(names[i], &p[*np].name));
    PetscCall(PetscStrallocpy(values[i], &p[*np].value));
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    PetscBool key, used, set;
    const char *v;
    PetscCall(PetscOptionsValidKey(tok, &key));
    if (!key) continue;
    PetscCall(PetscOptionsUsed(NULL, tok + 1, &used)); /* a key-like word inside a value is no option */
    if (!used) continue;
    PetscCall(PetscOptionsFindPair(NULL, NULL, tok, &v, &set));
    if (!set) continue;
    PetscCall(PetscStrallocpy(tok + 1, &p[*np].name));
    PetscCall(PetscStrallocpy(v, &p[*np].value));
    (*np)++;
  }
  PetscCall(PetscFree(all));
  *pairs = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void FreePairs(Pair **p, PetscInt n)
{
  for (PetscInt i = 0; i < n; i++) (void)PetscFree((*p)[i].name), (void)PetscFree((*p)[i].value);
  (void)PetscFree(*p);
}

PetscErrorCode OptStrictCheck(unsigned groups)
{
  Pair    *p;
  PetscInt n;
  char     msg[2048] = "";

  PetscFunctionBegin;
  strict_groups = groups;
  PetscCall(GetPairs(&p, &n));
  for (PetscInt i = 0; i < n; i++)
    if (OptionBad(groups, p[i].name, p[i].value, msg, sizeof msg)) break;
  FreePairs(&p, n);
  PetscCheck(!msg[0], ErrComm(), PETSC_ERR_ARG_WRONG, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int OptStrictExplain(const char *mess, char *line, size_t len)
{
  char        text[256];
  const char *what = NULL;
  Pair       *p;
  PetscInt    n;
  int         done = 0, end = 0;

  if (!mess) return 0;
  { /* PETSc's messages that name no option: the option they are about */
    static const struct {
      const char *mess, *option;
    } named[] = {{"Restart must be positive", "-ksp_gmres_restart"},
                 {"does not support preconditioner side", "-ksp_pc_side"}};
    for (size_t k = 0; k < sizeof named / sizeof *named; k++)
      if (strstr(mess, named[k].mess)) {
        char v[64] = "";
        (void)PetscOptionsGetString(NULL, NULL, named[k].option, v, sizeof v, NULL);
        /* "restart ...", "KSP ..." */
        snprintf(line, len, "%s %s: %c%s", named[k].option, v,
                 islower((unsigned char)mess[1]) ? tolower((unsigned char)mess[0]) : mess[0], mess + 1);
        return 1;
      }
  }
  if (sscanf(mess, "Input string %255s has no integer value%n", text, &end) == 1 && end) what = "not an integer";
  else if (sscanf(mess, "Input string %255s has no numeric value%n", text, &end) == 1 && end) what = "not a number";
  else if (sscanf(mess, "Unknown logical value: %255[^\n]%n", text, &end) == 1 && end)
    what = "not a true/false value (use 1, 0, true, false, yes, no, on or off)";
  else if (sscanf(mess, "Unsupported viewer %255s%n", text, &end) == 1 && end)
    what = "not a viewer (use ascii:FILE, :FILE, binary:FILE, draw, or no value for standard output)";
  /* a parse error comes from reading the database: it exists, PetscInitialize done or not */
  if (!what || GetPairs(&p, &n)) return 0;
  int viewer = !strncmp(mess, "Unsupported viewer", 18); /* of a text option: the monitor's or viewer's value */
  for (PetscInt i = 0; i < n && !done; i++) {
    OptType     type;
    const char *choices;
    if (!p[i].value || strcmp(p[i].value, text) ||
        (!viewer && Lookup(strict_groups, p[i].name, &type, &choices) && type == T_TEXT))
      continue;
    snprintf(line, len, "-%s %s: %s", p[i].name, text, what);
    done = 1;
  }
  FreePairs(&p, n);
  return done;
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
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[la][lb];
}

/* Up to three declared names nearest to the unknown option "-name" (of the
 * groups last checked), as "-a, -b or -c" (empty when none is near). */
static void Suggest(const char *unknown, char *buf, size_t len)
{
  size_t lim = strlen(unknown) / 3, best[3] = {1000, 1000, 1000};
  char   pick[3][64] = {"", "", ""}, word[64];

  buf[0] = 0;
  if (lim < 1) lim = 1;
  while (*unknown == '-') unknown++;
  for (size_t d = 0; d < opt_ndecl; d++) {
    if (!(opt_decl[d].groups & strict_groups)) continue;
    for (const char *w = opt_decl[d].names; *w; w += strcspn(w, " "), w += *w == ' ') {
      size_t n = strcspn(w, " =");
      if (n >= sizeof word) continue;
      memcpy(word, w, n), word[n] = 0;
      size_t dd = Distance(unknown, word);
      /* declared twice: once */
      if (dd > lim || !strcmp(unknown, word) || !strcmp(word, pick[0]) || !strcmp(word, pick[1]) ||
          !strcmp(word, pick[2]))
        continue;
      for (int k = 0; k < 3; k++)
        if (dd < best[k]) {
          for (int m = 2; m > k; m--) best[m] = best[m - 1], memcpy(pick[m], pick[m - 1], sizeof word);
          best[k] = dd, memcpy(pick[k], word, sizeof word);
          break;
        }
    }
  }
  for (int k = 0; k < 3 && pick[k][0]; k++) {
    size_t o = strlen(buf);
    snprintf(buf + o, len - o, "%s-%s", k == 0 ? "" : k == 2 || !pick[k + 1][0] ? " or " : ", ", pick[k]);
  }
}

/* A misspelled option would be silently ignored by PETSc: make it an error.
 * Before the run, options that PETSc reads only later (viewers, monitors,
 * -options_left) are let through; after the run every option must be used. */
PetscErrorCode OptStrictCheckUnused(PetscBool final)
{
  PetscInt n;
  char   **names, **values, msg[1024] = "";

  PetscFunctionBegin;
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt i = 0; i < n && !msg[0]; i++) {
    const char *nm = names[i], *choices, *where;
    char        full[256], near[512];
    OptType     type;
    if (strstr(nm, "options_left") || strstr(nm, "options_file")) continue;
    if (!final && (strstr(nm, "view") || strstr(nm, "monitor") || strstr(nm, "reason") || strstr(nm, "log"))) continue;
    snprintf(full, sizeof full, "-%s", nm);
    if (Lookup(strict_groups, nm, &type, &choices)) { /* a real option this run does not read: say so, not "unknown" */
      where = !strncmp(nm, "surrogate_", 10)                    ? "a run with a network (-coupling guess or closure)"
            : !strncmp(nm, "gs_", 3)                            ? "-scenario grayscott"
            : !strncmp(nm, "heat_", 5) || !strcmp(nm, "mms_tol") ? "-scenario heat"
                                                                : NULL;
      Say(msg, sizeof msg, "%s: not used by this run (%s%s)", full,
          where ? "it applies to " : "see -help for what it applies to", where ? where : "");
    } else {
      Suggest(full, near, sizeof near);
      if (near[0]) Say(msg, sizeof msg, "%s: unknown option; did you mean %s? (see -help)", full, near);
      else
        Say(msg, sizeof msg, "%s: unknown or unused option (misspelled? not used by this scenario?); see -help", full);
    }
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  PetscCheck(!msg[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}
