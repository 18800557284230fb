/* miniapp/deckrules.c: the benchmark's run rules (docs/benchmark.md). A run
 * is an official result of its deck only when it runs the deck as written:
 * every option in the options database that is not a tunable (threads,
 * devices, outputs, diagnostics, checkpointing, the implementation of CG)
 * has the value the deck file gives it, and the deck gives no option the run
 * lacks. The deck file is the options file that sets -deck_name to the
 * run's deck (optfiles.c lists the files read). Also here: the command line
 * and the options, for the report. Not here: the verdict (report.c). */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *command_line;

void ReportSetCommandLine(int argc, char **argv)
{
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += 3 * strlen(argv[i]) + 3;
  free(command_line);
  if (!(command_line = malloc(n))) return;
  command_line[0] = 0;
  for (int i = 0; i < argc; i++) { /* quoted where a shell would need it */
    int q = !argv[i][0] || strpbrk(argv[i], " \t\n\"'$`\\|&;<>()*?") != NULL;
    strcat(command_line, i ? " " : "");
    if (q) strcat(command_line, "'");
    strcat(command_line, argv[i]);
    if (q) strcat(command_line, "'");
  }
}

const char *ReportCommandLine(void) { return command_line ? command_line : ""; }

PetscBool ReportOptionIn(const char *name, const char *const names[], size_t nn)
{
  /* PETSc's diagnostics: they only print or write what happened */
  static const char *const diag[] = {"-log", "-info", "-malloc", "-memory", "-on_error", "-options_", "-debugger", "-start_in_debugger", "-stop_for_debugger", "-check_pointer", "-objects", "-viewer", "-display"};
  size_t                   n = strlen(name);

  for (size_t k = 0; k < nn; k++)
    if (!strcmp(name, names[k])) return PETSC_TRUE;
  for (size_t k = 0; k < sizeof diag / sizeof *diag; k++)
    if (!strncmp(name, diag[k], strlen(diag[k]))) return PETSC_TRUE;
  return (PetscBool)(strstr(name, "_view") || strstr(name, "_monitor") || (n > 17 && !strcmp(name + n - 17, "_converged_reason")));
}

/* Options a submitter may change: where and how the run executes, what it
 * writes, the CG implementation (fpnacg and cg give the same bits). */
static PetscBool Tunable(const char *name)
{
  static const char *const names[] = {"-threads", "-surrogate_device", "-surrogate_device_id", "-surrogate_view", "-output", "-output_every", "-summary", "-report", "-progress", "-progress_interval",
                                      "-checkpoint", "-checkpoint_every", "-restart", "-options_file", "-options_file_yaml", "-skip_petscrc", "-help", "-history", "-ksp_fpnacg_fuse", "-no_signal_handler"};
  return ReportOptionIn(name, names, sizeof names / sizeof *names);
}

/* The same value, the CG implementations counting as one. */
static PetscBool Same(const char *name, const char *a, const char *b)
{
  if (!strcmp(name, "-ksp_type")) {
    int ca = !strcmp(a, "cg") || !strcmp(a, "fpnacg"), cb = !strcmp(b, "cg") || !strcmp(b, "fpnacg");
    if (ca && cb) return PETSC_TRUE;
  }
  return (PetscBool)!strcmp(a, b);
}

#define MAX_OPTS 256
typedef struct {
  char name[64], value[256];
} Opt;

/* One "-name [value]" line of an options file ("" when none). */
static int ParseLine(char *line, Opt *o)
{
  char *p = line, *k, *v;
  line[strcspn(line, "#\r\n")] = 0;
  while (isspace((unsigned char)*p)) p++;
  if (*p != '-') return 0;
  k = p;
  while (*p && !isspace((unsigned char)*p)) p++;
  if (*p) *p++ = 0;
  while (isspace((unsigned char)*p)) p++;
  v = p;
  for (char *e = v + strlen(v); e > v && isspace((unsigned char)e[-1]); e--) e[-1] = 0;
  if (*v == '"' && strlen(v) >= 2 && v[strlen(v) - 1] == '"') v++, v[strlen(v) - 1] = 0;
  snprintf(o->name, sizeof o->name, "%.63s", k);
  snprintf(o->value, sizeof o->value, "%.255s", v);
  return 1;
}

/* The options a deck file sets, if it sets -deck_name deck; else 0 options. */
static int ReadDeck(const char *path, const char *deck, Opt *opts, int max)
{
  FILE *f = fopen(path, "r");
  char  line[1024];
  int   n = 0, named = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f) && n < max)
    if (ParseLine(line, &opts[n])) {
      if (!strcmp(opts[n].name, "-deck_name") && !strcmp(opts[n].value, deck)) named = 1;
      n++;
    }
  fclose(f);
  return named ? n : 0;
}

PetscErrorCode ReportDeckRules(const char *deck, PetscBool *official, char *modified, size_t len)
{
  static Opt   dk[MAX_OPTS];
  int          nd = 0;
  const char **files;
  int          nf = ReportOptionsFilesRead(&files);
  char        *all = NULL, *tok, *save = NULL, *name = NULL, val[256] = "";
  PetscBool    key;

  PetscFunctionBegin;
  *official = PETSC_FALSE, modified[0] = 0;
  if (!deck || !deck[0]) PetscFunctionReturn(PETSC_SUCCESS);
  for (int k = 0; k < nf && !nd; k++) nd = ReadDeck(files[k], deck, dk, MAX_OPTS);
  if (!nd) { /* -deck_name without its deck file: nothing to hold the run to */
    snprintf(modified, len, "no options file sets -deck_name %s", deck);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscOptionsGetAll(NULL, &all)); /* "-name value -name ..." */
  for (tok = strtok_r(all, " ", &save);; tok = strtok_r(NULL, " ", &save)) {
    key = PETSC_FALSE;
    if (tok) PetscCall(PetscOptionsValidKey(tok, &key));
    if ((key || !tok) && name && !Tunable(name)) { /* the run's value of name against the deck's */
      int found = 0, same = 0;
      for (int k = 0; k < nd; k++)
        if (!strcmp(dk[k].name, name)) found = 1, same = Same(name, dk[k].value, val);
      if (!found && Same(name, "fpnacg", val)) found = same = 1; /* -ksp_type cg where the deck keeps the default fpnacg */
      if (!(found && same) && strlen(modified) + strlen(name) + 3 < len) snprintf(modified + strlen(modified), len - strlen(modified), "%s%s", modified[0] ? ", " : "", name);
    }
    if (!tok) break;
    if (key) name = tok, val[0] = 0;
    else if (name) snprintf(val + strlen(val), sizeof val - strlen(val), "%s%s", val[0] ? " " : "", tok);
  }
  PetscCall(PetscFree(all));
  *official = (PetscBool)!modified[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* All options as given, one "-name value" string, for the report. */
PetscErrorCode ReportOptionsText(char **text)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsGetAll(NULL, text));
  PetscFunctionReturn(PETSC_SUCCESS);
}
