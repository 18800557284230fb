/* miniapp/cli/optfiles.c: the options-file pre-check, before PetscInitialize
 * (which reads -options_file, -options_file_yaml, PETSC_OPTIONS and the
 * petscrc files, where a file that includes itself overflows the stack and
 * any other mistake is a 15-line trace): the same files walked as PETSc will
 * (nested names relative to the working directory), one line naming the file
 * at the first problem, every file registered as an input. PETSc's own file
 * options write inside PetscInitialize (-history, -info, -log_trace) or at its
 * end (-malloc_view): their files are checked here, for every rank the
 * launcher announces, by the rules of the run's outputs (kernels/pathcheck.h).
 * Option names and values are judged later, in the database (optstrict.c). */
#define _DEFAULT_SOURCE
#include "cli_impl.h"
#include "pathcheck.h"

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
#define MAX_EARLY 128

/* Options seen on the way that name files: (option, value), value NULL when
 * given alone; and the options files read (inputs). */
static struct {
  char option[32], *value;
} early[MAX_EARLY];
static int  nearly;
static char *early_inputs[MAX_EARLY];
static int  nearly_inputs;

static const char *const watched[] = {"-history",         "-info",    "-log_trace",  "-malloc_view",
                                      "-options_monitor", "-log_all", "-malloc_dump"};

/* The tool's own file options (ReportPrecheckSetTool): the miniapp's unless
 * another tool says otherwise. */
static const char       *tool_name        = "miniapp";
static const char *const miniapp_inputs[] = {"-restart", NULL}, *const miniapp_outputs[] = {"-checkpoint", "-output",
                                                                                            "-summary", "-report",
                                                                                            NULL};
static const char *const *tool_inputs = miniapp_inputs, *const *tool_outputs = miniapp_outputs;

void ReportPrecheckSetTool(const char *name, const char *const inputs[], const char *const outputs[])
{
  tool_name = name, tool_inputs = inputs, tool_outputs = outputs;
}

static int InList(const char *key, const char *const list[])
{
  for (int k = 0; list[k]; k++)
    if (!strcmp(key, list[k])) return 1;
  return 0;
}

static void Remember(const char *key, const char *value)
{
  int w = InList(key, tool_inputs) || InList(key, tool_outputs);
  for (size_t k = 0; k < sizeof watched / sizeof *watched; k++) w = w || !strcmp(key, watched[k]);
  if (w && nearly < MAX_EARLY) {
    snprintf(early[nearly].option, sizeof early[nearly].option, "%s", key);
    early[nearly++].value = value ? strdup(value) : NULL;
  }
}

typedef struct {
  char canon[MAX_DEPTH][PATH_MAX]; /* the chain of files being read, outermost first */
  char shown[MAX_DEPTH][PATH_MAX]; /* their names as written */
  int  depth;
} Chain;

/* Before MPI_Init the rank is known only from the launcher's environment
 * (Open MPI, MPICH/PMI): every rank finds the same problem, rank 0 says it,
 * in one write (stderr is unbuffered: the launcher's own lines would land
 * inside a line written in pieces). */
