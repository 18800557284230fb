/* surrogate/backend_cpu.c: the CPU backend. Forward and backward-data products
 * are own fixed-order loops (per sample: sum over k in index order, separate
 * multiply and add), vectorized across samples (layers_cpu.c); they are the
 * same arithmetic as the CUDA kernels, so the reproducible build gives the
 * same bits on both. The batch reductions: weight/bias gradients in
 * tallskinny_cpu.c, the loss through kernels/ red_local(), both with the
 * strategy.
 * A train step is fused: each chunk of SURR_CHUNK samples goes through the
 * forward pass, the output error, and, layer by layer backwards, its gradient
 * partials and back-data product while its activations (about 70 floats per
 * sample here) are in cache, instead of streaming every layer's activations
 * through memory once per pass. With checks on, or the activation fault site
 * armed, the same chunk steps run layer by layer over the whole batch instead
 * (the checks and the site need a complete layer): the same bits.
 * Activations are stored feature-major: A[l][feature][sample], row stride cap
 * (a multiple of 16); D[l] holds the deltas at layer l's output. */
#include "surrogate_impl.h"

#include <omp.h>
#include <string.h>

typedef struct {
  size_t           cap; /* samples the buffers hold */
  float           *A[SURR_MAX_LAYERS + 1];
  float           *D[SURR_MAX_LAYERS];
  double          *E; /* output errors [n_out][n] (the loss) */
  SurrogateGradAcc g;
} CPUData;

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

