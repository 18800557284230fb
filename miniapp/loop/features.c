/* miniapp/loop/features.c: what the surrogate sees and what it learns.
 *
 * guess: the network learns what the two-line extrapolation misses. Inputs
 * per grid point: the 5-point stencils (centre, west, east, south, north) of
 * every component of u^n / s_u and of d^n / s_d, where d^n = u^n - u^{n-1}
 * and s_u, s_d are the RMS values of u^n and d^n over the whole grid.
 * Target: the correction e = u^{n+1} - (u^n + d^n) divided by s_e, the RMS
 * of the last correction seen (e^n; s_d before there is one), so that the
 * network's outputs are O(1) although e is a few percent of d. The
 * prediction z = s_e * output is added to the extrapolated state. The
 * scales follow the data
 * at every step (no statistics frozen from a first batch); they are VecNorms
 * of the solver's vectors, so they obey the solver's reduction switch and in
 * the reproducible build have the same bits on any layout.
 *
 * closure (Gray-Scott): inputs (u, v) per point, target the exact rate
 * factor c = u of q = c v^2, both scaled by the physical range [0, 1].
 *
 * The batch is formed on the device where batch.c puts it there (one rank,
 * the solver's vectors on the device), with the same bits; the full-vector
 * copies these phases make are counted (c->coupling_copies). */
#include "coupling_impl.h"
#include "couple.h"
#include "vecred.h"

#include <math.h>

