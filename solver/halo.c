/* solver/halo.c: the gather operator's halo on 2 or more ranks: the owned
 * block's edges (the W and E columns, the S and N rows) sent to the four
 * neighbouring blocks' ranks and theirs received, a strip a side, so the
 * product reads x itself and no ghosted copy of it (operator.c; opdev.c
 * stages the device's edges through these host strips). */
#include "solver_impl.h"

/* The neighbours from the process grid (DMDA ranks run x fastest); beyond a
 * Dirichlet edge none, and the strip stays 0. */
PetscErrorCode OpHaloCreate(OpCtx *op)
{
  OpHalo     *h;
  PetscInt    px, py, d = op->dof;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)op->da), &rank));
  PetscCall(DMDAGetInfo(op->da, NULL, NULL, NULL, NULL, &px, &py, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  {
    PetscMPIInt pi = rank % (PetscMPIInt)px, pj = rank / (PetscMPIInt)px, X = (PetscMPIInt)px, Y = (PetscMPIInt)py;
    PetscBool   per = op->periodic;
    h->nbr[0] = pi > 0 ? rank - 1 : per ? rank + X - 1 : MPI_PROC_NULL;
    h->nbr[1] = pi < X - 1 ? rank + 1 : per ? rank - X + 1 : MPI_PROC_NULL;
    h->nbr[2] = pj > 0 ? rank - X : per ? rank + X * (Y - 1) : MPI_PROC_NULL;
    h->nbr[3] = pj < Y - 1 ? rank + X : per ? rank - X * (Y - 1) : MPI_PROC_NULL;
  }
  h->off[0] = 0, h->off[1] = op->ym * d, h->off[2] = 2 * op->ym * d, h->off[3] = h->off[2] + op->xm * d;
  h->off[4] = h->off[3] + op->xm * d;
  PetscCall(PetscCalloc2(h->off[4], &h->e, h->off[4], &h->g));
  op->halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x's edges into e (point (i, j) component c of the block at (j xm + i) dof + c). */
static void Pack(const OpCtx *op, const PetscScalar *x, double *e)
{
  const PetscInt d = op->dof, xm = op->xm, ym = op->ym, n = xm * d;
  for (PetscInt j = 0; j < ym; j++)
    for (PetscInt c = 0; c < d; c++) e[j * d + c] = x[j * n + c], e[(ym + j) * d + c] = x[j * n + n - d + c];
  memcpy(e + 2 * ym * d, x, (size_t)n * sizeof *e);
  memcpy(e + 2 * ym * d + n, x + (size_t)(ym - 1) * n, (size_t)n * sizeof *e);
}

PetscErrorCode OpHaloSendrecv(OpCtx *op)
{
  OpHalo  *h    = op->halo;
  MPI_Comm comm = PetscObjectComm((PetscObject)op->da);

  PetscFunctionBegin;
  /* side k's edge to that neighbour; the edge facing this block arrives from the other side, o */
  for (int k = 0; k < 4; k++) {
    int o = k ^ 1; /* W <-> E, S <-> N */
    PetscCallMPI(MPI_Sendrecv(h->e + h->off[k], (int)(h->off[k + 1] - h->off[k]), MPI_DOUBLE, h->nbr[k], k,
                              h->g + h->off[o], (int)(h->off[o + 1] - h->off[o]), MPI_DOUBLE, h->nbr[o], k, comm,
                              MPI_STATUS_IGNORE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OpHaloExchange(OpCtx *op, const PetscScalar *x)
{
  PetscFunctionBegin;
  if (!op->halo) PetscCall(OpHaloCreate(op));
  Pack(op, x, op->halo->e);
  PetscCall(OpHaloSendrecv(op));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void OpHaloDestroy(OpCtx *op)
{
  if (!op->halo) return;
  (void)PetscFree2(op->halo->e, op->halo->g);
  (void)PetscFree(op->halo);
}