static PetscErrorCode CPUFree(CPUData *b, int nlayer)
{
  PetscFunctionBeginUser;
  for (int l = 0; l <= nlayer; l++) PetscCall(PetscFree(b->A[l]));
  for (int l = 0; l < nlayer; l++) PetscCall(PetscFree(b->D[l]));
  PetscCall(PetscFree(b->E));
  b->cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Zero-filled, so that the padding columns past n hold finite values. */
static PetscErrorCode CPUReserve(Surrogate s, size_t n, PetscBool train)
{
  CPUData *b = (CPUData *)s->be;

  PetscFunctionBeginUser;
  if (n <= b->cap && (!train || b->D[0])) PetscFunctionReturn(PETSC_SUCCESS);
  /* a row stride of a multiple of 16 floats plus 16: rows one cache line
   * apart in the cache sets, where a power-of-two batch (1 MiB rows) would
   * put every row of a chunk in the same set of L1 and L2 */
  n = round16(PetscMax(n, b->cap)) + 16;
  PetscCall(CPUFree(b, s->nlayer));
  for (int l = 0; l <= s->nlayer; l++) PetscCall(PetscCalloc1((size_t)s->dim[l] * n, &b->A[l]));
  if (train) {
    for (int l = 0; l < s->nlayer; l++) PetscCall(PetscCalloc1((size_t)s->dim[l + 1] * n, &b->D[l]));
    PetscCall(PetscMalloc1((size_t)s->n_out * n, &b->E));
  }
  b->cap = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The steps of one chunk c: samples s0 = c SURR_CHUNK .. s0 + m - 1. */
typedef struct {
  size_t s0, m, m16;
} Chunk;

static Chunk chunk_of(size_t c, size_t n)
{
  Chunk k;
  k.s0  = c * SURR_CHUNK;
  k.m   = PetscMin(SURR_CHUNK, n - k.s0);
  k.m16 = round16(k.m);
  return k;
}

static void chunk_input(Surrogate s, CPUData *b, Chunk k, const float *in)
{
  size_t nin = (size_t)s->n_in, cap = b->cap;
  for (size_t i = k.s0; i < k.s0 + k.m; i++)
    for (size_t f = 0; f < nin; f++) b->A[0][f * cap + i] = surr_normalize(in[i * nin + f], s->mu_in[f], s->sd_in[f]);
}

/* lanes: where the output rows' maxima go (NULL: nowhere) */
static void chunk_forward(Surrogate s, CPUData *b, int l, Chunk k, uint32_t *lanes)
{
  SurrogateLayerForward_CPU(s->w + s->woff[l], s->w + s->boff[l], (size_t)s->dim[l], (size_t)s->dim[l + 1],
                            b->A[l] + k.s0, b->A[l + 1] + k.s0, b->cap, k.m16, l + 1 < s->nlayer, k.m, lanes);
}

/* output error e = z - t_n; delta = cscale e (zero in the padding); loss summand e^2 (exact in double) */
static void chunk_error(Surrogate s, CPUData *b, Chunk k, size_t n, const float *target, float cscale)
{
  size_t       nout = (size_t)s->n_out, cap = b->cap;
  const float *z    = b->A[s->nlayer];
  float       *d    = b->D[s->nlayer - 1];
  for (size_t j = 0; j < nout; j++) {
    for (size_t i = k.s0; i < k.s0 + k.m; i++) {
      float e        = SURR_SUB(z[j * cap + i], surr_normalize(target[i * nout + j], s->mu_out[j], s->sd_out[j]));
      d[j * cap + i] = SURR_MUL(cscale, e);
      b->E[j * n + i] = (double)e;
    }
    for (size_t i = k.s0 + k.m; i < k.s0 + k.m16; i++) d[j * cap + i] = 0.0f;
  }
}

static void chunk_grad(Surrogate s, CPUData *b, int l, size_t c, Chunk k, int tid, int known)
{
  SurrogateGradChunk_CPU(s, &b->g, l, c, b->D[l] + k.s0, b->A[l] + k.s0, k.m, b->cap, tid, known);
}

static void chunk_backdata(Surrogate s, CPUData *b, int l, Chunk k, uint32_t *lanes)
{
  SurrogateLayerBackData_CPU(s->w + s->woff[l], (size_t)s->dim[l], (size_t)s->dim[l + 1], b->D[l] + k.s0,
                             b->A[l] + k.s0, b->D[l - 1] + k.s0, b->cap, k.m16, k.m, lanes);
}

/* The reproducible strategy's lanes of layer l's delta rows and of its input
 * rows in chunk c (NULL for the other strategies). */
static uint32_t *delta_lanes(CPUData *b, int l, size_t c) { return SurrogateGradLanes_CPU(&b->g, l, c); }
static uint32_t *input_lanes(Surrogate s, CPUData *b, int l, size_t c)
{
  uint32_t *ln = SurrogateGradLanes_CPU(&b->g, l, c);
  return ln ? ln + 8 * (size_t)s->dim[l + 1] : NULL;
}

static PetscErrorCode CPUPredict(Surrogate s, PetscInt nn, const float *in, float *out)
{
  CPUData *b;
  size_t   n = (size_t)nn, nout = (size_t)s->n_out, nc = (n + SURR_CHUNK - 1) / SURR_CHUNK;

  PetscFunctionBeginUser;
  PetscCall(CPUReserve(s, n, PETSC_FALSE));
  b = (CPUData *)s->be;
#pragma omp parallel for schedule(dynamic, 1) if (nc > 1)
  for (size_t c = 0; c < nc; c++) {
    Chunk k = chunk_of(c, n);
    chunk_input(s, b, k, in);
    for (int l = 0; l < s->nlayer; l++) chunk_forward(s, b, l, k, NULL);
    const float *z = b->A[s->nlayer];
    for (size_t i = k.s0; i < k.s0 + k.m; i++)
      for (size_t j = 0; j < nout; j++)
        out[i * nout + j] = surr_denormalize(z[j * b->cap + i], s->mu_out[j], s->sd_out[j]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Layer by layer over the whole batch, with the checks and the activation
 * fault site between the passes. The activation site numbers its entries over
 * the global batch, so the rank's first global sample is needed; it is asked
 * for only while the site is armed (the arming is the same on every rank, so
 * every rank joins the scan). */
static PetscErrorCode CPUGradLayered(Surrogate s, CPUData *b, size_t n, const float *in, const float *target,
                                     float cscale)
{
  size_t    nc = (n + SURR_CHUNK - 1) / SURR_CHUNK, cap = b->cap;
  int       L = s->nlayer, nth = (int)b->g.nth;
  long long first = 0, Ntot = 0;

  PetscFunctionBeginUser;
  if (fault_is_armed(s->fault, FAULT_ACTIVATION)) {
    long long nl = (long long)n;
    PetscCallMPI(MPI_Exscan(&nl, &first, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
    PetscCallMPI(MPI_Allreduce(&nl, &Ntot, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
    if (s->rank == 0) first = 0; /* MPI_Exscan leaves rank 0's result undefined */
  }
#pragma omp parallel for schedule(static) num_threads(nth)
  for (size_t c = 0; c < nc; c++) chunk_input(s, b, chunk_of(c, n), in);
  for (int l = 0; l < L; l++) {
#pragma omp parallel for schedule(static) num_threads(nth)
    /* maxima after the fault site: in chunk_grad */
    for (size_t c = 0; c < nc; c++) chunk_forward(s, b, l, chunk_of(c, n), NULL);
    if (fault_is_armed(s->fault, FAULT_ACTIVATION))
      PetscCall(SurrogateFaultActivation_Private(s->fault, b->A[l + 1], (size_t)s->dim[l + 1], n, cap, first, Ntot));
  }
  /* after the activation site: a flip there fails here */
  if (s->ck.on) PetscCall(SurrogateCheckForward_CPU(s, b->A, n, cap));
  for (size_t c = 0; c < nc; c++) chunk_error(s, b, chunk_of(c, n), n, target, cscale);
  for (int l = L - 1; l >= 0; l--) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
    for (size_t c = 0; c < nc; c++) chunk_grad(s, b, l, c, chunk_of(c, n), omp_get_thread_num(), 0);
    if (s->ck.on) PetscCall(SurrogateCheckGradRefs_CPU(s, l, b->D[l], b->A[l], n, cap));
    if (l > 0) {
#pragma omp parallel for schedule(static) num_threads(nth)
      for (size_t c = 0; c < nc; c++) chunk_backdata(s, b, l, chunk_of(c, n), NULL);
      if (s->ck.on) PetscCall(SurrogateCheckBackward_CPU(s, l, b->D[l], b->D[l - 1], b->A[l], n, cap));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -log_view's split of a train step on the CPU: the pass over the
 * chunks (forward, backward and, in the float strategies, the chunks'
 * gradient partials, made while the rows are in cache), and the strategy's
 * sums after it (the reproducible strategy's gradient sums over the stored
 * rows under the batch's units, kernels/gsum.c; the float strategies' combine
 * of the chunk partials), the loss's sum included. */
static PetscLogEvent ev_pass, ev_sums;

static PetscErrorCode CPUGradPartials(Surrogate s, PetscInt nn, const float *in, const float *target, float cscale,
                                      red_partial_t *part)
{
  CPUData *b;
  size_t   n = (size_t)nn, nc = (n + SURR_CHUNK - 1) / SURR_CHUNK;
  int      L = s->nlayer;

  PetscFunctionBeginUser;
  PetscCall(CPUReserve(s, n, PETSC_TRUE));
  b = (CPUData *)s->be;
  PetscCall(PetscLogEventBegin(ev_pass, 0, 0, 0, 0));
  PetscCall(SurrogateGradBegin_CPU(s, &b->g, n));
  if (s->ck.on || fault_is_armed(s->fault, FAULT_ACTIVATION)) PetscCall(CPUGradLayered(s, b, n, in, target, cscale));
  else {
#pragma omp parallel for schedule(dynamic, 1) num_threads((int)b->g.nth) if (nc > 1)
    for (size_t c = 0; c < nc; c++) {
      Chunk k   = chunk_of(c, n);
      int   tid = omp_get_thread_num();
      chunk_input(s, b, k, in);
      SurrogateGradNoteRows_CPU(input_lanes(s, b, 0, c), (size_t)s->n_in, b->A[0] + k.s0, k.m, b->cap);
      for (int l = 0; l < L; l++) chunk_forward(s, b, l, k, l + 1 < L ? input_lanes(s, b, l + 1, c) : NULL);
      chunk_error(s, b, k, n, target, cscale);
      SurrogateGradNoteRows_CPU(delta_lanes(b, L - 1, c), (size_t)s->n_out, b->D[L - 1] + k.s0, k.m, b->cap);
      for (int l = L - 1; l >= 0; l--) { /* every row's maxima noted by its maker */
        chunk_grad(s, b, l, c, k, tid, 1);
        if (l > 0) chunk_backdata(s, b, l, k, delta_lanes(b, l - 1, c));
      }
    }
  }
  PetscCall(PetscLogEventEnd(ev_pass, 0, 0, 0, 0));
  PetscCall(PetscLogEventBegin(ev_sums, 0, 0, 0, 0));
  PetscCall(SurrogateGradEnd_CPU(s, &b->g, b->D, b->A, n, b->cap, part));
  red_local(s->strategy, RED_OP_SUMSQ, (size_t)s->n_out * n, b->E, NULL, &part[s->nparam], s->order);
  PetscCall(PetscLogEventEnd(ev_sums, 0, 0, 0, 0));
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
  if (!ev_pass) PetscCall(PetscLogEventRegister("SurrGradPass", PETSC_OBJECT_CLASSID, &ev_pass));
  if (!ev_sums) PetscCall(PetscLogEventRegister("SurrGradSums", PETSC_OBJECT_CLASSID, &ev_sums));
  PetscCall(PetscNew(&b));
  s->be = b;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CPUDestroy(Surrogate s)
{
  PetscFunctionBeginUser;
  PetscCall(CPUFree((CPUData *)s->be, s->nlayer));
  PetscCall(SurrogateGradDestroy_CPU(&((CPUData *)s->be)->g));
  PetscCall(PetscFree(s->be));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host arrays s->w, s->m, s->v are this backend's state: no pull/push. */
/* no device buffers: surrogate_batch.c stages a device batch through the host */
const SurrogateOps SurrogateOps_CPU = {CPUSetUp,   CPUPredict, CPUGradPartials, CPUAdam, NULL,
                                       NULL,       CPUDestroy, NULL,            NULL,    NULL};
