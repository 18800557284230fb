/* solver/opdev.c: the operator's product on the device (fpnacuda vectors).
 * On one rank the whole grid is there. On 2 or more each rank's owned
 * block, its edges exchanged with the four neighbours through the host
 * (Debian's Open MPI is not CUDA-aware): a strip a side, never the whole
 * vector. The gather form sums as the host's, so the bits are the host's on
 * any split; the scatter form adds its face fluxes with the device's
 * atomics. */
#include "solver_impl.h"
#include "vecdev.h"

#if defined(MINIAPP_HAVE_CUDA)
#include "vec_cuda.h"

struct OpDevHalo {
  PetscMPIInt nbr[4];     /* W, E, S, N: the ranks owning the neighbouring blocks (MPI_PROC_NULL beyond an edge) */
  PetscInt    xm, ym, off[5]; /* the owned block; the strips' offsets in e and g (vec_cuda_halo_pack's layout) */
  double     *e_d, *g_d;  /* device: this block's edges, the neighbours' */
  double     *e_h, *g_h;  /* host: the same, staged (g_h stays 0 where no neighbour writes) */
};

/* The neighbours from the process grid: DMDA ranks run x fastest. */
static PetscErrorCode HaloCreate(OpCtx *op, struct OpDevHalo **hp)
{
  struct OpDevHalo *h;
  PetscInt          px, py, xs, ys, dof = op->dof;
  PetscMPIInt       rank;
  MPI_Comm          comm = PetscObjectComm((PetscObject)op->da);

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(DMDAGetInfo(op->da, NULL, NULL, NULL, NULL, &px, &py, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(op->da, &xs, &ys, NULL, &h->xm, &h->ym, NULL));
  {
    PetscInt pi = rank % px, pj = rank / px, per = op->periodic;
    h->nbr[0] = pi > 0 ? rank - 1 : per ? rank + (PetscMPIInt)px - 1 : MPI_PROC_NULL;
    h->nbr[1] = pi < px - 1 ? rank + 1 : per ? rank - (PetscMPIInt)px + 1 : MPI_PROC_NULL;
    h->nbr[2] = pj > 0 ? rank - (PetscMPIInt)px : per ? rank + (PetscMPIInt)(px * (py - 1)) : MPI_PROC_NULL;
    h->nbr[3] = pj < py - 1 ? rank + (PetscMPIInt)px : per ? rank - (PetscMPIInt)(px * (py - 1)) : MPI_PROC_NULL;
  }
  h->off[0] = 0, h->off[1] = h->ym * dof, h->off[2] = 2 * h->ym * dof, h->off[3] = h->off[2] + h->xm * dof;
  h->off[4] = h->off[3] + h->xm * dof;
  PetscCall(PetscCalloc2(h->off[4], &h->e_h, h->off[4], &h->g_h));
  CKD(vec_cuda_alloc(&h->e_d, (size_t)h->off[4]));
  CKD(vec_cuda_alloc(&h->g_d, (size_t)h->off[4]));
  *hp = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x's edges out, the neighbours' in: *g on the device (vec_cuda_halo_pack's layout). */
static PetscErrorCode Exchange(OpCtx *op, Vec x, const double **g)
{
  struct OpDevHalo *h;
  double           *xd;
  MPI_Comm          comm = PetscObjectComm((PetscObject)op->da);

  PetscFunctionBegin;
  if (!op->halo) PetscCall(HaloCreate(op, &op->halo));
  h = op->halo;
  PetscCall(VecFPNADeviceArray(x, VEC_DEVICE_READ, &xd));
  CKD(vec_cuda_halo_pack((int)h->xm, (int)h->ym, (int)op->dof, xd, h->e_d));
  CKD(vec_cuda_to_host(h->e_h, h->e_d, (size_t)h->off[4]));
  for (int k = 0; k < 4; k++) { /* side k's edge to that neighbour, whose own edge facing me arrives from the other side */
    int o = k ^ 1;              /* W <-> E, S <-> N */
    PetscCallMPI(MPI_Sendrecv(h->e_h + h->off[k], (int)(h->off[k + 1] - h->off[k]), MPI_DOUBLE, h->nbr[k], k,
                              h->g_h + h->off[o], (int)(h->off[o + 1] - h->off[o]), MPI_DOUBLE, h->nbr[o], k, comm,
                              MPI_STATUS_IGNORE));
  }
  CKD(vec_cuda_to_device(h->g_d, h->g_h, (size_t)h->off[4]));
  *g = h->g_d;
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

/* y = A x on 2+ ranks: the halo, then the stencil. */
static PetscErrorCode MultHalo(OpCtx *op, Vec x, Vec y)
{
  struct OpDevHalo *h;
  const double     *g;
  double           *xd, *yd;

  PetscFunctionBegin;
  PetscCall(Exchange(op, x, &g));
  h = op->halo;
  PetscCall(VecFPNADeviceArray(x, VEC_DEVICE_READ, &xd));
  PetscCall(VecFPNADeviceArray(y, VEC_DEVICE_WRITE, &yd));
  if (op->scatter) { /* the face fluxes with the device's atomics */
    if (!op->lap_dev) CKD(vec_cuda_alloc(&op->lap_dev, (size_t)(h->xm * h->ym * op->dof)));
    CKD(vec_cuda_stencil_atomic_halo((int)h->xm, (int)h->ym, (int)op->dof, op->coef[0],
                                     op->dof > 1 ? op->coef[1] : 0.0, op->ihx2, op->ihy2, xd, g, op->lap_dev, yd));
  } else
    CKD(vec_cuda_stencil_halo((int)h->xm, (int)h->ym, (int)op->dof, op->coef[0], op->dof > 1 ? op->coef[1] : 0.0,
                              op->ihx2, op->ihy2, xd, g, yd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void OperatorDevFree(OpCtx *op)
{
  VecDevFree(op->lap_dev);
  if (!op->halo) return;
  (void)vec_cuda_free(op->halo->e_d), (void)vec_cuda_free(op->halo->g_d);
  (void)PetscFree2(op->halo->e_h, op->halo->g_h);
  (void)PetscFree(op->halo);
}
#else
static PetscErrorCode MultHalo(OpCtx *op, Vec x, Vec y)
{
  (void)op, (void)x, (void)y;
  return PETSC_ERR_SUP;
}
PetscErrorCode OperatorDevExchange(Mat A, Vec x, const double **g)
{
  (void)A, (void)x, (void)g;
  return PETSC_ERR_SUP;
}
void OperatorDevFree(OpCtx *op) { (void)op; }
#endif

PetscBool OperatorOnDevice(const OpCtx *op, Vec x, Vec y, const red_atomic_state *ord)
{
  /* no fault site armed (faults are injected on the host); the scatter form only with the device's own atomic
   * order (a seeded order is replayed on the host) */
  return (PetscBool)(VecDevIs(x) && VecDevIs(y) && !op->fault && !(op->scatter && ord && ord->seed));
}

PetscErrorCode OperatorDevMult(OpCtx *op, Vec x, Vec y)
{
  PetscFunctionBegin;
  if (!op->one_rank) PetscCall(MultHalo(op, x, y));
  else if (op->scatter)
    PetscCall(VecDevStencilAtomic(x, y, op->M, op->N, op->dof, op->periodic, op->coef, op->ihx2, op->ihy2,
                                  &op->lap_dev));
  else PetscCall(VecDevStencil(x, y, op->M, op->N, op->dof, op->periodic, op->coef, op->ihx2, op->ihy2));
  PetscFunctionReturn(PETSC_SUCCESS);
}
