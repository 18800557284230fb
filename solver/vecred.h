/* solver/vecred.h: the "fpna" PETSc Vec types, whose reductions obey the
 * reduction switch (see vecred.c). */
#ifndef MINIAPP_SOLVER_VECRED_H
#define MINIAPP_SOLVER_VECRED_H

#include <petscvec.h>

#define VECFPNA               "fpna"
#define VECFPNA_ATOMIC        "fpna_atomic"
#define VECFPNA_DETERMINISTIC "fpna_deterministic"
#define VECFPNA_REPRODUCIBLE  "fpna_reproducible"

PetscErrorCode VecFPNARegister(void);
PetscInt64     VecFPNAGetReductionCount(void);
const char    *VecFPNACompiledStrategy(void);

#endif
