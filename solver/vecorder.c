/* solver/vecorder.c: where an fpna vector finds the seeded atomic order of
 * its reductions (vecred.h): its owner's, a solver's or a replica's. */
#include "vecred.h"
#include "solver.h" /* PETSC_SUCCESS on PETSc 3.18 */

/* The seeded atomic order of a Vec's reductions is its owner's: the Vec, or
 * the DM that made it (a DMDA vector's duplicates are new vectors of its
 * DM), holds composed the address of the owner's pointer to its order, read
 * at each reduction. An owner that points elsewhere (a shared order, a
 * scratch copy for a check) redirects all its vectors at once. */
#define ORDER_KEY "fpna_order"

PetscErrorCode VecFPNASetOrderSlot(PetscObject owner, red_atomic_state **slot)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscContainerCreate(PetscObjectComm(owner), &c));
  PetscCall(PetscContainerSetPointer(c, slot));
  PetscCall(PetscObjectCompose(owner, ORDER_KEY, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNAGetOrderSlot(Vec v, red_atomic_state ***slot)
{
  PetscObject c;
  DM          dm;

  PetscFunctionBegin;
  *slot = NULL;
  PetscCall(PetscObjectQuery((PetscObject)v, ORDER_KEY, &c));
  if (!c) {
    PetscCall(VecGetDM(v, &dm));
    if (dm) PetscCall(PetscObjectQuery((PetscObject)dm, ORDER_KEY, &c));
  }
  if (c) PetscCall(PetscContainerGetPointer((PetscContainer)c, (void **)slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNAGetOrder(Vec v, red_atomic_state **ord)
{
  red_atomic_state **slot;

  PetscFunctionBegin;
  PetscCall(VecFPNAGetOrderSlot(v, &slot));
  *ord = slot ? *slot : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNAOrderScratch(Vec v, red_atomic_state *scratch, red_atomic_state **mine)
{
  red_atomic_state **slot;

  PetscFunctionBegin;
  PetscCall(VecFPNAGetOrderSlot(v, &slot));
  *mine = slot ? *slot : NULL;
  *scratch = *mine ? **mine : (red_atomic_state){0, 0};
  if (slot) *slot = scratch;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNAOrderRestore(Vec v, red_atomic_state *mine)
{
  red_atomic_state **slot;

  PetscFunctionBegin;
  PetscCall(VecFPNAGetOrderSlot(v, &slot));
  if (slot) *slot = mine;
  PetscFunctionReturn(PETSC_SUCCESS);
}
