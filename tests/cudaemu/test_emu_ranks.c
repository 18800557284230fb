/* tests/cudaemu/test_emu_ranks.c (run on 2 ranks): the device backend with a
 * rank that holds no samples (issue 26, C3). Rank 0 holds the batch, rank 1
 * none; a few train steps on the CPU backend and on the (emulated) device
 * backend: the weights must agree as in test_surrogate_cuda (bitwise in the
 * reproducible build), and no launch may be made with an empty grid. */
#include "surr_test.h"

#include <math.h>

int main(int argc, char **argv)
{
  Surrogate   c, g;
  PetscInt    np, nb = 3000, n;
  float      *in, *tgt, *wc, *wg, lc, lg;
  PetscMPIInt rank;
  int         bad = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  n = rank == 0 ? nb : 0;
  PetscCall(PetscMalloc2(nb * HEAT_NIN, &in, nb, &tgt));
  heat_samples(7, 0, (size_t)nb, 0.2f, in, tgt);
  PetscCall(opt("-surrogate_device", "cpu"));
  PetscCall(heat_surrogate(PETSC_COMM_WORLD, &c));
  PetscCall(opt("-surrogate_device", "cuda"));
  PetscCall(heat_surrogate(PETSC_COMM_WORLD, &g));
  PetscCall(train_steps(c, 3, n, in, tgt, &lc));
  PetscCall(train_steps(g, 3, n, in, tgt, &lg));
  PetscCall(SurrogateGetNumWeights(c, &np));
  PetscCall(PetscMalloc2(np, &wc, np, &wg));
  PetscCall(SurrogateGetWeights(c, wc, np));
  PetscCall(SurrogateGetWeights(g, wg, np));
  double d2 = 0, n2 = 0;
  for (PetscInt i = 0; i < np; i++) d2 += (wc[i] - wg[i]) * (double)(wc[i] - wg[i]), n2 += wc[i] * (double)wc[i];
  size_t dw = count_diff_bits((size_t)np, wc, wg);
#if defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
  bad = dw || lc != lg;
#else
  bad = !(sqrt(d2 / n2) < 1e-3 && fabs(lc - lg) <= 1e-4 * lc);
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "2 ranks, rank 1 without samples, 3 steps: %zu of %d weights differ (relative L2 %.3e), loss cpu %.9e device %.9e%s\n", dw, (int)np, sqrt(d2 / n2), (double)lc, (double)lg, bad ? ": FAIL" : ""));
  PetscCall(PetscFree2(wc, wg));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(SurrogateDestroy(&c));
  PetscCall(SurrogateDestroy(&g));
  PetscCall(PetscFinalize());
  return bad;
}
