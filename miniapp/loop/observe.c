/* miniapp/loop/observe.c: what the coupled run records. After every step each
 * replica's state is compared with replica 0's (metrics.h), with the churn
 * of the predictions made this step, the Krylov counts, start residuals,
 * guess and closure errors and the state hash; after every epoch the
 * weights likewise. The first step/epoch at which a replica's bits leave
 * replica 0's is kept for the verdict. Records go to the NetCDF file when
 * there is one (coupling_output.c). */
#include "coupling_impl.h"
#include "couple.h"
#include "vecred.h"
#include "yamlfmt.h"

#include <math.h>

static PetscErrorCode AllreduceMetrics(MPI_Comm comm, metrics_acc *acc)
{
  double s[METRICS_NSUM] = {acc->n, acc->ndiff, acc->sum_rel, acc->sum_d2, acc->sum_a2},
         m[2]            = {acc->max_abs, acc->max_ulp};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, METRICS_NSUM, MPI_DOUBLE, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, comm));
  *acc = (metrics_acc){s[0], s[1], s[2], s[3], s[4], m[0], m[1]};
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StateDiff(Vec a, Vec b, metrics_acc *acc)
{
  const PetscScalar *x, *y;
  PetscInt           n;
  PetscBool          done;

  PetscFunctionBegin;
  metrics_reset(acc);
  PetscCall(BatchDiff(a, b, acc, &done));
  if (!done) {
    PetscCall(VecGetLocalSize(a, &n));
    PetscCall(VecGetArrayRead(a, &x));
    PetscCall(VecGetArrayRead(b, &y));
    metrics_add(acc, (size_t)n, x, y);
    PetscCall(VecRestoreArrayRead(b, &y));
    PetscCall(VecRestoreArrayRead(a, &x));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareStates(Coupled c, Vec a, Vec b, metrics_t *m)
{
  metrics_acc acc;

  PetscFunctionBegin;
  PetscCall(StateDiff(a, b, &acc));
  PetscCall(AllreduceMetrics(c->comm, &acc));
  metrics_finish(&acc, m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A loss, weight or prediction that is not finite is recorded (the first
 * one); the loop stops after the step and the run is INVALID: nothing
 * computed from it can be VALID. */
PetscErrorCode CheckFinite(Coupled c, PetscInt r, const char *what, PetscInt step, PetscInt n, const float *x)
{
  PetscFunctionBegin;
  PetscCall(CheckFiniteFlag(c, r, what, step, couple_nonfinite_cpu((size_t)n, x)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckFiniteFlag(Coupled c, PetscInt r, const char *what, PetscInt step, int bad)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, c->comm));
  if (bad && c->netfail.step < 0) {
    c->netfail.step = step, c->netfail.epoch = c->epoch, c->netfail.replica = r;
    PetscCall(PetscStrncpy(c->netfail.what, what, sizeof c->netfail.what));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first non-finite value of a network, in one line ("" when none). */
PetscErrorCode NetFailure(Coupled c, char *why, size_t len)
{
  PetscFunctionBegin;
  why[0] = 0;
  if (c->netfail.step < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSNPrintf(why, len,
                          "step %lld, epoch %lld: replica %lld's network has a non-finite value in its %s (from a "
                          "non-finite or huge input, or a diverging training: lower -surrogate_lr)",
                          (long long)c->netfail.step, (long long)c->netfail.epoch, (long long)c->netfail.replica,
                          c->netfail.what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Prediction churn (Zhuang et al. 2022): how differently the replicas'
 * networks answer the same questions. Every replica's network predicts on
 * one evaluation set that all of them see identically: replica 0's features
 * of this step. The scale is the network's own error: e_k, the RMS over all
 * points of replica 0's prediction minus its target for output k (its
 * validation error on this step, whose target it has not trained on yet).
 * churn[j][r]: the fraction of points where some output of replica r's
 * network differs from replica 0's by more than CHURN_LEVELS[j] x e_k. Two
 * bitwise equal networks churn exactly 0 at every level; no tolerance is
 * chosen by the user. Invisible to the run: no atomic-order draw. */
static const double CHURN_LEVELS[CHURN_NLEVELS] = {0.1, 0.5, 1.0};

static PetscErrorCode Churn(Coupled c, double churn[CHURN_NLEVELS][MAX_REPLICAS])
{
  double           sq[2 * 8] = {0}, scale[8], cnt[CHURN_NLEVELS * MAX_REPLICAS + 1] = {0};
  Replica         *p0        = &c->rep[0];
  PetscInt         n = c->npts, no = c->n_out;

  PetscFunctionBegin;
  PetscCheck(no <= 8, c->comm, PETSC_ERR_SUP, "churn: at most 8 outputs");
  PetscCall(BatchToHost(c, p0, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE)); /* the evaluation set, read here */
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = 0; k < no; k++) {
      double e = (double)p0->out[i * no + k] - p0->target[i * no + k];
      sq[k] += e * e;
    }
  sq[no] = (double)n;
  /* a threshold, not a result: any order will do */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sq, (PetscMPIInt)no + 1, MPI_DOUBLE, MPI_SUM, c->comm));
  for (PetscInt k = 0; k < no; k++) scale[k] = sqrt(sq[k] / sq[no]);
  c->churn_scale = 0;
  for (PetscInt k = 0; k < no; k++) c->churn_scale = PetscMax(c->churn_scale, scale[k]);
  for (PetscInt r = 1; r < c->nrep; r++) {
    /* replica r's network on replica 0's inputs */
    PetscCall(SurrogatePredict(c->rep[r].net, n, p0->feat, c->churn_out));
    for (int j = 0; j < CHURN_NLEVELS; j++)
      cnt[j * MAX_REPLICAS + r] = (double)metrics_churn_count((size_t)n, (int)no, p0->out, c->churn_out, scale,
                                                              CHURN_LEVELS[j]);
  }
  cnt[CHURN_NLEVELS * MAX_REPLICAS] = (double)n;
  /* integers: exact */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, cnt, CHURN_NLEVELS * MAX_REPLICAS + 1, MPI_DOUBLE, MPI_SUM, c->comm));
  for (int j = 0; j < CHURN_NLEVELS; j++)
    for (PetscInt r = 0; r < c->nrep; r++) churn[j][r] = cnt[j * MAX_REPLICAS + r] / cnt[CHURN_NLEVELS * MAX_REPLICAS];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ObserveStep(Coupled c, PetscInt step, PetscBool predicted, ncout_step_rec rec[])
{
  Vec            u0;
  double         churn[CHURN_NLEVELS][MAX_REPLICAS] = {{0}};

  PetscFunctionBegin;
  if (c->nrep == 1 && !c->output[0]) PetscFunctionReturn(PETSC_SUCCESS); /* nothing observes it */
  PetscCall(PetscLogEventBegin(c->ev_metrics, 0, 0, 0, 0));
  PetscCall(SolverGetState(c->rep[0].solver, &u0));
  if (predicted && c->nrep > 1) PetscCall(Churn(c, churn));
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica  *p = &c->rep[r];
    Vec       u;
    metrics_t m;

    PetscCall(SolverGetState(p->solver, &u));
    if (r > 0) PetscCall(CompareStates(c, u0, u, &m));
    else m = (metrics_t){.digits = METRICS_DIGITS_MAX}; /* replica 0 against itself */
    if (m.vc > 0 && c->first_div_step[r] < 0) c->first_div_step[r] = step;
    c->last_state[r] = m;
    if (predicted)
      for (int j = 0; j < CHURN_NLEVELS; j++) c->last_churn[j][r] = churn[j][r];
    c->rel_hist[(size_t)step * c->nrep + r] = r > 0 ? m.rel_l2 : 0;
    rec[r]                                  = (ncout_step_rec){.ksp_its         = (int)p->its,
                                                               .ksp_rnorm       = p->rnorm,
                                                               .start_residual  = p->r0,
                                                               .increment_error = p->inc_err,
                                                               .closure_error   = p->closure_err,
                                                               .closure_drift   = p->drift,
                                                               .churn_10        = churn[0][r],
                                                               .churn_50        = churn[1][r],
                                                               .churn           = churn[2][r],
                                                               .vc              = m.vc,
                                                               .vermv           = m.vermv,
                                                               .rel_l2          = m.rel_l2,
                                                               .max_abs         = m.max_abs,
                                                               .max_ulp         = m.max_ulp,
                                                               .digits          = m.digits};
    PetscCall(SolverStateHash(p->solver, &rec[r].state_hash));
  }
  PetscCall(PetscLogEventEnd(c->ev_metrics, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ObserveEpoch(Coupled c, PetscInt step, ncout_epoch_rec rec[])
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_metrics, 0, 0, 0, 0));
  uint64_t        opt0 = 0;

  PetscCall(SurrogateGetWeights(c->rep[0].net, c->rep[0].w32, c->nweights));
  PetscCall(SurrogateGetOptimizerHash(c->rep[0].net, &opt0));
  for (PetscInt r = 0; r < c->nrep; r++) {
    metrics_acc acc;
    metrics_t   m;
    uint64_t    opt = opt0;
    if (r > 0) PetscCall(SurrogateGetWeights(c->rep[r].net, c->rep[r].w32, c->nweights));
    PetscCall(CheckFinite(c, r, "weights", step, c->nweights, c->rep[r].w32));
    PetscCall(CheckFinite(c, r, "loss", step, 1, &c->last_loss[r]));
    metrics_reset(&acc);
    metrics_addf(&acc, (size_t)c->nweights, c->rep[0].w32, c->rep[r].w32); /* weights are replicated on all ranks */
    metrics_finish(&acc, &m);
    if (r > 0) PetscCall(SurrogateGetOptimizerHash(c->rep[r].net, &opt));
    /* the training state differs: the weights, or Adam's moments (a flip can change them epochs before the weights) */
    if ((m.vc > 0 || opt != opt0) && c->first_div_epoch[r] < 0) c->first_div_epoch[r] = c->epoch;
    c->last_weights[r] = m;
    rec[r]             = (ncout_epoch_rec){.loss = c->last_loss[r], .weights_vc = m.vc, .weights_rel_l2 = m.rel_l2};
    PetscCall(SurrogateGetWeightsHash(c->rep[r].net, &rec[r].weights_hash));
  }
  PetscCall(PetscLogEventEnd(c->ev_metrics, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PrintList(MPI_Comm comm, FILE *f, const char *key, PetscInt n, const double *v, const char *fmt)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(comm, f, "%s: [", key));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscFPrintf(comm, f, i ? ", " : ""));
    if (isfinite(v[i])) PetscCall(PetscFPrintf(comm, f, fmt, v[i]));
    else PetscCall(PetscFPrintf(comm, f, isnan(v[i]) ? ".nan" : v[i] > 0 ? ".inf" : "-.inf"));
  }
  PetscCall(PetscFPrintf(comm, f, "]\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ObserveSummary(Coupled c, FILE *f)
{
  double     v[6][MAX_REPLICAS];
  PetscInt64 n = c->coupling_copies;

  PetscFunctionBegin;
  /* the most any rank made, as device_vector_copies */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPIU_INT64, MPI_MAX, c->comm));
  PetscCall(PetscFPrintf(c->comm, f, "coupling_vector_copies: %lld\n", (long long)n));
  if (c->nrep < 2) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt r = 0; r < c->nrep; r++) {
    v[0][r] = c->last_state[r].vc, v[1][r] = c->last_state[r].rel_l2, v[2][r] = c->last_state[r].digits;
    v[3][r] = (double)c->first_div_step[r], v[4][r] = (double)c->first_div_epoch[r], v[5][r] = c->last_weights[r].vc;
  }
  PetscCall(PrintList(c->comm, f, "replica_final_vc", c->nrep, v[0], "%.6e"));
  PetscCall(PrintList(c->comm, f, "replica_final_rel_l2", c->nrep, v[1], "%.6e"));
  PetscCall(PrintList(c->comm, f, "replica_final_digits", c->nrep, v[2], "%.3f"));
  PetscCall(PrintList(c->comm, f, "replica_first_divergent_step", c->nrep, v[3], "%.0f"));
  { /* growth of rel_l2 over its exponential window (metrics_growth); with a learned guess the difference
     * enters at the Krylov tolerance, which is then the window's floor (metrics.h) */
    PetscInt    nsteps;
    PetscReal   rtol = 0;
    double     *st, *rel;
    const char *why[MAX_REPLICAS];
    PetscCall(SolverGetStep(c->rep[0].solver, &nsteps, NULL, NULL, NULL));
    if (c->mode == COUPLING_GUESS) { /* the tolerance of the solver's own KSP */
      KSP ksp;
      PetscCall(SolverGetKSP(c->rep[0].solver, &ksp));
      PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, NULL));
    }
    PetscCall(PetscMalloc2(nsteps + 1, &st, nsteps + 1, &rel));
    for (PetscInt r = 0; r < c->nrep; r++) {
      metrics_growth_t g;
      for (PetscInt i = 0; i <= nsteps; i++) st[i] = (double)i, rel[i] = c->rel_hist[(size_t)i * c->nrep + r];
      v[0][r] = r ? metrics_growth((size_t)nsteps + 1, st, rel, (double)rtol, &g) * 1000 : NAN;
      v[1][r] = r ? g.efold : NAN;
      v[2][r] = r ? g.from : NAN, v[3][r] = r ? g.to : NAN;
      why[r]  = !r ? "reference" : g.why ? g.why : "measured";
    }
    PetscCall(PetscFree2(st, rel));
    PetscCall(PrintList(c->comm, f, "replica_growth_decades_per_1000_steps", c->nrep, v[0], "%.4g"));
    PetscCall(PrintList(c->comm, f, "replica_efolding_steps", c->nrep, v[1], "%.4g"));
    PetscCall(PrintList(c->comm, f, "replica_growth_window_from", c->nrep, v[2], "%.0f"));
    PetscCall(PrintList(c->comm, f, "replica_growth_window_to", c->nrep, v[3], "%.0f"));
    PetscCall(PetscFPrintf(c->comm, f, "replica_growth_why: ["));
    for (PetscInt r = 0; r < c->nrep; r++) PetscCall(PetscFPrintf(c->comm, f, "%s%s", r ? ", " : "", yaml_str(why[r])));
    PetscCall(PetscFPrintf(c->comm, f, "]\n"));
    PetscCall(PetscFPrintf(c->comm, f, "growth_floor: %s\n", yaml_num("%.6e", (double)rtol)));
  }
  if (c->rep[0].net) {
    PetscCall(PrintList(c->comm, f, "replica_first_divergent_epoch", c->nrep, v[4], "%.0f"));
    PetscCall(PrintList(c->comm, f, "replica_final_weights_vc", c->nrep, v[5], "%.6e"));
    /* Zhuang et al.'s question side by side: do the top-line numbers (the
     * loss, its V_s) stay put while the per-point predictions churn? */
    for (PetscInt r = 0; r < c->nrep; r++) {
      v[0][r] = c->last_weights[r].rel_l2, v[1][r] = c->last_churn[2][r];
      /* no epoch: no loss */
      v[2][r] = c->epoch ? c->last_loss[r] : NAN,
      v[3][r] = c->epoch ? metrics_vs(c->last_loss[0], c->last_loss[r]) : NAN;
    }
    PetscCall(PrintList(c->comm, f, "replica_final_weights_rel_l2", c->nrep, v[0], "%.6e"));
    PetscCall(PrintList(c->comm, f, "replica_final_churn", c->nrep, v[1], "%.6e"));
    for (PetscInt r = 0; r < c->nrep; r++) v[4][r] = c->last_churn[0][r], v[5][r] = c->last_churn[1][r];
    PetscCall(PrintList(c->comm, f, "replica_final_churn_10", c->nrep, v[4], "%.6e"));
    PetscCall(PrintList(c->comm, f, "replica_final_churn_50", c->nrep, v[5], "%.6e"));
    PetscCall(PetscFPrintf(c->comm, f, "churn_error_scale: %.6e\n", c->churn_scale));
    PetscCall(PrintList(c->comm, f, "replica_final_loss", c->nrep, v[2], "%.9e"));
    PetscCall(PrintList(c->comm, f, "replica_final_loss_vs", c->nrep, v[3], "%.3e"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
