/* surrogate/backend_cuda.c: the CUDA backend's SurrogateOps: PETSc error frames
 * around the plain-C engine in mlp_cuda.cu. Built only when CUDA is enabled.
 * Device state is authoritative after a train step; the host copy is pulled
 * lazily (weights, hash, checkpoint) and pushed after a load or set.
 * A batch may also live on the device (the resident batch, read in place).
 * ABFT checks: the gradient references are formed on the device (mlp_cuda.cu);
 * the per-sample forward/backward checks are CPU-only. */
#include "surrogate_impl.h"
#include "mlp_cuda.h"

#include <stdlib.h>

int SurrogateCUDAAvailable(void) { return mlp_cuda_available(); }
const char *SurrogateCUDAUnavailableReason(void) { return mlp_cuda_unavailable_reason(); }
int         SurrogateCUDAProbe(char *line, size_t len) { return mlp_cuda_probe(line, len); }

/* The device of this rank: -surrogate_device_id, or the node-local rank
 * modulo the node's device count (ranks may share a device). */
PetscErrorCode SurrogateCUDASelectDevice_Private(Surrogate s)
{
  int         count = mlp_cuda_device_count(), id;
  PetscMPIInt local;
  MPI_Comm    node;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_split_type(s->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_rank(node, &local));
  PetscCallMPI(MPI_Comm_free(&node));
  id = s->device_id_req >= 0 ? (int)s->device_id_req : (count > 0 ? local % count : 0);
  PetscCheck(id < count, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-surrogate_device_id %d: this node has %d CUDA device(s)", id, count);
  PetscCallMLP(mlp_cuda_select_device(id, s->device_name, sizeof s->device_name));
  s->device_id = id;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateCUDAHostAlloc_Private(size_t bytes, void **p)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_host_alloc(p, bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SurrogateCUDAHostFree_Private(void *p) { mlp_cuda_host_free(p); }

PetscErrorCode SurrogateCUDAPeak_Private(double *gflops, double *gbs)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_peak(gflops, gbs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

double SurrogateGradsumDepth_CUDA(red_strategy_t st, int64_t N) { return mlp_cuda_gradsum_depth(st, (long long)N); }

static PetscErrorCode CUDASetUp(Surrogate s)
{
  long long dim[SURR_MAX_LAYERS + 1];
  mlp_cuda *m = NULL;

  PetscFunctionBeginUser;
  for (int l = 0; l <= s->nlayer; l++) dim[l] = s->dim[l];
  PetscCallMLP(mlp_cuda_create(s->nlayer, dim, s->woff, s->boff, s->nparam, &m));
  s->be = m;
  mlp_cuda_set_gemm(m, (int)s->cuda_gemm);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mu_in, sd_in, mu_out, sd_out packed as the engine wants them */
static PetscErrorCode PackNorm(Surrogate s, float **norm)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(2 * (s->n_in + s->n_out), norm));
  PetscCall(PetscArraycpy(*norm, s->mu_in, s->n_in));
  PetscCall(PetscArraycpy(*norm + s->n_in, s->sd_in, s->n_in));
  PetscCall(PetscArraycpy(*norm + 2 * s->n_in, s->mu_out, s->n_out));
  PetscCall(PetscArraycpy(*norm + 2 * s->n_in + s->n_out, s->sd_out, s->n_out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* resident: in and out are the batch on the device (no copy); else host arrays */
static PetscErrorCode Predict(Surrogate s, PetscInt n, const float *in, float *out, PetscBool resident)
{
  float *norm;

  PetscFunctionBeginUser;
  PetscCall(PackNorm(s, &norm));
  if (resident) PetscCallMLP(mlp_cuda_predict_resident((mlp_cuda *)s->be, (size_t)n, in, norm, out));
  else PetscCallMLP(mlp_cuda_predict((mlp_cuda *)s->be, (size_t)n, in, norm, out));
  PetscCall(PetscFree(norm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAPredict(Surrogate s, PetscInt n, const float *in, float *out)
{
  return Predict(s, n, in, out, PETSC_FALSE);
}

static PetscErrorCode CUDAPredictDevice(Surrogate s, PetscInt n, const float *in, float *out)
{
  return Predict(s, n, in, out, PETSC_TRUE);
}

static PetscErrorCode CUDADeviceBatch(Surrogate s, size_t n, float **in, float **target, float **out)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_batch((mlp_cuda *)s->be, n, in, target, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Layer l's exponents for the reproducible gradient sums: its rows' maxima
 * over all ranks (a max is exact in any order), then the CPU's rule
 * (SurrogateLayerUnits_Private), handed back as bounds; called by every rank
 * for the same layers. */
static int LayerUnits(float *m, size_t n, int l, void *ctx)
{
  Surrogate s = (Surrogate)ctx;
  int32_t  *e;
  if (n != (size_t)s->dim[l + 1] + (size_t)s->dim[l] || n > (size_t)PETSC_MPI_INT_MAX) return 1;
  if (s->size > 1 && MPI_Allreduce(MPI_IN_PLACE, m, (int)n, MPI_FLOAT, MPI_MAX, s->comm) != MPI_SUCCESS) return 1;
  if (!(e = (int32_t *)malloc(n * sizeof *e))) return 1;
  (void)SurrogateLayerUnits_Private(s, l, m, e, NULL);
  for (size_t r = 0; r < n; r++) m[r] = gsum_unit_bound(e[r]);
  free(e);
  return 0;
}

/* resident: in and target on the device (the resident batch), else on the host */
static PetscErrorCode GradPartials(Surrogate s, PetscInt n, const float *in, const float *target, float cscale,
                                   red_partial_t *part, PetscBool resident)
{
  float *norm;

  PetscFunctionBeginUser;
  PetscCall(PackNorm(s, &norm));
  PetscCallMLP((resident ? mlp_cuda_grad_resident : mlp_cuda_grad)((mlp_cuda *)s->be, s->strategy, (size_t)n, in,
                                                                    target, norm, cscale, part,
                                                                    s->ck.on ? s->ck.gpart : NULL, s->ck.goff,
                                                                    s->strategy == RED_REPRODUCIBLE ? LayerUnits : NULL,
                                                                    s));
  PetscCall(PetscFree(norm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAGradPartials(Surrogate s, PetscInt n, const float *in, const float *target, float cscale,
                                       red_partial_t *part)
{
  PetscFunctionBeginUser;
  PetscCall(GradPartials(s, n, in, target, cscale, part, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAGradPartialsDevice(Surrogate s, PetscInt n, const float *in, const float *target,
                                             float cscale, red_partial_t *part)
{
  PetscFunctionBeginUser;
  PetscCall(GradPartials(s, n, in, target, cscale, part, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAAdam(Surrogate s, const float *grad, surr_adam_coef c)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_adam((mlp_cuda *)s->be, grad, c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAPull(Surrogate s)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_get_state((mlp_cuda *)s->be, s->w, s->m, s->v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDAPush(Surrogate s)
{
  PetscFunctionBeginUser;
  PetscCallMLP(mlp_cuda_set_state((mlp_cuda *)s->be, s->w, s->m, s->v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CUDADestroy(Surrogate s)
{
  PetscFunctionBeginUser;
  mlp_cuda_destroy((mlp_cuda *)s->be);
  s->be = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const SurrogateOps SurrogateOps_CUDA = {CUDASetUp,   CUDAPredict,     CUDAGradPartials,  CUDAAdam,
                                        CUDAPull,    CUDAPush,        CUDADestroy,       CUDADeviceBatch,
                                        CUDAPredictDevice, CUDAGradPartialsDevice};
