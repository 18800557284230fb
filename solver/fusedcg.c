/* solver/fusedcg.c: KSP type "fpnacg", the solver's default Krylov method:
 * preconditioned conjugate gradients with the same arithmetic as PETSc's
 * KSPCG (the same vector operations and reductions, in the same order, so
 * the same iterates bit for bit), except that the iteration's tail
 *   x += a p,  r -= a w,  z = B r,  |z|^2,  z.r
 * runs as one pass over the vectors with one collective for both reductions
 * (kernels/ red_cg_tail) where B is a pointwise diagonal (Jacobi, or none)
 * and the vectors are fpna ones. PETSc's order makes 12 vector passes for
 * this and reduces twice; the fused pass makes 7 (8 where the diagonal is read
 * as a vector) and reduces once, with the reductions of each block formed
 * while it is in cache (SolverGetVectorPasses counts the iteration). Other
 * preconditioners, vector types or norm types run the unfused operations.
 * Likewise the product w = A p and p.w run as one pass where the operator
 * offers it ("MatMultDot_C": the gathered stencil on fpna vectors), each
 * block's share of p.w formed right after the block of w.
 * Options: -ksp_fpnacg_fuse <bool> (default true) turns both fusions off, for
 * comparison (docs/performance.md). */
#include "solver_impl.h"
#include "vecdev.h"

#include <petsc/private/kspimpl.h>
#include <string.h>

typedef struct {
  PetscBool fuse;                   /* -ksp_fpnacg_fuse */
  PetscInt  dp;                     /* the diagonal's period on this rank (0: none), FusedTail */
  PetscBool tail_fused, prod_fused; /* the fusions the last solve took (SolverGetVectorPasses) */
} KSP_FPNACG;

