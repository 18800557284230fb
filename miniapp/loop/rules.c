/* miniapp/loop/rules.c: the miniapp's rules between options, one row a rule,
 * checked once all options are read (the end of CoupledSetFromOptions): an
 * option that needs another, one that has no effect in this run, a file
 * option without a file. Ranges of single options are their readers'
 * (miniapp/cli/cli.h); the -inject spec against the run's sizes is faults.c's. */
#include "coupling_impl.h"
#include "cli.h"

#include <string.h>

/* Given at all (it marks the option used, as reading it would). */
static PetscBool Given(const char *name)
{
  PetscBool has = PETSC_FALSE;
  (void)PetscOptionsHasName(NULL, NULL, name, &has);
  return has;
}

/* An option of another coupling mode has no effect: an error, as an unused option is (docs/options.md). */
static PetscErrorCode CheckModeOptions(Coupled c)
{
  static const struct {
    const char *name;
    unsigned    modes; /* bit m: applies with CouplingModeNames[m] */
  } only[]                           = {{"-coupling_baselines", 2},
                                        {"-train_every", 6},
                                        {"-train_epochs", 6},
                                        {"-golden_weights_hash", 6},
                                        {"-guess", 2},
                                        {"-guess_history", 2},
                                        {"-guess_learn", 2},
                                        {"-guess_projection", 2},
                                        {"-closure_warmup", 4},
                                        {"-closure_tol", 4},
                                        {"-closure_drift_tol", 4},
                                        {"-closure_pattern_factor", 4}};
  static const char *const applies[] = {"guess", "closure", "guess or closure"}; /* modes 2, 4, 6 */
  char                     text[3][160];
  CliRule                  r[sizeof only / sizeof *only];

  PetscFunctionBegin;
  for (int m = 0; m < 3; m++)
    PetscCall(PetscSNPrintf(text[m], sizeof text[m], "has no effect with -coupling %s (it applies to -coupling %s)",
                            CouplingModeNames[c->mode], applies[m]));
  for (size_t k = 0; k < sizeof only / sizeof *only; k++) {
    PetscBool broken = (PetscBool)(Given(only[k].name) && !(only[k].modes >> c->mode & 1));
    r[k]             = (CliRule){broken, only[k].name, PETSC_FALSE, text[only[k].modes / 2 - 1]};
  }
  PetscCall(CliCheckRules(c->comm, r, sizeof r / sizeof *r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CoupledCheckRules(Coupled c)
{
  char        dev[16] = "", projection[200], closure[160], noise[200];
  const char *sc      = "";
  PetscBool   has_closure, anonymize = PETSC_FALSE, ordered = RunOrdered(c);

  PetscFunctionBegin;
  /* reading an option marks it used: without a network the device stays unread (the unused-option check names it) */
  if (c->mode != COUPLING_NONE)
    PetscCall(PetscOptionsGetString(NULL, NULL, "-surrogate_device", dev, sizeof dev, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-report_anonymize", &anonymize, NULL));
  PetscCall(SolverHasClosure(c->rep[0].solver, &has_closure));
  PetscCall(SolverGetScenario(c->rep[0].solver, &sc));
  PetscCall(PetscSNPrintf(projection, sizeof projection,
                          "has no effect with -guess %s and -coupling_baselines off (it scales the extrapolated and "
                          "learned guesses)", ncout_guess_names[c->guess]));
  PetscCall(
    PetscSNPrintf(closure, sizeof closure, "scenario %s has no closure term to learn (use -scenario grayscott)", sc));
  PetscCall(
    PetscSNPrintf(noise, sizeof noise,
                  "sets the noise detector, which judges the replicas of a run with an atomic half and 3 or more "
                  "replicas; this run %s",
                  ordered ? "adds in a fixed order (its replicas are compared bitwise)" : "has fewer than 3 replicas"));
  const PetscBool guess = (PetscBool)(c->mode == COUPLING_GUESS), noise_off = (PetscBool)(ordered || c->nrep < 3);
  const PetscBool ckpt  = Given("-checkpoint");
  /* the coupling mode's own rules, then the options of the other modes (CheckModeOptions), then the rest */
  const CliRule coupled[] = {
    /* it scales the extrapolated and learned guesses: a run that solves from neither (no baselines) ignores it */
    {Given("-guess_projection") && guess && !c->baselines && c->guess != GUESS_EXTRAPOLATION &&
       c->guess != GUESS_LEARNED,
     "-guess_projection", PETSC_FALSE, projection},
    {Given("-progress_interval") && !c->progress, "-progress_interval", PETSC_FALSE,
     "paces the progress lines, and this run prints none (stderr is no terminal: give -progress)"},
    {Given("-coupling_baselines") && c->baselines && !guess, "-coupling_baselines", PETSC_FALSE,
     "only with -coupling guess"},
  };
  const CliRule rules[] = {
    /* the kernels' switch with the CPU named would do nothing */
    {c->mode != COUPLING_NONE && Given("-surrogate_cuda_kernels") && !strcmp(dev, "cpu"), "-surrogate_cuda_kernels",
     PETSC_FALSE, "chooses the CUDA train step's kernels, but -surrogate_device is cpu"},
    {c->mode == COUPLING_CLOSURE && !has_closure, "-coupling", PETSC_TRUE, closure},
    {ckpt && !c->checkpoint[0], "-checkpoint", PETSC_FALSE, "needs a file name"},
    {Given("-restart") && !c->restart[0], "-restart", PETSC_FALSE, "needs a file name"},
    {c->checkpoint_every && !c->checkpoint[0], "-checkpoint_every", PETSC_TRUE, "needs -checkpoint FILE"},
    {c->fault.action == FAULT_ACTION_ROLLBACK && !ckpt, "-fault_action", PETSC_TRUE,
     "needs -checkpoint FILE (the state it rolls back to)"},
    {Given("-surrogate_checks"), "-surrogate_checks", PETSC_FALSE,
     "use -fault_checks in the miniapp (it checks the operator's products and the train steps, and the run reads their "
     "alarms; -surrogate_checks alone checked, and no alarm reached the verdict)"},
    /* these did nothing */
    {Given("-fault_noise_factor") && noise_off, "-fault_noise_factor", PETSC_FALSE, noise},
    {Given("-fault_noise_window") && noise_off, "-fault_noise_window", PETSC_FALSE, noise},
    {anonymize && !Given("-report"), "-report_anonymize", PETSC_FALSE,
     "names the nodes of the -report, and this run writes none (give -report FILE or auto)"},
  };
  PetscCall(CliCheckRules(c->comm, coupled, sizeof coupled / sizeof *coupled));
  PetscCall(CheckModeOptions(c));
  PetscCall(CliCheckRules(c->comm, rules, sizeof rules / sizeof *rules));
  PetscFunctionReturn(PETSC_SUCCESS);
}
