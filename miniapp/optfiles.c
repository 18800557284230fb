/* miniapp/optfiles.c: the options-file pre-check, run by main() before
 * PetscInitialize. PETSc reads -options_file (and -options_file_yaml, the
 * PETSC_OPTIONS variable and ~/.petscrc, .petscrc, petscrc) inside
 * PetscInitialize, where a file that includes itself recurses until the
 * stack overflows and every other mistake is a 12-15 line trace. This walks
 * the same files the way PETSc will (nested names relative to the working
 * directory), stops at the first problem with one line naming the file, and
 * registers every file it reads as an input of the run (outpath.h), so that
 * no output may overwrite it. It does not judge option names or values: the
 * options database does that once it is built. */
#define _DEFAULT_SOURCE
#include "outpath.h"
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 16

typedef struct {
  char canon[MAX_DEPTH][PATH_MAX]; /* the chain of files being read, outermost first */
  char shown[MAX_DEPTH][PATH_MAX]; /* their names as written */
  int  depth;
} Chain;

/* Before MPI_Init the rank is known only from the launcher's environment
 * (Open MPI, MPICH/PMI): every rank finds the same problem, rank 0 says it. */
static int Fail(const char *fmt, ...)
{
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  va_list     ap;
  if (!rank) rank = getenv("PMI_RANK");
  if (rank && strcmp(rank, "0")) return 1;
  fputs("miniapp: error: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 1;
}

/* " (included from a.opts line 3)" for a nested file, "" on the command line. */
static const char *From(const char *parent, int line, char *buf, size_t len)
{
  if (!parent) return "";
  snprintf(buf, len, " (included from %s line %d)", parent, line);
  return buf;
}

/* PetscOptionsValidKey: -[-]letter[letters, digits, _ or -]... */
static int ValidKey(const char *t)
{
  if (t[0] != '-') return 0;
  if (t[1] == '-') t++;
  if (!isalpha((unsigned char)t[1])) return 0;
  for (t += 2; *t; t++)
    if (!isalnum((unsigned char)*t) && *t != '_' && *t != '-') return 0;
  return 1;
}

/* Text: UTF-8 without control characters other than blanks. */
static int Text(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    int           more;
    if (ch < 0x80) {
      if ((ch < 0x20 && (!ch || !strchr("\t\r\n\f\v", ch))) || ch == 0x7f) return 0;
      continue;
    }
    more = ch >= 0xf0 && ch < 0xf5 ? 3 : ch >= 0xe0 ? 2 : ch >= 0xc2 && ch < 0xe0 ? 1 : -1;
    if (more < 0 || ch >= 0xf5 || i + (size_t)more >= n) return 0;
    for (int k = 1; k <= more; k++)
      if (((unsigned char)s[i + (size_t)k] & 0xc0) != 0x80) return 0;
    i += (size_t)more;
  }
  return 1;
}

static int CheckFile(Chain *c, const char *option, const char *name, const char *parent, int pline, int yaml);

/* The next blank-separated token of *p ("double-quoted" as one), or NULL. */
static char *Token(char **p)
{
  char *s = *p, *t;
  while (*s == ' ') s++;
  if (!*s) return NULL;
  if (*s == '"') {
    t = ++s;
    while (*s && *s != '"') s++;
  } else {
    t = s;
    while (*s && *s != ' ') s++;
  }
  if (*s) *s++ = 0;
  *p = s;
  return t;
}

/* One line of an options file as PETSc 3.18's PetscOptionsInsertFile reads
 * it: '#' starts a comment; then nothing, "alias -new -old", or one option
 * "-name [value]" and no more. A nested -options_file is checked in turn. */
static int CheckLine(Chain *c, const char *file, int lineno, char *line)
{
  char *p = line, *key, *value, *extra;

  line[strcspn(line, "#")] = 0;
  for (char *q = line; *q; q++)
    if (*q == '\t' || *q == '\r' || *q == '\n' || *q == '\f' || *q == '\v') *q = ' ';
  if (!(key = Token(&p))) return 0;
  if (!strcasecmp(key, "alias")) return 0;
  if (key[0] != '-') return Fail("-options_file %s: line %d: '%s' is not an option (options start with '-'; comments with '#')", file, lineno, key);
  if (!ValidKey(key)) return Fail("-options_file %s: line %d: '%s' is not a valid option name", file, lineno, key);
  value = Token(&p);
  if ((extra = Token(&p))) return Fail("-options_file %s: line %d: '%s' after %s %s: one option per line (quote a value with blanks)", file, lineno, extra, key, value);
  if (!strcmp(key, "-options_file") || !strcmp(key, "-options_file_yaml")) {
    if (!value) return Fail("-options_file %s: line %d: %s needs a file name", file, lineno, key);
    return CheckFile(c, key, value, file, lineno, !strcmp(key, "-options_file_yaml"));
  }
  return 0;
}

