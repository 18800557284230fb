/* solver/vecred.h: the "fpna" PETSc Vec types, whose reductions obey the
 * reduction switch (see vecred.c). */
#ifndef MINIAPP_SOLVER_VECRED_H
#define MINIAPP_SOLVER_VECRED_H

#include <petscvec.h>
#include "reduce.h"

#define VECFPNA               "fpna"
#define VECFPNA_ATOMIC        "fpna_atomic"
#define VECFPNA_DETERMINISTIC "fpna_deterministic"
#define VECFPNA_REPRODUCIBLE  "fpna_reproducible"

PetscErrorCode VecFPNARegister(void);
PetscInt64     VecFPNAGetReductionCount(void);
const char    *VecFPNACompiledStrategy(void);
/* out[j] = global value of the rank-local partials p[j], j < n, combined
 * with strategy s as these Vec types do (rank order, or MPI for atomic). */
PetscErrorCode VecFPNACombine(MPI_Comm comm, red_strategy_t s, PetscInt n, red_partial_t *p, PetscReal *out);

#endif
