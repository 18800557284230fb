/* surrogate/backend_cpu.c: the CPU backend. Forward and backward-data products
 * are own fixed-order loops (per sample: sum over k in index order, separate
 * multiply and add), vectorized across samples; they are the same arithmetic
 * as the CUDA kernels, so the reproducible build gives the same bits on both.
 * The batch reductions: weight/bias gradients in tallskinny_cpu.c, the loss
 * through kernels/ red_local(), both with the strategy.
 * Activations are stored feature-major: A[l][feature][sample], row stride cap.
 * With checks on, each pass is followed by its ABFT check (checks_cpu.c). */
#include "surrogate_impl.h"

#include <string.h>

#define SURR_SB 256 /* samples per block: one block's rows stay in L1/L2 */

typedef struct {
  size_t  cap;       /* samples the buffers hold */
  float  *A[SURR_MAX_LAYERS + 1];
  float  *D[2];      /* deltas, ping-pong, [maxdim][cap] */
  double *Xd, *Dd, *E; /* double copies: layer input [maxdim][cap], one delta row, errors */
} CPUData;

static PetscInt maxdim(Surrogate s)
{
  PetscInt m = 0;
  for (int l = 0; l <= s->nlayer; l++) m = PetscMax(m, s->dim[l]);
  return m;
}