static int Fail(const char *fmt, ...)
{
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  char        line[2048];
  va_list     ap;
  if (!rank) rank = getenv("PMI_RANK");
  if (rank && strcmp(rank, "0")) return 1;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: error: %s\n", tool_name, line);
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

/* The next blank-separated token of *p ("double-quoted" as one), or NULL;
 * *open set when a quote is not closed on the line (PETSc would take the rest
 * of the line, the line's end included, as the value). */
static char *Token(char **p, int *open)
{
  char *s = *p, *t;
  while (*s == ' ') s++;
  if (!*s) return NULL;
  if (*s == '"') {
    t = ++s;
    while (*s && *s != '"') s++;
    if (!*s) *open = 1;
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
  int   open = 0;

  line[strcspn(line, "#")] = 0;
  for (char *q = line; *q; q++)
    if (*q == '\t' || *q == '\r' || *q == '\n' || *q == '\f' || *q == '\v') *q = ' ';
  if (!(key = Token(&p, &open))) return 0;
  if (!strcasecmp(key, "alias")) return 0;
  if (open) return Fail("-options_file %s: line %d: a quote (\") is not closed", file, lineno);
  if (key[0] != '-')
    return Fail("-options_file %s: line %d: '%s' is not an option (options start with '-'; comments with '#')", file,
                lineno, key);
  if (!ValidKey(key)) return Fail("-options_file %s: line %d: '%s' is not a valid option name", file, lineno, key);
  value = Token(&p, &open);
  if (open) return Fail("-options_file %s: line %d: the quote (\") of %s's value is not closed", file, lineno, key);
  if ((extra = Token(&p, &open)))
    return Fail("-options_file %s: line %d: '%s' after %s %s: one option per line (quote a value with blanks)", file,
                lineno, extra, key, value);
  Remember(key, value);
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
  if (!S_ISREG(st.st_mode)) /* a FIFO or pipe would block until a writer comes; a device never ends */
    return Fail("%s %s%s: is a %s, not a regular file (write the options to a file first)", option, name, from,
                S_ISFIFO(st.st_mode)   ? "FIFO (a pipe)"
                : S_ISCHR(st.st_mode)  ? "character device"
                : S_ISBLK(st.st_mode)  ? "block device"
                : S_ISSOCK(st.st_mode) ? "socket"
                                       : "special file");
  if (!realpath(name, canon)) return Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  for (int k = 0; k < c->depth; k++) {
    if (strcmp(c->canon[k], canon)) continue;
    char cycle[4 * PATH_MAX] = "";
    for (int j = k; j < c->depth; j++)
      snprintf(cycle + strlen(cycle), sizeof cycle - strlen(cycle), "%s -> ", c->shown[j]);
    snprintf(cycle + strlen(cycle), sizeof cycle - strlen(cycle), "%s", name);
    return Fail("%s %s: includes itself (%s)", option, c->shown[k], cycle);
  }
  if (c->depth == MAX_DEPTH)
    return Fail("%s %s%s: options files nested more than %d deep", option, name, from, MAX_DEPTH);
  if (!(f = fopen(name, "r"))) return Fail("%s %s%s: cannot read (%s)", option, name, from, strerror(errno));
  if (OutPathRegisterInputEarly(option, name) ||
      (nearly_inputs < MAX_EARLY && !(early_inputs[nearly_inputs++] = strdup(name)))) {
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
  /* The whole file is judged as text before any line is read as options:
   * binary data whose first line happens to be printable is still binary. */
  while (!bad && (n = getline(&line, &cap, f)) > 0) {
    lineno++;
    if (lineno == 1 && n >= 3 &&
        !memcmp(line, "\xEF\xBB\xBF", 3)) /* PETSc would read it as part of the first option's name */
      bad = Fail("%s %s%s: starts with a UTF-8 byte-order mark; save it without one (plain UTF-8 or ASCII)", option,
                 name, from);
    else if (!Text(line, (size_t)n))
      bad = Fail("%s %s%s: line %d is not text (binary data?): not an options file", option, name, from, lineno);
  }
  if (!bad && !ferror(f)) {
    rewind(f);
    for (lineno = 0; !bad && (n = getline(&line, &cap, f)) > 0;) bad = CheckLine(c, name, ++lineno, line);
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
    if (ValidKey(argv[i])) Remember(argv[i], i + 1 < argc && !ValidKey(argv[i + 1]) ? argv[i + 1] : NULL);
    if (strcmp(argv[i], "-options_file") && !yaml) continue;
    if (i + 1 >= argc || !argv[i + 1][0]) return Fail("%s needs a file name", argv[i]);
    if (CheckFile(c, argv[i], argv[i + 1], NULL, 0, yaml)) return 1;
    i++;
  }
  return 0;
}

int ReportOptionsFilesRead(const char ***files)
{
  *files = (const char **)early_inputs;
  return nearly_inputs;
}

/* The value of the last `option` remembered ("" if given alone, NULL if never). */
static const char *Last(const char *option)
{
  const char *v = NULL;
  for (int k = 0; k < nearly; k++)
    if (!strcmp(early[k].option, option)) v = early[k].value ? early[k].value : "";
  return v;
}

/* The tool's own files named twice with different names: PETSc keeps the
 * last, so the first was silently never written (-output a.nc -output b.nc)
 * or never read (miniapp-compare refuses its -o twice likewise). */
static int CheckOnce(void)
{
  for (int k = 0; k < nearly; k++) {
    const char *o = early[k].option, *v = early[k].value;
    if (!InList(o, tool_inputs) && !InList(o, tool_outputs)) continue;
    for (int j = k + 1; j < nearly; j++)
      if (!strcmp(early[j].option, o) && strcmp(v ? v : "", early[j].value ? early[j].value : ""))
        return Fail("%s given twice (%s and %s): one file each; only the last would be %s", o, v ? v : "no value",
                    early[j].value ? early[j].value : "no value", InList(o, tool_inputs) ? "read" : "written");
  }
  return 0;
}

/* Switches PETSc reads inside PetscInitialize, where its "Unknown logical
 * value" would not name them: a value must be a true/false word (PETSc 3.18
 * takes no file for -options_monitor, -log_all or -malloc_dump). */
static int CheckSwitches(void)
{
  for (int k = 0; k < nearly; k++) {
    const char *o = early[k].option, *v = early[k].value;
    if (strcmp(o, "-options_monitor") && strcmp(o, "-log_all") && strcmp(o, "-malloc_dump")) continue;
    if (v && !OptBoolWord(v))
      return Fail("%s %s: not a true/false value (use 1, 0, true, false, yes, no, on or off; PETSc 3.18 takes no file "
                  "here)",
                  o, v);
  }
  return 0;
}

/* The files PETSc's own file options would write, checked with the run's
 * inputs and outputs before PetscInitialize (see the top of this file). */
static int CheckPETScFiles(void)
{
  const char *env = getenv("OMPI_COMM_WORLD_SIZE"), *ck = Last("-checkpoint");
  int         ranks = env ? atoi(env) : 0, bad = 0, any = 0;
  char        msg[2 * PATH_MAX + 256] = "", file[PATH_MAX + 32];
  pathset    *ps;

  if (!env && (env = getenv("PMI_SIZE"))) ranks = atoi(env);
  if (ranks < 1 || ranks > 4096) ranks = 1;
  for (int k = 0; k < nearly && !any; k++)
    any = !strcmp(early[k].option, "-history") || !strcmp(early[k].option, "-info") ||
          !strcmp(early[k].option, "-log_trace") || !strcmp(early[k].option, "-malloc_view");
  if (!any) return 0; /* nothing PETSc writes early: the run's own check covers the rest */
  if (!(ps = pathset_create())) return Fail("out of memory");
  for (int k = 0; k < nearly_inputs && !bad; k++) bad = pathset_add(ps, PATH_INPUT, "-options_file", early_inputs[k]);
  for (int k = 0; k < nearly && !bad; k++) {
    const char *o = early[k].option, *v = early[k].value;
    /* -restart F -checkpoint F continues F */
    if (InList(o, tool_inputs) && v && v[0] && !(!strcmp(o, "-restart") && ck && !strcmp(ck, v)))
      bad = pathset_add(ps, PATH_INPUT, o, v);
    else if (InList(o, tool_outputs) && !(!strcmp(o, "-report") && v && !strcmp(v, "auto")) && v && v[0])
      bad = pathset_add(ps, PATH_OUTPUT, o, v);
    else if (!strcmp(o, "-history")) { /* rank 0, appended to; alone: ~/.petschistory */
      const char *h = getenv("HOME");
      if (v && v[0]) snprintf(file, sizeof file, "%s", v);
      else snprintf(file, sizeof file, "%s/.petschistory", h ? h : "");
      bad = pathset_add(ps, PATH_OUTPUT, o, file);
    } else if (!strcmp(o, "-info") || !strcmp(o, "-log_trace") || !strcmp(o, "-malloc_view")) {
      size_t n = v ? strcspn(v, ":") : 0; /* -info FILE:classes; -info alone or -info :classes: standard output */
      if (!n || !strcmp(v, "true") || !strcmp(v, "false")) continue;
      for (int r = 0; r < ranks && !bad; r++) {
        snprintf(file, sizeof file, !strcmp(o, "-malloc_view") ? "%.*s_%d" : "%.*s.%d", (int)n, v, r);
        bad = pathset_add(ps, PATH_OUTPUT, o, file);
      }
    }
  }
  if (bad) {
    pathset_destroy(&ps);
    return Fail("out of memory");
  }
  bad = pathset_check(ps, msg, sizeof msg);
  pathset_destroy(&ps);
  return bad ? Fail("%s", msg) : 0;
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
    int open = 0; /* a quoted word (PETSc takes it as one) left open */
    for (char *q = copy; *q; q++) *q = (*q == '\t' || *q == '\n') ? ' ' : *q;
    for (char *p = copy; !open && Token(&p, &open);) {}
    if (open) {
      free(copy);
      return Fail("PETSC_OPTIONS: a quote (\") is not closed");
    }
    strcpy(copy, env);
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
  return CheckOnce() || CheckSwitches() || CheckPETScFiles();
}
