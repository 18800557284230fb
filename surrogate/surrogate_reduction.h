/* surrogate/surrogate_reduction.h: THE switch of the surrogate half. Maps the
 * compile-time MINIAPP_SURROGATE_REDUCTION_* definition to the kernels/
 * strategy used by every reduction of a train step (weight and bias gradients,
 * loss, normalization statistics). Nothing else in surrogate/ tests the macro. */
#ifndef MINIAPP_SURROGATE_REDUCTION_H
#define MINIAPP_SURROGATE_REDUCTION_H

#include "reduce.h"

#if defined(MINIAPP_SURROGATE_REDUCTION_ATOMIC)
#define SURROGATE_REDUCTION RED_ATOMIC
#elif defined(MINIAPP_SURROGATE_REDUCTION_DETERMINISTIC)
#define SURROGATE_REDUCTION RED_DETERMINISTIC
#elif defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
#define SURROGATE_REDUCTION RED_REPRODUCIBLE
#else
  #error \
    "define one of MINIAPP_SURROGATE_REDUCTION_ATOMIC|_DETERMINISTIC|_REPRODUCIBLE (CMake: MINIAPP_SURROGATE_REDUCTION)"
#endif

#endif
