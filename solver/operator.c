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
#include "fault.h"
#include "vecred.h"
#include "vecdev.h"

#include <float.h>
#include <string.h>

/* Below this many points per rank the OpenMP fork costs more than it saves. */
#define OP_PAR_MIN_POINTS 32768

static PetscLogEvent multdot_event; /* MatMultDot: the product fused with p.w (-log_view) */

/* Raw-array layout of the ghosted local vector: point (i, j), component c
 * is at ((j - gys) * gxm + (i - gxs)) * dof + c. */
typedef struct {
  PetscInt xs, ys, xm, ym, gxs, gys, gxm, dof;
} Layout;

static PetscErrorCode GetLayout(DM da, Layout *L)
{
  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(da, &L->xs, &L->ys, NULL, &L->xm, &L->ym, NULL));
  PetscCall(DMDAGetGhostCorners(da, &L->gxs, &L->gys, NULL, &L->gxm, NULL, NULL));
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &L->dof, NULL, NULL, NULL, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline const PetscScalar *Row(const Layout *L, const PetscScalar *u, PetscInt j)
{
  return u + ((j - L->gys) * L->gxm + (L->xs - L->gxs)) * L->dof;
}

/* The stencil's arithmetic is the same IEEE operations in every lane, with
 * no contraction (-ffp-contract=off): the widest vectors the CPU has give
 * the same bits as the baseline's two lanes, and the pass is compute-bound
 * in two. */
#define GATHER_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))

/* y_k of row r, k0 <= k < k1 (k = i d + c; multiples of d), from the rows
 * south and north of it, rs and rn; r[k - d] and r[k + d] must exist (a
 * ghosted row, or the interior of a row). */
GATHER_TARGETS static void GatherRow(const OpCtx *op, PetscInt d, const PetscScalar *r, const PetscScalar *rs,
                                     const PetscScalar *rn, PetscScalar *yr, PetscInt k0, PetscInt k1)
{
  const PetscReal ihx2 = op->ihx2, ihy2 = op->ihy2;
  if (d == 1) { /* a constant stride, so that the loop runs in vectors */
    const PetscReal cf = op->coef[0];
#pragma omp simd /* y is not u: no dependence between iterations */
    for (PetscInt k = k0; k < k1; k++) {
      PetscScalar p = r[k], lap = ((r[k - 1] - p) + (r[k + 1] - p)) * ihx2 + ((rs[k] - p) + (rn[k] - p)) * ihy2;
      yr[k]         = p - cf * lap;
    }
    return;
  }
  for (PetscInt c = 0; c < 2; c++) { /* d == 2 (OperatorCreate allows no more) */
    const PetscReal cf = op->coef[c];
#pragma omp simd
    for (PetscInt k = k0 + c; k < k1; k += 2) {
      PetscScalar p = r[k], lap = ((r[k - 2] - p) + (r[k + 2] - p)) * ihx2 + ((rs[k] - p) + (rn[k] - p)) * ihy2;
      yr[k]         = p - cf * lap;
    }
  }
}

/* Row j of the owned block of x itself, no ghosted copy; the row's first
 * and last point take their west or east neighbour across the block's edge,
 * its first and last row theirs south or north: on one rank the other end
 * of the grid (periodic) or 0, on more the neighbours' edges (halo.c). The
 * ghosted copy's values, so the same bits. */
static void GatherDirect(const OpCtx *op, const PetscScalar *x, PetscScalar *y, PetscInt j, PetscInt k0, PetscInt k1)
{
  const PetscInt     d = op->dof, n = op->xm * d, N = op->ym;
  const PetscScalar *r = x + (size_t)j * n, *rs, *rn, *g = op->halo ? op->halo->g : NULL;
  PetscScalar       *yr = y + (size_t)j * n, w0[2] = {0, 0}, e1[2] = {0, 0};
  const PetscInt     a = PetscMax(k0, d), b = PetscMin(k1, n - d);

  if (g) {
    rs = j ? r - n : g + op->halo->off[2], rn = j + 1 < N ? r + n : g + op->halo->off[3];
    for (PetscInt c = 0; c < d; c++) w0[c] = g[op->halo->off[0] + j * d + c], e1[c] = g[op->halo->off[1] + j * d + c];
  } else if (op->periodic) {
    rs = x + (size_t)((j + N - 1) % N) * n, rn = x + (size_t)((j + 1) % N) * n;
    for (PetscInt c = 0; c < d; c++) w0[c] = r[n - d + c], e1[c] = r[c];
  } else rs = j ? r - n : op->zeros, rn = j + 1 < N ? r + n : op->zeros;
  if (a < b) GatherRow(op, d, r, rs, rn, yr, a, b);
  for (PetscInt k = k0; k < k1; k++) {
    if (k == a && a < b) k = b; /* the interior, done above */
    if (k >= k1) break;
    PetscScalar p = r[k], w = k >= d ? r[k - d] : w0[k % d], e = k + d < n ? r[k + d] : e1[k % d],
                lap = ((w - p) + (e - p)) * op->ihx2 + ((rs[k] - p) + (rn[k] - p)) * op->ihy2;
    yr[k] = p - op->coef[k % d] * lap;
  }
}

