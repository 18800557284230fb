/* miniapp/loop/guesses.c: the Krylov initial guesses of -coupling guess, and
 * their comparison side by side on the same systems.
 *
 *   none           u^n
 *   extrapolation  u^n + d^n = 2u^n - u^{n-1}
 *   fischer        Fischer's projection over past solutions (model 1 of
 *                  PETSc's KSPGUESSFISCHER, 10 solutions; solver/guess.c)
 *   learned        u^n + d^n + z, z the network's correction (features.c); with
 *                  -guess_learn residual x_p + z, x_p the projection's guess
 *                  (unscaled): its saving against none is mostly x_p's, so the
 *                  summary states it against its base row too
 *   combined       the energy-norm best point of u^n + span{u^n, the last
 *                  -guess_history increments, Fischer's guess - u^n, z}
 *                  (solver GuessSpace)
 *   projection     combined without z: the same space and projection with
 *                  no network, the control that tells what the network adds
 * With -guess_projection (default) extrapolation and learned are scaled
 * along their direction to the energy-norm best point (alpha ~ 1), so a bad
 * prediction never starts worse than u^n. Combined contains each of the
 * others' guesses, so in the energy norm it is never worse than any.
 *
 * The run is driven by -guess learned|combined. With -coupling_baselines
 * (default) every other guess solves replica 0's system of the same step
 * from its own start (a side KSP, its own atomic order), so all six are
 * measured on identical systems: iterations, start residual, seconds. The
 * systems are those of the run's trajectory, which the driving guess moves
 * at the solver's tolerance: compare rows within one run. The
 * Fischer guess of every row is the one kept in the replica's GuessSpace,
 * updated with the run's own solutions. */
#include "coupling_impl.h"
#include "yamlfmt.h"

#include <math.h>

