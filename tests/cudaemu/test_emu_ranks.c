/* tests/cudaemu/test_emu_ranks.c (run on 2 ranks): the device backend with a
 * rank that holds no samples. Rank 0 holds the batch, rank 1
 * none; a few train steps on the CPU backend and on the (emulated) device
 * backend: the weights must agree as in test_surrogate_cuda (bitwise in the
 * reproducible build), and no launch may be made with an empty grid. */
#include "surr_test.h"

#include <math.h>

int main(int argc, char **argv)
{
  Surrogate   c, g;
  PetscInt    np, nb = 3000, n;
  float      *in, *tgt, lc, lg;
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
  size_t dw  = 0;
  double rel = 0;
  PetscCall(weights_diff(c, g, &dw, &rel, &np));
#if defined(MINIAPP_SURROGATE_REDUCTION_REPRODUCIBLE)
  bad = dw || lc != lg;
#else
  bad = !(rel < 1e-3 && fabs(lc - lg) <= 1e-4 * lc);
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "2 ranks, rank 1 without samples, 3 steps: %zu of %d weights differ (relative L2 %.3e), loss cpu %.9e device %.9e%s\n", dw, (int)np, rel, (double)lc, (double)lg, bad ? ": FAIL" : ""));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(SurrogateDestroy(&c));
  PetscCall(SurrogateDestroy(&g));
  PetscCall(PetscFinalize());
  return bad;
}
