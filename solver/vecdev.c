/* solver/vecdev.c: the fpna vector with a device mirror, type "fpnacuda"
 * (the compiled strategy; vecred.h). Its values live in PETSc's host array,
 * as an fpna vector's, and in a device array, each side valid or not:
 *   - its reductions and element-wise operations run on the device, the
 *     inputs copied there first where only the host holds them
 *     (kernels/reduce_cuda.h, kernels/vec_cuda.h: the CPU's bits);
 *   - every other access goes through PETSc's array hooks (VecGetArray*,
 *     and so DMDAVecGetArray, DMGlobalToLocal, PETSc's own ops), which copy
 *     the device's values to the host first where only the device holds
 *     them, and mark the host's the valid ones after a write.
 * Each such full-vector copy is counted (VecFPNADeviceCopies): a loop whose
 * work is all on the device makes none. Without CUDA (and outside the
 * emulation's build) the type is not registered. */
#include "vecdev.h"
#include "solver.h" /* PETSC_SUCCESS on PETSc 3.18 */

#include <stdio.h>

#if defined(MINIAPP_HAVE_CUDA)
#include "reduce_cuda.h"
#include "step_cuda.h"
#include "vec_cuda.h"

#include <petsc/private/vecimpl.h>

#define DEV_KEY "fpna_device"
enum { ON_HOST = 1, ON_DEVICE = 2, ON_BOTH = 3 };

typedef struct {
  double      *d;     /* the device array (allocated at the first copy there) */
  int          where; /* ON_*: which side holds the valid values */
  red_cuda_ws *ws;    /* the reductions' scratch */
  double      *scan;  /* the maximum's scratch (STEP_SCAN_SCRATCH), or NULL */
} VecDev;

static PetscInt64 copies; /* full-vector copies between host and device */
static PetscErrorCode (*host_duplicate)(Vec, Vec *);

static PetscScalar *HostArray(Vec v)
{
  typedef struct {
    VECHEADER
  } Header;
  return ((Header *)v->data)->array;
}

