/* miniapp/tools/surrogate_train.c: the `surrogate-train` driver: trains the
 * surrogate on the heat-step map (heatdata.h) from the command line, with
 * optional checkpoint load/save, and prints loss and weights hash. Errors end
 * in one line "surrogate-train: error: ..." and exit status 1. */
#include "surrogate.h"
#include "heatdata.h"
#include "cli.h"       /* miniapp/: one start and end, every option judged before any work */

#include <stdio.h>
#include <string.h>

static const char help[] = "Train the MLP surrogate on one explicit heat step.\n"
                           "  -train_steps N   Adam steps (default 100)\n"
                           "  -train_batch N   global samples per step (default 4096)\n"
                           "  -train_load F    resume from checkpoint F;  -train_save F  write F at the end\n";

static PetscErrorCode Run(void)
{
  Surrogate   s;
  PetscInt    steps = 100, batch = 4096, n, k0;
  PetscMPIInt rank, size;
  char        load[PETSC_MAX_PATH_LEN] = "", save[PETSC_MAX_PATH_LEN] = "";
  PetscBool   hasload, hassave;
  float      *in, *tgt, loss = 0.0f;
  uint64_t    hash;
  PetscInt64  step;
  PetscInt    alarms = 0, alarm_step = 0; /* -surrogate_checks: failed checks, the first step with one */
  char        first_what[128] = "";

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "surrogate-train options", "");
  PetscCall(CliInt(PetscOptionsObject, "-train_steps", "Adam steps", 0, PETSC_MAX_INT, NULL, &steps, NULL));
  PetscCall(PetscOptionsInt("-train_batch", "global batch size", "", batch, &batch, NULL));
  PetscCall(PetscOptionsString("-train_load", "checkpoint to resume from", "", load, load, sizeof load, &hasload));
  PetscCall(PetscOptionsString("-train_save", "checkpoint to write at the end", "", save, save, sizeof save, &hassave));
  PetscOptionsEnd();
  PetscCheck(batch >= 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-train_batch %" PetscInt_FMT
             " must be >= 2 (one sample normalizes to zeros: its gradient is zero, nothing would be trained)",
             batch);
  /* before any work: the checkpoint must not overwrite the one loaded, an options file, a file PETSc writes
   * (-log_view :F, -ksp_converged_reason ascii:F, ...), a device or a directory (miniapp/cli/outpath.c) */
  if (hassave) PetscCall(OutPathRegisterOutput("-train_save", save));
  if (hasload) PetscCall(OutPathRegisterInput("-train_load", load));
  PetscCall(OutPathCheck(PETSC_COMM_WORLD));

  PetscCall(SurrogateCreate(PETSC_COMM_WORLD, &s));
  PetscCall(SurrogateSetSizes(s, HEAT_NIN, HEAT_NOUT));
  PetscCall(SurrogateSetFromOptions(s));
  PetscCall(SurrogateSetUp(s));
  {
    PetscBool help;
    PetscCall(PetscOptionsHasHelp(NULL, &help));
    if (help) PetscFunctionReturn(PETSC_SUCCESS); /* -help: every option it reads printed, no work */
  }
  PetscCall(OptStrictCheckUnused(PETSC_FALSE)); /* a misspelled option: an error, not the default */
  if (hasload) PetscCall(SurrogateLoad(s, load));
  /* rank r owns a contiguous slice of the same global batch */
  k0 = batch / size * rank + PetscMin(rank, batch % size);
  n  = batch / size + (rank < batch % size);
  PetscCall(PetscMalloc2((size_t)n * HEAT_NIN, &in, (size_t)n, &tgt));
  heat_samples(7, (size_t)k0, (size_t)n, 0.2f, in, tgt);
  for (PetscInt i = 0; i < steps; i++) {
    PetscInt nfail;
    char     what[128];
    PetscCall(SurrogateTrain(s, n, in, tgt, &loss));
    if (i == 0 || (i + 1) % 50 == 0 || i + 1 == steps)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "step %4" PetscInt_FMT "  loss %.6e\n", i + 1, (double)loss));
    PetscCall(SurrogateGetCheckResult(s, &nfail, NULL, what, sizeof what)); /* -surrogate_checks: 0 when off */
    if (nfail) alarms += nfail, alarm_step = alarm_step ? alarm_step : i + 1;
    if (nfail && !first_what[0]) PetscCall(PetscStrncpy(first_what, what, sizeof first_what));
  }
  PetscCheck(!alarms, PETSC_COMM_WORLD, PETSC_ERR_FP,
             "-surrogate_checks: %" PetscInt_FMT " failed check(s), the first in step %" PetscInt_FMT
             " (%s): a fault or a bug; nothing saved",
             alarms, alarm_step, first_what);
  if (hassave) PetscCall(SurrogateSave(s, save));
  PetscCall(SurrogateGetWeightsHash(s, &hash));
  PetscCall(SurrogateGetStep(s, &step));
  char lossmsg[32] = "none (no step ran)"; /* a loss is printed only when one was measured */
  if (steps > 0) PetscCall(PetscSNPrintf(lossmsg, sizeof lossmsg, "%.9e", (double)loss));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "surrogate-train: reduction %s, ranks %d, adam step %lld, loss %s, weights hash %016llx\n",
                        SurrogateGetStrategyName(), (int)size, (long long)step, lossmsg, (unsigned long long)hash));
  PetscCall(PetscFree2(in, tgt));
  PetscCall(SurrogateDestroy(&s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  static const char *const inputs[] = {"-train_load", NULL}, *const outputs[] = {"-train_save", NULL};
  static const CliProgram  prog     = {.name     = "surrogate-train",
                                         .help     = help,
                                         .groups   = OPTS_PETSC | OPTS_SURROGATE | OPTS_TRAIN,
                                         .inputs   = inputs,
                                         .outputs  = outputs,
                                         .oom_hint = "reduce -train_batch or -surrogate_layers"};
  PetscErrorCode           ierr     = CliInitialize(&argc, &argv, &prog);

  if (!ierr) ierr = Run();
  if (!ierr) ierr = OptStrictCheckUnused(PETSC_TRUE);
  return CliFinalize(ierr);
}
