/* surrogate/heatdata.h: a known smooth map to learn, shared by the driver, the
 * tests and the benchmark: one explicit heat-equation step on a 5-point
 * stencil, u_c' = u_c + r (u_n + u_s + u_e + u_w - 4 u_c). Sample k's stencil
 * values are drawn from the counter-based RNG (stream seed, counter 5k + f),
 * so any rank can generate any global slice of the same data set. */
#ifndef MINIAPP_SURROGATE_HEATDATA_H
#define MINIAPP_SURROGATE_HEATDATA_H

#include "hashrng.h"
#include <stddef.h>

#define HEAT_NIN  5
#define HEAT_NOUT 1

/* in[n][5] = (u_c, u_n, u_s, u_e, u_w) in [0,1), target[n][1]; samples
 * k0 .. k0+n-1 of the global data set. */
static inline void heat_samples(uint64_t seed, size_t k0, size_t n, float r, float *in, float *target)
{
  for (size_t i = 0; i < n; i++) {
    float *u = in + HEAT_NIN * i;
    for (int f = 0; f < HEAT_NIN; f++) u[f] = rng_uniformf(seed, HEAT_NIN * (k0 + i) + (size_t)f);
    float lap = (((u[1] + u[2]) + (u[3] + u[4])) - 4.0f * u[0]);
    target[i] = u[0] + r * lap;
  }
}

#endif
