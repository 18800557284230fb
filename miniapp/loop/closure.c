/* miniapp/loop/closure.c: -coupling closure. The surrogate learns the rate factor
 * c of Gray-Scott's q = c v^2 (features.c) and replaces the exact factor in
 * the physics while it is accurate enough:
 *   - it trains every -train_every K steps on the exact factor of the
 *     current state, for the whole run (online);
 *   - from step -closure_warmup W on, the learned c is used at a step only
 *     if its error on that step's state, ||(c_net - c) v^2|| / ||c v^2||
 *     (the error of the term q the physics sees), is at most -closure_tol;
 *     above it the exact term comes back (a fallback, counted and recorded);
 *   - an exact-term run advances side by side; the fields' relative L2
 *     drift from it is recorded every step, and at the end the run is
 *     INVALID if the drift exceeds -closure_drift_tol or the pattern
 *     changed: the standard deviation of v or its RMS wavenumber
 *     sqrt(sum |grad v|^2 / sum (v - mean v)^2) off by more than the factor
 *     -closure_pattern_factor from the exact run's.
 * The norms that decide the gate go through the solver's Vec type, so the
 * reproducible build makes the same decisions on any layout. */
#include "coupling_impl.h"

#include <math.h>

PetscErrorCode ClosureSetUp(Coupled c)
{
  PetscFunctionBegin;
  PetscCall(SolverSetUp(c->exact));
  /* the side runs' order; what its set-up drew counts for nothing */
  PetscCall(SolverSetAtomicOrder(c->exact, &c->base_order));
  c->last_switch = -1, c->drift_max = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||(q - qe) v^2|| / ||qe v^2|| over the grid, through the Vec type. */
static PetscErrorCode ClosureError(Coupled c, Replica *p, PetscReal *err)
{
  Vec                u;
  const PetscScalar *a;
  PetscScalar       *e, *x;
  PetscReal          ne, nx;

  PetscFunctionBegin;
  PetscCall(SolverGetState(p->solver, &u));
  PetscCall(VecGetArrayRead(u, &a));
  PetscCall(VecGetArray(p->w, &e));
  PetscCall(VecGetArray(p->x0, &x));
  for (PetscInt i = 0; i < c->npts; i++) {
    PetscScalar v2 = a[i * c->dof + 1] * a[i * c->dof + 1];
    e[i * c->dof] = (p->q[i] - p->qexact[i]) * v2, e[i * c->dof + 1] = 0;
    x[i * c->dof] = p->qexact[i] * v2, x[i * c->dof + 1] = 0;
  }
  PetscCall(VecRestoreArray(p->x0, &x));
  PetscCall(VecRestoreArray(p->w, &e));
  PetscCall(VecRestoreArrayRead(u, &a));
  PetscCall(VecNorm(p->w, NORM_2, &ne));
  PetscCall(VecNorm(p->x0, NORM_2, &nx));
  *err = nx > 0 ? ne / nx : ne;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ClosureBeforeSolve(Coupled c, Replica *p, PetscInt step, PetscBool *train, PetscBool *predicted)
{
  PetscBool on = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(FeaturesClosure(c, p));
  p->closure_err = NAN;
  if (p->trained) {
    PetscCall(FeaturesPredict(c, p, step));
    PetscCall(FeaturesClosureFactor(c, p));
    PetscCall(ClosureError(c, p, &p->closure_err));
    on         = (PetscBool)(step >= c->warmup && p->closure_err <= c->closure_tol);
    *predicted = PETSC_TRUE;
  }
  /* the step that produces state step + 1, as every step field counts */
  if (on != p->closure_on && p == &c->rep[0]) c->switches++, c->last_switch = step + 1;
  if (on && p == &c->rep[0]) c->active_steps++;
  p->closure_on = on;
  PetscCall(SolverSetClosure(p->solver, on ? p->q : NULL));
  if (step % c->train_every == 0) {
    PetscCall(FeaturesClosureTarget(c, p));
    *train = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ClosureAfterStep(Coupled c)
{
  Vec       ue;
  PetscReal ne;

  PetscFunctionBegin;
  PetscCall(SolverStep(c->exact, NULL, NULL)); /* it draws from base_order (ClosureSetUp) */
  PetscCall(SolverGetState(c->exact, &ue));
  PetscCall(VecNorm(ue, NORM_2, &ne));
  for (PetscInt r = 0; r < c->nrep; r++) {
    Replica  *p = &c->rep[r];
    Vec       u;
    PetscReal nd;
    PetscCall(SolverGetState(p->solver, &u));
    PetscCall(VecWAXPY(p->w, -1.0, ue, u));
    /* the drift is the exact-term run's measurement: its norm draws from base_order */
    PetscCall(SolverSetAtomicOrder(p->solver, &c->base_order));
    PetscCall(VecNorm(p->w, NORM_2, &nd));
    PetscCall(SolverSetAtomicOrder(p->solver, &p->order));
    p->drift = ne > 0 ? nd / ne : nd;
  }
  c->drift_max = PetscMax(c->drift_max, c->rep[0].drift);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Standard deviation of v and its RMS wavenumber (radians per grid cell). */
static PetscErrorCode Pattern(Coupled c, Solver s, PetscReal out[2])
{
  DM                   da;
  Vec                  u, loc;
  const PetscScalar ***a;
  double               sum[4] = {0, 0, 0, 0}; /* n, sum v, sum v^2, sum |grad v|^2 */

  PetscFunctionBegin;
  PetscCall(SolverGetDM(s, &da));
  PetscCall(SolverGetState(s, &u));
  PetscCall(DMGetLocalVector(da, &loc));
  PetscCall(DMGlobalToLocal(da, u, INSERT_VALUES, loc));
  PetscCall(DMDAVecGetArrayDOFRead(da, loc, &a));
  for (PetscInt j = c->ys; j < c->ys + c->ym; j++)
    for (PetscInt i = c->xs; i < c->xs + c->xm; i++) {
      double v = a[j][i][1], gx = a[j][i + 1][1] - v, gy = a[j + 1][i][1] - v;
      sum[0] += 1, sum[1] += v, sum[2] += v * v, sum[3] += gx * gx + gy * gy;
    }
  PetscCall(DMDAVecRestoreArrayDOFRead(da, loc, &a));
  PetscCall(DMRestoreLocalVector(da, &loc));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, c->comm));
  {
    double mean = sum[1] / sum[0], var = PetscMax(sum[2] / sum[0] - mean * mean, 0.0);
    out[0] = sqrt(var);
    out[1] = var > 0 ? sqrt(sum[3] / sum[0] / var) : 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Within(PetscReal a, PetscReal b, PetscReal f)
{
  return (PetscBool)(a > 0 && b > 0 && a <= f * b && b <= f * a);
}

PetscErrorCode ClosureVerify(Coupled c, PetscBool *ok, char *why, size_t len)
{
  PetscReal drift = c->rep[0].drift, f = c->pattern_factor;

  PetscFunctionBegin;
  PetscCall(Pattern(c, c->rep[0].solver, c->pattern[0]));
  PetscCall(Pattern(c, c->exact, c->pattern[1]));
  *ok = PETSC_TRUE;
  if (!(drift <= c->drift_tol)) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why, len,
                            "closure drifted %.3g from the exact-term run (tolerance -closure_drift_tol %.3g)",
                            (double)drift, (double)c->drift_tol));
  } else if (!Within(c->pattern[0][0], c->pattern[1][0], f) || !Within(c->pattern[0][1], c->pattern[1][1], f)) {
    *ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(why, len,
                            "closure changed the pattern: std(v) %.3g vs %.3g, RMS wavenumber %.3g vs %.3g (allowed "
                            "factor %.3g)",
                            (double)c->pattern[0][0], (double)c->pattern[1][0], (double)c->pattern[0][1],
                            (double)c->pattern[1][1], (double)f));
  } else
    PetscCall(PetscSNPrintf(why, len,
                            "closure drift %.3g <= %.3g, pattern kept (std(v) %.3g vs %.3g, wavenumber %.3g vs %.3g)",
                            (double)drift, (double)c->drift_tol, (double)c->pattern[0][0], (double)c->pattern[1][0],
                            (double)c->pattern[0][1], (double)c->pattern[1][1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ClosureSummary(Coupled c, FILE *f)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(c->comm, f,
                         "closure_warmup: %" PetscInt_FMT
                         "\nclosure_tol: %.3e\nclosure_error: %.6e\nclosure_active_steps: %" PetscInt_FMT
                         "\nclosure_switches: %" PetscInt_FMT "\nclosure_last_switch_step: %" PetscInt_FMT "\n",
                         c->warmup, (double)c->closure_tol, (double)c->rep[0].closure_err, c->active_steps, c->switches,
                         c->last_switch));
  PetscCall(PetscFPrintf(c->comm, f, "closure_drift: %.6e\nclosure_drift_max: %.6e\nclosure_drift_tol: %.3e\n",
                         (double)c->rep[0].drift, (double)c->drift_max, (double)c->drift_tol));
  PetscCall(PetscFPrintf(c->comm, f, "closure_pattern_std_v: [%.6e, %.6e]\nclosure_pattern_wavenumber: [%.6e, %.6e]\n",
                         (double)c->pattern[0][0], (double)c->pattern[1][0], (double)c->pattern[0][1],
                         (double)c->pattern[1][1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}
