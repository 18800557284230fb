/* surrogate/surrogate_impl.h: the private object and the backend interface.
 * Backends (CPU, CUDA) compute per-parameter gradient partials and apply Adam;
 * surrogate.c owns the options, the strategy combine across ranks, and the
 * host copy of the state. Not a public header. */
#ifndef MINIAPP_SURROGATE_IMPL_H
#define MINIAPP_SURROGATE_IMPL_H

#include "surrogate.h"
#include "surrogate_math.h"
#include "reduce.h"

#define SURR_MAX_LAYERS  16        /* hidden layers + output layer */
#define SURR_MAX_WEIGHTS (1 << 24) /* parameters (weights and biases) */

typedef struct {
  PetscErrorCode (*setup)(Surrogate);
  /* out[n][n_out] = denormalized network output for in[n][n_in]. */
  PetscErrorCode (*predict)(Surrogate, PetscInt n, const float *in, float *out);
  /* part[0..nparam) = this rank's partials of dL/dp (strategy s->strategy),
   * part[nparam] = partial of sum (z - t_n)^2; cscale = 2/(N n_out). */
  PetscErrorCode (*grad_partials)(Surrogate, PetscInt n, const float *in, const float *target, float cscale, red_partial_t *part);
  /* Adam on all parameters with the combined gradient grad[nparam] (host). */
  PetscErrorCode (*adam)(Surrogate, const float *grad, surr_adam_coef coef);
  PetscErrorCode (*pull)(Surrogate); /* device state -> s->w, s->m, s->v */
  PetscErrorCode (*push)(Surrogate); /* s->w, s->m, s->v -> device state */
  PetscErrorCode (*destroy)(Surrogate);
} SurrogateOps;

struct _p_Surrogate {
  MPI_Comm        comm;
  PetscMPIInt     rank, size;
  char           *prefix;
  /* architecture: nlayer affine maps, dim[0] = n_in ... dim[nlayer] = n_out */
  PetscInt        n_in, n_out, nhidden, hidden[SURR_MAX_LAYERS];
  int             nlayer;
  PetscInt        dim[SURR_MAX_LAYERS + 1];
  size_t          woff[SURR_MAX_LAYERS], boff[SURR_MAX_LAYERS], nparam;
  /* hyper-parameters */
  float           lr, beta1, beta2, eps, wd;
  uint64_t        seed;
  red_strategy_t  strategy; /* SURROGATE_REDUCTION; the benchmark may override */
  SurrogateDevice device_req, device;
  PetscBool       setup, view;
  /* state (host copy; a device backend keeps its own and syncs via pull/push) */
  float          *w, *m, *v;
  PetscBool       host_stale; /* device holds newer w, m, v than the host */
  int64_t         step;
  float           beta1_t, beta2_t; /* beta^step by repeated multiplication */
  PetscBool       have_norm;
  float          *mu_in, *sd_in, *mu_out, *sd_out;
  /* work */
  red_partial_t  *part, *allpart;
  double         *gsum;
  float          *grad;
  const SurrogateOps *ops;
  void           *be; /* backend data */
};

PETSC_INTERN const SurrogateOps SurrogateOps_CPU;
#if defined(MINIAPP_HAVE_CUDA)
PETSC_INTERN const SurrogateOps SurrogateOps_CUDA;
#endif

/* Weight/bias gradient partials of layer `layer` (strategy s->strategy). */
PETSC_INTERN PetscErrorCode SurrogateTallSkinny_CPU(Surrogate s, int layer, const float *d, const float *a, size_t n, size_t cap, double *Xd, double *Dd, red_partial_t *pw, red_partial_t *pb);
/* Combine np per-rank partials into values (rank order on every rank). */
PETSC_INTERN PetscErrorCode SurrogateCombine_Private(Surrogate s, size_t np, red_partial_t *part, double *val);
PETSC_INTERN PetscErrorCode SurrogateSyncHost_Private(Surrogate s);
/* Benchmark/test hook: run the train-step reductions with strategy st instead
 * of the compiled one (lets one binary compare all three side by side). */
PETSC_EXTERN PetscErrorCode SurrogateSetStrategy_Private(Surrogate s, red_strategy_t st);

#endif
