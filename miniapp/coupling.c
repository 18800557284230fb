/* miniapp/coupling.c: the coupled loop (see coupling.h), its replicas, the
 * per-step and per-epoch observation metrics, and the NetCDF output.
 *
 * One time step of one replica:
 *   features(u^n) -> [guess: predict du, guess = u^n + du]
 *                    [closure, after warm-up: predict the closure term, solver uses it]
 *   -> SolverStep -> [guess: every K steps train E epochs on (u^n, u^{n+1} - u^n)]
 *                    [closure, during warm-up: every K steps train on (u^n, exact term)]
 * Replicas advance in lockstep; each owns its solver, surrogate and atomic
 * order state, so replica r is the run a separate process would make. */
#include "coupling.h"
#include "buildinfo.h"
#include "metrics.h"
#include "ncout.h"
#include "reduce.h"
#include "vecred.h"

#include <math.h>
#include <omp.h>
#include <string.h>


typedef enum { COUPLING_NONE, COUPLING_GUESS, COUPLING_CLOSURE } CouplingMode;
static const char *const mode_names[] = {"none", "guess", "closure"};

#define MAX_REPLICAS 64

typedef struct {
  Solver           solver;
  Surrogate        net;
  red_atomic_state order;
  Vec              prev, guess;
  PetscScalar     *q, *qexact; /* closure: predicted and exact term per point */
  float           *feat, *out, *target, *w;
  PetscBool        trained;
  PetscInt         its;
  PetscReal        rnorm, closure_rmse;
} Replica;

struct _p_Coupled {
  MPI_Comm     comm;
  PetscMPIInt  rank, size;
  CouplingMode mode;
  PetscInt     nrep, train_every, train_epochs, warmup, output_every;
  PetscBool    baselines;
  PetscReal    churn_tol;
  char         output[PETSC_MAX_PATH_LEN];
  Replica      rep[MAX_REPLICAS];
  Solver       base_none, base_fischer; /* baselines for -coupling guess */
  red_atomic_state base_order[2];
  /* geometry of the local features */
  PetscInt     dof, n_in, n_out, npts, xs, ys, xm, ym, M, N;
  PetscInt     nweights;
  /* record */
  PetscInt     epoch, first_div_step[MAX_REPLICAS], first_div_epoch[MAX_REPLICAS];
  metrics_t    last_state[MAX_REPLICAS], last_weights[MAX_REPLICAS];
  double       last_churn[MAX_REPLICAS];
  float        last_loss[MAX_REPLICAS];
  PetscInt     its_none, its_fischer;
  ncout       *nc;
  VecScatter   tozero;
  Vec          natural, seq;
  CoupledTimes times;
  PetscLogEvent ev_solve, ev_feat, ev_pred, ev_train, ev_metrics, ev_out;
};

/* ---- options and set-up ------------------------------------------------- */