PetscErrorCode FeaturesSetUp(Coupled c, Replica *p)
{
  PetscFunctionBegin;
  c->n_in  = c->mode == COUPLING_CLOSURE ? c->dof : (c->learn_residual ? 15 : 10) * c->dof;
  c->n_out = c->mode == COUPLING_CLOSURE ? 1 : c->dof;
  PetscCall(SurrogateSetSizes(p->net, c->n_in, c->n_out));
  if (c->mode == COUPLING_CLOSURE) {
    const float mi[2] = {0.5f, 0.5f}, si[2] = {0.5f, 0.5f}, mo[1] = {0.5f}, so[1] = {0.5f};
    PetscCall(SurrogateSetNormalization(p->net, mi, si, mo, so));
  } else PetscCall(SurrogateSetNormalization(p->net, NULL, NULL, NULL, NULL)); /* the scales above do it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows of the batch from the 5-point stencils of nv vectors, each divided by
 * its scale; nst = 1 takes the point alone. Outer ghosts of a non-periodic
 * grid read 0. */
static PetscErrorCode Stencils(Coupled c, Replica *p, PetscInt nv, Vec v[], const PetscReal scale[], PetscInt nst)
{
  DM          da;
  couple_grid g = {(int)c->xs, (int)c->ys, (int)c->xm, (int)c->ym, 0, 0, 0, (int)c->dof};

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nv && p->dfeat; k++)
    PetscCall(BatchStencils(c, p, v[k], 1.0 / scale[k], nst, k * nst * c->dof));
  if (p->dfeat) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SolverGetDM(p->solver, &da));
  {
    PetscInt gxs, gys, gxm;
    PetscCall(DMDAGetGhostCorners(da, &gxs, &gys, NULL, &gxm, NULL, NULL));
    g.gxs = (int)gxs, g.gys = (int)gys, g.gxm = (int)gxm;
  }
  for (PetscInt k = 0; k < nv; k++) {
    Vec                loc;
    const PetscScalar *a;
    PetscCall(DMGetLocalVector(da, &loc));
    PetscCall(VecSet(loc, 0.0));
    PetscCall(DMGlobalToLocalBegin(da, v[k], INSERT_VALUES, loc));
    PetscCall(DMGlobalToLocalEnd(da, v[k], INSERT_VALUES, loc));
    PetscCall(VecGetArrayRead(loc, &a));
    couple_stencils_cpu(&g, (int)nst, (size_t)c->n_in, (size_t)(k * nst * c->dof), 1.0 / scale[k], a, p->feat);
    PetscCall(VecRestoreArrayRead(loc, &a));
    PetscCall(DMRestoreLocalVector(da, &loc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RMS(Vec x, PetscReal *rms)
{
  PetscReal nrm;
  PetscInt  n;

  PetscFunctionBegin;
  PetscCall(VecNorm(x, NORM_2, &nrm));
  PetscCall(VecGetSize(x, &n));
  *rms = nrm / PetscSqrtReal((PetscReal)n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesGuess(Coupled c, Replica *p)
{
  Vec        u, v[3];
  PetscReal  s[3];
  double     t0 = MPI_Wtime();
  PetscInt64 n0 = VecFPNADeviceCopies();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_feat, 0, 0, 0, 0));
  PetscCall(BatchSetUp(c, p));
  PetscCall(SolverGetState(p->solver, &u));
  PetscCall(RMS(u, &p->su));
  if (!p->have_d) p->sd = 0; /* else: kept from the last step (FeaturesGuessTarget) */
  if (p->sd == 0) p->have_d = PETSC_FALSE; /* a still state: nothing to extrapolate or scale by */
  p->sz = p->se > 0 ? p->se : p->sd;
  v[0] = u, v[1] = p->d;
  s[0] = p->su > 0 ? p->su : 1.0, s[1] = p->have_d ? p->sd : 1.0;
  if (c->learn_residual) { /* the projection's guess xp and what it leaves: r = b - A xp */
    Vec       b;
    Mat       A;
    PetscReal sr;
    PetscCall(GuessSpaceProject(p->space, c->history, PETSC_TRUE, PETSC_TRUE, NULL, p->xp));
    PetscCall(SolverGetRHS(p->solver, &b));
    PetscCall(SolverGetOperator(p->solver, &A));
    PetscCall(MatMult(A, p->xp, p->rp));
    PetscCall(VecAYPX(p->rp, -1.0, b));
    PetscCall(RMS(p->rp, &sr));
    v[2] = p->rp, s[2] = sr > 0 ? sr : 1.0;
    PetscCall(Stencils(c, p, 3, v, s, 5));
  } else PetscCall(Stencils(c, p, 2, v, s, 5));
  PetscCall(VecCopy(u, p->prev)); /* u^n, for the increment after the solve */
  PetscCall(PetscLogEventEnd(c->ev_feat, 0, 0, 0, 0));
  c->times.features += MPI_Wtime() - t0;
  c->coupling_copies += VecFPNADeviceCopies() - n0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesClosure(Coupled c, Replica *p)
{
  Vec        u;
  PetscReal  one = 1.0;
  double     t0  = MPI_Wtime();
  PetscInt64 n0  = VecFPNADeviceCopies();

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_feat, 0, 0, 0, 0));
  PetscCall(BatchSetUp(c, p));
  PetscCall(SolverGetState(p->solver, &u));
  PetscCall(Stencils(c, p, 1, &u, &one, 1));
  c->coupling_copies += VecFPNADeviceCopies() - n0; /* the exact factor is the solver's (on the host) */
  PetscCall(SolverComputeClosure(p->solver, u, p->qexact));
  PetscCall(PetscLogEventEnd(c->ev_feat, 0, 0, 0, 0));
  c->times.features += MPI_Wtime() - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesPredict(Coupled c, Replica *p, PetscInt step)
{
  double     t0 = MPI_Wtime();
  PetscInt64 n0 = VecFPNADeviceCopies();
  int        bad;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(c->ev_pred, 0, 0, 0, 0));
  if (p->dfeat) PetscCall(SurrogatePredictDevice(p->net, c->npts, p->dfeat, p->dout));
  else PetscCall(SurrogatePredict(p->net, c->npts, p->feat, p->out));
  c->times.predict_points += (double)c->M * c->N; /* every rank's points */
  PetscCall(PetscLogEventEnd(c->ev_pred, 0, 0, 0, 0));
  c->times.predict += MPI_Wtime() - t0;
  if (p->dfeat) PetscCall(BatchNonFinite(c, p, &bad));
  else bad = couple_nonfinite_cpu((size_t)(c->npts * c->n_out), p->out);
  PetscCall(CheckFiniteFlag(c, (PetscInt)(p - c->rep), "prediction", step, bad));
  c->coupling_copies += VecFPNADeviceCopies() - n0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesCorrection(Coupled c, Replica *p)
{
  PetscScalar *z;
  PetscInt64   n0 = VecFPNADeviceCopies();

  PetscFunctionBegin;
  if (p->dfeat) PetscCall(BatchCorrection(c, p));
  else {
    PetscCall(VecGetArrayWrite(p->z, &z));
    couple_correction_cpu((size_t)(c->npts * c->dof), p->sz, p->out, z);
    PetscCall(VecRestoreArrayWrite(p->z, &z));
  }
  p->have_z = PETSC_TRUE;
  c->coupling_copies += VecFPNADeviceCopies() - n0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesTrain(Coupled c, Replica *p, float *loss)
{
  PetscInt64 n0 = VecFPNADeviceCopies();

  PetscFunctionBegin;
  if (p->dfeat) PetscCall(SurrogateTrainDevice(p->net, c->npts, p->dfeat, p->dtarget, loss));
  else PetscCall(SurrogateTrain(p->net, c->npts, p->feat, p->target, loss));
  c->coupling_copies += VecFPNADeviceCopies() - n0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesClosureFactor(Coupled c, Replica *p)
{
  PetscFunctionBegin;
  PetscCall(BatchToHost(c, p, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE));
  for (PetscInt i = 0; i < c->npts; i++) p->q[i] = (double)p->out[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FeaturesClosureTarget(Coupled c, Replica *p)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < c->npts; i++) p->target[i] = (float)p->qexact[i];
  PetscCall(BatchTargetToDevice(c, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the solve: the increment dn = u^{n+1} - u^n joins the replica's
 * history; the training target is (dn - d^n) / s_e; the learned guess's
 * error is ||d^n + z - dn|| / ||dn||, the extrapolation's ||d^n - dn|| /
 * ||dn||. dn becomes d^{n+1}, and s_e the RMS of dn - d^n. */
PetscErrorCode FeaturesGuessTarget(Coupled c, Replica *p)
{
  Vec                u, dn = p->w;
  const PetscScalar *a, *b;
  PetscReal          sdn;
  PetscInt           n  = c->npts * c->dof;
  PetscInt64         n0 = VecFPNADeviceCopies();

  PetscFunctionBegin;
  PetscCall(SolverGetState(p->solver, &u));
  PetscCall(VecWAXPY(dn, -1.0, p->prev, u));
  p->inc_err = p->extrap_err = NAN;
  /* the scale of d^{n+1} = dn, taken once here and kept as state: a later
   * VecNorm of the copy could return PETSc's cached norm instead (another
   * order of the sum in an atomic build), which a restarted run cannot see */
  PetscCall(RMS(dn, &sdn));
  if (p->have_d && c->learn_residual) { /* target: what the projection's guess misses, u^{n+1} - xp */
    PetscReal nd, ne;
    PetscCall(VecWAXPY(p->x0, -1.0, p->xp, u));
    if (p->dfeat) PetscCall(BatchTarget(c, p, p->x0, NULL, p->sz));
    else {
      PetscCall(VecGetArrayRead(p->x0, &a));
      couple_target_cpu((size_t)n, a, NULL, p->sz, p->target);
      PetscCall(VecRestoreArrayRead(p->x0, &a));
    }
    PetscCall(RMS(p->x0, &p->se));
    PetscCall(VecWAXPY(p->x0, -1.0, p->d, dn)); /* the extrapolation's error, as in the other mode */
    PetscCall(VecNorm(p->x0, NORM_2, &ne));
    PetscCall(VecNorm(dn, NORM_2, &nd));
    p->extrap_err = nd > 0 ? ne / nd : NAN;
  } else if (p->have_d) {
    PetscReal nd, ne;
    if (p->dfeat) PetscCall(BatchTarget(c, p, dn, p->d, p->sz));
    else {
      PetscCall(VecGetArrayRead(dn, &a));
      PetscCall(VecGetArrayRead(p->d, &b));
      couple_target_cpu((size_t)n, a, b, p->sz, p->target);
      PetscCall(VecRestoreArrayRead(p->d, &b));
      PetscCall(VecRestoreArrayRead(dn, &a));
    }
    PetscCall(VecWAXPY(p->x0, -1.0, p->d, dn));
    PetscCall(RMS(p->x0, &p->se));
    PetscCall(VecNorm(p->x0, NORM_2, &ne));
    PetscCall(VecNorm(dn, NORM_2, &nd));
    p->extrap_err = nd > 0 ? ne / nd : NAN;
  }
  if (p->have_z) {
    PetscReal e, nd;
    if (c->learn_residual) { /* the learned state xp + z against u^{n+1} */
      PetscCall(VecWAXPY(p->x0, 1.0, p->xp, p->z));
      PetscCall(VecAXPY(p->x0, -1.0, u));
    } else { /* the learned increment d^n + z against dn */
      PetscCall(VecWAXPY(p->x0, 1.0, p->d, p->z));
      PetscCall(VecAXPY(p->x0, -1.0, dn));
    }
    PetscCall(VecNorm(p->x0, NORM_2, &e));
    PetscCall(VecNorm(dn, NORM_2, &nd));
    p->inc_err = nd > 0 ? e / nd : NAN;
  }
  if (p->space) { /* the guess space is the solver's: its copies are not the batch's */
    PetscInt64 m0 = VecFPNADeviceCopies();
    PetscCall(GuessSpacePush(p->space, dn));
    n0 += VecFPNADeviceCopies() - m0;
  }
  PetscCall(VecCopy(dn, p->d));
  p->have_d = PETSC_TRUE, p->have_z = PETSC_FALSE, p->sd = sdn;
  c->coupling_copies += VecFPNADeviceCopies() - n0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