static PetscErrorCode KSPSetUp_FPNACG(KSP ksp)
{
  PetscFunctionBegin;
  PetscCall(KSPSetWorkVecs(ksp, 4)); /* r, z (= w), p, and B's diagonal */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the tail can be fused; if so, dinv = B 1 (the diagonal of a
 * pointwise preconditioner, exactly: B 1 multiplies 1 by each entry). */
static PetscErrorCode FusedTail(KSP ksp, Vec dinv, PetscBool *fused)
{
  KSP_FPNACG    *cg = (KSP_FPNACG *)ksp->data;
  PetscBool      jac, none, fpna;
  red_strategy_t s;

  PetscFunctionBegin;
  *fused = PETSC_FALSE, cg->dp = 0;
  if (!cg->fuse || ksp->normtype != KSP_NORM_PRECONDITIONED || ksp->transpose_solve || ksp->chknorm >= 0)
    PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, &jac));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(VecFPNAGetStrategy(ksp->vec_sol, &fpna, &s));
  if (!(jac || none) || !fpna) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecSet(dinv, 1.0));
  PetscCall(KSP_PCApply(ksp, dinv, ksp->work[1]));
  PetscCall(VecCopy(ksp->work[1], dinv));
  *fused = PETSC_TRUE;
  { /* a diagonal that repeats with a period of 1, 2, 4 or 8 entries (Jacobi on a constant-coefficient operator: the
     * components') is read as that many numbers, not as a vector. The period is found in the values, bitwise: the
     * KSP's work vectors carry no block size. */
    const PetscScalar *d;
    PetscInt           n;
    if (VecDevIs(dinv)) PetscCall(VecDevPeriod(dinv, &cg->dp)); /* found where the values are */
    else {
      PetscCall(VecGetLocalSize(dinv, &n));
      PetscCall(VecGetArrayRead(dinv, &d));
      for (PetscInt bs = 1; bs <= 8 && bs <= n && !cg->dp; bs *= 2) {
        PetscBool periodic = PETSC_TRUE;
        for (PetscInt i = bs; periodic && i < n; i++) periodic = (PetscBool)(!memcmp(&d[i], &d[i % bs], sizeof *d));
        if (periodic) cg->dp = bs;
      }
      PetscCall(VecRestoreArrayRead(dinv, &d));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator's product fused with p.w ("MatMultDot_C", solver/operator.c),
 * when the operator has one and the vectors are fpna ones. */
static PetscErrorCode FusedProduct(KSP ksp, Mat A, PetscErrorCode (**multdot)(Mat, Vec, Vec, PetscScalar *))
{
  KSP_FPNACG    *cg = (KSP_FPNACG *)ksp->data;
  PetscBool      fpna;
  red_strategy_t s;

  PetscFunctionBegin;
  *multdot = NULL;
  if (!cg->fuse || ksp->transpose_solve) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecFPNAGetStrategy(ksp->vec_sol, &fpna, &s));
  if (fpna) PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatMultDot_C", multdot));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r = b - A x (r = b from a zero guess) and its norm in the KSP's norm type;
 * natural: beta = z.r too. A norm or dot that is not finite sets ksp->reason
 * (KSPCheckNorm, KSPCheckDot) and returns. */
static PetscErrorCode InitialResidual(KSP ksp, Mat Amat, Vec X, Vec B, Vec R, Vec Z, PetscReal *dp, PetscScalar *beta)
{
  PetscFunctionBegin;
  if (!ksp->guess_zero) {
    PetscCall(KSP_MatMult(ksp, Amat, X, R)); /* r <- b - A x */
    PetscCall(VecAYPX(R, -1.0, B));
  } else PetscCall(VecCopy(B, R));
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    PetscCall(KSP_PCApply(ksp, R, Z)); /* z <- B r */
    PetscCall(VecNorm(Z, NORM_2, dp));
    KSPCheckNorm(ksp, *dp);
    break;
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(R, NORM_2, dp));
    KSPCheckNorm(ksp, *dp);
    break;
  case KSP_NORM_NATURAL:
    PetscCall(KSP_PCApply(ksp, R, Z));
    PetscCall(VecTDot(Z, R, beta));
    KSPCheckDot(ksp, *beta);
    *dp = PetscSqrtReal(PetscAbsScalar(*beta));
    break;
  case KSP_NORM_NONE: *dp = 0.0; break;
  default: SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "%s", KSPNormTypes[ksp->normtype]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The unfused update, as KSPCG makes it: x += a p, r -= a w, then the norm of
 * the KSP's norm type (natural: beta = z.r too). A norm or dot that is not
 * finite sets ksp->reason and returns. */
static PetscErrorCode UpdateAndNorm(KSP ksp, PetscScalar a, Vec X, Vec P, Vec R, Vec W, Vec Z, PetscReal *dp,
                                    PetscScalar *beta)
{
  PetscFunctionBegin;
  PetscCall(VecAXPY(X, a, P));  /* x <- x + a p */
  PetscCall(VecAXPY(R, -a, W)); /* r <- r - a w */
  if (ksp->normtype == KSP_NORM_PRECONDITIONED) {
    PetscCall(KSP_PCApply(ksp, R, Z)); /* z <- B r */
    PetscCall(VecNorm(Z, NORM_2, dp));
    KSPCheckNorm(ksp, *dp);
  } else if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) {
    PetscCall(VecNorm(R, NORM_2, dp));
    KSPCheckNorm(ksp, *dp);
  } else if (ksp->normtype == KSP_NORM_NATURAL) {
    PetscCall(KSP_PCApply(ksp, R, Z));
    PetscCall(VecTDot(Z, R, beta));
    KSPCheckDot(ksp, *beta);
    *dp = PetscSqrtReal(PetscAbsScalar(*beta));
  } else *dp = 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_FPNACG(KSP ksp)
{
  KSP_FPNACG *cg = (KSP_FPNACG *)ksp->data;
  PetscInt    i;
  PetscScalar dpi = 0.0, a = 1.0, beta = 0.0, betaold = 1.0, b, dpiold, zr = 0.0;
  PetscReal   dp = 0.0, zz;
  Vec         X, B, Z, R, P, W, D;
  Mat         Amat, Pmat;
  PetscBool   diagonalscale, fused;
  PetscErrorCode (*multdot)(Mat, Vec, Vec, PetscScalar *); /* w = A p with p.w in the same pass, or NULL */
  red_atomic_state *ord; /* the vectors' seeded order (their solver's) */
  uint64_t          drawn = 0; /* its call counter before the fused pass */

  PetscFunctionBegin;
  PetscCall(PCGetDiagonalScale(ksp->pc, &diagonalscale));
  PetscCheck(!diagonalscale, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "Krylov method %s does not support diagonal scaling", ((PetscObject)ksp)->type_name);
  X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[0], Z = ksp->work[1], P = ksp->work[2], D = ksp->work[3];
  W = Z;
  PetscCall(VecFPNAGetOrder(X, &ord));
  PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
  PetscCall(FusedTail(ksp, D, &fused));
  PetscCall(FusedProduct(ksp, Amat, &multdot));
  cg->tail_fused = fused, cg->prod_fused = (PetscBool)(multdot != NULL);

  ksp->its = 0;
  PetscCall(InitialResidual(ksp, Amat, X, B, R, Z, &dp, &beta));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS); /* a norm or dot that is not finite */
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, 0, dp));
  ksp->rnorm = dp;
  PetscCall((*ksp->converged)(ksp, 0, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_NATURAL) PetscCall(KSP_PCApply(ksp, R, Z));
  if (ksp->normtype != KSP_NORM_NATURAL) {
    PetscCall(VecTDot(Z, R, &beta)); /* beta <- z.r */
    KSPCheckDot(ksp, beta);
  }

  i = 0;
  do {
    ksp->its = i + 1;
    if (beta == 0.0) {
      ksp->reason = KSP_CONVERGED_ATOL;
      PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
      break;
    } else if (i > 0 && beta * betaold < 0.0) {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED,
                 "Diverged due to indefinite preconditioner");
      ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
      break;
    }
    if (!i) PetscCall(VecCopy(Z, P)); /* p <- z */
    else {
      b = beta / betaold;
      PetscCall(VecAYPX(P, b, Z)); /* p <- z + b p */
    }
    dpiold = dpi;
    if (multdot) PetscCall((*multdot)(Amat, P, W, &dpi)); /* the two steps below in one pass */
    else {
      PetscCall(KSP_MatMult(ksp, Amat, P, W)); /* w <- A p */
      PetscCall(VecTDot(P, W, &dpi));          /* dpi <- p.w */
    }
    KSPCheckDot(ksp, dpi);
    betaold = beta;
    if (dpi == 0.0 || (i > 0 && PetscSign(PetscRealPart(dpi)) * PetscSign(PetscRealPart(dpiold)) < 0.0)) {
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED,
                 "Diverged due to indefinite matrix");
      ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
      break;
    }
    a = beta / dpi;
    if (fused) {
      drawn = ord ? ord->calls : 0;
      PetscCall(VecFPNACGTail(X, a, P, R, W, D, cg->dp, Z, &zz, &zr)); /* the five steps below in one pass */
      dp = PetscSqrtReal(zz);
      KSPCheckNorm(ksp, dp);
    } else {
      PetscCall(UpdateAndNorm(ksp, a, X, P, R, W, Z, &dp, &beta));
      if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS); /* a norm or dot that is not finite */
    }
    ksp->rnorm = dp;
    PetscCall(KSPLogResidualHistory(ksp, dp));
    PetscCall(KSPMonitor(ksp, i + 1, dp));
    PetscCall((*ksp->converged)(ksp, i + 1, dp, &ksp->reason, ksp->cnvP));
    if (ksp->reason) {
      if (fused) { /* KSPCG takes no z.r on the converged iteration: give back the
                    * seeded order the fused pass drew for it (atomic replay), so
                    * that the solves that follow draw what KSPCG's would */
        if (ord && ord->calls == drawn + 2) ord->calls--;
      }
      break;
    }
    if (fused) beta = zr; /* z.r of the fused pass: the dot below, already taken */
    else {
      if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_NATURAL)
        PetscCall(KSP_PCApply(ksp, R, Z));
      if (ksp->normtype != KSP_NORM_NATURAL) PetscCall(VecTDot(Z, R, &beta));
    }
    KSPCheckDot(ksp, beta);
    i++;
  } while (i < ksp->max_it);
  if (i >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_FPNACG(KSP ksp, PetscOptionItems *PetscOptionsObject)
{
  KSP_FPNACG *cg = (KSP_FPNACG *)ksp->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP fpnacg options");
  PetscCall(PetscOptionsBool("-ksp_fpnacg_fuse",
                             "fuse the iteration's tail (Jacobi or no preconditioner, fpna vectors)", "", cg->fuse,
                             &cg->fuse, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCreate_FPNACG(KSP ksp)
{
  KSP_FPNACG *cg;

  PetscFunctionBegin;
  PetscCall(PetscNew(&cg));
  cg->fuse  = PETSC_TRUE;
  ksp->data = cg;
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_PRECONDITIONED, PC_LEFT, 2));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_UNPRECONDITIONED, PC_LEFT, 1));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NATURAL, PC_LEFT, 1));
  PetscCall(KSPSetSupportedNorm(ksp, KSP_NORM_NONE, PC_LEFT, 1));
  ksp->ops->setup          = KSPSetUp_FPNACG;
  ksp->ops->solve          = KSPSolve_FPNACG;
  ksp->ops->destroy        = KSPDestroyDefault; /* frees ksp->data and the work vectors */
  ksp->ops->setfromoptions = KSPSetFromOptions_FPNACG;
  ksp->ops->buildsolution  = KSPBuildSolutionDefault;
  ksp->ops->buildresidual  = KSPBuildResidualDefault;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPFPNACGRegister(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPRegister(KSPFPNACG, KSPCreate_FPNACG));
  done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vector passes of one CG iteration: a pass reads or writes a whole vector of 8-byte doubles (8 bytes per
 * unknown; write-allocate not counted), counted as the code above and KSPCG perform them, in the steady state (the
 * first iteration's copy p = z, the converged one's skipped z.r and the start residual left out):
 *   p = z + b p             3  read p, z; write p
 *   w = A p                 4  global-to-local copy (read p, write the ghosted copy), stencil (read it, write w)
 *   p.w                     2  read p, w; 0 in the fused product (MatMultDot_C: p from the ghosted copy, in cache)
 *   x += a p, r -= a w      6  read x, p, r, w; write x, r
 *   z = B r                 3  Jacobi: read r and the diagonal, write z; 2 with none (a copy)
 *   |z| (or |r|)            1  none with the natural norm or no norm
 *   z.r                     2
 * PETSc's CG, and fpnacg where no fusion applies: 21 with Jacobi. The fused tail (red_cg_tail) replaces the last
 * four rows by one pass reading x, p, r, w and writing x, r, z: 7, plus 1 reading the diagonal unless it repeats
 * with a period of 1, 2, 4 or 8 (read as that many numbers). fpnacg with both fusions and the decks' constant-
 * coefficient Jacobi: 3 + 4 + 7 = 14. 0 where no count is kept: other Krylov methods (their passes depend on the
 * restart length, the preconditioner's side or the iteration), KSPCG's variants (-ksp_cg_single_reduction, a
 * -ksp_check_norm_iteration), the atomic build's scatter operator (its product moves the face fluxes and their
 * targets besides the vectors). */
