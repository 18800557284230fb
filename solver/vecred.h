/* solver/vecred.h: the "fpna" PETSc Vec types, whose reductions obey the
 * reduction switch (see vecred.c). */
#ifndef MINIAPP_SOLVER_VECRED_H
#define MINIAPP_SOLVER_VECRED_H

#include <petscdm.h>
#include "reduce.h"

#define VECFPNA               "fpna"
#define VECFPNA_ATOMIC        "fpna_atomic"
#define VECFPNA_DETERMINISTIC "fpna_deterministic"
#define VECFPNA_REPRODUCIBLE  "fpna_reproducible"
/* the compiled strategy with a device mirror: reductions and element-wise
 * operations on the GPU, the CPU's bits (vecdev.c; registered only where the
 * build has CUDA) */
#define VECFPNACUDA "fpnacuda"

PetscErrorCode VecFPNARegister(void);
PetscInt64     VecFPNAGetReductionCount(void);
/* Full-vector copies between host and device made so far (0 without a device vector). */
PetscInt64 VecFPNADeviceCopies(void);
/* The device array of an fpnacuda vector, for a kernel of kernels/ (*d NULL
 * for any other type and for an empty vector). READ: its values valid there
 * (copied from the host where only the host holds them); WRITE: every entry
 * is about to be written there; READ_WRITE: both. After a write the device
 * holds the valid values and PETSc's cached norms of v are dropped. */
typedef enum { VEC_DEVICE_READ = 1, VEC_DEVICE_WRITE = 2, VEC_DEVICE_READ_WRITE = 3 } VecDeviceAccess;
PetscErrorCode VecFPNADeviceArray(Vec v, VecDeviceAccess mode, double **d);
/* The CUDA devices this process sees and device 0's memory in bytes (0, 0 without). */
void VecFPNADeviceMemory(int *ndev, double *bytes);
/* Can this process make fpnacuda vectors? If not, why, in a few words. */
PetscBool VecFPNADeviceUsable(char *why, size_t len);
const char    *VecFPNACompiledStrategy(void);
/* out[j] = global value of the rank-local partials p[j], j < n, combined
 * with strategy s as these Vec types do (rank order, or MPI for atomic). */
PetscErrorCode VecFPNACombine(MPI_Comm comm, red_strategy_t s, PetscInt n, red_partial_t *p, PetscReal *out);
/* The strategy of an fpna Vec (*is false for any other type). */
PetscErrorCode VecFPNAGetStrategy(Vec v, PetscBool *is, red_strategy_t *s);
/* The seeded atomic order (kernels/reduce.h) of an fpna Vec's reductions:
 * the owner's pointer *slot, read at each reduction, set on the Vec (its
 * duplicates inherit it) or on the DM whose vectors these are. A Vec with
 * neither reduces with real atomics (ord NULL). */
PetscErrorCode VecFPNASetOrderSlot(PetscObject vec_or_dm, red_atomic_state **slot);
PetscErrorCode VecFPNAGetOrderSlot(Vec v, red_atomic_state ***slot); /* NULL: none */
PetscErrorCode VecFPNAGetOrder(Vec v, red_atomic_state **ord);
/* For a check that must change no later bits: v's owner (all its vectors)
 * draws from *scratch, a copy of its order, until VecFPNAOrderRestore(v, *mine). */
PetscErrorCode VecFPNAOrderScratch(Vec v, red_atomic_state *scratch, red_atomic_state **mine);
PetscErrorCode VecFPNAOrderRestore(Vec v, red_atomic_state *mine);
/* The fused CG tail (kernels/ red_cg_tail) on fpna Vecs: x += a p, r -= a w,
 * z = dinv .* r, and zz = z.z, zr = z.r in one collective. w may be z. dp > 0
 * (1, 2, 4 or 8): dinv is periodic, entry i equal to entry i % dp, and only
 * its first dp entries are read. */
PetscErrorCode VecFPNACGTail(Vec x, PetscScalar a, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp, Vec z, PetscReal *zz,
                             PetscScalar *zr);

#endif
