/* surrogate/surrogate_step.c: one train step (gradient partials from the
 * backend, combined across ranks with the compiled strategy, then Adam),
 * prediction, normalization statistics, and the weight accessors.
 * Cross-rank rule (DESIGN.md): never rely on MPI_Allreduce's order; gather the
 * per-rank partials and combine them in rank order on every rank. */
#include "surrogate_impl.h"
#include "hashrng.h"

#include <string.h>

PetscErrorCode SurrogateCombine_Private(Surrogate s, size_t np, red_partial_t *part, double *val)
{
  PetscFunctionBeginUser;
  if (s->size == 1) {
    for (size_t i = 0; i < np; i++) val[i] = red_combine(s->strategy, 1, &part[i]);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  size_t         bytes = np * sizeof(red_partial_t);
  red_partial_t *col;
  PetscCheck(bytes < (size_t)PETSC_MPI_INT_MAX, s->comm, PETSC_ERR_SUP,
             "too many parameters (%zu) for one MPI_Allgather", np);
  PetscCallMPI(MPI_Allgather(part, (int)bytes, MPI_BYTE, s->allpart, (int)bytes, MPI_BYTE, s->comm));
  PetscCall(PetscMalloc1(s->size, &col));
  for (size_t i = 0; i < np; i++) {
    for (PetscMPIInt r = 0; r < s->size; r++) col[r] = s->allpart[(size_t)r * np + i];
    val[i] = red_combine(s->strategy, s->size, col); /* rank order, same on every rank */
  }
  PetscCall(PetscFree(col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateCheckCount_Private(PetscInt n, const char *what)
{
  PetscFunctionBegin;
  PetscCheck(n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s %" PetscInt_FMT " must be >= 0", what, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SurrogateGlobalCount(Surrogate s, PetscInt n, int64_t *N)
{
  int64_t nl = n;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&nl, N, 1, MPI_INT64_T, MPI_SUM, s->comm)); /* integers: exact in any order */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Per-feature mean and std (population) of x[n][nf] over all ranks, two-pass
 * in double, every sum done with the strategy. A constant feature gets std 1. */
static PetscErrorCode SurrogateStats(Surrogate s, PetscInt n, PetscInt nf, const float *x, int64_t N, float *mu,
                                     float *sd)
{
  double *col, *mean;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(n > 0 ? n : 1, &col, nf, &mean));
  for (PetscInt f = 0; f < nf; f++) {
    for (PetscInt i = 0; i < n; i++) col[i] = x[(size_t)i * nf + f];
    red_local(s->strategy, RED_OP_SUM, (size_t)n, col, NULL, &s->part[f], s->order);
  }
  PetscCall(SurrogateCombine_Private(s, (size_t)nf, s->part, s->gsum));
  for (PetscInt f = 0; f < nf; f++) mean[f] = s->gsum[f] / (double)N;
  for (PetscInt f = 0; f < nf; f++) {
    for (PetscInt i = 0; i < n; i++) col[i] = x[(size_t)i * nf + f] - mean[f];
    red_local(s->strategy, RED_OP_SUMSQ, (size_t)n, col, NULL, &s->part[f], s->order);
  }
  PetscCall(SurrogateCombine_Private(s, (size_t)nf, s->part, s->gsum));
  for (PetscInt f = 0; f < nf; f++) {
    double sdv = sqrt(s->gsum[f] / (double)N);
    mu[f]      = (float)mean[f];
    sd[f]      = (sdv > 1e-30 && (float)sdv > 0.0f && sdv > 1e-6 * fabs(mean[f])) ? (float)sdv : 1.0f;
  }
  PetscCall(PetscFree2(col, mean));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device: in and target are on the CUDA device (the CUDA backend's) */
static PetscErrorCode Gradient(Surrogate s, PetscInt n, const float in[], const float target[], PetscBool device,
                               float grad[], float *loss)
{
  int64_t N;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateCheckCount_Private(n, "batch size"));
  PetscCheck(n == 0 || (in && target), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL,
             "training inputs and targets must not be NULL");
  PetscCall(SurrogateGlobalCount(s, n, &N));
  PetscCheck(N > 0, s->comm, PETSC_ERR_ARG_OUTOFRANGE, "empty training batch on all ranks");
  if (!s->have_norm) { /* frozen from the first batch: later batches see the same map */
    const float *hin = in, *htarget = target;
    if (device) PetscCall(SurrogateStageToHost_Private(s, n, in, target, &hin, &htarget));
    PetscCall(SurrogateStats(s, n, s->n_in, hin, N, s->mu_in, s->sd_in));
    PetscCall(SurrogateStats(s, n, s->n_out, htarget, N, s->mu_out, s->sd_out));
    s->have_norm = PETSC_TRUE;
  }
  if (s->ck.on) { /* the weights must match their encodings (set after the last update) */
    if (!s->ck.encoded) PetscCall(SurrogateChecksEncode_Private(s));
    PetscCall(SurrogateChecksVerifyWeights_Private(s));
  }
  float cscale = (float)(2.0 / ((double)N * (double)s->n_out)); /* d(MSE)/dz = cscale (z - t) */
  if (device) PetscCall(s->ops->grad_partials_device(s, n, in, target, cscale, s->part));
  else PetscCall(s->ops->grad_partials(s, n, in, target, cscale, s->part));
  PetscCall(SurrogateCombine_Private(s, s->nparam + 1, s->part, s->gsum));
  for (size_t i = 0; i < s->nparam; i++) s->grad[i] = (float)s->gsum[i];
  /* fault site: every rank holds the whole gradient */
  fault_hit_float(s->fault, FAULT_GRADIENT, s->grad, s->nparam, 0, (long long)s->nparam);
  if (s->ck.on) PetscCall(SurrogateChecksGradient_Private(s, N));
  if (grad) PetscCall(PetscArraycpy(grad, s->grad, s->nparam));
  if (loss) *loss = (float)(s->gsum[s->nparam] / ((double)N * (double)s->n_out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Without stepping: the reproducible sums' row exponents (state the next
 * train step starts from) are put back as the last train step left them. */
PetscErrorCode SurrogateComputeGradient(Surrogate s, PetscInt n, const float in[], const float target[], float grad[],
                                        float *loss)
{
  int32_t       *keep;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(PetscMalloc1(s->nurow, &keep));
  PetscCall(PetscArraycpy(keep, s->uexp, s->nurow));
  ierr = Gradient(s, n, in, target, PETSC_FALSE, grad, loss);
  PetscCall(PetscArraycpy(s->uexp, keep, s->nurow));
  PetscCall(PetscFree(keep));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateTrain(Surrogate s, PetscInt n, const float in[], const float target[], float *loss)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateTrainStep_Private(s, n, in, target, PETSC_FALSE, loss));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateTrainStep_Private(Surrogate s, PetscInt n, const float in[], const float target[],
                                          PetscBool device, float *loss)
{
  surr_adam_coef c;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  /* before the weight site, so that a flip there is caught */
  if (s->ck.on && !s->ck.encoded) PetscCall(SurrogateChecksEncode_Private(s));
  if (fault_is_armed(s->fault, FAULT_WEIGHT)) { /* fault site: every rank holds all weights and flips the same entry */
    PetscCall(SurrogateSyncHost_Private(s));
    if (fault_hit_float_(s->fault, FAULT_WEIGHT, s->w, s->nparam, 0, (long long)s->nparam) && s->ops->push)
      PetscCall(s->ops->push(s));
  }
  PetscCall(Gradient(s, n, in, target, device, NULL, loss));
  s->step++;
  s->beta1_t = s->beta1_t * s->beta1; /* beta^t by repeated multiplication, see surrogate_math.h */
  s->beta2_t = s->beta2_t * s->beta2;
  c.lr = s->lr, c.beta1 = s->beta1, c.one_m_beta1 = 1.0f - s->beta1, c.beta2 = s->beta2,
  c.one_m_beta2 = 1.0f - s->beta2;
  c.bc1 = 1.0f - s->beta1_t, c.bc2 = 1.0f - s->beta2_t, c.eps = s->eps, c.wd = s->wd;
  PetscCall(s->ops->adam(s, s->grad, c));
  if (s->ops->pull) s->host_stale = PETSC_TRUE;
  if (s->ck.on) PetscCall(SurrogateChecksEncode_Private(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogatePredict(Surrogate s, PetscInt n, const float in[], float out[])
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateCheckCount_Private(n, "prediction count"));
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(s->ops->predict(s, n, in, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSyncHost_Private(Surrogate s)
{
  PetscFunctionBeginUser;
  if (s->host_stale) PetscCall(s->ops->pull(s));
  s->host_stale = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetNumWeights(Surrogate s, PetscInt *n)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  *n = (PetscInt)s->nparam;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A buffer of n weights for the set-up network (caller: for the message);
 * the host's copy made current. */
static PetscErrorCode WeightsBuffer(Surrogate s, PetscInt n, const char *caller)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, caller));
  PetscCheck((size_t)n == s->nparam, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "buffer holds %" PetscInt_FMT " floats, the network has %zu weights", n, s->nparam);
  PetscCall(SurrogateSyncHost_Private(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetWeights(Surrogate s, float buf[], PetscInt n)
{
  PetscFunctionBeginUser;
  PetscCall(WeightsBuffer(s, n, PETSC_FUNCTION_NAME));
  PetscCall(PetscArraycpy(buf, s->w, s->nparam));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateSetWeights(Surrogate s, const float buf[], PetscInt n)
{
  PetscFunctionBeginUser;
  PetscCall(WeightsBuffer(s, n, PETSC_FUNCTION_NAME));
  PetscCall(PetscArraycpy(s->w, buf, s->nparam));
  if (s->ops->push) PetscCall(s->ops->push(s));
  s->ck.encoded = PETSC_FALSE; /* re-encoded before the next step */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetWeightsHash(Surrogate s, uint64_t *hash)
{
  uint64_t h = 0;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateSyncHost_Private(s));
  for (size_t i = 0; i < s->nparam; i++) h += hash_termf(i, s->w[i]);
  *hash = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetOptimizerHash(Surrogate s, uint64_t *hash)
{
  uint64_t h = 0;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateSyncHost_Private(s));
  for (size_t i = 0; i < s->nparam; i++) h += hash_termf(i, s->m[i]) + hash_termf(s->nparam + i, s->v[i]);
  *hash = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetStep(Surrogate s, PetscInt64 *step)
{
  PetscFunctionBeginUser;
  *step = s->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetDeviceId(Surrogate s, PetscInt *id, const char **name)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  *id = s->device_id;
  if (name) *name = s->device_id >= 0 ? s->device_name : "cpu";
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetDevice(Surrogate s, SurrogateDevice *dev)
{
  PetscFunctionBeginUser;
  *dev = s->setup ? s->device : s->device_req;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetCudaKernels(Surrogate s, const char **name)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  *name = s->device != SURROGATE_DEVICE_CUDA ? "none" : s->cuda_gemm ? "gemm" : "tiled";
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* As comments ("# "): on the miniapp's standard output, a YAML stream, they were a spurious key. */
PetscErrorCode SurrogateView(Surrogate s, PetscViewer v)
{
  PetscFunctionBeginUser;
  if (!v) v = PETSC_VIEWER_STDOUT_(s->comm);
  PetscCall(PetscViewerASCIIPrintf(v, "# Surrogate: MLP %" PetscInt_FMT, s->n_in));
  for (PetscInt l = 0; l < s->nhidden; l++) PetscCall(PetscViewerASCIIPrintf(v, "-%" PetscInt_FMT, s->hidden[l]));
  PetscCall(PetscViewerASCIIPrintf(v,
                                   "-%" PetscInt_FMT " (%zu weights), leaky ReLU 2^-6, MSE, AdamW lr %g betas %g %g "
                                                     "eps %g wd %g, seed %llu\n",
                                   s->n_out, s->nparam, (double)s->lr, (double)s->beta1, (double)s->beta2,
                                   (double)s->eps, (double)s->wd, (unsigned long long)s->seed));
  if (s->device == SURROGATE_DEVICE_CUDA)
    PetscCall(PetscViewerASCIIPrintf(v, "# Surrogate: CUDA device %d (%s) on rank 0\n", s->device_id, s->device_name));
  PetscCall(PetscViewerASCIIPrintf(v, "# Surrogate: device %s, reduction %s, ranks %d, step %lld%s\n",
                                   s->device == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", red_strategy_name(s->strategy),
                                   (int)s->size, (long long)s->step,
                                   s->ck.on
                                     ? (s->device == SURROGATE_DEVICE_CUDA ? ", ABFT checks on (weights, gradient)"
                                                                           : ", ABFT checks on")
                                     : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateDestroy(Surrogate *ps)
{
  Surrogate s = *ps;

  PetscFunctionBeginUser;
  if (!s) PetscFunctionReturn(PETSC_SUCCESS);
  if (s->setup && s->ops->destroy) PetscCall(s->ops->destroy(s));
  PetscCall(PetscFree3(s->w, s->m, s->v));
  PetscCall(PetscFree(s->uexp));
  PetscCall(PetscFree4(s->part, s->allpart, s->gsum, s->grad));
  PetscCall(SurrogateChecksDestroy_Private(s));
  PetscCall(SurrogateDeviceBatchDestroy_Private(s));
  if (s->mu_in) PetscCall(PetscFree4(s->mu_in, s->sd_in, s->mu_out, s->sd_out));
  PetscCall(PetscFree(s->prefix));
  PetscCall(PetscFree(s));
  *ps = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