static void MultDirect(const OpCtx *op, const PetscScalar *x, PetscScalar *y)
{
#pragma omp parallel for schedule(static) if (op->xm * op->ym > OP_PAR_MIN_POINTS)
  for (PetscInt j = 0; j < op->ym; j++) GatherDirect(op, x, y, j, 0, op->xm * op->dof);
}

/* The gathered product as blocks of the owned array (red_dot_blocks), with
 * the operator's fault site inside the pass: the entry is flipped as soon as
 * its block is produced, before the block's share of p.w is formed. The
 * block's p comes from the rows of the ghosted copy the stencil has just
 * read (in cache), not from p's own array (one pass less). */
typedef struct {
  const OpCtx       *op;
  const Layout      *L;
  const PetscScalar *x; /* x itself (2+ ranks: its edges exchanged first) */
  PetscScalar       *y;
  long long          flip; /* local entry the armed fault flips, or -1 */
} GatherBlocks;

static const double *GatherBlock(void *ctx, size_t i0, size_t m, double *xs)
{
  const GatherBlocks *g = ctx;
  const PetscInt      n = g->L->xm * g->L->dof; /* a row; RED_BLOCK and n are multiples of dof <= 2 */
  for (size_t k = i0; k < i0 + m;) {
    PetscInt j = (PetscInt)(k / (size_t)n), k0 = (PetscInt)(k % (size_t)n),
             k1 = PetscMin(n, k0 + (PetscInt)(i0 + m - k));
    GatherDirect(g->op, g->x, g->y, j, k0, k1);
    k += (size_t)(k1 - k0);
  }
  if (g->flip >= (long long)i0 && g->flip < (long long)(i0 + m)) fault_flip_double(g->op->fault, &g->y[g->flip]);
  (void)xs;
  return g->x + i0;
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
#define OWNED(i, j, c) \
  (((i) >= xs && (i) < xs + xm && (j) >= ys && (j) < ys + ym) ? (int64_t)((((j)-ys) * xm + ((i)-xs)) * dof + (c)) \
                                                              : (int64_t)nowned)
  for (PetscInt c = 0; c < dof; c++) {
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i <= xs + xm; i++) target[k++] = OWNED(i - 1, j, c), target[k++] = OWNED(i, j, c);
    for (PetscInt j = ys; j <= ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) target[k++] = OWNED(i, j - 1, c), target[k++] = OWNED(i, j, c);
  }
#undef OWNED
  PetscCheck(scatter_plan_create(nowned + 1, 2 * nface, target, &op->plan) == 0, PETSC_COMM_SELF, PETSC_ERR_MEM,
             "cannot build the face scatter plan");
  PetscCall(PetscFree(target));
  op->nface = nface;
  PetscCall(PetscMalloc2(2 * nface, &op->flux, nowned + 1, &op->lap));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void MultScatter(const OpCtx *op, const Layout *L, const PetscScalar *u, PetscScalar *y, red_atomic_state *ord)
{
  const PetscInt ys = L->ys, xm = L->xm, ym = L->ym, d = L->dof, stride = L->gxm * d;
  const size_t   per_c = (size_t)(xm + 1) * ym + (size_t)xm * (ym + 1), nowned = (size_t)xm * ym * d;
  double        *flux = op->flux;
#pragma omp parallel for schedule(static) if (xm * ym > OP_PAR_MIN_POINTS)
  for (PetscInt c = 0; c < d; c++) { /* face fluxes, each computed once */
    size_t f = c * per_c;
    for (PetscInt j = ys; j < ys + ym; j++) {
      const PetscScalar *r = Row(L, u, j) + c;
      for (PetscInt i = 0; i <= xm; i++, f++) {
        double F = (r[i * d] - r[(i - 1) * d]) * op->ihx2;
        flux[2 * f] = F, flux[2 * f + 1] = -F;
      }
    }
    for (PetscInt j = ys; j <= ys + ym; j++) {
      const PetscScalar *r = Row(L, u, j) + c, *rs = r - stride;
      for (PetscInt i = 0; i < xm; i++, f++) {
        double F = (r[i * d] - rs[i * d]) * op->ihy2;
        flux[2 * f] = F, flux[2 * f + 1] = -F;
      }
    }
  }
  for (size_t k = 0; k <= nowned; k++) op->lap[k] = 0.0;
  scatter_add(RED_ATOMIC, op->plan, flux, op->lap, ord);
#pragma omp parallel for schedule(static) if (xm * ym > OP_PAR_MIN_POINTS)
  for (PetscInt j = ys; j < ys + ym; j++) {
    const PetscScalar *r = Row(L, u, j);
    for (PetscInt k = 0; k < xm * d; k++) {
      size_t o = (size_t)(j - ys) * xm * d + k;
      y[o]     = r[k] - op->coef[k % d] * op->lap[o];
    }
  }
}

