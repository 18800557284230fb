/* miniapp/loop/coupling_output.c: the coupled run's NetCDF file (ncout.h): its
 * creation with the run's facts as global attributes, the per-step and
 * per-epoch records, the fields gathered to rank 0 in natural order, and
 * the final record. Rank 0 writes; every rank learns of a failure. */
#include "coupling_impl.h"
#include "buildinfo.h"
#include "vecred.h"

#include <omp.h>
#include <string.h>
#include <unistd.h>

/* Every rank fails with rank 0's one line. */
static PetscErrorCode Check(Coupled c, int err)
{
  char msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBegin;
  if (c->rank == 0 && err) PetscCall(PetscStrncpy(msg, ncout_errmsg(c->nc), sizeof msg));
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
  if (!err) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, c->comm));
  SETERRQ(c->comm, PETSC_ERR_FILE_WRITE, "-output %s", msg); /* msg starts with the path */
}

/* The run's description as global attributes: the build, the problem, the
 * decomposition, the options and settings in effect (at[] points into t). */
typedef struct {
  char restart_s[32], grid[64], reps[32], ranks[16], threads[16], seed[32], dev[16], sdev[16], opts[4096];
  char every[16], steps_s[16];
  char gsseed[32], params[512], settings[4096], petscver[64];
} RunAttrText;

