/* miniapp/loop/batch.c: where the surrogate's batch lives. On one rank with
 * the solver's vectors on the device (-solver_device cuda) it is formed there,
 * from the vectors' device arrays, in the network's device buffers
 * (SurrogateGetDeviceBatch: its own on the CUDA device, staged through the
 * host for a CPU network), and the correction is written there: these
 * phases copy no vector (on 2+ ranks the stencils' neighbours across a
 * block's edge come as strips, the solver's halo). With a CPU solver it is
 * on the host, where features.c forms it. The kernels (kernels/couple_cuda.h)
 * give the host's bits. */
#include "coupling_impl.h"
#include "vecred.h"

#if defined(MINIAPP_HAVE_CUDA)
#include "couple_cuda.h"
#include "cuda_call.h"

#define CKB(x) \
  do { \
    int e_ = (x); \
    PetscCheck(!e_, PETSC_COMM_SELF, PETSC_ERR_LIB, "CUDA error %d (%s) in %.*s", e_, couple_cuda_error_string(e_), \
               CUDA_CALL_NAME(#x), #x); \
  } while (0)
#endif

PetscErrorCode BatchSetUp(Coupled c, Replica *p)
{
  PetscBool      dev;
  DMBoundaryType bx;
  DM             da;

  PetscFunctionBegin;
  if (p->batch_placed) PetscFunctionReturn(PETSC_SUCCESS);
  p->batch_placed = PETSC_TRUE;
  PetscCall(SolverUsesDevice(p->solver, &dev));
  if (!dev || !c->npts) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SolverGetDM(p->solver, &da));
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bx, NULL, NULL, NULL));
  c->periodic = (PetscBool)(bx == DM_BOUNDARY_PERIODIC);
#if defined(MINIAPP_HAVE_CUDA)
  PetscCall(SurrogateGetDeviceBatch(p->net, c->npts, &p->dfeat, &p->dtarget, &p->dout));
  CKB(couple_cuda_alloc((void **)&p->dflag, sizeof *p->dflag));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The network's buffers are its own (freed with it); the flag is the loop's. */
