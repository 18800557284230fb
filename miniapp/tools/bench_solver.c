/* miniapp/tools/bench_solver.c: cost of each reduction strategy in the solver, side
 * by side in one process. The same CG + Jacobi solve (heat operator, fixed
 * iteration count) runs with PETSc's stock vectors and with the fpna Vec type
 * of each strategy, repetitions interleaved, plus a STREAM triad and a dot
 * measured in the same run. Prints time per iteration, ratios, and achieved
 * bandwidth of a CG iteration under a stated traffic model. Not a test. */
#include "cli.h"
#include "blasthreads.h"
#include "solver.h"
#include "vecred.h"
#include "stream.h"
#include <petscksp.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>


typedef struct {
  const char *label, *vectype;
  PetscBool   scatter;
  const char *ksptype; /* NULL: the solver's default (fpnacg, fused tail) */
  double      passes;  /* traffic model: vector passes per iteration */
  Solver      s;
  Vec         b, x;
  double      best;
  PetscLogStage stage; /* -log_view: one stage per variant */
} Config;



static PetscErrorCode SetUpConfig(Config *c, PetscInt its)
{
  KSP ksp;
  Mat A;
  Vec u;

  PetscFunctionBegin;
  PetscCall(SolverCreate(PETSC_COMM_WORLD, &c->s));
  PetscCall(SolverSetFromOptions(c->s));
  PetscCall(SolverSetReductionOverride(c->s, c->vectype, c->scatter));
  PetscCall(SolverSetUp(c->s));
  PetscCall(SolverGetKSP(c->s, &ksp));
  if (c->ksptype) PetscCall(KSPSetType(ksp, c->ksptype));
  PetscCall(KSPSetTolerances(ksp, 1e-300, 0, PETSC_DEFAULT, its)); /* exactly `its` iterations */
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(SolverGetState(c->s, &u));
  PetscCall(VecDuplicate(u, &c->b));
  PetscCall(VecDuplicate(u, &c->x));
  PetscCall(MatMult(A, u, c->b));
  c->best = 1e30;
  PetscCall(PetscLogStageRegister(c->label, &c->stage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Bench(void)
{
  /* Traffic model of one CG + Jacobi iteration, in vector passes of 8N bytes
   * (write-allocate traffic not counted): PETSc's KSPCG order MatMult 4
   * (global-to-local copy 2, stencil 2), 2 dots 4, norm 1, 2 AXPY 6, Jacobi 3,
   * AYPX 3 = 21. fpnacg with the gather operator: the product fused with p.w
   * 4 (the dot reads the rows the stencil has read), the tail one pass
   * reading x, p, r, w and writing x, r, z 7 (the heat operator's Jacobi
   * diagonal is constant: read as one number), AYPX 3 = 14. The atomic
   * build's scatter operator has no fused product: 4 + 2 + 7 + 3 = 16. */
  Config cfg[] =
    {{.label = "petsc-stock", .vectype = VECSTANDARD, .scatter = PETSC_FALSE, .ksptype = KSPCG, .passes = 21},
     {.label = "atomic", .vectype = VECFPNA_ATOMIC, .scatter = PETSC_TRUE, .passes = 16},
     {.label = "atomic-vec+gather-op", .vectype = VECFPNA_ATOMIC, .scatter = PETSC_FALSE, .passes = 14},
     {.label = "deterministic", .vectype = VECFPNA_DETERMINISTIC, .scatter = PETSC_FALSE, .passes = 14},
     {.label = "reproducible", .vectype = VECFPNA_REPRODUCIBLE, .scatter = PETSC_FALSE, .passes = 14},
     {.label   = "deterministic-cg",
      .vectype = VECFPNA_DETERMINISTIC,
      .scatter = PETSC_FALSE,
      .ksptype = KSPCG,
      .passes  = 21},
     {.label   = "reproducible-cg",
      .vectype = VECFPNA_REPRODUCIBLE,
      .scatter = PETSC_FALSE,
      .ksptype = KSPCG,
      .passes  = 21}};
  int      nc = sizeof cfg / sizeof *cfg;
  PetscInt its = 40, reps = 5, n, N;
  double   triad, dotbw, bt = 1e30, bd = 1e30;
  stream_t st;

  { /* defaults: the heat operator on a grid far larger than the caches */
    const char *def[][2] = {{"-scenario", "heat"}, {"-da_grid_x", "2048"}, {"-da_grid_y", "2048"}};
    for (int i = 0; i < 3; i++) {
      PetscBool set;
      PetscCall(PetscOptionsHasName(NULL, NULL, def[i][0], &set));
      if (!set) PetscCall(PetscOptionsSetValue(NULL, def[i][0], def[i][1]));
    }
  }
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "bench_solver", NULL);
  PetscCall(CliInt(PetscOptionsObject, "-bench_its", "CG iterations per solve", 1, PETSC_MAX_INT, NULL, &its, NULL));
  PetscCall(CliInt(PetscOptionsObject, "-bench_reps", "Repetitions (the best is reported)", 1, PETSC_MAX_INT, NULL,
                   &reps, NULL));
  PetscOptionsEnd();
  for (int i = 0; i < nc; i++) PetscCall(SetUpConfig(&cfg[i], its));
  {
    PetscBool help;
    PetscCall(PetscOptionsHasHelp(NULL, &help));
    if (help) PetscFunctionReturn(PETSC_SUCCESS); /* -help: every option it reads printed, no work */
  }
  PetscCall(OptStrictCheckUnused(PETSC_FALSE)); /* a misspelled option: an error, not the default */
  PetscCall(VecGetLocalSize(cfg[0].b, &n));
  PetscCall(VecGetSize(cfg[0].b, &N));
  PetscCheck(!stream_create((size_t)n, &st), PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for the STREAM arrays");
  for (PetscInt r = 0; r < reps; r++) {
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    stream_sample(&st, &bt, &bd);
    for (int i = 0; i < nc; i++) {
      KSP ksp;
      PetscCall(SolverGetKSP(cfg[i].s, &ksp));
      PetscCall(VecZeroEntries(cfg[i].x));
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      PetscCall(PetscLogStagePush(cfg[i].stage));
      double t = MPI_Wtime();
      PetscCall(KSPSolve(ksp, cfg[i].b, cfg[i].x));
      t = MPI_Wtime() - t;
      PetscCall(PetscLogStagePop());
      { /* a time per iteration needs the iterations: a solve that stopped early (a small grid converges to the
         * last bit) is no reading */
        PetscInt           done;
        KSPConvergedReason why;
        PetscCall(KSPGetIterationNumber(ksp, &done));
        PetscCall(KSPGetConvergedReason(ksp, &why));
        PetscCheck(done == its, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
                   "%s: the solve stopped after %" PetscInt_FMT " of the %" PetscInt_FMT
                   " iterations asked for (%s): lower -bench_its or use a larger grid",
                   cfg[i].label, done, its, KSPConvergedReasons[why]);
      }
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
      if (t < cfg[i].best) cfg[i].best = t;
    }
  }
  triad = 3.0 * 8 * (double)n / bt / 1e9, dotbw = 2.0 * 8 * (double)n / bd / 1e9;
  stream_destroy(&st);
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &triad, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dotbw, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "bench_solver: %" PetscInt_FMT " unknowns, %d ranks x %d threads, %" PetscInt_FMT
                        " CG iterations, best of %" PetscInt_FMT "\n",
                        N, size, omp_get_max_threads(), its, reps));
  PetscCall(
    PetscPrintf(PETSC_COMM_WORLD, "STREAM triad %.1f GB/s, dot %.1f GB/s (one sample a repetition, same threads)\n",
                triad, dotbw));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %12s %10s %10s %7s %12s %10s\n", "variant", "ms/iter", "/atomic",
                        "/stock", "passes", "GB/s(model)", "%triad"));
  for (int i = 0; i < nc; i++) {
    double ms = 1e3 * cfg[i].best / its, gbs = cfg[i].passes * 8.0 * (double)N / (cfg[i].best / its) / 1e9;
    char pct[32] = "-"; /* no triad measured: no percentage */
    if (triad > 0 && isfinite(triad)) PetscCall(PetscSNPrintf(pct, sizeof pct, "%.0f%%", 100 * gbs / triad));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-22s %12.3f %10.3f %10.3f %7.0f %12.1f %10s\n", cfg[i].label, ms,
                          cfg[i].best / cfg[1].best, cfg[i].best / cfg[0].best, cfg[i].passes, gbs, pct));
  }
  for (int i = 0; i < nc; i++) {
    PetscCall(VecDestroy(&cfg[i].b));
    PetscCall(VecDestroy(&cfg[i].x));
    PetscCall(SolverDestroy(&cfg[i].s));
  }
  return PETSC_SUCCESS;
}

int main(int argc, char **argv)
{
  static const char *const none[] = {NULL};
  static const CliProgram  prog   = {.name     = "bench_solver",
                                     .help     = "bench_solver: -da_grid_x/-da_grid_y grid, -bench_its, -bench_reps\n",
                                     .groups   = OPTS_PETSC | OPTS_SOLVER | OPTS_BENCH,
                                     .inputs   = none,
                                     .outputs  = none,
                                     .oom_hint = "the problem does not fit in this machine's memory; make it smaller"};
  PetscErrorCode           ierr;

  if (!getenv("OPENBLAS_NUM_THREADS")) (void)blas_threads_one();
  ierr = CliInitialize(&argc, &argv, &prog);
  /* PETSc's viewers (-log_view :F, ..) must not write over an input or a program */
  if (!ierr) ierr = OutPathCheck(PETSC_COMM_WORLD);
  if (!ierr) ierr = Bench();
  if (!ierr) ierr = OptStrictCheckUnused(PETSC_TRUE);
  return CliFinalize(ierr);
}
