/* solver/vecdev.h: the fpna vectors' device mirror (vecdev.c), for vecred.c. */
#ifndef MINIAPP_SOLVER_VECDEV_H
#define MINIAPP_SOLVER_VECDEV_H

#include "vecred.h"
#include "fault.h"

#include "cuda_call.h"

/* A CUDA call of kernels/ (0 or an error code) under PETSc's error handling: the error's words and the function. */
#define CKD(x) \
  do { \
    int e_ = (x); \
    PetscCheck(!e_, PETSC_COMM_SELF, PETSC_ERR_LIB, "CUDA error %d (%s) in %.*s", e_, vec_cuda_error_string(e_), \
               CUDA_CALL_NAME(#x), #x); \
  } while (0)

/* v is an fpnacuda vector (its reductions then go to VecDevLocalPartial). */
PetscBool      VecDevIs(Vec v);
PetscErrorCode VecDevLocalPartial(red_strategy_t s, red_op_t op, Vec x, Vec y, red_partial_t *p, red_atomic_state *ord);
/* VecFPNACGTail on fpnacuda vectors: the updates on the device, then the two rank partials. */
PetscErrorCode VecDevCGTail(red_strategy_t s, PetscScalar a, Vec x, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp, Vec z,
                            red_partial_t part[2], red_atomic_state *ord);
/* A fault site (kernels/fault.h) on an fpnacuda vector's device values: the call counted as on the host, and
 * the entry it picks flipped there (one value crosses each way). */
PetscErrorCode VecDevFaultHit(fault_ctx *f, fault_site site, Vec y);
/* max_i |x_i| of an fpnacuda vector's local entries, as vecred.c's host loop gives it (NaN: the last one's). */
PetscErrorCode VecDevMaxAbs(Vec x, PetscReal *m);
/* The smallest period dp of 1, 2, 4, 8 of an fpnacuda vector's entries (bitwise), 0 for none: fusedcg.c's. */
PetscErrorCode VecDevPeriod(Vec d, PetscInt *dp);
/* The gather operator on one rank (operator.c) on fpnacuda vectors: y = u - coef_c Lap_h u on the device. */
PetscErrorCode VecDevStencil(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                             const PetscReal coef[], PetscReal ihx2, PetscReal ihy2);
/* The scatter form (atomic build) likewise: face fluxes added with the device's atomics into *lap
 * (device scratch of the operator, allocated at the first call; VecDevFree frees it), or with ord seeded in
 * its drawn order (one call of it), the host replay's bits. */
PetscErrorCode VecDevStencilAtomic(Vec u, Vec y, PetscInt M, PetscInt N, PetscInt dof, PetscBool periodic,
                                   const PetscReal coef[], PetscReal ihx2, PetscReal ihy2, double **lap,
                                   red_atomic_state *ord);
void           VecDevFree(double *d);
/* Registers VECFPNACUDA on top of the host type's create and duplicate (a no-op without a device). */
PetscErrorCode VecDevRegister(PetscErrorCode (*create)(Vec), PetscErrorCode (*duplicate)(Vec, Vec *));

#endif