/* Huang-Abraham checksum of y = A x: 1^T y = (A^T 1)^T x = csum^T x, both
 * sides summed with the build's own reduction. The threshold is a bound on
 * what rounding alone can make of the difference (docs/faults.md):
 *   e_y   each y_i carries at most ~6 roundings of terms bounded by
 *         (|A||x|)_i, and sum_i (|A||x|)_i <= Dmax sum|x|, Dmax = max row
 *         sum of |A| = 1 + 4 coef (hx^-2 + hy^-2): bounded by 10 u Dmax sum|x|;
 *   e_c   csum = fl(A 1) likewise: 10 u Dmax sum|x| in csum^T x;
 *   R     the two reductions: atomic/deterministic (any order) n u sum|v|,
 *         reproducible (correctly rounded, exact products aside) u sum|v| +
 *         n 2^-80 sum|v|; with v = y and v = csum .* x, sum|csum x| <= cmax sum|x|.
 * A fault is declared above 2x the bound (the factor covers the first-order
 * treatment of the gamma_n terms). The reductions keep the seeded atomic
 * order untouched, so a check never changes the run's bits. */
static PetscErrorCode Check(Mat A, OpCtx *op, Vec x, Vec y)
{
  const PetscScalar *xa, *ya, *ca;
  red_partial_t      p[4];
  PetscReal          v[4], D = 1, tau, n_u, diff;
  PetscInt           n, N;
  red_atomic_state   scratch, *mine;
  const double       u = DBL_EPSILON / 2;

  PetscFunctionBegin;
  /* the check (csum's product included) consumes none of the run's seeded order */
  PetscCall(VecFPNAOrderScratch(x, &scratch, &mine));
  if (!op->csum) { /* csum = A 1, formed without checking */
    Vec one;
    PetscCall(VecDuplicate(x, &one));
    PetscCall(VecDuplicate(x, &op->csum));
    PetscCall(VecSet(one, 1.0));
    op->check = PETSC_FALSE;
    PetscCall(MatMult(A, one, op->csum));
    op->check = PETSC_TRUE;
    PetscCall(VecDestroy(&one));
    PetscCall(VecNorm(op->csum, NORM_INFINITY, &op->cmax));
  }
  for (PetscInt c = 0; c < op->dof; c++) D = PetscMax(D, 1 + 4 * op->coef[c] * (op->ihx2 + op->ihy2));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetSize(x, &N));
  if (VecDevIs(x) && VecDevIs(y) && VecDevIs(op->csum)) { /* where the vectors are: the same partials, bitwise */
    PetscCall(VecDevLocalPartial(SOLVER_STRATEGY, RED_OP_SUM, y, NULL, &p[0], &scratch));
    PetscCall(VecDevLocalPartial(SOLVER_STRATEGY, RED_OP_DOT, op->csum, x, &p[1], &scratch));
    PetscCall(VecDevLocalPartial(SOLVER_STRATEGY, RED_OP_ASUM, x, NULL, &p[2], &scratch));
    PetscCall(VecDevLocalPartial(SOLVER_STRATEGY, RED_OP_ASUM, y, NULL, &p[3], &scratch));
  } else {
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(op->csum, &ca));
    red_local(SOLVER_STRATEGY, RED_OP_SUM, (size_t)n, ya, NULL, &p[0], &scratch);
    red_local(SOLVER_STRATEGY, RED_OP_DOT, (size_t)n, ca, xa, &p[1], &scratch);
    red_local(SOLVER_STRATEGY, RED_OP_ASUM, (size_t)n, xa, NULL, &p[2], &scratch);
    red_local(SOLVER_STRATEGY, RED_OP_ASUM, (size_t)n, ya, NULL, &p[3], &scratch);
    PetscCall(VecRestoreArrayRead(op->csum, &ca));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
  }
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)A), SOLVER_STRATEGY, 4, p, v));
  PetscCall(VecFPNAOrderRestore(x, mine));
  PetscCall(PetscLogFlops(5.0 * n));
  n_u = SOLVER_STRATEGY == RED_REPRODUCIBLE ? u + (double)N * 0x1p-80 : (double)N * u;
  tau  = 2 * (20 * u * D * v[2] + n_u * (v[3] + op->cmax * v[2]));
  diff = PetscAbsReal(v[0] - v[1]);
  op->nchecks++;
  if (!(diff <= tau)) op->nfail++; /* NaN fails too */
  if (tau > 0) op->worst = PetscMax(op->worst, diff / tau);
  else if (diff > 0 || diff != diff) op->worst = PETSC_INFINITY;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operator fault site on the product's n owned entries yy of y. */
