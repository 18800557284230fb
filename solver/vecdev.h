/* solver/vecdev.h: the fpna vectors' device mirror (vecdev.c), for vecred.c. */
#ifndef MINIAPP_SOLVER_VECDEV_H
#define MINIAPP_SOLVER_VECDEV_H

#include "vecred.h"

/* v is an fpnacuda vector (its reductions then go to VecDevLocalPartial). */
PetscBool      VecDevIs(Vec v);
PetscErrorCode VecDevLocalPartial(red_strategy_t s, red_op_t op, Vec x, Vec y, red_partial_t *p, red_atomic_state *ord);
/* Registers VECFPNACUDA on top of the host type's create and duplicate (a no-op without a device). */
PetscErrorCode VecDevRegister(PetscErrorCode (*create)(Vec), PetscErrorCode (*duplicate)(Vec, Vec *));

#endif
