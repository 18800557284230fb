/* surrogate/surrogate_faults.c: the surrogate's side of the fault-injection
 * study (kernels/fault.h): which sites a surrogate supports, and the mapping
 * of the activation site's global entries (sample-major over the global batch)
 * onto the CPU backend's feature-major layer outputs. The weight and gradient
 * sites are one call each in surrogate_step.c. */
#include "surrogate_impl.h"

PetscErrorCode SurrogateSetFaults(Surrogate s, fault_ctx *f)
{
  PetscFunctionBeginUser;
  s->fault = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SurrogateFaultSiteSupported(Surrogate s, int site, PetscBool *ok)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCheckSetUp_Private(s, PETSC_TRUE, PETSC_FUNCTION_NAME));
  switch (site) {
  case FAULT_GRADIENT:
  case FAULT_WEIGHT: *ok = PETSC_TRUE; break;
  case FAULT_ACTIVATION:
    *ok = s->device == SURROGATE_DEVICE_CPU ? PETSC_TRUE : PETSC_FALSE;
    break; /* the CUDA engine keeps activations on the device */
  default: *ok = PETSC_FALSE; break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One call of the activation site for one layer (the kernels count the calls:
 * layer 1 is the first). The rank's entries first*width .. (first+n)*width-1
 * are handed to the hook in its numbering (entry = sample * width + unit), as a
 * sample-major copy; the one flipped value, if this rank holds it, is written
 * back to A[unit][sample]. Runs only while the activation site is armed. */
PetscErrorCode SurrogateFaultActivation_Private(fault_ctx *f, float *A, size_t width, size_t n, size_t cap,
                                                long long first, long long Ntot)
{
  float *x;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n * width + 1, &x));
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < width; j++) x[i * width + j] = A[j * cap + i];
  if (fault_hit_float_(f, FAULT_ACTIVATION, x, n * width, first * (long long)width, Ntot * (long long)width)) {
    long long e = fault_get_record(f)->entry - first * (long long)width;
    size_t    i = (size_t)e / width, j = (size_t)e % width;
    A[j * cap + i] = x[e];
  }
  PetscCall(PetscFree(x));
  PetscFunctionReturn(PETSC_SUCCESS);
}