PetscErrorCode CoupledCreate(MPI_Comm comm, Coupled *c)
{
  PetscClassId cid;

  PetscFunctionBegin;
  PetscCall(PetscNew(c));
  (*c)->comm = comm;
  PetscCallMPI(MPI_Comm_rank(comm, &(*c)->rank));
  PetscCallMPI(MPI_Comm_size(comm, &(*c)->size));
  PetscCall(PetscClassIdRegister("Coupled loop", &cid));
  PetscCall(PetscLogEventRegister("CplSolve", cid, &(*c)->ev_solve));
  PetscCall(PetscLogEventRegister("CplFeatures", cid, &(*c)->ev_feat));
  PetscCall(PetscLogEventRegister("CplPredict", cid, &(*c)->ev_pred));
  PetscCall(PetscLogEventRegister("CplTrain", cid, &(*c)->ev_train));
  PetscCall(PetscLogEventRegister("CplMetrics", cid, &(*c)->ev_metrics));
  PetscCall(PetscLogEventRegister("CplOutput", cid, &(*c)->ev_out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledSetFromOptions(Coupled c)
{
  PetscInt  mode = COUPLING_NONE, steps, nrep = 1;
  PetscBool set, has;

  PetscFunctionBegin;
  c->train_every = 1, c->train_epochs = 4, c->warmup = 50, c->output_every = 10, c->churn_tol = 1e-4;
  PetscOptionsBegin(c->comm, NULL, "Coupled loop", NULL);
  PetscCall(PetscOptionsEList("-coupling", "How the surrogate feeds the solver", NULL, mode_names, 3, mode_names[mode], &mode, NULL));
  PetscCall(PetscOptionsInt("-train_every", "Train every K steps", NULL, c->train_every, &c->train_every, NULL));
  PetscCall(PetscOptionsInt("-train_epochs", "Epochs (full-batch Adam steps) per training", NULL, c->train_epochs, &c->train_epochs, NULL));
  PetscCall(PetscOptionsInt("-closure_warmup", "closure: steps with the exact reaction term while the surrogate learns it", NULL, c->warmup, &c->warmup, NULL));
  PetscCall(PetscOptionsInt("-replicas", "Run the coupled loop R times in lockstep and compare with replica 0", NULL, nrep, &nrep, NULL));
  PetscCall(PetscOptionsString("-output", "NetCDF output file", NULL, c->output, c->output, sizeof c->output, NULL));
  PetscCall(PetscOptionsInt("-output_every", "Write the fields every N steps (and the last)", NULL, c->output_every, &c->output_every, NULL));
  PetscCall(PetscOptionsReal("-churn_tol", "Relative tolerance above which a prediction counts as churned", NULL, c->churn_tol, &c->churn_tol, NULL));
  c->baselines = (PetscBool)(mode == COUPLING_GUESS);
  PetscCall(PetscOptionsBool("-coupling_baselines", "guess: also run -coupling none and -ksp_guess_type fischer side by side", NULL, c->baselines, &c->baselines, &set));
  PetscOptionsEnd();
  c->mode = (CouplingMode)mode;
  PetscCheck(c->train_every >= 1, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-train_every %" PetscInt_FMT ": must be >= 1", c->train_every);
  PetscCheck(c->train_epochs >= 1 && c->train_epochs <= 100000, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-train_epochs %" PetscInt_FMT ": must be in [1, 100000]", c->train_epochs);
  PetscCheck(c->warmup >= 1, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-closure_warmup %" PetscInt_FMT ": must be >= 1", c->warmup);
  PetscCheck(nrep >= 1 && nrep <= MAX_REPLICAS, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-replicas %" PetscInt_FMT ": must be in [1, %d]", nrep, MAX_REPLICAS);
  c->nrep = nrep;
  PetscCheck(c->output_every >= 1, c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-output_every %" PetscInt_FMT ": must be >= 1", c->output_every);
  PetscCheck(c->churn_tol > 0 && PetscIsNormalReal(c->churn_tol), c->comm, PETSC_ERR_ARG_OUTOFRANGE, "-churn_tol %g: must be a positive number", (double)c->churn_tol);
  PetscCheck(!(set && c->baselines && c->mode != COUPLING_GUESS), c->comm, PETSC_ERR_ARG_WRONG, "-coupling_baselines: only with -coupling guess");

  for (PetscInt r = 0; r < c->nrep; r++) {
    PetscCall(SolverCreate(c->comm, &c->rep[r].solver));
    PetscCall(SolverSetFromOptions(c->rep[r].solver));
  }
  PetscCall(SolverHasClosure(c->rep[0].solver, &has));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &steps, NULL, NULL));
  if (c->mode == COUPLING_CLOSURE) {
    const char *sc;
    PetscCall(SolverGetScenario(c->rep[0].solver, &sc));
    PetscCheck(has, c->comm, PETSC_ERR_ARG_WRONG, "-coupling closure: scenario %s has no closure term to learn (use -scenario grayscott)", sc);
  }
  if (c->baselines) {
    PetscCall(SolverCreate(c->comm, &c->base_none));
    PetscCall(SolverSetFromOptions(c->base_none));
    PetscCall(SolverCreate(c->comm, &c->base_fischer));
    PetscCall(SolverSetFromOptions(c->base_fischer));
  }
  if (c->mode != COUPLING_NONE) {
    SurrogateDevice dev = SURROGATE_DEVICE_AUTO;
    for (PetscInt r = 0; r < c->nrep; r++) {
      PetscCall(SurrogateCreate(c->comm, &c->rep[r].net));
      PetscCall(SurrogateSetFromOptions(c->rep[r].net));
      if (r > 0) PetscCall(SurrogateSetDevice(c->rep[r].net, dev)); /* one "no GPU" line, not R */
      else {
        int cuda = SurrogateCUDAAvailable();
        PetscCall(SurrogateGetDevice(c->rep[0].net, &dev));
        if (dev == SURROGATE_DEVICE_AUTO) dev = cuda == 1 ? SURROGATE_DEVICE_CUDA : SURROGATE_DEVICE_CPU;
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateOutput(Coupled c)
{
  static const char *const names1[] = {"u"}, *const names2[] = {"u", "v"};
  ncout_info  info;
  ncout_attr  at[24];
  int         na = 0, err = 0;
  char        grid[64], reps[32], ranks[16], threads[16], seed[32], dev[16], opts[4096] = "", every[16], steps_s[16], gsseed[32] = "n/a";
  char       *all = NULL, errmsg[PETSC_MAX_PATH_LEN + 256] = "";
  const char *sc;
  PetscReal   dt;
  PetscInt    steps, gs;
  PetscBool   gsset;
  char        petscver[64];
  DM          da;

  PetscFunctionBegin;
  PetscCall(SolverGetScenario(c->rep[0].solver, &sc));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &steps, NULL, &dt));
  PetscCall(PetscGetVersion(petscver, sizeof petscver));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  PetscCall(PetscStrncpy(opts, all ? all : "", sizeof opts));
  PetscCall(PetscFree(all));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-gs_seed", &gs, &gsset));
  if (!strcmp(sc, "grayscott")) PetscCall(PetscSNPrintf(gsseed, sizeof gsseed, "%" PetscInt_FMT, gsset ? gs : (PetscInt)1));
  PetscCall(PetscSNPrintf(grid, sizeof grid, "%" PetscInt_FMT " x %" PetscInt_FMT, c->M, c->N));
  PetscCall(PetscSNPrintf(reps, sizeof reps, "%" PetscInt_FMT, c->nrep));
  PetscCall(PetscSNPrintf(ranks, sizeof ranks, "%d", c->size));
  PetscCall(PetscSNPrintf(threads, sizeof threads, "%d", omp_get_max_threads()));
  PetscCall(PetscSNPrintf(seed, sizeof seed, "%llu", (unsigned long long)c->rep[0].order.seed));
  PetscCall(PetscSNPrintf(every, sizeof every, "%" PetscInt_FMT, c->output_every));
  PetscCall(PetscSNPrintf(steps_s, sizeof steps_s, "%" PetscInt_FMT, steps));
  PetscCall(PetscStrncpy(dev, "none", sizeof dev));
  if (c->rep[0].net) {
    SurrogateDevice d;
    PetscCall(SurrogateGetDevice(c->rep[0].net, &d));
    PetscCall(PetscStrncpy(dev, d == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", sizeof dev));
  }
#define ATTR(n, v) (at[na].name = (n), at[na].value = (v), na++)
  ATTR("solver_reduction", VecFPNACompiledStrategy());
  ATTR("surrogate_reduction", SurrogateGetStrategyName());
  ATTR("scenario", sc);
  ATTR("grid", grid);
  ATTR("coupling", mode_names[c->mode]);
  ATTR("replicas", reps);
  ATTR("nsteps", steps_s);
  ATTR("output_every", every);
  ATTR("mpi_ranks", ranks);
  ATTR("omp_threads", threads);
  ATTR("device", dev);
  ATTR("atomic_order_seed", seed);
  ATTR("gs_seed", gsseed);
  ATTR("options", opts);
  ATTR("miniapp_version", MINIAPP_VERSION);
  ATTR("source_revision", MINIAPP_REVISION);
  ATTR("petsc_version", petscver);
  ATTR("cuda_version", MINIAPP_CUDA_VERSION);
  ATTR("compiler", MINIAPP_C_COMPILER);
  ATTR("compiler_flags", MINIAPP_C_FLAGS);
#undef ATTR
  PetscCall(SolverGetDM(c->rep[0].solver, &da));
  {
    PetscReal hx = 1, hy = 1;
    PetscBool heat = (PetscBool)!strcmp(sc, "heat");
    if (heat) hx = 1.0 / (c->M + 1), hy = 1.0 / (c->N + 1);
    info = (ncout_info){.nx = (int)c->M, .ny = (int)c->N, .ncomp = (int)c->dof, .nreplicas = (int)c->nrep, .nsteps = (int)steps, .output_every = (int)c->output_every,
                        .dx = hx, .dy = hy, .x0 = heat ? 1 : 0, .y0 = heat ? 1 : 0, .comp_names = c->dof == 1 ? names1 : names2, .attrs = at, .nattrs = na};
  }
  if (c->rank == 0) {
    err = ncout_create(c->output, &info, &c->nc);
    if (err) PetscCall(PetscStrncpy(errmsg, ncout_errmsg(c->nc), sizeof errmsg)); /* names the file */
    if (err && c->nc) {
      char dummy[8];
      ncout_close(&c->nc, 0, dummy, sizeof dummy);
    }
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
  PetscCallMPI(MPI_Bcast(errmsg, sizeof errmsg, MPI_CHAR, 0, c->comm));
  PetscCheck(!err, c->comm, PETSC_ERR_FILE_OPEN, "-output: %s", errmsg);
  /* gather fields to rank 0 in natural order */
  PetscCall(DMDACreateNaturalVector(da, &c->natural));
  PetscCall(VecScatterCreateToZero(c->natural, &c->tozero, &c->seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledSetUp(Coupled c)
{
  red_atomic_state base;
  DM               da;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < c->nrep; r++) PetscCall(SolverSetUp(c->rep[r].solver));
  PetscCall(SolverGetDM(c->rep[0].solver, &da));
  PetscCall(DMDAGetInfo(da, NULL, &c->M, &c->N, NULL, NULL, NULL, NULL, &c->dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &c->xs, &c->ys, NULL, &c->xm, &c->ym, NULL));
  c->npts  = c->xm * c->ym;
  c->n_in  = c->mode == COUPLING_CLOSURE ? c->dof : 5 * c->dof; /* closure: pointwise; guess: 5-point stencil */
  c->n_out = c->mode == COUPLING_CLOSURE ? 1 : c->dof; /* closure: one term per point */
  if (c->baselines) {
    KSP      ksp;
    KSPGuess g;
    PetscCall(SolverSetUp(c->base_none));
    PetscCall(SolverSetUp(c->base_fischer));
    PetscCall(SolverGetKSP(c->base_fischer, &ksp));
    PetscCall(KSPGetGuess(ksp, &g));
    PetscCall(KSPGuessSetType(g, KSPGUESSFISCHER));
    PetscCall(KSPGuessFischerSetModel(g, 1, 10));
  }
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p = &c->rep[r];
    Vec      u;
    PetscCall(SolverGetState(p->solver, &u));
    PetscCall(VecDuplicate(u, &p->prev));
    if (c->mode == COUPLING_GUESS) PetscCall(VecDuplicate(u, &p->guess));
    if (c->mode == COUPLING_CLOSURE) PetscCall(PetscMalloc2(c->npts, &p->q, c->npts, &p->qexact));
    p->closure_rmse = NAN;
    if (p->net) {
      PetscCall(SurrogateSetSizes(p->net, c->n_in, c->n_out));
      if (c->mode == COUPLING_CLOSURE) {
        /* Fixed scales from the physics, not from the first batch: species
         * and the closure factor live in [0, 1], while the first batch
         * (nearly u = 1, v = 0 everywhere) would make later, patterned
         * states far extrapolations. */
        const float mi[2] = {0.5f, 0.5f}, si[2] = {0.5f, 0.5f}, mo[1] = {0.5f}, so[1] = {0.5f};
        PetscCall(SurrogateSetNormalization(p->net, mi, si, mo, so));
      }
      PetscCall(SurrogateSetUp(p->net));
      PetscCall(SurrogateGetNumWeights(p->net, &c->nweights));
      PetscCall(PetscMalloc4((size_t)c->npts * c->n_in, &p->feat, (size_t)c->npts * c->n_out, &p->out, (size_t)c->npts * c->n_out, &p->target, c->nweights, &p->w));
    }
  }
  /* each replica (and baseline) owns its seeded atomic order: replica r
   * replays seed + r, as a separate run with -atomic_order_seed seed + r would */
  red_get_atomic_order_state(&base);
  for (PetscInt r = 0; r < c->nrep; r++) c->rep[r].order = (red_atomic_state){base.seed ? base.seed + (uint64_t)r : 0, 0};
  c->base_order[0] = c->base_order[1] = (red_atomic_state){base.seed, 0};
  for (PetscInt r = 0; r < c->nrep; r++) c->first_div_step[r] = c->first_div_epoch[r] = -1;
  c->its_none = c->its_fischer = -1;
  if (c->output[0]) PetscCall(CreateOutput(c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- features and the surrogate's two uses ------------------------------- */

/* Rows of p->feat: guess: the 5-point neighbourhood (centre, west, east, south,
 * north) of every component; closure: the point's components. Outer ghosts
 * of a non-periodic grid read 0. */
static PetscErrorCode Features(Coupled c, Replica *p, Vec u)
{
  DM                   da;
  Vec                  loc;
  const PetscScalar ***a;
  static const int     di[5] = {0, -1, 1, 0, 0}, dj[5] = {0, 0, 0, -1, 1};
  PetscInt             nst = c->mode == COUPLING_CLOSURE ? 1 : 5;

  double               t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_feat, 0, 0, 0, 0));
  PetscCall(SolverGetDM(p->solver, &da));
  PetscCall(DMGetLocalVector(da, &loc));
  PetscCall(VecSet(loc, 0.0));
  PetscCall(DMGlobalToLocalBegin(da, u, INSERT_VALUES, loc));
  PetscCall(DMGlobalToLocalEnd(da, u, INSERT_VALUES, loc));
  PetscCall(DMDAVecGetArrayDOFRead(da, loc, &a));
  for (PetscInt j = c->ys; j < c->ys + c->ym; j++)
    for (PetscInt i = c->xs; i < c->xs + c->xm; i++) {
      float *f = p->feat + ((j - c->ys) * c->xm + (i - c->xs)) * c->n_in;
      for (PetscInt k = 0; k < nst; k++)
        for (PetscInt d = 0; d < c->dof; d++) f[k * c->dof + d] = (float)a[j + dj[k]][i + di[k]][d];
    }
  PetscCall(DMDAVecRestoreArrayDOFRead(da, loc, &a));
  PetscCall(DMRestoreLocalVector(da, &loc));
  PetscCall(PetscLogEventEnd(c->ev_feat, 0, 0, 0, 0));
  c->times.features += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Predict(Coupled c, Replica *p)
{
  double t0 = MPI_Wtime();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_pred, 0, 0, 0, 0));
  PetscCall(SurrogatePredict(p->net, c->npts, p->feat, p->out));
  c->times.predict_points += (double)c->npts * c->size;
  PetscCall(PetscLogEventEnd(c->ev_pred, 0, 0, 0, 0));
  c->times.predict += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* guess = base + out, in the Vec's local order. */
static PetscErrorCode OutToGuess(Coupled c, const float *out, Vec base, Vec guess)
{
  PetscScalar       *g;
  const PetscScalar *b;
  PetscInt           n = c->npts * c->dof;

  PetscFunctionBegin;
  PetscCall(VecGetArray(guess, &g));
  PetscCall(VecGetArrayRead(base, &b));
  for (PetscInt i = 0; i < n; i++) g[i] = b[i] + (double)out[i];
  PetscCall(VecRestoreArrayRead(base, &b));
  PetscCall(VecRestoreArray(guess, &g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* target = a - b: the step's increment, as floats. */
static PetscErrorCode IncrementToTarget(Coupled c, Vec a, Vec b, float *target)
{
  const PetscScalar *x, *y;
  PetscInt           n = c->npts * c->dof;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n; i++) target[i] = (float)(x[i] - y[i]);
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Closure: q from the prediction, and the RMS of (q - q_exact) over the grid. */
static PetscErrorCode ClosureFromPrediction(Coupled c, Replica *p)
{
  double s = 0, n = (double)c->npts;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < c->npts; i++) {
    p->q[i] = (double)p->out[i];
    s += (p->q[i] - p->qexact[i]) * (p->q[i] - p->qexact[i]);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, c->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_DOUBLE, MPI_SUM, c->comm));
  p->closure_rmse = sqrt(s / n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- metrics -------------------------------------------------------------- */

static PetscErrorCode AllreduceMetrics(MPI_Comm comm, metrics_acc *acc)
{
  double s[METRICS_NSUM] = {acc->n, acc->ndiff, acc->sum_rel, acc->sum_d2, acc->sum_a2}, m[2] = {acc->max_abs, acc->max_ulp};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, METRICS_NSUM, MPI_DOUBLE, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, comm));
  *acc = (metrics_acc){s[0], s[1], s[2], s[3], s[4], m[0], m[1]};
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareStates(Coupled c, Vec a, Vec b, metrics_t *m)
{
  const PetscScalar *x, *y;
  PetscInt           n;
  metrics_acc        acc;

  PetscFunctionBegin;
  metrics_reset(&acc);
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  metrics_add(&acc, (size_t)n, x, y);
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscCall(AllreduceMetrics(c->comm, &acc));
  metrics_finish(&acc, m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the loop ------------------------------------------------------------- */

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
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
    PetscCheck(!err, c->comm, PETSC_ERR_FILE_WRITE, "-output %s: %s", c->output, c->rank == 0 ? ncout_errmsg(c->nc) : "write failed");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Per-step record: metrics of every replica against replica 0, churn of the
 * predictions made this step (when any), iterations, residuals, hashes. */
static PetscErrorCode RecordStep(Coupled c, PetscInt step, PetscBool predicted)
{
  ncout_step_rec rec[MAX_REPLICAS];
  Vec            u0;
  PetscReal      t;
  PetscInt       nsteps;

  PetscFunctionBegin;
  if (c->nrep == 1 && !c->output[0]) PetscFunctionReturn(PETSC_SUCCESS); /* nothing observes it */
  PetscCall(PetscLogEventBegin(c->ev_metrics, 0, 0, 0, 0));
  PetscCall(SolverGetState(c->rep[0].solver, &u0));
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, &t, NULL));
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica  *p = &c->rep[r];
    Vec       u;
    metrics_t m;
    double    churn = 0;

    PetscCall(SolverGetState(p->solver, &u));
    if (r > 0) PetscCall(CompareStates(c, u0, u, &m));
    else m = (metrics_t){.digits = METRICS_DIGITS_MAX}; /* replica 0 against itself */
    if (predicted && r > 0) {
      double cnt = (double)metrics_churn_count((size_t)c->npts, (int)c->n_out, c->rep[0].out, p->out, c->churn_tol), tot = (double)c->npts;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &cnt, 1, MPI_DOUBLE, MPI_SUM, c->comm));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_DOUBLE, MPI_SUM, c->comm));
      churn = cnt / tot;
    }
    if (m.vc > 0 && c->first_div_step[r] < 0) c->first_div_step[r] = step;
    c->last_state[r] = m, c->last_churn[r] = churn;
    rec[r] = (ncout_step_rec){.ksp_its = (int)p->its, .ksp_rnorm = p->rnorm, .closure_rmse = p->closure_rmse, .churn = churn, .vc = m.vc, .vermv = m.vermv, .rel_l2 = m.rel_l2,
                              .max_abs = m.max_abs, .max_ulp = m.max_ulp, .digits = m.digits};
    PetscCall(SolverStateHash(p->solver, &rec[r].state_hash));
  }
  PetscCall(PetscLogEventEnd(c->ev_metrics, 0, 0, 0, 0));
  if (c->output[0]) {
    int err = 0;
    double t0 = MPI_Wtime();
    PetscCall(PetscLogEventBegin(c->ev_out, 0, 0, 0, 0));
    if (c->rank == 0) err = ncout_write_step(c->nc, (int)step, (double)t, rec, (int)c->its_none, (int)c->its_fischer);
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
    PetscCheck(!err, c->comm, PETSC_ERR_FILE_WRITE, "-output %s: %s", c->output, c->rank == 0 ? ncout_errmsg(c->nc) : "write failed");
    if (step % c->output_every == 0 || step == nsteps) PetscCall(WriteFields(c, step));
    PetscCall(PetscLogEventEnd(c->ev_out, 0, 0, 0, 0));
    c->times.output += MPI_Wtime() - t0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* E epochs on every replica's (feat, target); after each epoch compare the
 * weights with replica 0's and record the losses. */
static PetscErrorCode Train(Coupled c, PetscInt step)
{
  PetscFunctionBegin;
  for (PetscInt e = 0; e < c->train_epochs; e++) {
    ncout_epoch_rec rec[MAX_REPLICAS];

    PetscCall(PetscLogEventBegin(c->ev_train, 0, 0, 0, 0));
    for (PetscInt r = 0; r < c->nrep; r++) {
      Replica *p = &c->rep[r];
      red_set_atomic_order_state(&p->order);
      PetscCall(SurrogateTrain(p->net, c->npts, p->feat, p->target, &c->last_loss[r]));
      red_get_atomic_order_state(&p->order);
      p->trained = PETSC_TRUE;
      c->times.train_samples += (double)c->npts * c->size;
    }
    PetscCall(PetscLogEventEnd(c->ev_train, 0, 0, 0, 0));
    PetscCall(PetscLogEventBegin(c->ev_metrics, 0, 0, 0, 0));
    PetscCall(SurrogateGetWeights(c->rep[0].net, c->rep[0].w, c->nweights));
    for (PetscInt r = 0; r < c->nrep; r++) {
      metrics_acc acc;
      metrics_t   m;
      if (r > 0) PetscCall(SurrogateGetWeights(c->rep[r].net, c->rep[r].w, c->nweights));
      metrics_reset(&acc);
      metrics_addf(&acc, (size_t)c->nweights, c->rep[0].w, c->rep[r].w); /* weights are replicated on all ranks */
      metrics_finish(&acc, &m);
      if (m.vc > 0 && c->first_div_epoch[r] < 0) c->first_div_epoch[r] = c->epoch;
      c->last_weights[r] = m;
      rec[r]             = (ncout_epoch_rec){.loss = c->last_loss[r], .weights_vc = m.vc, .weights_rel_l2 = m.rel_l2};
      PetscCall(SurrogateGetWeightsHash(c->rep[r].net, &rec[r].weights_hash));
    }
    PetscCall(PetscLogEventEnd(c->ev_metrics, 0, 0, 0, 0));
    if (c->output[0]) {
      int err = 0;
      if (c->rank == 0) err = ncout_write_epoch(c->nc, (int)step, rec);
      PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
      PetscCheck(!err, c->comm, PETSC_ERR_FILE_WRITE, "-output %s: %s", c->output, c->rank == 0 ? ncout_errmsg(c->nc) : "write failed");
    }
    c->epoch++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Baselines for -coupling guess: the same solver with its current state as
 * the guess (-coupling none) and with PETSc's Fischer projection guess. */
static PetscErrorCode StepBaselines(Coupled c)
{
  double t0 = MPI_Wtime();

  PetscFunctionBegin;
  if (!c->baselines) PetscFunctionReturn(PETSC_SUCCESS);
  red_set_atomic_order_state(&c->base_order[0]);
  PetscCall(SolverStep(c->base_none, NULL, &c->its_none));
  red_get_atomic_order_state(&c->base_order[0]);
  red_set_atomic_order_state(&c->base_order[1]);
  PetscCall(SolverStep(c->base_fischer, NULL, &c->its_fischer));
  red_get_atomic_order_state(&c->base_order[1]);
  c->times.baselines += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One time step of replica p: the surrogate's part before the solve, the
 * solve, the training data after it. Returns whether it predicted. */
static PetscErrorCode StepReplica(Coupled c, Replica *p, PetscInt step, PetscBool *train, PetscBool *predicted)
{
  Vec    u, guess = NULL;
  double t0;

  PetscFunctionBegin;
  *predicted = PETSC_FALSE, *train = PETSC_FALSE;
  PetscCall(SolverGetState(p->solver, &u));
  if (c->mode == COUPLING_GUESS) {
    PetscCall(Features(c, p, u));
    PetscCall(VecCopy(u, p->prev));
    if (p->trained) {
      PetscCall(Predict(c, p));
      PetscCall(OutToGuess(c, p->out, u, p->guess));
      guess = p->guess, *predicted = PETSC_TRUE;
    }
  } else if (c->mode == COUPLING_CLOSURE) {
    PetscBool warm = (PetscBool)(step < c->warmup);
    PetscCall(Features(c, p, u));
    PetscCall(SolverComputeClosure(p->solver, u, p->qexact));
    if (p->trained) {
      PetscCall(Predict(c, p));
      PetscCall(ClosureFromPrediction(c, p));
      *predicted = PETSC_TRUE;
      if (!warm) PetscCall(SolverSetClosure(p->solver, p->q)); /* from now on, the surrogate's q */
    }
    if (warm && step % c->train_every == 0) {
      for (PetscInt i = 0; i < c->npts; i++) p->target[i] = (float)p->qexact[i];
      *train = PETSC_TRUE;
    }
  }
  t0 = MPI_Wtime();
  PetscCall(PetscLogEventBegin(c->ev_solve, 0, 0, 0, 0));
  PetscCall(SolverStep(p->solver, guess, &p->its));
  PetscCall(PetscLogEventEnd(c->ev_solve, 0, 0, 0, 0));
  c->times.solve += MPI_Wtime() - t0;
  PetscCall(SolverGetLastResidual(p->solver, &p->rnorm));
  if (c->mode == COUPLING_GUESS && (step + 1) % c->train_every == 0) {
    PetscCall(IncrementToTarget(c, u, p->prev, p->target));
    *train = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledRun(Coupled c)
{
  PetscInt nsteps;
  double   t0 = MPI_Wtime(), tm;

  PetscFunctionBegin;
  PetscCall(SolverGetStep(c->rep[0].solver, NULL, &nsteps, NULL, NULL));
  for (PetscInt r = 0; r < c->nrep; r++) c->rep[r].rnorm = NAN;
  PetscCall(RecordStep(c, 0, PETSC_FALSE));
  for (PetscInt step = 0; step < nsteps; step++) {
    PetscBool train = PETSC_FALSE, predicted = PETSC_FALSE;
    for (PetscInt r = 0; r < c->nrep; r++) {
      red_set_atomic_order_state(&c->rep[r].order);
      PetscCall(StepReplica(c, &c->rep[r], step, &train, &predicted));
      red_get_atomic_order_state(&c->rep[r].order);
    }
    PetscCall(StepBaselines(c));
    tm = MPI_Wtime() + c->times.output; /* RecordStep also writes: keep that apart */
    PetscCall(RecordStep(c, step + 1, predicted));
    c->times.metrics += MPI_Wtime() - tm - c->times.output;
    if (train) {
      tm = MPI_Wtime();
      PetscCall(Train(c, step + 1));
      c->times.train += MPI_Wtime() - tm;
    }
  }
  if (c->output[0]) {
    int  fds[MAX_REPLICAS], fde[MAX_REPLICAS], err = 0;
    char msg[PETSC_MAX_PATH_LEN + 256] = "";
    for (PetscInt r = 0; r < c->nrep; r++) fds[r] = (int)c->first_div_step[r], fde[r] = (int)c->first_div_epoch[r];
    if (c->rank == 0) {
      err = ncout_write_final(c->nc, fds, fde);
      if (err) PetscCall(PetscStrncpy(msg, ncout_errmsg(c->nc), sizeof msg));
      if (!err) err = ncout_close(&c->nc, 1, msg, sizeof msg);
    }
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, c->comm));
    PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, c->comm));
    PetscCheck(!err, c->comm, PETSC_ERR_FILE_WRITE, "-output %s: %s", c->output, msg);
  }
  red_set_atomic_order_state(&c->rep[0].order); /* what follows (summary, hashes) belongs to replica 0 */
  c->times.total = MPI_Wtime() - t0;
  c->times.steps = nsteps, c->times.epochs = c->epoch;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- results -------------------------------------------------------------- */

PetscErrorCode CoupledGetSolver(Coupled c, PetscInt r, Solver *s)
{
  *s = c->rep[r].solver;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledGetSurrogate(Coupled c, PetscInt r, Surrogate *net)
{
  *net = c->rep[r].net;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledGetTimes(Coupled c, CoupledTimes *t)
{
  double v[8] = {c->times.solve, c->times.features, c->times.predict, c->times.train, c->times.metrics, c->times.output, c->times.baselines, c->times.total};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 8, MPI_DOUBLE, MPI_MAX, c->comm));
  *t       = c->times;
  t->solve = v[0], t->features = v[1], t->predict = v[2], t->train = v[3], t->metrics = v[4], t->output = v[5], t->baselines = v[6], t->total = v[7];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetIterations(Coupled c, PetscInt *total, PetscInt *none, PetscInt *fischer)
{
  PetscFunctionBegin;
  *total = 0, *none = *fischer = -1;
  for (PetscInt r = 0; r < c->nrep; r++) {
    PetscInt n;
    PetscCall(SolverGetIterations(c->rep[r].solver, &n, NULL));
    *total += n;
  }
  if (c->baselines) {
    PetscCall(SolverGetIterations(c->base_none, none, NULL));
    PetscCall(SolverGetIterations(c->base_fischer, fischer, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledGetInfo(Coupled c, const char **coupling, PetscInt *replicas, PetscInt *points)
{
  *coupling = mode_names[c->mode], *replicas = c->nrep, *points = c->M * c->N;
  return PETSC_SUCCESS;
}

PetscErrorCode CoupledVerify(Coupled c, PetscBool *ok, char *why, size_t len)
{
  PetscBool ordered = (PetscBool)(strcmp(VecFPNACompiledStrategy(), "atomic") && strcmp(SurrogateGetStrategyName(), "atomic"));
  PetscInt  bad     = -1;

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  why[0] = 0;
  if (c->nrep < 2) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt r = 1; r < c->nrep && bad < 0; r++)
    if (c->first_div_step[r] >= 0 || c->first_div_epoch[r] >= 0) bad = r;
  if (ordered && bad > 0) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why, len, "replica %" PetscInt_FMT " left replica 0's bits (step %" PetscInt_FMT ", epoch %" PetscInt_FMT ") in a build without atomics", bad, c->first_div_step[bad], c->first_div_epoch[bad]));
  } else if (ordered) PetscCall(PetscSNPrintf(why, len, "all %" PetscInt_FMT " replicas bitwise equal at every step and epoch", c->nrep));
  else PetscCall(PetscSNPrintf(why, len, "atomic build: %s", bad > 0 ? "replicas diverged (expected)" : "replicas stayed equal"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PrintList(MPI_Comm comm, FILE *f, const char *key, PetscInt n, const double *v, const char *fmt)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(comm, f, "%s: [", key));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscFPrintf(comm, f, i ? ", " : ""));
    if (isfinite(v[i])) PetscCall(PetscFPrintf(comm, f, fmt, v[i]));
    else PetscCall(PetscFPrintf(comm, f, isnan(v[i]) ? ".nan" : ".inf"));
  }
  PetscCall(PetscFPrintf(comm, f, "]\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledWriteSummary(Coupled c, FILE *f)
{
  double v[6][MAX_REPLICAS];

  PetscFunctionBegin;
  PetscCall(PetscFPrintf(c->comm, f, "coupling: %s\nreplicas: %" PetscInt_FMT "\n", mode_names[c->mode], c->nrep));
  if (c->rep[0].net) {
    uint64_t        h;
    SurrogateDevice d;
    PetscCall(SurrogateGetWeightsHash(c->rep[0].net, &h));
    PetscCall(SurrogateGetDevice(c->rep[0].net, &d));
    PetscCall(PetscFPrintf(c->comm, f, "surrogate_device: %s\nsurrogate_weights: %" PetscInt_FMT "\ntrain_epochs_total: %" PetscInt_FMT "\nfinal_loss: %.9e\nweights_hash: \"0x%016llx\"\n", d == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu",
                           c->nweights, c->epoch, (double)c->last_loss[0], (unsigned long long)h));
  }
  if (c->mode == COUPLING_CLOSURE) PetscCall(PetscFPrintf(c->comm, f, "closure_warmup: %" PetscInt_FMT "\nclosure_rmse: %.6e\n", c->warmup, (double)c->rep[0].closure_rmse));
  if (c->baselines) {
    PetscInt tn, tf;
    PetscCall(SolverGetIterations(c->base_none, &tn, NULL));
    PetscCall(SolverGetIterations(c->base_fischer, &tf, NULL));
    PetscCall(PetscFPrintf(c->comm, f, "ksp_iterations_total_coupling_none: %" PetscInt_FMT "\nksp_iterations_total_fischer: %" PetscInt_FMT "\n", tn, tf));
  }
  if (c->nrep > 1) {
    for (PetscInt r = 0; r < c->nrep; r++) {
      v[0][r] = c->last_state[r].vc, v[1][r] = c->last_state[r].rel_l2, v[2][r] = c->last_state[r].digits;
      v[3][r] = (double)c->first_div_step[r], v[4][r] = (double)c->first_div_epoch[r], v[5][r] = c->last_weights[r].vc;
    }
    PetscCall(PrintList(c->comm, f, "replica_final_vc", c->nrep, v[0], "%.6e"));
    PetscCall(PrintList(c->comm, f, "replica_final_rel_l2", c->nrep, v[1], "%.6e"));
    PetscCall(PrintList(c->comm, f, "replica_final_digits", c->nrep, v[2], "%.3f"));
    PetscCall(PrintList(c->comm, f, "replica_first_divergent_step", c->nrep, v[3], "%.0f"));
    if (c->rep[0].net) {
      PetscCall(PrintList(c->comm, f, "replica_first_divergent_epoch", c->nrep, v[4], "%.0f"));
      PetscCall(PrintList(c->comm, f, "replica_final_weights_vc", c->nrep, v[5], "%.6e"));
      for (PetscInt r = 0; r < c->nrep; r++) v[0][r] = c->last_weights[r].rel_l2, v[1][r] = c->last_churn[r];
      PetscCall(PrintList(c->comm, f, "replica_final_weights_rel_l2", c->nrep, v[0], "%.6e"));
      PetscCall(PrintList(c->comm, f, "replica_final_churn", c->nrep, v[1], "%.6e"));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledDestroy(Coupled *cp)
{
  Coupled c = *cp;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->nc) { /* a run that failed: never leave a complete-looking file */
    char msg[8];
    ncout_close(&c->nc, 0, msg, sizeof msg);
  }
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica *p = &c->rep[r];
    PetscCall(SolverDestroy(&p->solver));
    PetscCall(SurrogateDestroy(&p->net));
    PetscCall(VecDestroy(&p->prev));
    PetscCall(VecDestroy(&p->guess));
    PetscCall(PetscFree2(p->q, p->qexact));
    PetscCall(PetscFree4(p->feat, p->out, p->target, p->w));
  }
  PetscCall(SolverDestroy(&c->base_none));
  PetscCall(SolverDestroy(&c->base_fischer));
  PetscCall(VecScatterDestroy(&c->tozero));
  PetscCall(VecDestroy(&c->natural));
  PetscCall(VecDestroy(&c->seq));
  PetscCall(PetscFree(*cp));
  PetscFunctionReturn(PETSC_SUCCESS);
}