static PetscErrorCode RunAttributes(Coupled c, const char *sc, PetscInt steps, RunAttrText *t, ncout_attr at[],
                                    int *nattrs)
{
  char     *all = NULL;
  PetscInt  gs;
  PetscBool gsset;
  int       na = 0;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(t->gsseed, "n/a", sizeof t->gsseed));
  PetscCall(SolverGetParameters(c->rep[0].solver, t->params, sizeof t->params));
  PetscCall(CoupledSettings(c, t->settings, sizeof t->settings - 256)); /* room for a "; " in place of each newline */
  for (char *p = t->settings; (p = strchr(p, '\n'));) { /* one line: "key: value; key: value" */
    if (!p[1]) *p = 0;
    else memmove(p + 2, p + 1, strlen(p + 1) + 1), p[0] = ';', p[1] = ' ', p += 2;
  }
  PetscCall(PetscGetVersion(t->petscver, sizeof t->petscver));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  PetscCall(PetscStrncpy(t->opts, all ? all : "", sizeof t->opts));
  PetscCall(PetscFree(all));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-gs_seed", &gs, &gsset));
  if (!strcmp(sc, "grayscott"))
    PetscCall(PetscSNPrintf(t->gsseed, sizeof t->gsseed, "%" PetscInt_FMT, gsset ? gs : (PetscInt)1));
  PetscCall(PetscSNPrintf(t->grid, sizeof t->grid, "%" PetscInt_FMT " x %" PetscInt_FMT, c->M, c->N));
  PetscCall(PetscSNPrintf(t->reps, sizeof t->reps, "%" PetscInt_FMT, c->nrep));
  PetscCall(PetscSNPrintf(t->ranks, sizeof t->ranks, "%d", c->size));
  PetscCall(PetscSNPrintf(t->threads, sizeof t->threads, "%d", omp_get_max_threads()));
  PetscCall(PetscSNPrintf(t->seed, sizeof t->seed, "%llu", (unsigned long long)c->rep[0].order.seed));
  PetscCall(PetscSNPrintf(t->every, sizeof t->every, "%" PetscInt_FMT, c->output_every));
  PetscCall(PetscSNPrintf(t->steps_s, sizeof t->steps_s, "%" PetscInt_FMT, steps));
  const char *kernels = "none";
  PetscCall(PetscStrncpy(t->dev, "none", sizeof t->dev));
  {
    PetscBool sd;
    PetscCall(SolverUsesDevice(c->rep[0].solver, &sd));
    PetscCall(PetscStrncpy(t->sdev, sd ? "cuda" : "cpu", sizeof t->sdev));
  }
  if (c->rep[0].net) {
    SurrogateDevice d;
    PetscCall(SurrogateGetCudaKernels(c->rep[0].net, &kernels));
    PetscCall(SurrogateGetDevice(c->rep[0].net, &d));
    PetscCall(PetscStrncpy(t->dev, d == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", sizeof t->dev));
  }
#define ATTR(n, v)  (at[na].name = (n), at[na].value = (v), at[na].numeric = 0, na++)
#define ATTRN(n, v) \
  (at[na].name = (n), at[na].value = (v), at[na].numeric = 1, na++) /* an integer: written as a number */
  ATTR("solver_reduction", VecFPNACompiledStrategy());
  ATTR("surrogate_reduction", SurrogateGetStrategyName());
  ATTR("scenario", sc);
  ATTR("grid", t->grid);
  ATTR("coupling", CouplingModeNames[c->mode]);
  ATTRN("replicas", t->reps);
  ATTRN("nsteps", t->steps_s);
  ATTRN("output_every", t->every);
  ATTRN("mpi_ranks", t->ranks);
  ATTRN("omp_threads", t->threads);
  ATTR("device", t->dev); /* the surrogate's */
  ATTR("cuda_kernels", kernels);
  ATTR("solver_device", t->sdev);
  ATTRN("atomic_order_seed", t->seed);
  ATTRN("gs_seed", t->gsseed);
  ATTR("parameters", t->params);
  ATTR("options", t->opts);
  ATTR("settings", t->settings);
  ATTR("miniapp_version", MINIAPP_VERSION);
  ATTR("source_revision", MINIAPP_REVISION);
  ATTR("petsc_version", t->petscver);
  ATTR("cuda_version", MINIAPP_CUDA_VERSION);
  ATTR("compiler", MINIAPP_C_COMPILER);
  ATTR("compiler_flags", MINIAPP_C_FLAGS);
  if (c->restart_step >= 0) {
    /* continued from the file of the run that wrote the checkpoint, or (a new file) the later steps only */
    PetscCall(PetscSNPrintf(t->restart_s, sizeof t->restart_s, "%" PetscInt_FMT, c->restart_step));
    ATTRN("restarted_from_step", t->restart_s);
    ATTR("restarted_from", c->restart);
  }
#undef ATTR
#undef ATTRN
  *nattrs = na;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutputCreate(Coupled c)
{
  static const char *const names1[] = {"u"}, *const names2[] = {"u", "v"};
  ncout_info  info;
  ncout_attr  at[32];
  RunAttrText text;
  int         na = 0, err = 0, last = -1;
  char        errmsg[PETSC_MAX_PATH_LEN + 256] = "";
  const char *sc;
  PetscReal   dt;
  PetscInt    steps;
  PetscBool   cont = PETSC_FALSE;
  uint64_t    hashes[MAX_REPLICAS];
  DM          da;

  PetscFunctionBegin;
  PetscCall(SolverGetScenario(c->rep[0].solver, &sc));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &steps, NULL, &dt));
  PetscCall(RunAttributes(c, sc, steps, &text, at, &na));
  PetscCall(SolverGetDM(c->rep[0].solver, &da));
  {
    PetscReal hx = 1, hy = 1;
    PetscBool heat = (PetscBool)!strcmp(sc, "heat");
    if (heat) hx = 1.0 / (c->M + 1), hy = 1.0 / (c->N + 1);
    info = (ncout_info){.nx           = (int)c->M,
                        .ny           = (int)c->N,
                        .ncomp        = (int)c->dof,
                        .nreplicas    = (int)c->nrep,
                        .nsteps       = (int)steps,
                        .output_every = (int)c->output_every,
                        .dx           = hx,
                        .dy           = hy,
                        .x0           = heat ? 1 : 0,
                        .y0           = heat ? 1 : 0,
                        .comp_names   = c->dof == 1 ? names1 : names2,
                        .attrs        = at,
                        .nattrs       = na,
                        .first_step   = c->restart_step >= 0 ? (int)c->restart_step + 1 : 0,
                        .first_epoch  = (int)c->epoch,
                        .closure      = c->mode == COUPLING_CLOSURE};
  }
  if (c->restart_step >= 0) { /* an existing -output: the run file of the run this one continues, extended */
    int exists = c->rank == 0 && access(c->output, F_OK) == 0;
    PetscCallMPI(MPI_Bcast(&exists, 1, MPI_INT, 0, c->comm));
    cont = (PetscBool)exists;
  }
  if (cont && c->restart_step >= steps) {
    /* nothing to run: the file the checkpoint's run wrote stays as it is (it gained an empty segment) */
    PetscCall(PetscPrintf(c->comm,
                          "# -output %s: kept as it was (the checkpoint is at step %" PetscInt_FMT
                          ", the last: no step to add)\n",
                          c->output, c->restart_step));
    c->output[0] = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cont) {
    info.first_step = 0, info.first_epoch = 0;
    for (PetscInt r = 0; r < c->nrep; r++) PetscCall(SolverStateHash(c->rep[r].solver, &hashes[r]));
  }
  if (c->rank == 0) {
    err = ncout_create(c->output, &info, &c->nc);
    if (!err && cont) err = ncout_continue(c->nc, c->output, (int)c->restart_step, (int)c->epoch, hashes, &last);
    if (err) PetscCall(PetscStrncpy(errmsg, ncout_errmsg(c->nc), sizeof errmsg)); /* names the file */
    if (err && c->nc) {
      char dummy[8];
      ncout_close(&c->nc, 0, dummy, sizeof dummy);
    }
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
  PetscCallMPI(MPI_Bcast(errmsg, sizeof errmsg, MPI_CHAR, 0, c->comm));
  PetscCheck(!err, c->comm, PETSC_ERR_FILE_OPEN, "-output: %s", errmsg);
  PetscCallMPI(MPI_Bcast(&last, 1, MPI_INT, 0, c->comm));
  if (last > c->restart_step) /* its run was killed between committing it and writing its checkpoint */
    PetscCall(PetscPrintf(c->comm,
                          "# -output %s: held steps up to %d, past the checkpoint's step %" PetscInt_FMT
                          ": this run makes steps %" PetscInt_FMT "..%d again\n",
                          c->output, last, c->restart_step, c->restart_step + 1, last));
  /* gather fields to rank 0 in natural order */
  PetscCall(DMDACreateNaturalVector(da, &c->natural));
  PetscCall(VecScatterCreateToZero(c->natural, &c->tozero, &c->seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WriteFields(Coupled c, PetscInt step)
{
  PetscFunctionBegin;
  for (PetscInt r = 0; r < c->nrep; r++) {
    DM                 da;
    Vec                u;
    const PetscScalar *a;
    int                err = 0;

    PetscCall(SolverGetDM(c->rep[0].solver, &da)); /* owns the natural-order scatter; all replicas share its layout */
    PetscCall(SolverGetState(c->rep[r].solver, &u));
    PetscCall(DMDAGlobalToNaturalBegin(da, u, INSERT_VALUES, c->natural));
    PetscCall(DMDAGlobalToNaturalEnd(da, u, INSERT_VALUES, c->natural));
    PetscCall(VecScatterBegin(c->tozero, c->natural, c->seq, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(c->tozero, c->natural, c->seq, INSERT_VALUES, SCATTER_FORWARD));
    if (c->rank == 0) {
      PetscCall(VecGetArrayRead(c->seq, &a));
      err = ncout_write_fields(c->nc, (int)step, (int)r, a);
      PetscCall(VecRestoreArrayRead(c->seq, &a));
    }
    PetscCall(Check(c, err));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutputStep(Coupled c, PetscInt step, const ncout_step_rec *rec)
{
  ncout_guess_rec g[NCOUT_NGUESS];
  PetscInt        nsteps;
  PetscReal       t;
  int             err = 0;
  double          t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_out, 0, 0, 0, 0));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, &t, NULL));
  for (int k = 0; k < NCOUT_NGUESS; k++) g[k] = (ncout_guess_rec){(int)c->tally[k].its_step, c->tally[k].r0_step};
  if (c->rank == 0) err = ncout_write_step(c->nc, (int)step, (double)t, rec, g);
  PetscCall(Check(c, err));
  if (ncout_snapshot_step((int)step, (int)nsteps, (int)c->output_every)) PetscCall(WriteFields(c, step));
  PetscCall(PetscLogEventEnd(c->ev_out, 0, 0, 0, 0));
  c->times.output += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutputEpoch(Coupled c, PetscInt step, const ncout_epoch_rec *rec)
{
  int err = 0;

  PetscFunctionBegin;
  /* ObserveEpoch runs before c->epoch counts it */
  if (c->rank == 0) err = ncout_write_epoch(c->nc, (int)c->epoch, (int)step, rec);
  PetscCall(Check(c, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The final record (as it stands) and the fault attributes, then: finish, the
 * file closed and renamed into place; or not, a copy of it committed. */
static PetscErrorCode Write(Coupled c, PetscBool finish)
{
  int        fds[MAX_REPLICAS], fde[MAX_REPLICAS], err = 0, nfat;
  char       msg[PETSC_MAX_PATH_LEN + 256] = "", ftext[FAULTS_NATTRS][64];
  ncout_attr fat[FAULTS_NATTRS];
  double     t0 = MPI_Wtime();

  PetscFunctionBegin;
  for (PetscInt r = 0; r < c->nrep; r++) fds[r] = (int)c->first_div_step[r], fde[r] = (int)c->first_div_epoch[r];
  PetscCall(FaultsAttributes(c, fat, ftext, &nfat));
  if (c->rank == 0) {
    err = ncout_write_final(c->nc, fds, fde);
    if (!err && nfat) err = ncout_write_attrs(c->nc, fat, nfat);
    if (err || !finish) {
      if (!err) err = ncout_commit(c->nc);
      if (err) PetscCall(PetscStrncpy(msg, ncout_errmsg(c->nc), sizeof msg));
    } else err = ncout_close(&c->nc, 1, msg, sizeof msg);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, c->comm));
  PetscCheck(!err, c->comm, PETSC_ERR_FILE_WRITE, "-output %s: %s", c->output, msg);
  if (!finish) c->times.output += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OutputFinish(Coupled c)
{
  PetscFunctionBegin;
  PetscCall(Write(c, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* At a -checkpoint_every checkpoint, before it is written: a run killed after
 * it leaves the file a restart from that checkpoint continues. */
PetscErrorCode OutputCommit(Coupled c)
{
  PetscFunctionBegin;
  PetscCall(Write(c, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A run that failed never leaves a complete-looking file. */
PetscErrorCode OutputDestroy(Coupled c)
{
  PetscFunctionBegin;
  if (c->nc) {
    char msg[8];
    ncout_close(&c->nc, 0, msg, sizeof msg);
  }
  PetscCall(VecScatterDestroy(&c->tozero));
  PetscCall(VecDestroy(&c->natural));
  PetscCall(VecDestroy(&c->seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}
