/* solver/operator.c: the matrix-free stencil operator (MatShell)
 *   y_c = u_c - coef_c * Lap_h(u_c),  5-point Laplacian, per component c,
 * on a DMDA (Dirichlet via zero outer ghosts, or periodic). Two summation
 * orders, chosen once at creation:
 *   gather  (deterministic/reproducible builds): each point sums its four
 *           differences in one fixed order, ((W + E) hx^-2 + (S + N) hy^-2),
 *           so y does not depend on the decomposition or thread count;
 *   scatter (atomic build): each face flux is computed once and added to both
 *           neighbouring cells with the kernels' atomic scatter-add, as GPU
 *           finite-volume codes do; the order of the four additions varies. */
#include "solver_impl.h"
#include "solver_reduction.h"

/* Below this many points per rank the OpenMP fork costs more than it saves. */
#define OP_PAR_MIN_POINTS 32768

static PetscErrorCode MultGather(OpCtx *op, const PetscScalar ***u, PetscScalar ***y)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(op->da, &info));
  const PetscReal ihx2 = op->ihx2, ihy2 = op->ihy2;
#pragma omp parallel for schedule(static) if (info.xm * info.ym > OP_PAR_MIN_POINTS)
  for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
    for (PetscInt i = info.xs; i < info.xs + info.xm; i++)
      for (PetscInt c = 0; c < info.dof; c++) {
        PetscScalar p   = u[j][i][c];
        PetscScalar lap = ((u[j][i - 1][c] - p) + (u[j][i + 1][c] - p)) * ihx2 + ((u[j - 1][i][c] - p) + (u[j + 1][i][c] - p)) * ihy2;
        y[j][i][c]      = p - op->coef[c] * lap;
      }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Faces of the owned block, per component: x-faces (i-1|i) for i in
 * [xs, xs+xm], then y-faces (j-1|j) for j in [ys, ys+ym]. Face f adds +F to
 * its low cell (contribution 2f) and -F to its high cell (2f+1); a cell that
 * is not owned maps to the sink slot nowned. */
static PetscErrorCode BuildFacePlan(OpCtx *op)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(op->da, &info));
  const PetscInt xs = info.xs, ys = info.ys, xm = info.xm, ym = info.ym, dof = info.dof;
  size_t         nowned = (size_t)xm * ym * dof, nface = (size_t)dof * ((xm + 1) * ym + xm * (ym + 1)), k = 0;
  int64_t       *target;
  PetscCall(PetscMalloc1(2 * nface, &target));
#define OWNED(i, j, c) (((i) >= xs && (i) < xs + xm && (j) >= ys && (j) < ys + ym) ? (int64_t)((((j) - ys) * xm + ((i) - xs)) * dof + (c)) : (int64_t)nowned)
  for (PetscInt c = 0; c < dof; c++) {
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i <= xs + xm; i++) target[k++] = OWNED(i - 1, j, c), target[k++] = OWNED(i, j, c);
    for (PetscInt j = ys; j <= ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) target[k++] = OWNED(i, j - 1, c), target[k++] = OWNED(i, j, c);
  }
#undef OWNED
  PetscCheck(scatter_plan_create(nowned + 1, 2 * nface, target, &op->plan) == 0, PETSC_COMM_SELF, PETSC_ERR_MEM, "cannot build the face scatter plan");
  PetscCall(PetscFree(target));
  op->nface = nface;
  PetscCall(PetscMalloc2(2 * nface, &op->flux, nowned + 1, &op->lap));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MultScatter(OpCtx *op, const PetscScalar ***u, PetscScalar ***y)
{
  DMDALocalInfo info;

  PetscFunctionBegin;
  PetscCall(DMDAGetLocalInfo(op->da, &info));
  const PetscInt xs = info.xs, ys = info.ys, xm = info.xm, ym = info.ym, dof = info.dof;
  const size_t   nx = (size_t)(xm + 1) * ym, per_c = nx + (size_t)xm * (ym + 1);
  double        *flux = op->flux;
#pragma omp parallel for schedule(static) if (xm * ym > OP_PAR_MIN_POINTS)
  for (PetscInt c = 0; c < dof; c++) { /* face fluxes, each computed once */
    size_t f = c * per_c;
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i <= xs + xm; i++, f++) {
        double F = (u[j][i][c] - u[j][i - 1][c]) * op->ihx2;
        flux[2 * f] = F, flux[2 * f + 1] = -F;
      }
    for (PetscInt j = ys; j <= ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++, f++) {
        double F = (u[j][i][c] - u[j - 1][i][c]) * op->ihy2;
        flux[2 * f] = F, flux[2 * f + 1] = -F;
      }
  }
  size_t nowned = (size_t)xm * ym * dof;
  PetscCall(PetscArrayzero(op->lap, nowned + 1));
  scatter_add(RED_ATOMIC, op->plan, flux, op->lap);
