/* surrogate/surrogate_batch.c: batches that live on the CUDA device (the
 * coupled loop forms them there from the solver's device vectors). The CUDA
 * backend reads and writes them in place (mlp_cuda.h, the resident batch);
 * a backend without device buffers (CPU) hands out its own and stages each
 * call through host memory: the inputs copied there, the predictions back.
 * The results are SurrogatePredict's and SurrogateTrain's on the same values. */
#include "surrogate_impl.h"

#if defined(MINIAPP_HAVE_CUDA)
#include "mlp_cuda.h"

static PetscErrorCode FreeDevice(SurrogateDevBatch *b)
{
  PetscFunctionBeginUser;
  mlp_cuda_dev_free(b->in), mlp_cuda_dev_free(b->tgt), mlp_cuda_dev_free(b->out);
  b->in = b->tgt = b->out = NULL, b->cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* host staging of n rows (s->db.hin, htgt, hout), grown as n needs */
static PetscErrorCode Staging(Surrogate s, size_t n)
{
  SurrogateDevBatch *b = &s->db;

  PetscFunctionBeginUser;
  if (n <= b->hcap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree3(b->hin, b->htgt, b->hout));
  PetscCall(PetscMalloc3(n * (size_t)s->n_in, &b->hin, n * (size_t)s->n_out, &b->htgt, n * (size_t)s->n_out, &b->hout));
  b->hcap = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateStageToHost_Private(Surrogate s, PetscInt n, const float *in, const float *target,
                                            const float **hin, const float **htarget)
{
  size_t m = (size_t)n;

  PetscFunctionBeginUser;
  PetscCall(Staging(s, m));
  PetscCallMLP(mlp_cuda_copy(s->db.hin, in, m * (size_t)s->n_in * sizeof(float), 0));
  if (target) PetscCallMLP(mlp_cuda_copy(s->db.htgt, target, m * (size_t)s->n_out * sizeof(float), 0));
  *hin = s->db.hin;
  if (htarget) *htarget = target ? s->db.htgt : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateDeviceBatchDestroy_Private(Surrogate s)
{
  PetscFunctionBeginUser;
  PetscCall(FreeDevice(&s->db));
  PetscCall(PetscFree3(s->db.hin, s->db.htgt, s->db.hout));
  s->db.hcap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateGetDeviceBatch(Surrogate s, PetscInt n, float **in, float **target, float **out)
{
  SurrogateDevBatch *b = &s->db;
  size_t             m = (size_t)n;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateCheckCount_Private(n, "batch size"));
  if (s->ops->device_batch) {
    PetscCall(s->ops->device_batch(s, m, in, target, out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(mlp_cuda_available(), PETSC_COMM_SELF, PETSC_ERR_SUP, "a batch on the device needs a usable one: %s",
             mlp_cuda_unavailable_reason());
  if (m > b->cap) {
    PetscCall(FreeDevice(b));
    PetscCallMLP(mlp_cuda_dev_alloc((void **)&b->in, m * (size_t)s->n_in * sizeof(float)));
    PetscCallMLP(mlp_cuda_dev_alloc((void **)&b->tgt, m * (size_t)s->n_out * sizeof(float)));
    PetscCallMLP(mlp_cuda_dev_alloc((void **)&b->out, m * (size_t)s->n_out * sizeof(float)));
    b->cap = m;
  }
  *in = b->in, *target = b->tgt, *out = b->out;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogatePredictDevice(Surrogate s, PetscInt n, const float in[], float out[])
{
  const float *hin;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  PetscCall(SurrogateCheckCount_Private(n, "prediction count"));
  if (n == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (s->ops->predict_device) {
    PetscCall(s->ops->predict_device(s, n, in, out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SurrogateStageToHost_Private(s, n, in, NULL, &hin, NULL));
  PetscCall(s->ops->predict(s, n, hin, s->db.hout));
  PetscCallMLP(mlp_cuda_copy(out, s->db.hout, (size_t)n * (size_t)s->n_out * sizeof(float), 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateTrainDevice(Surrogate s, PetscInt n, const float in[], const float target[], float *loss)
{
  const float *hin, *htarget;

  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  if (s->ops->grad_partials_device || n <= 0) { /* n < 0: refused there */
    PetscCall(SurrogateTrainStep_Private(s, n, in, target, (PetscBool)!!s->ops->grad_partials_device, loss));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(SurrogateStageToHost_Private(s, n, in, target, &hin, &htarget));
  PetscCall(SurrogateTrainStep_Private(s, n, hin, htarget, PETSC_FALSE, loss));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else /* no device: no batch can be there */
static PetscErrorCode NoDevice(Surrogate s)
{
  SETERRQ(s->comm, PETSC_ERR_SUP, "a batch on the device needs a build with CUDA");
}
PetscErrorCode SurrogateStageToHost_Private(Surrogate s, PetscInt n, const float *in, const float *target,
                                            const float **hin, const float **htarget)
{
  (void)n, (void)in, (void)target, (void)hin, (void)htarget;
  return NoDevice(s);
}
PetscErrorCode SurrogateDeviceBatchDestroy_Private(Surrogate s) { return ((void)s, PETSC_SUCCESS); }
PetscErrorCode SurrogateGetDeviceBatch(Surrogate s, PetscInt n, float **in, float **target, float **out)
{
  (void)n, (void)in, (void)target, (void)out;
  return NoDevice(s);
}
PetscErrorCode SurrogatePredictDevice(Surrogate s, PetscInt n, const float in[], float out[])
{
  (void)n, (void)in, (void)out;
  return NoDevice(s);
}
PetscErrorCode SurrogateTrainDevice(Surrogate s, PetscInt n, const float in[], const float target[], float *loss)
{
  (void)n, (void)in, (void)target, (void)loss;
  return NoDevice(s);
}
#endif