static PetscErrorCode DevDestroy(void *ctx)
{
  VecDev *dv = (VecDev *)ctx;

  PetscFunctionBegin;
  if (dv->ws) red_cuda_ws_destroy(&dv->ws);
  (void)vec_cuda_free(dv->scan);
  (void)vec_cuda_free(dv->d); /* an error here is an earlier kernel's, reported where it was waited for */
  PetscCall(PetscFree(dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GetDev(Vec v, VecDev **dv)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)v, DEV_KEY, (PetscObject *)&c));
  PetscCheck(c, PETSC_COMM_SELF, PETSC_ERR_PLIB, "an fpnacuda vector without its device mirror");
  PetscCall(PetscContainerGetPointer(c, (void **)dv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The values valid on the host: copied from the device where only it holds them. */
static PetscErrorCode ToHost(Vec v, VecDev *dv)
{
  PetscFunctionBegin;
  if (!(dv->where & ON_HOST)) {
    CKD(vec_cuda_to_host(HostArray(v), dv->d, (size_t)v->map->n));
    copies++, dv->where = ON_BOTH;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device array, its values valid (copied from the host where only it holds them) unless write_only. */
static PetscErrorCode DeviceArray(Vec v, PetscBool write_only, double **d)
{
  VecDev *dv;

  PetscFunctionBegin;
  PetscCall(GetDev(v, &dv));
  if (!dv->d && v->map->n) CKD(vec_cuda_alloc(&dv->d, (size_t)v->map->n));
  if (!write_only && !(dv->where & ON_DEVICE)) {
    CKD(vec_cuda_to_device(dv->d, HostArray(v), (size_t)v->map->n));
    copies++, dv->where = ON_BOTH;
  }
  if (write_only) { /* the caller writes every entry there: PETSc's cached norms of v are stale */
    dv->where = ON_DEVICE;
    PetscCall(PetscObjectStateIncrease((PetscObject)v));
  }
  *d = dv->d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device array was written: the host's values are stale, and so are
 * PETSc's cached norms of v (a kernel's write passes no VecRestoreArray). */
static PetscErrorCode Written(Vec v)
{
  VecDev *dv;

  PetscFunctionBegin;
  PetscCall(GetDev(v, &dv));
  dv->where = ON_DEVICE;
  PetscCall(PetscObjectStateIncrease((PetscObject)v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- PETSc's array hooks: the host array, valid ---------------------- */
static PetscErrorCode GetArrayRead(Vec v, const PetscScalar **a)
{
  VecDev *dv;

  PetscFunctionBegin;
  PetscCall(GetDev(v, &dv));
  PetscCall(ToHost(v, dv));
  *a = HostArray(v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GetArray(Vec v, PetscScalar **a) { return GetArrayRead(v, (const PetscScalar **)a); }

static PetscErrorCode GetArrayWrite(Vec v, PetscScalar **a) /* every entry is written: nothing to copy */
{
  PetscFunctionBegin;
  *a = HostArray(v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RestoreArray(Vec v, PetscScalar **a) /* a write on the host: the device's values are stale */
{
  VecDev *dv;

  PetscFunctionBegin;
  (void)a;
  PetscCall(GetDev(v, &dv));
  dv->where = ON_HOST;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's placearray, resetarray and replacearray swap the host array: the
 * device's values reach the array they leave (reset: the placed one) first,
 * and the new array's values are the valid ones after. */
static PetscErrorCode (*host_place)(Vec, const PetscScalar *), (*host_reset)(Vec), (*host_replace)(Vec, const PetscScalar *);

static PetscErrorCode Swapped(Vec v, PetscErrorCode swap(Vec, const PetscScalar *), PetscErrorCode reset(Vec),
                              const PetscScalar *a)
{
  VecDev *dv;

  PetscFunctionBegin;
  PetscCall(GetDev(v, &dv));
  PetscCall(ToHost(v, dv));
  PetscCall(swap ? swap(v, a) : reset(v));
  dv->where = ON_HOST;
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode PlaceArray(Vec v, const PetscScalar *a) { return Swapped(v, host_place, NULL, a); }
static PetscErrorCode ResetArray(Vec v) { return Swapped(v, NULL, host_reset, NULL); }
static PetscErrorCode ReplaceArray(Vec v, const PetscScalar *a) { return Swapped(v, host_replace, NULL, a); }

/* ---- the element-wise operations on the device ------------------------ */
static PetscErrorCode AXPBY(Vec y, PetscScalar a, PetscScalar b, Vec x) /* y = a x + b y */
{
  double *yd = NULL, *xd = NULL;

  PetscFunctionBegin;
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  CKD(vec_cuda_axpby(yd, a, xd, b, (size_t)y->map->n));
  PetscCall(Written(y));
  PetscCall(PetscLogFlops(3.0 * y->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 1 * v == v exactly and + commutes: the host's AXPY and AYPX round the same way */
static PetscErrorCode AXPY(Vec y, PetscScalar a, Vec x) { return AXPBY(y, a, 1.0, x); }
static PetscErrorCode AYPX(Vec y, PetscScalar a, Vec x) { return AXPBY(y, 1.0, a, x); }

static PetscErrorCode MAXPY(Vec y, PetscInt nv, const PetscScalar *a, Vec *x) /* y += sum_j a_j x_j, j ascending */
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < nv; j++) PetscCall(AXPY(y, a[j], x[j]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode WAXPY(Vec w, PetscScalar a, Vec x, Vec y) /* w = a x + y */
{
  double *wd = NULL, *xd = NULL, *yd = NULL;

  PetscFunctionBegin;
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  PetscCall(DeviceArray(w, PETSC_TRUE, &wd));
  CKD(vec_cuda_waxpy(wd, a, xd, yd, (size_t)w->map->n));
  PetscCall(PetscLogFlops(2.0 * w->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PointwiseMult(Vec w, Vec x, Vec y)
{
  double *wd = NULL, *xd = NULL, *yd = NULL;

  PetscFunctionBegin;
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  PetscCall(DeviceArray(w, PETSC_TRUE, &wd));
  CKD(vec_cuda_pointwise_mult(wd, xd, yd, (size_t)w->map->n));
  PetscCall(PetscLogFlops(1.0 * w->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Copy(Vec x, Vec y)
{
  double *xd = NULL, *yd = NULL;

  PetscFunctionBegin;
  if (x == y) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  PetscCall(DeviceArray(y, PETSC_TRUE, &yd));
  CKD(vec_cuda_copy(yd, xd, (size_t)y->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Set(Vec y, PetscScalar a)
{
  double *yd = NULL;

  PetscFunctionBegin;
  PetscCall(DeviceArray(y, PETSC_TRUE, &yd));
  CKD(vec_cuda_set(yd, a, (size_t)y->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Scale(Vec y, PetscScalar a) /* as PETSc's: a = 0 writes zeros, a = 1 leaves y */
{
  double *yd = NULL;

  PetscFunctionBegin;
  if (a == 1.0) PetscFunctionReturn(PETSC_SUCCESS);
  if (a == 0.0) PetscFunctionReturn(Set(y, 0.0));
  PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  CKD(vec_cuda_scale(yd, a, (size_t)y->map->n));
  PetscCall(Written(y));
  PetscCall(PetscLogFlops(1.0 * y->map->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the type --------------------------------------------------------- */
static PetscErrorCode Attach(Vec v) /* a fresh mirror: the host's values are the valid ones */
{
  VecDev        *dv;
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscNew(&dv));
  dv->where = ON_HOST;
  if (red_cuda_ws_create(&dv->ws)) {
    PetscCall(PetscFree(dv));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "fpnacuda: no device memory for a vector's reductions");
  }
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, dv));
  PetscCall(PetscContainerSetUserDestroy(c, DevDestroy));
  PetscCall(PetscObjectCompose((PetscObject)v, DEV_KEY, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  v->ops->getarray = GetArray, v->ops->getarrayread = GetArrayRead, v->ops->getarraywrite = GetArrayWrite;
  v->ops->restorearray = RestoreArray, v->ops->restorearraywrite = RestoreArray;
  v->ops->axpy = AXPY, v->ops->aypx = AYPX, v->ops->axpby = AXPBY, v->ops->maxpy = MAXPY, v->ops->waxpy = WAXPY;
  v->ops->pointwisemult = PointwiseMult, v->ops->copy = Copy, v->ops->set = Set, v->ops->scale = Scale;
  if (v->ops->placearray != PlaceArray) host_place = v->ops->placearray, v->ops->placearray = PlaceArray;
  if (v->ops->resetarray != ResetArray) host_reset = v->ops->resetarray, v->ops->resetarray = ResetArray;
  if (v->ops->replacearray != ReplaceArray) host_replace = v->ops->replacearray, v->ops->replacearray = ReplaceArray;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A duplicate inherits the composed objects (the seeded order's slot), then gets a mirror of its own. */
static PetscErrorCode Duplicate(Vec w, Vec *v)
{
  PetscFunctionBegin;
  PetscCall(host_duplicate(w, v));
  PetscCall(Attach(*v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode (*host_create)(Vec);

static PetscErrorCode VecCreate_FPNACUDA(Vec v)
{
  PetscFunctionBegin;
  PetscCall(host_create(v));
  PetscCall(Attach(v));
  v->ops->duplicate = Duplicate;
  PetscCall(PetscObjectChangeTypeName((PetscObject)v, VECFPNACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool VecDevIs(Vec v) { return (PetscBool)(v->ops->getarray == GetArray); }

PetscErrorCode VecDevLocalPartial(red_strategy_t s, red_op_t op, Vec x, Vec y, red_partial_t *p, red_atomic_state *ord)
{
  double *xd = NULL, *yd = NULL;
  VecDev *dv;

  PetscFunctionBegin;
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  if (y) PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  PetscCall(GetDev(x, &dv));
  CKD(red_cuda_local(dv->ws, s, op, (size_t)x->map->n, xd, yd, p, ord));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevCGTail(red_strategy_t s, PetscScalar a, Vec x, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp, Vec z,
                            red_partial_t part[2], red_atomic_state *ord)
{
  double      *xd = NULL, *pd = NULL, *rd = NULL, *wd = NULL, *dd = NULL, *zd = NULL;
  const size_t n  = (size_t)x->map->n;
  VecDev      *dv;

  PetscFunctionBegin;
  PetscCall(DeviceArray(dinv, PETSC_FALSE, &dd)); /* of period dp: its first dp entries read */
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  PetscCall(DeviceArray(p, PETSC_FALSE, &pd));
  PetscCall(DeviceArray(r, PETSC_FALSE, &rd));
  PetscCall(DeviceArray(w, PETSC_FALSE, &wd));
  PetscCall(DeviceArray(z, w == z ? PETSC_FALSE : PETSC_TRUE, &zd));
  CKD(vec_cuda_cg_tail(n, a, xd, pd, rd, wd, dd, (int)dp, zd));
  PetscCall(Written(x));
  PetscCall(Written(r));
  PetscCall(Written(z));
  PetscCall(GetDev(x, &dv));
  CKD(red_cuda_local(dv->ws, s, RED_OP_SUMSQ, n, zd, NULL, &part[0], ord)); /* zz's draw first, as red_cg_tail's */
  CKD(red_cuda_local(dv->ws, s, RED_OP_DOT, n, zd, rd, &part[1], ord));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevFaultHit(fault_ctx *f, fault_site site, Vec y)
{
  PetscInt  lo, N;
  long long k;
  double   *yd = NULL, v;

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(y, &lo, NULL));
  PetscCall(VecGetSize(y, &N));
  k = fault_take(f, site, (size_t)y->map->n, (long long)lo, (long long)N);
  if (k < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DeviceArray(y, PETSC_FALSE, &yd));
  CKD(vec_cuda_to_host(&v, yd + k, 1));
  fault_flip_double(f, &v);
  CKD(vec_cuda_to_device(yd + k, &v, 1));
  PetscCall(Written(y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevMaxAbs(Vec x, PetscReal *m)
{
  double     *xd = NULL;
  VecDev     *dv;
  step_scan_t sc;

  PetscFunctionBegin;
  PetscCall(GetDev(x, &dv));
  if (!dv->scan) CKD(vec_cuda_alloc(&dv->scan, STEP_SCAN_SCRATCH));
  PetscCall(DeviceArray(x, PETSC_FALSE, &xd));
  CKD(step_cuda_scan((size_t)x->map->n, xd, dv->scan, &sc));
  /* the host loop's: the last NaN's magnitude, else the largest |x_i|, 0 for none */
  *m = sc.nan ? PetscAbsReal(sc.nanv) : x->map->n ? PetscMax(PetscAbsReal(sc.lo), PetscAbsReal(sc.hi)) : 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevPeriod(Vec d, PetscInt *dp)
{
  double *dd = NULL;
  int     p;

  PetscFunctionBegin;
  PetscCall(DeviceArray(d, PETSC_FALSE, &dd));
  CKD(vec_cuda_period((size_t)d->map->n, dd, &p));
  *dp = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevStencil(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                             const PetscReal coef[], PetscReal ihx2, PetscReal ihy2)
{
  double *ud = NULL, *yd = NULL;

  PetscFunctionBegin;
  PetscCall(DeviceArray(u, PETSC_FALSE, &ud));
  PetscCall(DeviceArray(y, PETSC_TRUE, &yd));
  CKD(vec_cuda_stencil((int)M, (int)N, (int)dof, (int)periodic, coef[0], dof > 1 ? coef[1] : 0.0, ihx2, ihy2, ud, yd));
  PetscCall(PetscLogFlops(11.0 * M * N * dof));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecDevStencilAtomic(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                                   const PetscReal coef[], PetscReal ihx2, PetscReal ihy2, double **lap,
                                   red_atomic_state *ord)
{
  double *ud = NULL, *yd = NULL, c1 = dof > 1 ? coef[1] : 0.0;

  PetscFunctionBegin;
  PetscCall(DeviceArray(u, PETSC_FALSE, &ud));
  PetscCall(DeviceArray(y, PETSC_TRUE, &yd));
  if (ord && ord->seed)
    CKD(vec_cuda_stencil_seeded((int)M, (int)N, (int)dof, (int)periodic, coef[0], c1, ihx2, ihy2, ud, NULL, ord->seed,
                                ord->calls++, yd));
  else {
    if (!*lap) CKD(vec_cuda_alloc(lap, (size_t)(M * N * dof)));
    CKD(vec_cuda_stencil_atomic((int)M, (int)N, (int)dof, (int)periodic, coef[0], c1, ihx2, ihy2, ud, *lap, yd));
  }
  PetscCall(PetscLogFlops(11.0 * M * N * dof));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void VecDevFree(double *d) { (void)vec_cuda_free(d); }

PetscErrorCode VecDevRegister(PetscErrorCode (*create)(Vec), PetscErrorCode (*duplicate)(Vec, Vec *))
{
  PetscFunctionBegin;
  host_create = create, host_duplicate = duplicate;
  PetscCall(VecRegister(VECFPNACUDA, VecCreate_FPNACUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt64 VecFPNADeviceCopies(void) { return copies; }

PetscErrorCode VecFPNADeviceArray(Vec v, VecDeviceAccess mode, double **d)
{
  PetscFunctionBegin;
  *d = NULL;
  if (!VecDevIs(v)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DeviceArray(v, (PetscBool)(mode == VEC_DEVICE_WRITE), d));
  if (mode == VEC_DEVICE_READ_WRITE) PetscCall(Written(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void VecFPNADeviceMemory(int *ndev, double *bytes)
{
  size_t b;
  if (vec_cuda_device_memory(ndev, &b)) *ndev = 0, b = 0;
  *bytes = (double)b;
}

PetscBool VecFPNADeviceUsable(char *why, size_t len)
{
  double *d;
  int     e = vec_cuda_alloc(&d, 1);
  if (e) snprintf(why, len, "no usable CUDA device (%s)", vec_cuda_error_string(e));
  else (void)vec_cuda_free(d);
  return (PetscBool)!e;
}

#else /* no device: no such type, and no vector is one (-Wno-unused-parameter: the stubs name what they ignore) */
PetscBool      VecDevIs(Vec v) { return PETSC_FALSE; }
PetscErrorCode VecDevLocalPartial(red_strategy_t s, red_op_t op, Vec x, Vec y, red_partial_t *p, red_atomic_state *ord)
{
  return PETSC_ERR_SUP;
}
PetscErrorCode VecDevRegister(PetscErrorCode (*create)(Vec), PetscErrorCode (*duplicate)(Vec, Vec *)) { return 0; }
PetscErrorCode VecDevCGTail(red_strategy_t s, PetscScalar a, Vec x, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp, Vec z,
                            red_partial_t part[2], red_atomic_state *ord)
{
  return PETSC_ERR_SUP;
}
PetscErrorCode VecDevPeriod(Vec d, PetscInt *dp) { return PETSC_ERR_SUP; }
PetscErrorCode VecDevMaxAbs(Vec x, PetscReal *m) { return PETSC_ERR_SUP; }
PetscErrorCode VecDevFaultHit(fault_ctx *f, fault_site site, Vec y) { return PETSC_ERR_SUP; }
PetscErrorCode VecDevStencil(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                             const PetscReal coef[], PetscReal ihx2, PetscReal ihy2)
{
  return PETSC_ERR_SUP;
}
PetscErrorCode VecDevStencilAtomic(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                                   const PetscReal coef[], PetscReal ihx2, PetscReal ihy2, double **lap,
                                   red_atomic_state *ord)
{
  return PETSC_ERR_SUP;
}
void           VecDevFree(double *d) {}
PetscInt64     VecFPNADeviceCopies(void) { return 0; }
PetscErrorCode VecFPNADeviceArray(Vec v, VecDeviceAccess mode, double **d) { return (*d = NULL, PETSC_SUCCESS); }
void           VecFPNADeviceMemory(int *ndev, double *bytes) { *ndev = 0, *bytes = 0; }
PetscBool      VecFPNADeviceUsable(char *why, size_t len)
{
  return (snprintf(why, len, "this build has no CUDA (nvcc was not found when it was configured)"), PETSC_FALSE);
}
#endif
