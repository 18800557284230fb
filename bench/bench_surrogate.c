/* bench/bench_surrogate.c: train-step and inference throughput (samples/s) of
 * the surrogate for a batch the size of a 512x512 grid, with each reduction
 * strategy measured side by side in one run (the train step's strategy is a
 * run-time field that the compiled switch only initializes, so one binary can
 * time all three). Prints ratios to atomic. Not a test: no pass/fail on time.
 * Options: -bench_n (262144) -bench_steps (3) -bench_reps (2) + -surrogate_*. */
#include "surrogate_impl.h"
#include "heatdata.h"

#include <omp.h>

int main(int argc, char **argv)
{
  PetscInt  n = 512 * 512, steps = 3, reps = 2;
  float    *in, *tgt, *out, loss;
  double    ttrain[3] = {1e30, 1e30, 1e30}, tpred[3] = {1e30, 1e30, 1e30};
  SurrogateDevice dev = SURROGATE_DEVICE_CPU;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_steps", &steps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_reps", &reps, NULL));
  PetscCall(PetscMalloc3((size_t)n * HEAT_NIN, &in, (size_t)n, &tgt, (size_t)n, &out));
  heat_samples(7, 0, (size_t)n, 0.2f, in, tgt);
  /* Interleave the strategies rep by rep and keep each one's best time, so
   * that a slow phase of the machine does not land on one strategy only. */
  for (PetscInt r = 0; r < reps; r++)
    for (int st = 0; st < 3; st++) {
      Surrogate s;
      PetscCall(SurrogateCreate(PETSC_COMM_WORLD, &s));
      PetscCall(SurrogateSetSizes(s, HEAT_NIN, HEAT_NOUT));
      PetscCall(SurrogateSetFromOptions(s));
      PetscCall(SurrogateSetUp(s));
      PetscCall(SurrogateGetDevice(s, &dev));
      PetscCall(SurrogateSetStrategy_Private(s, (red_strategy_t)st));
      PetscCall(SurrogateTrain(s, n, in, tgt, &loss)); /* warm-up: buffers, statistics */
      double t0 = MPI_Wtime();
      for (PetscInt i = 0; i < steps; i++) PetscCall(SurrogateTrain(s, n, in, tgt, &loss));
      double t1 = MPI_Wtime();
      for (PetscInt i = 0; i < steps; i++) PetscCall(SurrogatePredict(s, n, in, out));
      double t2 = MPI_Wtime();
      ttrain[st] = PetscMin(ttrain[st], (t1 - t0) / steps);
      tpred[st]  = PetscMin(tpred[st], (t2 - t1) / steps);
      if (r == 0 && st == 0) PetscCall(SurrogateView(s, NULL));
      PetscCall(SurrogateDestroy(&s));
    }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bench_surrogate: batch %" PetscInt_FMT ", device %s, %d OpenMP threads, best of %" PetscInt_FMT " x %" PetscInt_FMT " steps\n", n,
                        dev == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", omp_get_max_threads(), reps, steps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %14s %14s %10s %14s %10s\n", "strategy", "step ms", "train samp/s", "vs atomic", "infer samp/s", "vs atomic"));
  for (int st = 0; st < 3; st++)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-14s %14.2f %14.4g %10.3f %14.4g %10.3f\n", red_strategy_name((red_strategy_t)st), 1e3 * ttrain[st], n / ttrain[st], ttrain[st] / ttrain[0], n / tpred[st],
                          tpred[st] / tpred[0]));
  PetscCall(PetscFree3(in, tgt, out));
  PetscCall(PetscFinalize());
  return 0;
}
