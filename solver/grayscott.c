/* solver/grayscott.c: Gray-Scott reaction-diffusion, two species on a
 * periodic grid of spacing h (Pearson 1993 parameters in grid units):
 *   u_t = Du Lap u - u v^2 + F (1 - u),   v_t = Dv Lap v + u v^2 - (F + k) v.
 * IMEX Euler: diffusion implicit, reaction explicit,
 *   (I - dt D_c Lap) w^{n+1} = w^n + dt R(w^n).
 * Pattern-forming and sensitive: small differences in the bits grow. */
#include "solver_impl.h"
#include "hashrng.h"

static PetscErrorCode GSSetFromOptions(Solver s)
{
  PetscReal h = 1.0;

  PetscFunctionBegin;
  s->Du = 0.16, s->Dv = 0.08, s->F = 0.04, s->k = 0.06, s->gs_seed = 1;
  PetscOptionsBegin(s->comm, NULL, "Gray-Scott scenario", NULL);
  PetscCall(PetscOptionsReal("-gs_Du", "Diffusivity of u (grid units)", NULL, s->Du, &s->Du, NULL));
  PetscCall(PetscOptionsReal("-gs_Dv", "Diffusivity of v (grid units)", NULL, s->Dv, &s->Dv, NULL));
  PetscCall(PetscOptionsReal("-gs_F", "Feed rate F", NULL, s->F, &s->F, NULL));
  PetscCall(PetscOptionsReal("-gs_k", "Kill rate k", NULL, s->k, &s->k, NULL));
  PetscCall(PetscOptionsReal("-gs_h", "Grid spacing", NULL, h, &h, NULL));
  PetscCall(PetscOptionsInt("-gs_seed", "Seed of the initial perturbation", NULL, s->gs_seed, &s->gs_seed, NULL));
  PetscOptionsEnd();
  {
    const opt_range r[] = {
      {"-gs_Du", s->Du, 0, 1e6, OPT_HI_OPEN, NULL},
      {"-gs_Dv", s->Dv, 0, 1e6, OPT_HI_OPEN, NULL},
      {"-gs_F", s->F, 0, 1, 0, NULL},
      {"-gs_k", s->k, 0, 1, 0, NULL},
      {"-gs_h", h, 1e-100, 1e100, 0, "the operator divides by h^2"},
      {"-gs_seed", s->gs_seed, 0, OPT_NONE, OPT_INT, NULL},
    };
    PetscCall(SolverCheckRanges(s, r, sizeof r / sizeof *r));
  }
  s->hx = s->hy = h;
  s->Lx = s->M * h, s->Ly = s->N * h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GSCoefficients(Solver s, PetscReal coef[])
{
  coef[0] = s->dt * s->Du, coef[1] = s->dt * s->Dv;
  return PETSC_SUCCESS;
}

/* u = 1, v = 0, a centred square (1/8 of each side, at least 2 points) with
 * u = 1/2, v = 1/4, and +-1% noise drawn from the natural index: the same
 * field for any decomposition. */
static PetscErrorCode GSInitial(Solver s, Vec w)
{
  PetscScalar ***a;
  PetscInt       xs, ys, xm, ym, hx = PetscMax(2, s->M / 8), hy = PetscMax(2, s->N / 8);

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayDOF(s->da, w, &a));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscBool in  = (PetscBool)(PetscAbsInt(2 * i - s->M) < hx && PetscAbsInt(2 * j - s->N) < hy);
      uint64_t  idx = (uint64_t)j * s->M + i;
      a[j][i][0]    = (in ? 0.5 : 1.0) + 0.02 * (rng_uniform((uint64_t)s->gs_seed, 2 * idx) - 0.5);
      a[j][i][1]    = (in ? 0.25 : 0.0) + 0.01 * rng_uniform((uint64_t)s->gs_seed, 2 * idx + 1);
    }
  PetscCall(DMDAVecRestoreArrayDOF(s->da, w, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The closure term at every owned point (row-major over the owned block):
 * the rate factor c of the nonlinear reaction q = c v^2, exactly c = u. A
 * closure model that replaces c (SolverSetClosure) keeps the v^2 structure,
 * so where v = 0 it cannot create a reaction: the trivial state u = 1, v = 0
 * stays an equilibrium (a model of q itself spawned spurious spots there). */
static PetscErrorCode GSClosure(Solver s, Vec w, PetscScalar *q)
{
  const PetscScalar ***a;
  PetscInt             xs, ys, xm, ym;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayDOFRead(s->da, w, &a));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) q[(j - ys) * xm + (i - xs)] = a[j][i][0];
  PetscCall(DMDAVecRestoreArrayDOFRead(s->da, w, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* b = w + dt R(w), R = (-q + F (1 - u), q - (F + k) v), q = c v^2 with
 * c = u or the closure model's c when one is set ((c v) v: the same bits as
 * u v v when c = u). */
static PetscErrorCode GSRHS(Solver s, Vec w, Vec b)
{
  const PetscScalar ***a;
  PetscScalar       ***r;
  PetscInt             xs, ys, xm, ym;
  PetscBool            done;

  PetscFunctionBegin;
  PetscCall(SolverDevGSRHS(s, w, b, &done)); /* the same per point on the device */
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayDOFRead(s->da, w, &a));
  PetscCall(DMDAVecGetArrayDOF(s->da, b, &r));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscReal u = a[j][i][0], v = a[j][i][1], uvv = (s->closure ? s->closure[(j - ys) * xm + (i - xs)] : u) * v * v;
      r[j][i][0] = u + s->dt * (-uvv + s->F * (1.0 - u));
      r[j][i][1] = v + s->dt * (uvv - (s->F + s->k) * v);
    }
  PetscCall(DMDAVecRestoreArrayDOF(s->da, b, &r));
  PetscCall(DMDAVecRestoreArrayDOFRead(s->da, w, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Physical bounds: both species stay finite and within [-0.01, 1.5] at every
 * step (the extremes over the run: the initial state and each step's, a
 * restored run's from its checkpoint). */
static PetscErrorCode GSVerify(Solver s, PetscReal *l2, PetscReal *mx, PetscBool *ok, char *why, size_t len)
{
  PetscReal r[2], lo, hi;

  PetscFunctionBegin;
  *l2 = *mx = -1.0;
  PetscCall(SolverGetRange(s, r));
  lo = r[0], hi = r[1];
  *ok = (PetscBool)(lo >= -0.01 && hi <= 1.5 && !PetscIsInfOrNanReal(lo + hi));
  PetscCall(PetscSNPrintf(why, len, "fields in [%.4g, %.4g] over steps 0..%" PetscInt_FMT " %s [-0.01, 1.5]",
                          (double)lo, (double)hi, s->step, *ok ? "within" : "OUTSIDE"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const ScenarioOps GrayScottScenario =
  {"grayscott", 2, DM_BOUNDARY_PERIODIC, GSSetFromOptions, GSCoefficients, GSInitial, GSRHS, GSClosure, GSVerify};
