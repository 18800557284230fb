/* tests/surrogate/test_cuda.c: CUDA backend vs CPU backend (skipped, exit 77,
 * without a usable GPU). With the same weights, predictions must be bitwise
 * equal in every build (same fixed-order arithmetic). After 5 train steps:
 * reproducible build: weights and loss bitwise equal; other builds: relative
 * L2 difference of the weights < 1e-3 and loss within 1e-4 relative. */
#include "surr_test.h"

#include <math.h>

#define NB 16384

static PetscErrorCode make(const char *dev, Surrogate *s)
{
  PetscFunctionBeginUser;
  PetscCall(opt("-surrogate_device", dev));
  PetscCall(heat_surrogate(PETSC_COMM_SELF, s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Surrogate c, g;
  PetscInt  np;
  float    *in, *tgt, *pc, *pg, *wc, *wg, lc, lg;
  int       failures = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  if (SurrogateCUDAAvailable() <= 0) {
    printf("skipped: %s\n", SurrogateCUDAAvailable() < 0 ? "built without CUDA" : "no usable CUDA device");
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscMalloc4(NB * HEAT_NIN, &in, NB, &tgt, NB, &pc, NB, &pg));
  heat_samples(7, 0, NB, 0.2f, in, tgt);
  PetscCall(make("cpu", &c));
  PetscCall(make("cuda", &g));
  PetscCall(SurrogatePredict(c, NB, in, pc));
  PetscCall(SurrogatePredict(g, NB, in, pg));
  size_t dp = count_diff_bits(NB, pc, pg);
  printf("predictions with the initial weights: %zu of %d differ\n", dp, NB);
  CHECK(dp == 0, "CPU and CUDA forward passes differ on %zu samples", dp);

  PetscCall(train_steps(c, 5, NB, in, tgt, &lc));
  PetscCall(train_steps(g, 5, NB, in, tgt, &lg));
  PetscCall(SurrogateGetNumWeights(c, &np));
  PetscCall(PetscMalloc2(np, &wc, np, &wg));
  PetscCall(SurrogateGetWeights(c, wc, np));
  PetscCall(SurrogateGetWeights(g, wg, np));
  double d2 = 0, n2 = 0;
  for (PetscInt i = 0; i < np; i++) d2 += (wc[i] - wg[i]) * (double)(wc[i] - wg[i]), n2 += wc[i] * (double)wc[i];
  size_t dw = count_diff_bits((size_t)np, wc, wg);
  printf("after 5 steps (%s): %zu of %d weights differ, relative L2 %.3e, loss cpu %.9e cuda %.9e\n", SurrogateGetStrategyName(), dw, (int)np, sqrt(d2 / n2), (double)lc, (double)lg);
#if defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
  CHECK(dw == 0 && lc == lg, "reproducible build: CPU and CUDA weights or loss differ");
#else
  CHECK(sqrt(d2 / n2) < 1e-3 && fabs(lc - lg) <= 1e-4 * lc, "CPU and CUDA training differ beyond the tolerance");
#endif
  PetscCall(SurrogateDestroy(&c));
  PetscCall(SurrogateDestroy(&g));
  PetscCall(PetscFree2(wc, wg));
  PetscCall(PetscFree4(in, tgt, pc, pg));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