PetscErrorCode SolverGetVectorPasses(Solver s, PetscInt *passes, char *method, size_t len)
{
  KSP         ksp = s->ksp;
  KSPType     type;
  PC          pc;
  const char *pre, *fused = "";
  PetscBool   fpna, cg, jac, none, single = PETSC_FALSE;
  KSP_FPNACG *f = NULL;
  PetscInt    tail, norm;

  PetscFunctionBegin;
  *passes = 0;
  PetscCall(KSPGetType(ksp, &type));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPFPNACG, &fpna));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPCG, &cg));
  PetscCall(KSPGetOptionsPrefix(ksp, &pre));
  PetscCall(PetscOptionsGetBool(NULL, pre, "-ksp_cg_single_reduction", &single, NULL));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCJACOBI, &jac));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCNONE, &none));
  if (fpna) f = (KSP_FPNACG *)ksp->data;
  if (f && f->prod_fused) fused = f->tail_fused ? ", fused product and tail" : ", fused product";
  else if (f && f->tail_fused) fused = ", fused tail";
  PetscCall(PetscSNPrintf(method, len, "%s%s", type ? type : "none", fused));
  if (!(fpna || (cg && !single)) || !(jac || none) || ksp->chknorm >= 0 || s->scatter)
    PetscFunctionReturn(PETSC_SUCCESS);
  norm = ksp->normtype == KSP_NORM_PRECONDITIONED || ksp->normtype == KSP_NORM_UNPRECONDITIONED;
  tail = 6 + (jac ? 3 : 2) + norm + 2;
  if (f && f->tail_fused) tail = 7 + (f->dp ? 0 : 1);
  *passes = 3 + 4 + (f && f->prod_fused ? 0 : 2) + tail;
  PetscFunctionReturn(PETSC_SUCCESS);
}
