/* solver/heat.c: the heat scenario, u_t = D Lap u + f on the unit square with
 * time-dependent Dirichlet boundaries and a manufactured solution
 *   u*(x,y,t) = exp(-t) sin(a x + b) cos(c y + d),  f = (D (a^2 + c^2) - 1) u*,
 * discretized with the 5-point Laplacian on the M x N interior points
 * (h = 1/(M+1)) and the theta scheme (0.5 = Crank-Nicolson, 1 = backward
 * Euler). The MMS error proves the discretization: O(h^2 + dt^2) for CN. */
#include "solver_impl.h"

static const PetscReal MA = PETSC_PI, MB = 0.3, MC = 4.0, MD = 0.2;

static inline PetscReal Exact(PetscReal x, PetscReal y, PetscReal t)
{
  return PetscExpReal(-t) * PetscSinReal(MA * x + MB) * PetscCosReal(MC * y + MD);
}

static PetscErrorCode HeatSetFromOptions(Solver s)
{
  PetscBool set;

  PetscFunctionBegin;
  s->D = 1.0, s->theta = 0.5, s->mms_tol = -1.0;
  PetscOptionsBegin(s->comm, NULL, "Heat scenario (manufactured solution)", NULL);
  PetscCall(PetscOptionsReal("-heat_D", "Diffusivity D > 0", NULL, s->D, &s->D, NULL));
  PetscCall(PetscOptionsReal("-heat_theta", "Time scheme: 0.5 Crank-Nicolson .. 1 backward Euler", NULL, s->theta,
                             &s->theta, NULL));
  PetscCall(PetscOptionsReal("-mms_tol",
                             "Verification bound on the discrete L2 MMS error (default 20 (h^2 + dt^(1 or 2)); never "
                             "above 5% of the exact solution's norm)",
                             NULL, s->mms_tol, &s->mms_tol, &set));
  PetscOptionsEnd();
  {
    const opt_range r[] = {
      {"-heat_D", s->D, 0, 1e12, OPT_LO_OPEN | OPT_HI_OPEN | OPT_NORMAL, "a diffusivity"},
      {"-heat_theta", s->theta, 0.5, 1, 0, "unconditionally stable schemes"},
      {"-mms_tol", set ? s->mms_tol : 1, 0, OPT_NONE, OPT_LO_OPEN | OPT_NORMAL | OPT_FINITE, NULL},
    };
    PetscCall(SolverCheckRanges(s, r, sizeof r / sizeof *r));
  }
  s->Lx = s->Ly = 1.0;
  s->hx = 1.0 / (s->M + 1), s->hy = 1.0 / (s->N + 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HeatCoefficients(Solver s, PetscReal coef[])
{
  coef[0] = s->theta * s->dt * s->D;
  return PETSC_SUCCESS;
}

static PetscErrorCode HeatInitial(Solver s, Vec u)
{
  PetscScalar **a;
  PetscInt      xs, ys, xm, ym;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArray(s->da, u, &a));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) a[j][i] = Exact((i + 1) * s->hx, (j + 1) * s->hy, s->t);
  PetscCall(DMDAVecRestoreArray(s->da, u, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Value at grid point (i, j), which may be on the boundary (then g(t)). */
static inline PetscReal Nb(Solver s, const PetscScalar **u, PetscInt i, PetscInt j, PetscReal t)
{
  if (i < 0 || j < 0 || i >= s->M || j >= s->N) return Exact((i + 1) * s->hx, (j + 1) * s->hy, t);
  return u[j][i];
}

/* The exact solution's factors at the grid's lines (kernels/step_cuda.h
 * step_heat_t): u*(x_i, y_j, t) = (exp(-t) sx[i + 1]) cy[j + 1], the same
 * bits as Exact. */
static PetscErrorCode HeatTables(Solver s, double *sx, double *cy, double *sx1, double *cy1)
{
  for (PetscInt k = 0; k <= s->M + 1; k++) sx[k] = PetscSinReal(MA * (k * s->hx) + MB);
  for (PetscInt k = 0; k <= s->N + 1; k++) cy[k] = PetscCosReal(MC * (k * s->hy) + MD);
  *sx1 = PetscSinReal(MA * 1 + MB), *cy1 = PetscCosReal(MC * 1 + MD);
  return PETSC_SUCCESS;
}

/* b = u + (1-theta) dt D Lap_g(u^n) + theta dt D B(g^{n+1}) + dt (theta f^{n+1} + (1-theta) f^n),
 * where B(g) holds the boundary neighbours' values / h^2. Fixed per-point order. */
static PetscErrorCode HeatRHS(Solver s, Vec u, Vec b)
{
  const PetscScalar **ua;
  PetscScalar       **ba;
  Vec                 uloc;
  PetscInt            xs, ys, xm, ym;
  const PetscReal t0 = s->t, t1 = s->t + s->dt, th = s->theta, ihx2 = 1 / (s->hx * s->hx), ihy2 = 1 / (s->hy * s->hy);
  const PetscReal     fk = s->D * (MA * MA + MC * MC) - 1.0;
  PetscBool           done;

  PetscFunctionBegin;
  { /* on one rank's device: the same per point, the coefficients formed as below */
    step_heat_t h = {.e0 = PetscExpReal(-t0), .e1 = PetscExpReal(-t1), .dt = s->dt, .c_old = (1 - th) * s->dt * s->D,
                     .c_new = th * s->dt * s->D, .f_new = th * fk, .f_old = (1 - th) * fk, .ihx2 = ihx2, .ihy2 = ihy2};
    PetscCall(SolverDevHeatRHS(s, u, b, &h, HeatTables, &done));
    if (done) PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DMGetLocalVector(s->da, &uloc));
  PetscCall(DMGlobalToLocal(s->da, u, INSERT_VALUES, uloc));
  PetscCall(DMDAGetCorners(s->da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAVecGetArrayRead(s->da, uloc, &ua));
  PetscCall(DMDAVecGetArray(s->da, b, &ba));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscReal x = (i + 1) * s->hx, y = (j + 1) * s->hy, p = ua[j][i];
      PetscReal lap0 = ((Nb(s, ua, i - 1, j, t0) - p) + (Nb(s, ua, i + 1, j, t0) - p)) * ihx2 +
                       ((Nb(s, ua, i, j - 1, t0) - p) + (Nb(s, ua, i, j + 1, t0) - p)) * ihy2;
      PetscReal bnd1 = ((i == 0 ? Exact(0, y, t1) : 0) + (i == s->M - 1 ? Exact(1, y, t1) : 0)) * ihx2 +
                       ((j == 0 ? Exact(x, 0, t1) : 0) + (j == s->N - 1 ? Exact(x, 1, t1) : 0)) * ihy2;
      PetscReal f = th * fk * Exact(x, y, t1) + (1 - th) * fk * Exact(x, y, t0);
      ba[j][i]    = p + (1 - th) * s->dt * s->D * lap0 + th * s->dt * s->D * bnd1 + s->dt * f;
    }
  PetscCall(DMDAVecRestoreArray(s->da, b, &ba));
  PetscCall(DMDAVecRestoreArrayRead(s->da, uloc, &ua));
  PetscCall(DMRestoreLocalVector(s->da, &uloc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A wrong answer must never pass: whatever the formula or -mms_tol say, the
 * bound is at most this fraction of the exact solution's discrete L2 norm at
 * the final time. The zero field (error 100%), a sign error (200%) or a state
 * that stopped evolving fail it; the formula 20 (h^2 + dt^2) alone grows
 * without bound with dt (2e13 at -ts_dt 1e6). */
#define MMS_TOL_MAX_RELATIVE 0.05

/* Discrete L2 error sqrt(hx hy sum e^2) and max error against u*(t). */
static PetscErrorCode HeatVerify(Solver s, PetscReal *l2, PetscReal *mx, PetscBool *ok, char *why, size_t len)
{
  Vec       e;
  PetscReal tol = s->mms_tol, exact, cap;
  PetscBool capped;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(s->u, &e));
  PetscCall(HeatInitial(s, e)); /* u*(t) at the current time */
  PetscCall(VecNorm(e, NORM_2, &exact));
  exact *= PetscSqrtReal(s->hx * s->hy);
  PetscCall(VecAYPX(e, -1.0, s->u));
  PetscCall(VecNorm(e, NORM_2, l2));
  PetscCall(VecNorm(e, NORM_INFINITY, mx));
  PetscCall(VecDestroy(&e));
  *l2 *= PetscSqrtReal(s->hx * s->hy);
  if (tol < 0) tol = 20.0 * (s->hx * s->hx + s->hy * s->hy + (s->theta == 0.5 ? s->dt * s->dt : s->dt));
  cap    = MMS_TOL_MAX_RELATIVE * exact;
  capped = (PetscBool)(tol > cap);
  if (capped) tol = cap;
  *ok = (PetscBool)(*l2 <= tol); /* false for NaN */
  PetscCall(PetscSNPrintf(why, len, "MMS L2 error %.3e %s tolerance %.3e%s", (double)*l2, *ok ? "within" : "EXCEEDS",
                          (double)tol, capped ? " (capped at 5% of the exact solution's L2 norm)" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const ScenarioOps HeatScenario = {"heat",  1,    DM_BOUNDARY_GHOSTED, HeatSetFromOptions, HeatCoefficients, HeatInitial,
                                  HeatRHS, NULL, HeatVerify};
