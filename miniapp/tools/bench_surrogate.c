/* miniapp/tools/bench_surrogate.c: train-step and inference throughput (samples/s) of
 * the surrogate for a batch the size of a 512x512 grid, with each reduction
 * strategy measured side by side in one run (the train step's strategy is a
 * run-time field that the compiled switch only initializes, so one binary can
 * time all three). Prints ratios to atomic, and GFLOP/s against this
 * machine's float peak without FMA, measured in the same run (the build
 * forbids FMA contraction: CPU and GPU must round alike). On the GPU it also
 * measures the device's copy bandwidth and prints each train step's GB/s
 * under the traffic model of train_bytes() beside it. Not a test: no
 * pass/fail on time.
 * The batch lives where the coupled loop keeps it (SurrogateHostMalloc: page-
 * locked on a GPU run), so a GPU step includes its host-device copies.
 * Options: -bench_n (262144) -bench_steps (3) -bench_reps (2) + -surrogate_*. */
#include "cli.h"
#include "surrogate_impl.h"
#include "heatdata.h"

#include <omp.h>

typedef float v8f __attribute__((vector_size(32)));
static volatile double bench_sink;

/* Independent vector multiplies and adds, 8 chains each: the float peak of
 * one thread without FMA (the avx2 clone where the CPU has it). */
__attribute__((target_clones("avx2", "default"))) static float peak_kernel(long iters, float c)
{
  v8f a[8], p[8];
  for (int t = 0; t < 8; t++) a[t] = (v8f){0} + (float)t, p[t] = (v8f){0} + 1.0f + (float)t;
  for (long i = 0; i < iters; i++)
    for (int t = 0; t < 8; t++) a[t] = a[t] + c, p[t] = p[t] * 0.99999994f;
  float r = 0.0f;
  for (int t = 0; t < 8; t++)
    for (int l = 0; l < 8; l++) r += a[t][l] + p[t][l];
  return r;
}

/* GFLOP/s of all threads at once: best of 3 (each thread 16 x 8 flops per iteration). */
static double peak_gflops(void)
{
  double best = 0.0;
  long   iters = 20000000;
  for (int r = 0; r < 3; r++) {
    double t0 = omp_get_wtime(), sink = 0.0;
    int    nth = 1;
#pragma omp parallel reduction(+ : sink)
    {
      sink += peak_kernel(iters, 1e-9f * (float)(omp_get_thread_num() + 1));
#pragma omp single
      nth = omp_get_num_threads();
    }
    double t = omp_get_wtime() - t0;
    bench_sink += sink; /* keeps the work */
    best = PetscMax(best, 128.0 * (double)iters * nth / t * 1e-9);
  }
  return best;
}

/* Floating-point operations of one train step per sample: 2 per weight for
 * the forward product, the back-data product (not for the first layer) and
 * the weight gradient; biases, activations and Adam are left out. */
static double train_flops(Surrogate s)
{
  double f = 0.0;
  for (int l = 0; l < s->nlayer; l++) f += (l > 0 ? 6.0 : 4.0) * (double)s->dim[l] * (double)s->dim[l + 1];
  return f;
}

