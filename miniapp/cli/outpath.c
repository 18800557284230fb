/* miniapp/cli/outpath.c: the PETSc front-end of kernels/pathcheck.h for the
 * driver: one process-wide register, filled by the modules, checked once on
 * rank 0 (which does all file output) and the verdict broadcast. */
#include "cli_impl.h"
#include "pathcheck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static pathset *paths; /* the run's register; created on first use */

/* The options through which PETSc itself would write a file (-log_view ...):
 * PETSc writes some of them in PetscFinalize even after an error, so a run
 * refused for its outputs clears them first. */
#define MAX_PETSC_OUTPUTS 32
static char petsc_outputs[MAX_PETSC_OUTPUTS][256];
static int  npetsc_outputs;
static int  checked; /* OutPathCheck passed */

int OutPathRegisterInputEarly(const char *option, const char *path)
{
  if (!paths && !(paths = pathset_create())) return ENOMEM;
  return pathset_add(paths, PATH_INPUT, option, path);
}

static PetscErrorCode Register(path_kind kind, const char option[], const char path[])
{
  PetscFunctionBegin;
  /* PetscOptionsString cuts a longer value to this length without a word */
  PetscCheck(strlen(path) < PETSC_MAX_PATH_LEN - 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: file name too long (at most %d characters)", option, PETSC_MAX_PATH_LEN - 2);
  if (!paths) paths = pathset_create();
  PetscCheck(paths && !pathset_add(paths, kind, option, path), PETSC_COMM_SELF, PETSC_ERR_MEM,
             "out of memory registering %s %s", option, path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutPathRegisterInput(const char option[], const char path[])
{
  PetscFunctionBegin;
  PetscCall(Register(PATH_INPUT, option, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutPathRegisterOutput(const char option[], const char path[])
{
  PetscFunctionBegin;
  PetscCall(Register(PATH_OUTPUT, option, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An output PETSc writes, named by option: registered, and remembered to be
 * cleared when the check does not pass. */
static PetscErrorCode RegisterPETSc(const char *option, const char *file)
{
  PetscFunctionBegin;
  PetscCall(OutPathRegisterOutput(option, file));
  if (npetsc_outputs < MAX_PETSC_OUTPUTS)
    PetscCall(PetscStrncpy(petsc_outputs[npetsc_outputs++], option, sizeof petsc_outputs[0]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A viewer value "[ascii|binary|hdf5|vtk]:FILE[:FORMAT[:MODE]]" names a file
 * PETSc writes; "draw:...", "saws:..." and ":" without a file do not, nor a
 * value that is not a viewer (a number, a word). "binary" alone writes
 * binaryoutput. */
static PetscErrorCode RegisterViewer(const char *name, const char *value)
{
  static const char *const filetypes[] = {"", "ascii", "binary", "hdf5", "vtk"};
  const char              *colon       = strchr(value, ':');
  char                     file[PETSC_MAX_PATH_LEN];
  size_t                   tlen, flen;

  PetscFunctionBegin;
  if (!strcmp(value, "binary") || !strcmp(value, "binary:") || !strncmp(value, "binary::", 8)) {
    PetscCall(RegisterPETSc(name, "binaryoutput")); /* PETSc's default file name */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!colon) PetscFunctionReturn(PETSC_SUCCESS);
  tlen = (size_t)(colon - value), flen = strcspn(colon + 1, ":");
  if (!flen || flen >= sizeof file) PetscFunctionReturn(PETSC_SUCCESS);
  for (size_t k = 0; k < sizeof filetypes / sizeof *filetypes; k++) {
    if (strlen(filetypes[k]) != tlen || strncmp(value, filetypes[k], tlen)) continue;
    memcpy(file, colon + 1, flen), file[flen] = 0;
    PetscCall(RegisterPETSc(name, file));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutPathRegisterPETScOutputs(void)
{
  char *all, *tok, *save = NULL, *name = NULL;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetAll(NULL, &all)); /* "-name value -name -name value ..." */
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    PetscBool key = PETSC_FALSE;
    PetscCall(PetscOptionsValidKey(tok, &key));
    if (key) {
      name = tok;
      continue;
    }
    if (!name) continue;
    if (!strcmp(name, "-info") || !strcmp(name, "-options_file") || !strcmp(name, "-options_file_yaml")) {
      /* -info FILE:class writes FILE.<rank> (optfiles.c); -info :vec is a filter */
      name = NULL;
      continue;
    }
    { /* a window without a display: PETSc prints six lines of X errors and runs on */
      const char *d = getenv("DISPLAY");
      size_t      t = tok[4] == ':' ? strcspn(tok + 5, ":") : 0; /* draw:TYPE: tikz, image and null need no window */
      int         x = !strncmp(tok, "draw", 4) && (!tok[4] || (tok[4] == ':' && (t == 0 || (t == 1 && tok[5] == 'x'))));
      PetscCheck(!(x && !(d && d[0])), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
                 "%s %s: draws in an X window, and DISPLAY is not set (use ascii:FILE or no value)", name, tok);
    }
    /* any other option whose value is a viewer naming a file: -*_view*, -*_monitor*, but also -ksp_converged_reason,
     * -ksp_converged_rate, prefixed ones (-sub_ksp_...), whatever PETSc reads with PetscOptionsGetViewer */
    if (!strcmp(name, "-history")) PetscCall(RegisterPETSc(name, tok));
    else PetscCall(RegisterViewer(name, tok));
    name = NULL;
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutPathCheck(MPI_Comm comm)
{
  PetscMPIInt rank;
  char        msg[2 * PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0 && paths) (void)pathset_check(paths, msg, sizeof msg);
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  checked = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutPathFinalize(void)
{
  PetscFunctionBegin;
  if (!checked)
    for (int k = 0; k < npetsc_outputs; k++) PetscCall(PetscOptionsClearValue(NULL, petsc_outputs[k]));
  pathset_destroy(&paths);
  npetsc_outputs = checked = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