static PetscErrorCode FaultHit(OpCtx *op, Vec y, PetscScalar *yy, size_t n)
{
  PetscInt lo, N;

  PetscFunctionBegin;
  if (!fault_is_armed(op->fault, FAULT_OPERATOR)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecGetOwnershipRange(y, &lo, NULL));
  PetscCall(VecGetSize(y, &N));
  fault_hit_double_(op->fault, FAULT_OPERATOR, yy, n, (long long)lo, (long long)N);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OperatorMult(Mat A, Vec x, Vec y)
{
  OpCtx             *op;
  Layout             L;
  const PetscScalar *u;
  PetscScalar       *yy;
  red_atomic_state  *ord;
  PetscBool          direct;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  direct = (PetscBool)!op->scatter; /* the gather form reads x itself (2+ ranks: and its neighbours' edges) */
  PetscCall(VecFPNAGetOrder(x, &ord));
  if (OperatorOnDevice(x, y)) { /* opdev.c */
    PetscCall(OperatorDevMult(op, x, y, ord));
    if (fault_is_armed(op->fault, FAULT_OPERATOR)) PetscCall(VecDevFaultHit(op->fault, FAULT_OPERATOR, y));
    if (op->check) PetscCall(Check(A, op, x, y));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(GetLayout(op->da, &L));
  if (direct) {
    PetscCall(VecGetArrayRead(x, &u));
    if (!op->one_rank) PetscCall(OpHaloExchange(op, u));
  } else {
    PetscCall(DMGlobalToLocal(op->da, x, INSERT_VALUES, op->uloc));
    PetscCall(VecGetArrayRead(op->uloc, &u));
  }
  PetscCall(VecGetArrayWrite(y, &yy));
  if (op->scatter) MultScatter(op, &L, u, yy, ord);
  else MultDirect(op, u, yy);
  PetscCall(PetscLogFlops(11.0 * L.xm * L.ym * L.dof)); /* per unknown: 9 (5-point Laplacian) + 2 (u - coef lap) */
  /* -inject site=operator: before anything checks the product */
  if (op->fault) PetscCall(FaultHit(op, y, yy, (size_t)(L.xm * L.ym * L.dof)));
  PetscCall(VecRestoreArrayWrite(y, &yy));
  PetscCall(VecRestoreArrayRead(direct ? x : op->uloc, &u));
  if (op->check) PetscCall(Check(A, op, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x and *xy = x . y in one pass over the owned entries (the gather
 * operator on fpna vectors; fusedcg.c takes it through "MatMultDot_C"):
 * bitwise MatMult followed by VecTDot(x, y), with the same fault site, the
 * same ABFT check after the product and the same seeded atomic draw. */
static PetscErrorCode OperatorMultDot(Mat A, Vec x, Vec y, PetscScalar *xy)
{
  OpCtx             *op;
  Layout             L;
  GatherBlocks       g;
  const PetscScalar *xa;
  PetscBool          fpna;
  red_strategy_t     s;
  red_partial_t      part;
  PetscInt           lo, N;
  red_atomic_state  *ord;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  PetscCall(VecFPNAGetOrder(x, &ord));
  PetscCall(VecFPNAGetStrategy(x, &fpna, &s));
  PetscCheck(fpna && !op->scatter, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP,
             "the fused product needs the gather operator and fpna vectors");
  if (OperatorOnDevice(x, y)) { /* the product, then x . y: the fused pass's bits (red_dot_blocks) */
    PetscCall(OperatorMult(A, x, y));
    PetscCall(VecDevLocalPartial(s, RED_OP_DOT, x, y, &part, ord));
    PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)A), s, 1, &part, xy));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(multdot_event, A, x, y, 0));
  PetscCall(GetLayout(op->da, &L));
  PetscCall(VecGetOwnershipRange(y, &lo, NULL));
  PetscCall(VecGetSize(y, &N));
  g.op = op, g.L = &L,
  g.flip = fault_take(op->fault, FAULT_OPERATOR, (size_t)(L.xm * L.ym * L.dof), (long long)lo, (long long)N);
  PetscCall(VecGetArrayRead(x, &xa));
  if (!op->one_rank) PetscCall(OpHaloExchange(op, xa));
  g.x = xa;
  PetscCall(VecGetArrayWrite(y, &g.y));
  red_dot_blocks(s, (size_t)(L.xm * L.ym * L.dof), GatherBlock, &g, xa, g.y, &part, ord);
  PetscCall(VecRestoreArrayWrite(y, &g.y));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogFlops(13.0 * L.xm * L.ym * L.dof)); /* the product's 11 and the dot's 2 per unknown */
  if (op->check) PetscCall(Check(A, op, x, y));
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)A), s, 1, &part, xy));
  PetscCall(PetscLogEventEnd(multdot_event, A, x, y, 0));
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
  OpCtx          *op;
  PetscInt        m, n, M, N, dof;
  DMBoundaryType  bx;
  PetscMPIInt     size;

  PetscFunctionBegin;
  PetscCall(PetscNew(&op));
  op->da      = da;
  op->scatter = scatter;
  PetscCall(DMDAGetInfo(da, NULL, &M, &N, NULL, NULL, NULL, NULL, &dof, NULL, &bx, NULL, NULL, NULL));
  PetscCheck(dof <= 2, PETSC_COMM_SELF, PETSC_ERR_SUP, "at most 2 components");
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  op->dof = dof, op->M = M, op->N = N, op->periodic = (PetscBool)(bx == DM_BOUNDARY_PERIODIC), op->one_rank = size == 1;
  PetscCall(DMCreateLocalVector(da, &op->uloc));
  PetscCall(VecSet(op->uloc, 0.0));
  if (op->one_rank && !op->periodic) PetscCall(PetscCalloc1(M * dof, &op->zeros)); /* the rows beyond the edge */
  if (scatter) PetscCall(BuildFacePlan(op));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &m, &n, NULL));
  op->xm = m, op->ym = n;
  PetscCall(
    MatCreateShell(PetscObjectComm((PetscObject)da), m * n * dof, m * n * dof, M * N * dof, M * N * dof, op, A));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT, (void (*)(void))OperatorMult));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE, (void (*)(void))OperatorMult)); /* symmetric */
  PetscCall(MatShellSetOperation(*A, MATOP_GET_DIAGONAL, (void (*)(void))OperatorGetDiagonal));
  if (!scatter) PetscCall(PetscObjectComposeFunction((PetscObject)*A, "MatMultDot_C", OperatorMultDot));
  if (!multdot_event) PetscCall(PetscLogEventRegister("MatMultDot", MAT_CLASSID, &multdot_event));
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
  PetscCall(VecDestroy(&op->csum)); /* A changed: its checksum vector is formed again */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorSetCheck(Mat A, PetscBool on)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  op->check = on;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorSetFaults(Mat A, fault_ctx *f)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  op->fault = f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorGetCheckResult(Mat A, PetscInt *nchecks, PetscInt *nfail, PetscReal *worst)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  *nchecks = op->nchecks, *nfail = op->nfail, *worst = op->worst;
  op->nchecks = op->nfail = 0, op->worst = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode OperatorDestroyContext(Mat A)
{
  OpCtx *op;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &op));
  PetscCall(VecDestroy(&op->csum));
  scatter_plan_destroy(&op->plan);
  PetscCall(PetscFree2(op->flux, op->lap));
  PetscCall(VecDestroy(&op->uloc));
  PetscCall(PetscFree(op->zeros));
  OpHaloDestroy(op);
  OperatorDevFree(op);
  PetscCall(PetscFree(op));
  PetscFunctionReturn(PETSC_SUCCESS);
}