/* The network as text, e.g. "5-32-32-1". */
static PetscErrorCode LayersText(Surrogate s, char *buf, size_t len)
{
  size_t k = 0;

  PetscFunctionBeginUser;
  for (int l = 0; l <= s->nlayer && k < len; l++)
    k += (size_t)snprintf(buf + k, len - k, "%s%" PetscInt_FMT, l ? "-" : "", (PetscInt)s->dim[l]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Bytes per train step of the CUDA engine (surrogate/mlp_cuda.cu), counted
 * as its threads issue the loads and stores (a model: caches can only lower
 * it): normalize (in, A0); forward, FT = 4 outputs per pass over a sample's
 * inputs (A[l] read ceil(dout/4) times, A[l+1] written); output (A[L],
 * target, D, E); the gradient sums in tiles of T x T pairs (T = 8 float, 4
 * reproducible), each tile reading its T delta rows and its T activation
 * rows, the bias column none (one pair per block read 2 rows a
 * pair); the reproducible weight gradients first read each row once for its
 * maximum, and its loss makes two passes (max, then bins); back-data, 4 inputs per pass over
 * the deltas (D read ceil(din/4) times, A[l] read, D' written). With gemm
 * (-surrogate_cuda_kernels gemm) the reproducible weight gradients read their
 * rows in tiles of up to 32 x 32 pairs, the bias within the first (the float
 * strategies' model is the tiled one's). */
static double Tiles(double n, double t) { return ceil(n / t); }
static double train_bytes(Surrogate s, int st, double n, int gemm)
{
  double passes = st == RED_REPRODUCIBLE ? 2.0 : 1.0,
         T      = gemm                   ? 32.0
                : st == RED_REPRODUCIBLE ? 4.0
                                         : 8.0,
         nout   = (double)s->dim[s->nlayer];
  double e = 2.0 * (double)s->dim[0] + 4.0 * nout + 2.0 * nout * passes;
  for (int l = 0; l < s->nlayer; l++) {
    double din = (double)s->dim[l], dout = (double)s->dim[l + 1];
    e += din * Tiles(dout, 4.0) + dout;                                   /* forward */
    /* gradient sums (GEMM-style: the bias in the first column tile) */
    e += Tiles(gemm ? din : din + 1.0, T) * dout + Tiles(dout, T) * din;
    if (st == RED_REPRODUCIBLE) e += din + dout; /* ... their row maxima first (one read of each row) */
    if (l > 0) e += dout * Tiles(din, 4.0) + 2.0 * din;                  /* back-data */
  }
  return 4.0 * e * n;
}

static PetscErrorCode Bench(void)
{
  PetscInt  n = 512 * 512, steps = 3, reps = 2;
  float    *in, *tgt, *out, loss;
  double    flops = 0.0, fwd = 0.0;
  double    ttrain[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30}, tpred[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30},
         bytes[6] = {0};
  int nvar = 3; /* on a GPU 3 rows more: the strategies with the other train-step kernels (-surrogate_cuda_kernels) */
  char      layers[256] = "";
  SurrogateDevice dev = SURROGATE_DEVICE_CPU;

  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "bench_surrogate", NULL);
  PetscCall(CliInt(PetscOptionsObject, "-bench_n", "Samples in the batch", 1, PETSC_MAX_INT, NULL, &n, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-bench_steps", "Train steps per repetition", 1, PETSC_MAX_INT, NULL, &steps,
                   NULL));
  PetscCall(CliInt(PetscOptionsObject, "-bench_reps", "Repetitions (the best is reported)", 1, PETSC_MAX_INT, NULL,
                   &reps, NULL));
  PetscOptionsEnd();
  /* The batch and the predictions in the memory the coupled loop uses
   * (SurrogateHostMalloc: page-locked when the surrogate runs on a GPU), so a
   * GPU step's copies cost what they cost in the miniapp. */
  Surrogate hold;
  PetscCall(SurrogateCreate(PETSC_COMM_WORLD, &hold));
  PetscCall(SurrogateSetSizes(hold, HEAT_NIN, HEAT_NOUT));
  PetscCall(SurrogateSetFromOptions(hold));
  {
    PetscBool help;
    PetscCall(PetscOptionsHasHelp(NULL, &help));
    if (help) PetscFunctionReturn(PETSC_SUCCESS); /* -help: every option it reads printed, no work */
  }
  PetscCall(OptStrictCheckUnused(PETSC_FALSE)); /* a misspelled option: an error, not the default */
  PetscCall(SurrogateSetUp(hold));
  PetscCall(SurrogateHostMalloc(hold, (size_t)n * (HEAT_NIN + 2 * HEAT_NOUT) * sizeof(float), &in));
  tgt = in + (size_t)n * HEAT_NIN, out = tgt + (size_t)n * HEAT_NOUT;
  heat_samples(7, 0, (size_t)n, 0.2f, in, tgt);
  PetscCall(SurrogateGetDevice(hold, &dev));
  if (dev == SURROGATE_DEVICE_CUDA) nvar = 6;
  const char *other = hold->cuda_gemm ? "tiled" : "gemm";
  /* Interleave the strategies rep by rep and keep each one's best time, so
   * that a slow phase of the machine does not land on one strategy only. */
  for (PetscInt r = 0; r < reps; r++) for (int v = 0; v < nvar; v++) {
    /* v = st + 3: strategy st with the other train-step kernels */
      int st = v % 3;
      Surrogate s;
      PetscCall(SurrogateCreate(PETSC_COMM_WORLD, &s));
      PetscCall(SurrogateSetSizes(s, HEAT_NIN, HEAT_NOUT));
      PetscCall(SurrogateSetFromOptions(s));
      if (v >= 3) s->cuda_gemm = (PetscBool)!s->cuda_gemm;
      PetscCall(SurrogateSetUp(s));
      PetscCall(SurrogateGetDevice(s, &dev));
      PetscCall(SurrogateSetStrategy_Private(s, (red_strategy_t)st));
      PetscCall(SurrogateTrain(s, n, in, tgt, &loss)); /* warm-up: buffers, statistics */
      double t0 = MPI_Wtime();
      for (PetscInt i = 0; i < steps; i++) PetscCall(SurrogateTrain(s, n, in, tgt, &loss));
      double t1 = MPI_Wtime();
      for (PetscInt i = 0; i < steps; i++) PetscCall(SurrogatePredict(s, n, in, out));
      double t2 = MPI_Wtime();
      ttrain[v] = PetscMin(ttrain[v], (t1 - t0) / steps);
      tpred[v]  = PetscMin(tpred[v], (t2 - t1) / steps);
      if (r == 0 && v == 0) PetscCall(SurrogateView(s, NULL));
      flops    = train_flops(s) * (double)n,
      bytes[v] = train_bytes(s, st, (double)n, st == RED_REPRODUCIBLE && s->cuda_gemm);
      if (r == 0 && v == 0) PetscCall(LayersText(s, layers, sizeof layers));
      fwd   = 0.0;
      for (int l = 0; l < s->nlayer; l++) fwd += 2.0 * (double)s->dim[l] * (double)s->dim[l + 1] * (double)n;
      PetscCall(SurrogateDestroy(&s));
    }
  double peak = 0.0, bw = 0.0;
  if (dev == SURROGATE_DEVICE_CPU) peak = peak_gflops();
#if defined(MINIAPP_HAVE_CUDA)
  else PetscCall(SurrogateCUDAPeak_Private(&peak, &bw));
#endif
  /* a ceiling that was not measured is an error, not a 0% reading */
  PetscCheck(peak > 0.0 && (dev == SURROGATE_DEVICE_CPU || bw > 0.0), PETSC_COMM_WORLD, PETSC_ERR_LIB,
             "bench_surrogate: the %s ceilings were not measured (peak %g GFLOP/s, bandwidth %g GB/s)",
             dev == SURROGATE_DEVICE_CUDA ? "device's" : "CPU's", peak, bw);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "bench_surrogate: batch %" PetscInt_FMT ", network %s, device %s, %d OpenMP threads, best of "
                                                                "%" PetscInt_FMT " x %" PetscInt_FMT " steps\n",
                        n, layers, dev == SURROGATE_DEVICE_CUDA ? "cuda" : "cpu", omp_get_max_threads(), reps, steps));
  if (dev == SURROGATE_DEVICE_CPU)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "float peak without FMA, measured: %.1f GFLOP/s (%d threads); train step %.3g GFLOP, "
                          "inference %.3g GFLOP\n",
                          peak, omp_get_max_threads(), 1e-9 * flops, 1e-9 * fwd));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "device float peak without FMA, measured: %.1f GFLOP/s; copy bandwidth, measured: %.1f GB/s; "
                          "train step %.3g GFLOP, inference %.3g GFLOP\n",
                          peak, bw, 1e-9 * flops, 1e-9 * fwd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s %10s %12s %10s %9s %7s %12s %10s %9s%s\n", "strategy", "step ms",
                        "train samp/s", "vs atomic", "GFLOP/s", "%peak", "infer samp/s", "vs atomic", "GFLOP/s",
                        bw > 0.0 ? "  model GB/s  %bw" : ""));
  for (int st = 0; st < nvar; st++) { /* "vs atomic": against the atomic row of the same kernels */
    char gb[64] = "", name[32];
    int  a0 = st < 3 ? 0 : 3;
    snprintf(name, sizeof name, "%s%s%s", red_strategy_name((red_strategy_t)(st % 3)), st < 3 ? "" : "/",
             st < 3 ? "" : other);
    if (bw > 0.0)
      snprintf(gb, sizeof gb, " %11.1f %4.0f%%", 1e-9 * bytes[st] / ttrain[st],
               100.0 * 1e-9 * bytes[st] / ttrain[st] / bw);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-18s %10.2f %12.4g %10.3f %9.1f %6.0f%% %12.4g %10.3f %9.1f%s\n", name,
                          1e3 * ttrain[st], n / ttrain[st], ttrain[st] / ttrain[a0], 1e-9 * flops / ttrain[st],
                          peak > 0.0 ? 100.0 * 1e-9 * flops / ttrain[st] / peak : 0.0, n / tpred[st],
                          tpred[st] / tpred[a0], 1e-9 * fwd / tpred[st], gb));
  }
  /* the model's bytes per sample, also without a GPU: docs/gpu.md quotes them (test docs_gpu_traffic) */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "traffic model of the CUDA engine (train_bytes): atomic %.1f KB, deterministic %.1f KB, "
                        "reproducible %.1f KB per sample and train step\n",
                        1e-3 * bytes[0] / n, 1e-3 * bytes[1] / n, 1e-3 * bytes[2] / n));
  PetscCall(SurrogateHostFree(hold, &in));
  PetscCall(SurrogateDestroy(&hold));
  return PETSC_SUCCESS;
}

int main(int argc, char **argv)
{
  static const char *const none[] = {NULL};
  static const CliProgram  prog   = {.name     = "bench_surrogate",
                                     .groups   = OPTS_PETSC | OPTS_SURROGATE | OPTS_BENCH,
                                     .inputs   = none,
                                     .outputs  = none,
                                     .oom_hint = "the problem does not fit in this machine's memory; make it smaller"};
  PetscErrorCode           ierr   = CliInitialize(&argc, &argv, &prog);

  /* PETSc's viewers (-log_view :F, ..) must not write over an input or a program */
  if (!ierr) ierr = OutPathCheck(PETSC_COMM_WORLD);
  if (!ierr) ierr = Bench();
  if (!ierr) ierr = OptStrictCheckUnused(PETSC_TRUE);
  return CliFinalize(ierr);
}