#pragma omp parallel for schedule(static) if (xm * ym > OP_PAR_MIN_POINTS)
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++)
      for (PetscInt c = 0; c < dof; c++) y[j][i][c] = u[j][i][c] - op->coef[c] * op->lap[((j - ys) * xm + (i - xs)) * dof + c];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OperatorMult(Mat A, Vec x, Vec y)
{
  OpCtx              *op;
  const PetscScalar ***u;
  PetscScalar      ***yy;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  PetscCall(DMGlobalToLocal(op->da, x, INSERT_VALUES, op->uloc));
  PetscCall(DMDAVecGetArrayDOFRead(op->da, op->uloc, &u));
  PetscCall(DMDAVecGetArrayDOF(op->da, y, &yy));
  if (op->scatter) PetscCall(MultScatter(op, u, yy));
  else PetscCall(MultGather(op, u, yy));
  PetscCall(DMDAVecRestoreArrayDOF(op->da, y, &yy));
  PetscCall(DMDAVecRestoreArrayDOFRead(op->da, op->uloc, &u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Diagonal: 1 + coef_c (2/hx^2 + 2/hy^2), the same at every point (an outer
 * Dirichlet neighbour still contributes -u_p). */
static PetscErrorCode OperatorGetDiagonal(Mat A, Vec d)
{
  OpCtx       *op;
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  PetscCall(VecGetLocalSize(d, &n));
  PetscCall(VecGetArray(d, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = 1.0 + op->coef[i % op->dof] * (2.0 * op->ihx2 + 2.0 * op->ihy2);
  PetscCall(VecRestoreArray(d, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorCreate(DM da, PetscBool scatter, Mat *A)
{
  OpCtx   *op;
  PetscInt m, n, M, N, dof;

  PetscFunctionBegin;
  PetscCall(PetscNew(&op));
  op->da      = da;
  op->scatter = scatter;
  PetscCall(DMDAGetInfo(da, NULL, &M, &N, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(dof <= 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "at most 2 components");
  op->dof = dof;
  PetscCall(DMCreateLocalVector(da, &op->uloc));
  PetscCall(VecSet(op->uloc, 0.0));
  if (scatter) PetscCall(BuildFacePlan(op));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &m, &n, NULL));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)da), m * n * dof, m * n * dof, M * N * dof, M * N * dof, op, A));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT, (void (*)(void))OperatorMult));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE, (void (*)(void))OperatorMult)); /* symmetric */
  PetscCall(MatShellSetOperation(*A, MATOP_GET_DIAGONAL, (void (*)(void))OperatorGetDiagonal));
  PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(*A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* coef[c] = theta dt D_c; hx, hy the grid spacings. */
PetscErrorCode OperatorSetCoefficients(Mat A, const PetscReal coef[], PetscReal hx, PetscReal hy)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  for (PetscInt c = 0; c < op->dof; c++) op->coef[c] = coef[c];
  op->ihx2 = 1.0 / (hx * hx), op->ihy2 = 1.0 / (hy * hy);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorDestroyContext(Mat A)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  scatter_plan_destroy(&op->plan);
  PetscCall(PetscFree2(op->flux, op->lap));
  PetscCall(VecDestroy(&op->uloc));
  PetscCall(PetscFree(op));
  PetscFunctionReturn(PETSC_SUCCESS);
}
