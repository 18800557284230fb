/* solver/solver_reduction.h: THE place where the solver half's compile-time
 * reduction strategy is chosen (CMake: -DMINIAPP_SOLVER_REDUCTION=...).
 * Everything in solver/ uses SOLVER_STRATEGY; nothing branches on it in a
 * hot loop except through the kernels' own per-call entry points. */
#ifndef MINIAPP_SOLVER_REDUCTION_H
#define MINIAPP_SOLVER_REDUCTION_H

#include "reduce.h"

#if defined(MINIAPP_SOLVER_REDUCTION_ATOMIC)
#define SOLVER_STRATEGY RED_ATOMIC
#elif defined(MINIAPP_SOLVER_REDUCTION_DETERMINISTIC)
#define SOLVER_STRATEGY RED_DETERMINISTIC
#elif defined(MINIAPP_SOLVER_REDUCTION_REPRODUCIBLE)
#define SOLVER_STRATEGY RED_REPRODUCIBLE
#else
#error "define one of MINIAPP_SOLVER_REDUCTION_{ATOMIC,DETERMINISTIC,REPRODUCIBLE} (CMake does)"
#endif

/* The operator's summation: face fluxes scatter-added (atomic build, as GPU
 * finite-volume codes do) or gathered per point in one fixed order. */
#if defined(MINIAPP_SOLVER_REDUCTION_ATOMIC)
#define SOLVER_OPERATOR_SCATTER 1
#else
#define SOLVER_OPERATOR_SCATTER 0
#endif

#endif