static int CheckFile(Chain *c, const char *option, const char *name, const char *parent, int pline, int yaml)
{
  char        canon[PATH_MAX], from[PATH_MAX + 64], *line = NULL;
  size_t      cap = 0;
  ssize_t     n;
  struct stat st;
  FILE       *f;
  int         lineno = 0, bad = 0;

  From(parent, pline, from, sizeof from);
  if (stat(name, &st)) return Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  if (S_ISDIR(st.st_mode)) return Fail("%s %s%s: is a directory, not an options file", option, name, from);
  if (!realpath(name, canon)) return Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  for (int k = 0; k < c->depth; k++) {
    if (strcmp(c->canon[k], canon)) continue;
    char cycle[4 * PATH_MAX] = "";
    for (int j = k; j < c->depth; j++) snprintf(cycle + strlen(cycle), sizeof cycle - strlen(cycle), "%s -> ", c->shown[j]);
    snprintf(cycle + strlen(cycle), sizeof cycle - strlen(cycle), "%s", name);
    return Fail("%s %s: includes itself (%s)", option, c->shown[k], cycle);
  }
  if (c->depth == MAX_DEPTH) return Fail("%s %s%s: options files nested more than %d deep", option, name, from, MAX_DEPTH);
  if (!(f = fopen(name, "r"))) return Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  if (OutPathRegisterInputEarly(option, name)) {
    fclose(f);
    return Fail("out of memory");
  }
  if (yaml) { /* PETSc's YAML reader judges the content */
    fclose(f);
    return 0;
  }
  snprintf(c->canon[c->depth], PATH_MAX, "%s", canon);
  snprintf(c->shown[c->depth], PATH_MAX, "%s", name);
  c->depth++;
  while (!bad && (n = getline(&line, &cap, f)) > 0) {
    lineno++;
    if (!Text(line, (size_t)n)) bad = Fail("%s %s%s: line %d is not text (binary data?): not an options file", option, name, from, lineno);
    else bad = CheckLine(c, name, lineno, line);
  }
  free(line);
  if (!bad && ferror(f)) bad = Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  fclose(f);
  c->depth--;
  return bad;
}

/* The options of argv or of the PETSC_OPTIONS text that name files. */
static int CheckArgs(Chain *c, int argc, char **argv)
{
  for (int i = 0; i < argc; i++) {
    int yaml = !strcmp(argv[i], "-options_file_yaml");
    if (strcmp(argv[i], "-options_file") && !yaml) continue;
    if (i + 1 >= argc || !argv[i + 1][0]) return Fail("%s needs a file name", argv[i]);
    if (CheckFile(c, argv[i], argv[i + 1], NULL, 0, yaml)) return 1;
    i++;
  }
  return 0;
}

int ReportPrecheckOptionsFiles(int argc, char **argv)
{
  static Chain c; /* large: not on the stack */
  int          skip = 0;
  const char  *env  = getenv("PETSC_OPTIONS");

  c.depth = 0;
  if (CheckArgs(&c, argc - 1, argv + 1)) return 1;
  if (env) { /* PETSc splits it on blanks */
    char *copy = strdup(env), *words[256], *save = NULL;
    int   n    = 0;
    if (!copy) return Fail("out of memory");
    for (char *w = strtok_r(copy, " \t\n", &save); w && n < 256; w = strtok_r(NULL, " \t\n", &save)) words[n++] = w;
    int bad = CheckArgs(&c, n, words);
    for (int i = 0; i < n; i++) skip = skip || !strcmp(words[i], "-skip_petscrc");
    free(copy);
    if (bad) return 1;
  }
  for (int i = 1; i < argc; i++) skip = skip || !strcmp(argv[i], "-skip_petscrc");
  if (!skip) { /* read by PetscInitialize when present */
    char        home[PATH_MAX];
    const char *h = getenv("HOME");
    snprintf(home, sizeof home, "%s/.petscrc", h ? h : "");
    const char *rc[3] = {home, ".petscrc", "petscrc"};
    for (int k = 0; k < 3; k++)
      if (!access(rc[k], F_OK) && CheckFile(&c, "-options_file", rc[k], NULL, 0, 0)) return 1;
  }
  return 0;
}