PetscErrorCode BatchDestroy(Replica *p)
{
  PetscFunctionBegin;
#if defined(MINIAPP_HAVE_CUDA)
  if (p->dflag) CKB(couple_cuda_free(p->dflag));
#endif
  p->dflag = NULL, p->dfeat = p->dout = p->dtarget = NULL, p->batch_placed = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(MINIAPP_HAVE_CUDA)
/* v's device array (for reading: the host's copied over where only it holds them) */
static PetscErrorCode DevArray(Vec v, VecDeviceAccess mode, double **d)
{
  PetscFunctionBegin;
  PetscCall(VecFPNADeviceArray(v, mode, d));
  PetscCheck(*d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a batch on the device with a vector that is not there");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ReadArray(Vec v, const double **d) { return DevArray(v, VEC_DEVICE_READ, (double **)d); }

PetscErrorCode BatchStencils(Coupled c, Replica *p, Vec v, PetscReal is, PetscInt nst, PetscInt off)
{
  const double *u = NULL;

  PetscFunctionBegin;
  PetscCall(ReadArray(v, &u));
  if (c->size > 1) { /* the neighbours' edges of v, staged through the host (the solver's halo) */
    const double *g;
    PetscCall(SolverDeviceHalo(p->solver, v, &g));
    CKB(couple_cuda_stencils_halo((int)c->xm, (int)c->ym, (int)c->dof, (int)nst, (size_t)c->n_in, (size_t)off, is, u,
                                  g, p->dfeat));
  } else
    CKB(couple_cuda_stencils((int)c->M, (int)c->N, (int)c->dof, (int)c->periodic, (int)nst, (size_t)c->n_in,
                             (size_t)off, is, u, p->dfeat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchTarget(Coupled c, Replica *p, Vec a, Vec b, PetscReal s)
{
  const double *da = NULL, *db = NULL;

  PetscFunctionBegin;
  PetscCall(ReadArray(a, &da));
  if (b) PetscCall(ReadArray(b, &db));
  CKB(couple_cuda_target((size_t)(c->npts * c->dof), da, db, s, p->dtarget));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchCorrection(Coupled c, Replica *p)
{
  double *z;

  PetscFunctionBegin;
  PetscCall(DevArray(p->z, VEC_DEVICE_WRITE, &z));
  CKB(couple_cuda_correction((size_t)(c->npts * c->dof), p->sz, p->dout, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchNonFinite(Coupled c, Replica *p, int *bad)
{
  PetscFunctionBegin;
  CKB(couple_cuda_nonfinite((size_t)(c->npts * c->n_out), p->dout, p->dflag, bad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchToHost(Coupled c, Replica *p, PetscBool feat, PetscBool out, PetscBool target)
{
  size_t nf = (size_t)c->npts * (size_t)c->n_in * sizeof(float);
  size_t no = (size_t)c->npts * (size_t)c->n_out * sizeof(float);

  PetscFunctionBegin;
  if (!p->dfeat) PetscFunctionReturn(PETSC_SUCCESS);
  if (feat) CKB(couple_cuda_to_host(p->feat, p->dfeat, nf));
  if (out) CKB(couple_cuda_to_host(p->out, p->dout, no));
  if (target) CKB(couple_cuda_to_host(p->target, p->dtarget, no));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchTargetToDevice(Coupled c, Replica *p)
{
  PetscFunctionBegin;
  if (p->dfeat) CKB(couple_cuda_to_device(p->dtarget, p->target, (size_t)c->npts * (size_t)c->n_out * sizeof(float)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BatchDiff(Vec a, Vec b, diff_acc *acc, PetscBool *done)
{
  double  *da = NULL, *db = NULL;
  PetscInt n;

  PetscFunctionBegin;
  PetscCall(VecFPNADeviceArray(a, VEC_DEVICE_READ, &da));
  if (da) PetscCall(VecFPNADeviceArray(b, VEC_DEVICE_READ, &db));
  *done = (PetscBool)(da && db);
  if (!*done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetLocalSize(a, &n));
  CKB(couple_cuda_diff((size_t)n, da, db, acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else /* no device: the batch is always on the host (p->dfeat NULL), and these are never called */
static PetscErrorCode NoDevice(Coupled c)
{
  SETERRQ(c->comm, PETSC_ERR_SUP, "a batch on the device needs a build with CUDA");
}
PetscErrorCode BatchStencils(Coupled c, Replica *p, Vec v, PetscReal is, PetscInt nst, PetscInt off)
{
  (void)p, (void)v, (void)is, (void)nst, (void)off;
  return NoDevice(c);
}
PetscErrorCode BatchTarget(Coupled c, Replica *p, Vec a, Vec b, PetscReal s)
{
  (void)p, (void)a, (void)b, (void)s;
  return NoDevice(c);
}
PetscErrorCode BatchCorrection(Coupled c, Replica *p)
{
  (void)p;
  return NoDevice(c);
}
PetscErrorCode BatchNonFinite(Coupled c, Replica *p, int *bad)
{
  (void)p, (void)bad;
  return NoDevice(c);
}
PetscErrorCode BatchToHost(Coupled c, Replica *p, PetscBool feat, PetscBool out, PetscBool target)
{
  return ((void)c, (void)p, (void)feat, (void)out, (void)target, PETSC_SUCCESS);
}
PetscErrorCode BatchTargetToDevice(Coupled c, Replica *p) { return ((void)c, (void)p, PETSC_SUCCESS); }
PetscErrorCode BatchDiff(Vec a, Vec b, diff_acc *acc, PetscBool *done)
{
  return ((void)a, (void)b, (void)acc, *done = PETSC_FALSE, PETSC_SUCCESS);
}
#endif
