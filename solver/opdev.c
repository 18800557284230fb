/* solver/opdev.c: the operator's product on the device (fpnacuda vectors).
 * On one rank the whole grid is there. On 2 or more each rank's owned
 * block, its edges exchanged with the four neighbours through the host
 * (Debian's Open MPI is not CUDA-aware): a strip a side, never the whole
 * vector. The gather form sums as the host's, so the bits are the host's on
 * any split; the scatter form adds its face fluxes with the device's
 * atomics, or in a seeded order with the host replay's bits. */
#include "solver_impl.h"
#include "vecdev.h"

#if defined(MINIAPP_HAVE_CUDA)
#include "vec_cuda.h"

struct OpDevHalo {
  double *e, *g; /* this block's edges, the neighbours' (the host's op->halo stages them) */
};

/* x's edges out, the neighbours' in: *g on the device (vec_cuda_halo_pack's layout). */
static PetscErrorCode Exchange(OpCtx *op, Vec x, const double **g)
{
  struct OpDevHalo *h;
  OpHalo           *hh;
  double           *xd;
  size_t            n;

  PetscFunctionBegin;
  if (!op->halo) PetscCall(OpHaloCreate(op));
  hh = op->halo, n = (size_t)hh->off[4];
  if (!op->devhalo) {
    PetscCall(PetscNew(&op->devhalo));
    CKD(vec_cuda_alloc(&op->devhalo->e, n));
    CKD(vec_cuda_alloc(&op->devhalo->g, n));
  }
  h = op->devhalo;
  PetscCall(VecFPNADeviceArray(x, VEC_DEVICE_READ, &xd));
  CKD(vec_cuda_halo_pack((int)op->xm, (int)op->ym, (int)op->dof, xd, h->e));
  CKD(vec_cuda_to_host(hh->e, h->e, n));
  PetscCall(OpHaloSendrecv(op));
  CKD(vec_cuda_to_device(h->g, hh->g, n));
  *g = h->g;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorDevExchange(Mat A, Vec x, const double **g)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  PetscCall(Exchange(op, x, g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x on 2+ ranks: the halo, then the stencil (ord seeded: the scatter form in its drawn order). */
static PetscErrorCode MultHalo(OpCtx *op, Vec x, Vec y, red_atomic_state *ord)
{
  const double *g;
  double       *xd, *yd;
  const int     xm = (int)op->xm, ym = (int)op->ym;

  PetscFunctionBegin;
  PetscCall(Exchange(op, x, &g));
  PetscCall(VecFPNADeviceArray(x, VEC_DEVICE_READ, &xd));
  PetscCall(VecFPNADeviceArray(y, VEC_DEVICE_WRITE, &yd));
  if (op->scatter && ord && ord->seed)
    CKD(vec_cuda_stencil_seeded(xm, ym, (int)op->dof, 0, op->coef[0], op->dof > 1 ? op->coef[1] : 0.0, op->ihx2,
                                op->ihy2, xd, g, ord->seed, ord->calls++, yd));
  else if (op->scatter) { /* the face fluxes with the device's atomics */
    if (!op->lap_dev) CKD(vec_cuda_alloc(&op->lap_dev, (size_t)(op->xm * op->ym * op->dof)));
    CKD(vec_cuda_stencil_atomic_halo(xm, ym, (int)op->dof, op->coef[0],
                                     op->dof > 1 ? op->coef[1] : 0.0, op->ihx2, op->ihy2, xd, g, op->lap_dev, yd));
  } else
    CKD(vec_cuda_stencil_halo(xm, ym, (int)op->dof, op->coef[0], op->dof > 1 ? op->coef[1] : 0.0,
                              op->ihx2, op->ihy2, xd, g, yd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void OperatorDevFree(OpCtx *op)
{
  VecDevFree(op->lap_dev);
  if (!op->devhalo) return;
  (void)vec_cuda_free(op->devhalo->e), (void)vec_cuda_free(op->devhalo->g);
  (void)PetscFree(op->devhalo);
}
#else
static PetscErrorCode MultHalo(OpCtx *op, Vec x, Vec y, red_atomic_state *ord)
{
  (void)op, (void)x, (void)y, (void)ord;
  return PETSC_ERR_SUP;
}
PetscErrorCode OperatorDevExchange(Mat A, Vec x, const double **g)
{
  (void)A, (void)x, (void)g;
  return PETSC_ERR_SUP;
}
void OperatorDevFree(OpCtx *op) { (void)op; }
#endif

PetscBool OperatorOnDevice(Vec x, Vec y) { return (PetscBool)(VecDevIs(x) && VecDevIs(y)); }

PetscErrorCode OperatorDevMult(OpCtx *op, Vec x, Vec y, red_atomic_state *ord)
{
  PetscFunctionBegin;
  if (!op->one_rank) PetscCall(MultHalo(op, x, y, ord));
  else if (op->scatter)
    PetscCall(VecDevStencilAtomic(x, y, op->M, op->N, op->dof, op->periodic, op->coef, op->ihx2, op->ihy2,
                                  &op->lap_dev, ord));
  else PetscCall(VecDevStencil(x, y, op->M, op->N, op->dof, op->periodic, op->coef, op->ihx2, op->ihy2));
  PetscFunctionReturn(PETSC_SUCCESS);
}
