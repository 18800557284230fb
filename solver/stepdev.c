/* solver/stepdev.c: the step outside the Krylov solve on the device
 * (-solver_device cuda): the scenarios' right-hand sides, the scan of the
 * new state and its hash (kernels/step_cuda.h), with the host's bits, so a step's
 * work stays on the device. Heat's right-hand side reads its neighbours:
 * on 2+ ranks their edges come through the operator's halo (opdev.c). */
#include "solver_impl.h"
#include "vecdev.h"

#if defined(MINIAPP_HAVE_CUDA)
#include "step_cuda.h"
#include "vec_cuda.h"

struct SolverDev {
  double *closure; /* the closure model's factor per owned point (SolverSetClosure), or NULL */
  double *sx, *cy; /* heat's exact-solution factors (step_heat_t) */
  double  sx1, cy1;
  double *scan;    /* the scan's scratch */
};

static PetscErrorCode Dev(Solver s, struct SolverDev **d)
{
  PetscFunctionBegin;
  if (!s->dev) PetscCall(PetscNew(&s->dev));
  *d = s->dev;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDevGSRHS(Solver s, Vec w, Vec b, PetscBool *done)
{
  struct SolverDev *d = NULL;
  double           *wd, *bd;
  PetscInt          n;

  PetscFunctionBegin;
  *done = (PetscBool)(s->device && VecDevIs(w) && VecDevIs(b));
  if (!*done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Dev(s, &d));
  PetscCall(VecGetLocalSize(w, &n));
  PetscCall(VecFPNADeviceArray(w, VEC_DEVICE_READ, &wd));
  PetscCall(VecFPNADeviceArray(b, VEC_DEVICE_WRITE, &bd));
  CKD(step_cuda_gs_rhs((size_t)n / 2, s->dt, s->F, s->k, wd, s->closure ? d->closure : NULL, bd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDevSetClosure(Solver s, const PetscScalar *q, PetscInt n)
{
  struct SolverDev *d = NULL;

  PetscFunctionBegin;
  if (!s->device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Dev(s, &d));
  if (!d->closure) CKD(vec_cuda_alloc(&d->closure, (size_t)n));
  if (q) CKD(vec_cuda_to_device(d->closure, q, (size_t)n)); /* a batch, not a vector: not counted */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDevHeatRHS(Solver s, Vec u, Vec b, step_heat_t *h,
                                PetscErrorCode (*tables)(Solver, double *, double *, double *, double *),
                                PetscBool *done)
{
  struct SolverDev *d = NULL;
  double           *ud, *bd;
  PetscInt          xs, ys, xm, ym;
  PetscMPIInt       size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(s->comm, &size));
  *done = (PetscBool)(s->device && VecDevIs(u) && VecDevIs(b));
  if (!*done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Dev(s, &d));
  if (!d->sx) { /* the grid's factors, once */
    double *sx, *cy;
    PetscCall(PetscMalloc2(s->M + 2, &sx, s->N + 2, &cy));
    PetscCall(tables(s, sx, cy, &d->sx1, &d->cy1));
    CKD(vec_cuda_alloc(&d->sx, (size_t)s->M + 2));
    CKD(vec_cuda_alloc(&d->cy, (size_t)s->N + 2));
    CKD(vec_cuda_to_device(d->sx, sx, (size_t)s->M + 2));
    CKD(vec_cuda_to_device(d->cy, cy, (size_t)s->N + 2));
    PetscCall(PetscFree2(sx, cy));
  }
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  h->M = (int)s->M, h->N = (int)s->N, h->xs = (int)xs, h->ys = (int)ys, h->xm = (int)xm, h->ym = (int)ym;
  h->sx = d->sx, h->cy = d->cy, h->sx1 = d->sx1, h->cy1 = d->cy1, h->g = NULL;
  if (size > 1) PetscCall(OperatorDevExchange(s->A, u, &h->g)); /* the neighbours' edges of u */
  PetscCall(VecFPNADeviceArray(u, VEC_DEVICE_READ, &ud));
  PetscCall(VecFPNADeviceArray(b, VEC_DEVICE_WRITE, &bd));
  CKD(step_cuda_heat_rhs(h, ud, bd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The state's device array and the scratch of its scans, when the state is on the device (*done). */
static PetscErrorCode DevState(Solver s, double **ud, double **scratch, PetscBool *done)
{
  struct SolverDev *d = NULL;

  PetscFunctionBegin;
  *done = (PetscBool)(s->device && VecDevIs(s->u));
  if (!*done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(Dev(s, &d));
  if (!d->scan) CKD(vec_cuda_alloc(&d->scan, STEP_SCAN_SCRATCH));
  PetscCall(VecFPNADeviceArray(s->u, VEC_DEVICE_READ, ud));
  *scratch = d->scan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DevScan(Solver s, PetscInt n, step_scan_t *sc, PetscBool *done)
{
  double *ud = NULL, *scratch = NULL;

  PetscFunctionBegin;
  PetscCall(DevState(s, &ud, &scratch, done));
  if (*done) CKD(step_cuda_scan((size_t)n, ud, scratch, sc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DevHash(Solver s, size_t xm, size_t ym, size_t xs, size_t ys, uint64_t *h, PetscBool *done)
{
  double *ud = NULL, *scratch = NULL;

  PetscFunctionBegin;
  PetscCall(DevState(s, &ud, &scratch, done));
  if (*done) CKD(step_cuda_hash(xm, ym, xs, ys, (size_t)s->M, (size_t)s->dof, ud, scratch, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverDeviceHalo(Solver s, Vec v, const double **g)
{
  PetscFunctionBegin;
  PetscCall(OperatorDevExchange(s->A, v, g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SolverDevDestroy(Solver s)
{
  if (!s->dev) return;
  (void)vec_cuda_free(s->dev->closure), (void)vec_cuda_free(s->dev->sx), (void)vec_cuda_free(s->dev->cy);
  (void)vec_cuda_free(s->dev->scan);
  (void)PetscFree(s->dev);
}

#else /* no device: the host's code does it all */
PetscErrorCode SolverDevGSRHS(Solver s, Vec w, Vec b, PetscBool *done)
{
  (void)s, (void)w, (void)b;
  *done = PETSC_FALSE;
  return PETSC_SUCCESS;
}
PetscErrorCode SolverDevSetClosure(Solver s, const PetscScalar *q, PetscInt n)
{
  (void)s, (void)q, (void)n;
  return PETSC_SUCCESS;
}
PetscErrorCode SolverDevHeatRHS(Solver s, Vec u, Vec b, step_heat_t *h,
                                PetscErrorCode (*tables)(Solver, double *, double *, double *, double *),
                                PetscBool *done)
{
  (void)s, (void)u, (void)b, (void)h, (void)tables;
  *done = PETSC_FALSE;
  return PETSC_SUCCESS;
}
static PetscErrorCode DevScan(Solver s, PetscInt n, step_scan_t *sc, PetscBool *done)
{
  (void)s, (void)n, (void)sc;
  *done = PETSC_FALSE;
  return PETSC_SUCCESS;
}
static PetscErrorCode DevHash(Solver s, size_t xm, size_t ym, size_t xs, size_t ys, uint64_t *h, PetscBool *done)
{
  (void)s, (void)xm, (void)ym, (void)xs, (void)ys, (void)h;
  *done = PETSC_FALSE;
  return PETSC_SUCCESS;
}
void SolverDevDestroy(Solver s) { (void)s; }
PetscErrorCode SolverDeviceHalo(Solver s, Vec v, const double **g)
{
  (void)s, (void)v, (void)g;
  return PETSC_ERR_SUP;
}
#endif

/* What the loop reads reaches the device before it: a KSP's preconditioner,
 * set up, applied once (b is formed anew at the first step). */
PetscErrorCode SolverDevWarm(Solver s, KSP ksp)
{
  PC pc;

  PetscFunctionBegin;
  if (!s->device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCApply(pc, s->u, s->b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SolverStateScan(Solver s, step_scan_t *sc)
{
  PetscInt  n;
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(s->u, &n));
  PetscCall(DevScan(s, n, sc, &done));
  if (!done) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(s->u, &a));
    step_scan((size_t)n, a, sc);
    PetscCall(VecRestoreArrayRead(s->u, &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The state's hash, independent of the summation order and the decomposition (step.h). */
PetscErrorCode SolverStateHash(Solver s, uint64_t *hash)
{
  PetscInt  xs, ys, xm, ym;
  uint64_t  h = 0;
  PetscBool done;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DevHash(s, (size_t)xm, (size_t)ym, (size_t)xs, (size_t)ys, &h, &done));
  if (!done) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(s->u, &a));
    h = step_hash((size_t)xm, (size_t)ym, (size_t)xs, (size_t)ys, (size_t)s->M, (size_t)s->dof, a);
    PetscCall(VecRestoreArrayRead(s->u, &a));
  }
  PetscCallMPI(MPI_Allreduce(&h, hash, 1, MPI_UINT64_T, MPI_SUM, s->comm)); /* integer: exact */
  PetscFunctionReturn(PETSC_SUCCESS);
}