static PetscErrorCode CPUFree(CPUData *b, int nlayer)
{
  PetscFunctionBeginUser;
  for (int l = 0; l <= nlayer; l++) PetscCall(PetscFree(b->A[l]));
  PetscCall(PetscFree(b->D[0]));
  PetscCall(PetscFree(b->D[1]));
  PetscCall(PetscFree(b->Xd));
  PetscCall(PetscFree(b->Dd));
  PetscCall(PetscFree(b->E));
  b->cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUReserve(Surrogate s, size_t n, PetscBool train)
{
  CPUData *b = (CPUData *)s->be;
  size_t   md = (size_t)maxdim(s);

  PetscFunctionBeginUser;
  if (n <= b->cap && (!train || b->D[0])) PetscFunctionReturn(PETSC_SUCCESS);
  n = PetscMax(n, b->cap);
  PetscCall(CPUFree(b, s->nlayer));
  for (int l = 0; l <= s->nlayer; l++) PetscCall(PetscMalloc1((size_t)s->dim[l] * n, &b->A[l]));
  if (train) {
    PetscCall(PetscMalloc1(md * n, &b->D[0]));
    PetscCall(PetscMalloc1(md * n, &b->D[1]));
    PetscCall(PetscMalloc1(md * n, &b->Xd));
    PetscCall(PetscMalloc1(n, &b->Dd));
    PetscCall(PetscMalloc1((size_t)s->n_out * n, &b->E));
  }
  b->cap = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out[j][s] = act(b_j + sum_k W[j][k] in[k][s]) (no act on the output layer). */
static void layer_forward(const float *W, const float *bias, size_t din, size_t dout, const float *in, float *out, size_t n, size_t cap, int hidden)
{
  size_t nblk = (n + SURR_SB - 1) / SURR_SB;
#pragma omp parallel for schedule(static) if (nblk > 1)
  for (size_t blk = 0; blk < nblk; blk++) {
    size_t s0 = blk * SURR_SB, m = PetscMin(SURR_SB, n - s0);
    float  acc[SURR_SB];
    for (size_t j = 0; j < dout; j++) {
      for (size_t i = 0; i < m; i++) acc[i] = 0.0f;
      for (size_t k = 0; k < din; k++) {
        const float  w = W[j * din + k], *a = in + k * cap + s0;
        for (size_t i = 0; i < m; i++) acc[i] = surr_madd(acc[i], w, a[i]);
      }
      float *o = out + j * cap + s0;
      if (hidden)
        for (size_t i = 0; i < m; i++) o[i] = surr_act(SURR_ADD(acc[i], bias[j]));
      else
        for (size_t i = 0; i < m; i++) o[i] = SURR_ADD(acc[i], bias[j]);
    }
  }
}

/* dprev[k][s] = act'(aprev[k][s]) * sum_j W[j][k] d[j][s], j in index order. */
static void layer_backdata(const float *W, size_t din, size_t dout, const float *d, const float *aprev, float *dprev, size_t n, size_t cap)
{
  size_t nblk = (n + SURR_SB - 1) / SURR_SB;
#pragma omp parallel for schedule(static) if (nblk > 1)
  for (size_t blk = 0; blk < nblk; blk++) {
    size_t s0 = blk * SURR_SB, m = PetscMin(SURR_SB, n - s0);
    float  acc[SURR_SB];
    for (size_t k = 0; k < din; k++) {
      for (size_t i = 0; i < m; i++) acc[i] = 0.0f;
      for (size_t j = 0; j < dout; j++) {
        const float  w = W[j * din + k], *dj = d + j * cap + s0;
        for (size_t i = 0; i < m; i++) acc[i] = surr_madd(acc[i], w, dj[i]);
      }
      const float *a = aprev + k * cap + s0;
      float       *o = dprev + k * cap + s0;
      for (size_t i = 0; i < m; i++) o[i] = surr_act_grad(acc[i], a[i]);
    }
  }
}

/* Normalize in[n][n_in] into A[0][feature][sample] and run all layers. In
 * training (train true) each layer's output is the activation fault site, hit
 * once per layer in order after the layer is complete and before the next one
 * reads it; entries are numbered over the global batch, so the rank's first
 * global sample is needed, and asked for only while the site is armed (the
 * arming is the same on every rank, so every rank joins the scan). */
static PetscErrorCode cpu_forward(Surrogate s, CPUData *b, size_t n, const float *in, PetscBool train)
{
  size_t    nin = (size_t)s->n_in, cap = b->cap;
  long long first = 0, Ntot = 0;

  PetscFunctionBeginUser;
#pragma omp parallel for schedule(static) if (n > 4096)
  for (size_t i = 0; i < n; i++)
    for (size_t f = 0; f < nin; f++) b->A[0][f * cap + i] = surr_normalize(in[i * nin + f], s->mu_in[f], s->sd_in[f]);
  if (train && fault_armed == FAULT_ACTIVATION) {
    long long nl = (long long)n;
    PetscCallMPI(MPI_Exscan(&nl, &first, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
    PetscCallMPI(MPI_Allreduce(&nl, &Ntot, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
    if (s->rank == 0) first = 0; /* MPI_Exscan leaves rank 0's result undefined */
  }
  for (int l = 0; l < s->nlayer; l++) {
    layer_forward(s->w + s->woff[l], s->w + s->boff[l], (size_t)s->dim[l], (size_t)s->dim[l + 1], b->A[l], b->A[l + 1], n, cap, l + 1 < s->nlayer);
    if (train && fault_armed == FAULT_ACTIVATION) PetscCall(SurrogateFaultActivation_Private(b->A[l + 1], (size_t)s->dim[l + 1], n, cap, first, Ntot));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUPredict(Surrogate s, PetscInt n, const float *in, float *out)
{
  CPUData *b = (CPUData *)s->be;
  size_t   nout = (size_t)s->n_out;

  PetscFunctionBeginUser;
  PetscCall(CPUReserve(s, (size_t)n, PETSC_FALSE));
  PetscCall(cpu_forward(s, b, (size_t)n, in, PETSC_FALSE));
  const float *z = b->A[s->nlayer];
  for (size_t i = 0; i < (size_t)n; i++)
    for (size_t j = 0; j < nout; j++) out[i * nout + j] = surr_denormalize(z[j * b->cap + i], s->mu_out[j], s->sd_out[j]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUGradPartials(Surrogate s, PetscInt nn, const float *in, const float *target, float cscale, red_partial_t *part)
{
  CPUData *b = (CPUData *)s->be;
  size_t   n = (size_t)nn, nout = (size_t)s->n_out;
  int      L = s->nlayer;

  PetscFunctionBeginUser;
  PetscCall(CPUReserve(s, n, PETSC_TRUE));
  size_t cap = b->cap;
  PetscCall(cpu_forward(s, b, n, in, PETSC_TRUE));
  if (s->ck.on) PetscCall(SurrogateCheckForward_CPU(s, b->A, n, cap)); /* after the activation site: a flip there fails here */
  /* output error e = z - t_n; delta = cscale e; loss summand e^2 (exact in double) */
  const float *z = b->A[L];
  for (size_t j = 0; j < nout; j++)
    for (size_t i = 0; i < n; i++) {
      float e              = SURR_SUB(z[j * cap + i], surr_normalize(target[i * nout + j], s->mu_out[j], s->sd_out[j]));
      b->D[0][j * cap + i] = SURR_MUL(cscale, e);
      b->E[j * n + i]      = (double)e;
    }
  red_local(s->strategy, RED_OP_SUMSQ, nout * n, b->E, NULL, &part[s->nparam]);
  int cur = 0;
  for (int l = L - 1; l >= 0; l--) {
    size_t din = (size_t)s->dim[l], dout = (size_t)s->dim[l + 1];
    PetscCall(SurrogateTallSkinny_CPU(s, l, b->D[cur], b->A[l], n, cap, b->Xd, b->Dd, part + s->woff[l], part + s->boff[l]));
    if (s->ck.on) PetscCall(SurrogateCheckGradRefs_CPU(s, l, b->D[cur], b->A[l], n, cap));
    if (l > 0) {
      layer_backdata(s->w + s->woff[l], din, dout, b->D[cur], b->A[l], b->D[1 - cur], n, cap);
      if (s->ck.on) PetscCall(SurrogateCheckBackward_CPU(s, l, b->D[cur], b->D[1 - cur], b->A[l], n, cap));
      cur = 1 - cur;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUAdam(Surrogate s, const float *grad, surr_adam_coef c)
{
  PetscFunctionBeginUser;
  for (size_t i = 0; i < s->nparam; i++) surr_adam(&s->w[i], &s->m[i], &s->v[i], grad[i], c);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUSetUp(Surrogate s)
{
  CPUData *b;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&b));
  s->be = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUDestroy(Surrogate s)
{
  PetscFunctionBeginUser;
  PetscCall(CPUFree((CPUData *)s->be, s->nlayer));
  PetscCall(PetscFree(s->be));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host arrays s->w, s->m, s->v are this backend's state: no pull/push. */
const SurrogateOps SurrogateOps_CPU = {CPUSetUp, CPUPredict, CPUGradPartials, CPUAdam, NULL, NULL, CPUDestroy};
