/* tests/surrogate/surr_test.h: helpers shared by the surrogate tests: build a
 * surrogate from the options database, train it on heat-step data, compare.
 * Header-only; each test is its own executable. */
#ifndef MINIAPP_TESTS_SURR_TEST_H
#define MINIAPP_TESTS_SURR_TEST_H

#include "surrogate.h"
#include "heatdata.h"

#include <stdio.h>
#include <string.h>

/* Set (or clear, with value NULL) one option in the global database. */
static inline PetscErrorCode opt(const char *name, const char *value)
{
  PetscFunctionBeginUser;
  if (value) PetscCall(PetscOptionsSetValue(NULL, name, value));
  else PetscCall(PetscOptionsClearValue(NULL, name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A heat-step surrogate (5 inputs, 1 output) configured from the options. */
static inline PetscErrorCode heat_surrogate(MPI_Comm comm, Surrogate *s)
{
  PetscFunctionBeginUser;
  PetscCall(SurrogateCreate(comm, s));
  PetscCall(SurrogateSetSizes(*s, HEAT_NIN, HEAT_NOUT));
  PetscCall(SurrogateSetFromOptions(*s));
  PetscCall(SurrogateSetUp(*s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode train_steps(Surrogate s, PetscInt steps, PetscInt n, const float *in, const float *tgt, float *loss)
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < steps; i++) PetscCall(SurrogateTrain(s, n, in, tgt, loss));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fresh surrogate, `steps` Adam steps on the data, weights hash out. */
static inline PetscErrorCode train_hash(PetscInt steps, PetscInt n, const float *in, const float *tgt, uint64_t *hash, float *loss)
{
  Surrogate s;

  PetscFunctionBeginUser;
  PetscCall(heat_surrogate(PETSC_COMM_SELF, &s));
  PetscCall(train_steps(s, steps, n, in, tgt, loss));
  PetscCall(SurrogateGetWeightsHash(s, hash));
  PetscCall(SurrogateDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Number of positions where a and b differ bitwise (V_c numerator). */
static inline size_t count_diff_bits(size_t n, const float *a, const float *b)
{
  size_t d = 0;
  for (size_t i = 0; i < n; i++) d += memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return d;
}

/* Weights of two surrogates (CPU and device) after training: how many differ
 * bitwise, their relative L2 distance, and the number of weights. */
static inline PetscErrorCode weights_diff(Surrogate c, Surrogate g, size_t *dw, double *rel, PetscInt *np)
{
  float *wc, *wg;
  double d2 = 0, n2 = 0;

  PetscFunctionBeginUser;
  PetscCall(SurrogateGetNumWeights(c, np));
  PetscCall(PetscMalloc2(*np, &wc, *np, &wg));
  PetscCall(SurrogateGetWeights(c, wc, *np));
  PetscCall(SurrogateGetWeights(g, wg, *np));
  for (PetscInt i = 0; i < *np; i++) d2 += (wc[i] - wg[i]) * (double)(wc[i] - wg[i]), n2 += wc[i] * (double)wc[i];
  *dw  = count_diff_bits((size_t)*np, wc, wg);
  *rel = sqrt(d2 / n2);
  PetscCall(PetscFree2(wc, wg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n"); \
      failures++; \
    } \
  } while (0)

#endif