PetscErrorCode GuessesSetUp(Coupled c)
{
  PetscFunctionBegin;
  for (int k = 0; k < GUESS_NKINDS; k++) c->tally[k] = (GuessTally){.its_step = -1, .r0_step = NAN};
  if (!c->baselines) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SolverCreateKSP(c->rep[0].solver, &c->ksp_plain));
  PetscCall(VecDuplicate(c->rep[0].prev, &c->xtrial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x0 = u + dir, or with -guess_projection the energy-norm best point of the line. */
static PetscErrorCode Along(Coupled c, Replica *p, Vec dir, Vec x0)
{
  Vec u;

  PetscFunctionBegin;
  PetscCall(SolverGetState(p->solver, &u));
  if (c->projection) PetscCall(GuessSpaceProject(p->space, 0, PETSC_FALSE, PETSC_FALSE, dir, x0));
  else PetscCall(VecWAXPY(x0, 1.0, u, dir));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessForm(Coupled c, Replica *p, GuessKind kind, Vec x0)
{
  Vec u;

  PetscFunctionBegin;
  PetscCall(SolverGetState(p->solver, &u));
  switch (kind) {
  case GUESS_EXTRAPOLATION:
    if (p->have_d) PetscCall(Along(c, p, p->d, x0));
    else PetscCall(VecCopy(u, x0));
    break;
  case GUESS_LEARNED:
    /* the projection's guess, corrected */
    if (p->have_z && c->learn_residual) PetscCall(VecWAXPY(x0, 1.0, p->xp, p->z));
    else if (p->have_z && c->projection) PetscCall(GuessSpaceProject(p->space, 1, PETSC_FALSE, PETSC_FALSE, p->z, x0));
    else if (p->have_z) {
      PetscCall(VecWAXPY(p->w, 1.0, p->d, p->z));
      PetscCall(VecAXPY(p->w, 1.0, u));
      PetscCall(VecCopy(p->w, x0));
    } else if (p->have_d) PetscCall(Along(c, p, p->d, x0)); /* not trained yet: extrapolation */
    else PetscCall(VecCopy(u, x0));
    break;
  case GUESS_COMBINED:
    PetscCall(GuessSpaceProject(p->space, c->history, PETSC_TRUE, PETSC_TRUE, p->have_z ? p->z : NULL, x0));
    break;
  case GUESS_PROJECTION:
    PetscCall(GuessSpaceProject(p->space, c->history, PETSC_TRUE, PETSC_TRUE, NULL, x0));
    break;
  case GUESS_FISCHER:
    PetscCall(GuessSpaceFischer(p->space, x0));
    break;
  default:
    PetscCall(VecCopy(u, x0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* What the network itself adds, in iterations: the learned row against the guess it corrects (its base: the
 * extrapolation, or with -guess_learn residual the projection, whose saving the learned row's own % against
 * none mostly is), and combined against projection (the same space without the network). */
typedef struct {
  const char *base;                       /* the learned guess's base row */
  PetscInt    base_its, net_saved;        /* base row's iterations; projection - combined */
  double      learned_vs_base, net_share; /* % fewer than the base (< 0: worse), % of projection's */
} NetworkGain;

static NetworkGain GuessesNetworkGain(Coupled c)
{
  GuessKind   b = c->learn_residual ? GUESS_PROJECTION : GUESS_EXTRAPOLATION;
  PetscInt    bi = c->tally[b].its, li = c->tally[GUESS_LEARNED].its, pi = c->tally[GUESS_PROJECTION].its;
  NetworkGain g = {ncout_guess_names[b], bi, pi - c->tally[GUESS_COMBINED].its, 0, 0};

  if (bi) g.learned_vs_base = 100.0 * (double)(bi - li) / (double)bi;
  if (pi) g.net_share = 100.0 * (double)g.net_saved / (double)pi;
  return g;
}

static void Tally(GuessTally *t, PetscInt its, PetscReal r0, double seconds)
{
  t->its += its, t->its_step = its, t->seconds += seconds, t->r0_step = r0;
  if (r0 > 0 && isfinite(r0)) t->log_r0 += log10(r0), t->nr0++;
}

PetscErrorCode GuessesCompare(Coupled c)
{
  Replica         *p = &c->rep[0];
  double           t0 = MPI_Wtime();

  PetscFunctionBegin;
  for (int k = 0; k < GUESS_NKINDS; k++) c->tally[k].its_step = -1, c->tally[k].r0_step = NAN;
  if (!c->baselines) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(c->ev_base, 0, 0, 0, 0));
  /* the comparison is a side run: replica 0's solver, vectors and guesses draw from base_order */
  PetscCall(SolverSetAtomicOrder(p->solver, &c->base_order));
  for (int k = 0; k < GUESS_NKINDS; k++) {
    PetscInt  its;
    PetscReal r0;
    double    t = MPI_Wtime();
    if ((GuessKind)k == c->guess) continue; /* measured on the run itself */
    PetscCall(GuessForm(c, p, (GuessKind)k, c->xtrial));
    PetscCall(SolverTrialSolve(p->solver, c->ksp_plain, c->xtrial, &its, &r0));
    Tally(&c->tally[k], its, r0, MPI_Wtime() - t);
  }
  PetscCall(SolverSetAtomicOrder(p->solver, &p->order));
  PetscCall(PetscLogEventEnd(c->ev_base, 0, 0, 0, 0));
  c->times.baselines += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessesRecordMain(Coupled c, double seconds)
{
  PetscFunctionBegin;
  Tally(&c->tally[c->guess], c->rep[0].its, c->rep[0].r0, seconds);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessesSummary(Coupled c, FILE *f)
{
  const GuessTally *none = &c->tally[GUESS_NONE];
  double            surr = c->times.features + c->times.predict + c->times.train;

  PetscFunctionBegin;
  PetscCall(PetscFPrintf(c->comm, f, "guess: %s\nguess_history: %" PetscInt_FMT "\nguess_projection: %s\n",
                         ncout_guess_names[c->guess], c->history, c->projection ? "true" : "false"));
  if (c->inc_err_n[0])
    PetscCall(PetscFPrintf(c->comm, f, "learned_increment_error_mean: %.4e\n", c->inc_err_sum[0] / c->inc_err_n[0]));
  if (c->inc_err_n[1])
    PetscCall(
      PetscFPrintf(c->comm, f, "extrapolation_increment_error_mean: %.4e\n", c->inc_err_sum[1] / c->inc_err_n[1]));
  if (!c->baselines) PetscFunctionReturn(PETSC_SUCCESS);
  for (int k = 0; k < GUESS_NKINDS; k++) {
    const GuessTally *t = &c->tally[k];
    const char       *n = ncout_guess_names[k];
    double            saved = none->its ? 100.0 * (double)(none->its - t->its) / (double)none->its : 0;
    PetscCall(PetscFPrintf(c->comm, f, "ksp_iterations_total_%s: %" PetscInt_FMT "\n", n, t->its));
    PetscCall(PetscFPrintf(c->comm, f, "iterations_saved_pct_%s: %.1f\n", n, saved));
    /* no solve: .nan, YAML's */
    PetscCall(PetscFPrintf(c->comm, f, "start_residual_geomean_%s: %s\n", n,
                           yaml_num("%.3e", t->nr0 ? pow(10.0, t->log_r0 / t->nr0) : NAN)));
    PetscCall(PetscFPrintf(c->comm, f, "guess_solve_seconds_%s: %.4f\n", n, t->seconds));
  }
  {
    NetworkGain g = GuessesNetworkGain(c);
    PetscCall(PetscFPrintf(c->comm, f, "guess_learn: %s\nlearned_base: %s\nlearned_saved_pct_vs_base: %.1f\n",
                           c->learn_residual ? "residual" : "increment", g.base, g.learned_vs_base));
    PetscCall(PetscFPrintf(c->comm, f, "network_iterations_saved_vs_projection: %" PetscInt_FMT "\n", g.net_saved));
    PetscCall(PetscFPrintf(c->comm, f, "network_saved_pct_vs_projection: %.1f\n", g.net_share));
  }
  /* the truth a user needs: solve time saved against the time the surrogate cost */
  PetscCall(PetscFPrintf(c->comm, f,
                         "solve_seconds_saved_vs_none: %.4f\nsurrogate_seconds: %.4f\nnet_seconds_saved: %.4f\n",
                         none->seconds - c->tally[c->guess].seconds, surr / c->nrep,
                         none->seconds - c->tally[c->guess].seconds - surr / c->nrep));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The report's coupling section: the same table, nested. */
PetscErrorCode GuessesReport(Coupled c, FILE *f)
{
  const GuessTally *none = &c->tally[GUESS_NONE];
  const char       *residual_note = " # the projection's guess + the correction: its saving is mostly x_p's (network:)";
  double            surr          = (c->times.features + c->times.predict + c->times.train) / c->nrep,
         saved                    = none->seconds - c->tally[c->guess].seconds;

  PetscFunctionBegin;
  PetscCall(PetscFPrintf(c->comm, f, "  guess: %s\n", ncout_guess_names[c->guess]));
  if (!c->baselines) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(
    PetscFPrintf(c->comm, f, "  guesses: # replica 0's systems solved from each initial guess, side by side\n"));
  for (int k = 0; k < GUESS_NKINDS; k++) {
    const GuessTally *t = &c->tally[k];
    PetscCall(PetscFPrintf(c->comm, f,
                           "    %s: {iterations: %" PetscInt_FMT
                           ", saved_pct: %.1f, start_residual_geomean: %s, seconds: %.4f}%s\n",
                           ncout_guess_names[k], t->its,
                           none->its ? 100.0 * (double)(none->its - t->its) / (double)none->its : 0.0,
                           yaml_num("%.3e", t->nr0 ? pow(10.0, t->log_r0 / t->nr0) : NAN),
                           t->seconds, /* no sample: .nan, as the summary */
                           k == GUESS_LEARNED && c->learn_residual ? residual_note : ""));
  }
  {
    NetworkGain g = GuessesNetworkGain(c);
    PetscCall(PetscFPrintf(c->comm, f, "  network: {learns: %s, learned_base: %s, learned_saved_pct_vs_base: %.1f, ",
                           c->learn_residual ? "residual" : "increment", g.base, g.learned_vs_base));
    PetscCall(PetscFPrintf(c->comm, f,
                           "iterations_saved_vs_projection: %" PetscInt_FMT ", saved_pct_vs_projection: %.1f}\n",
                           g.net_saved, g.net_share));
  }
  PetscCall(
    PetscFPrintf(c->comm, f,
                 "  net_time: {solve_seconds_saved_vs_none: %.4f, surrogate_seconds: %.4f, net_seconds_saved: %.4f}\n",
                 saved, surr, saved - surr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GuessesDestroy(Coupled c)
{
  PetscFunctionBegin;
  PetscCall(KSPDestroy(&c->ksp_plain));
  PetscCall(VecDestroy(&c->xtrial));
  PetscFunctionReturn(PETSC_SUCCESS);
}
