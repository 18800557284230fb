/* solver/vecred.c: the "fpna" PETSc Vec types: a standard Seq/MPI vector
 * whose reductions go through kernels/reduce.h with a chosen strategy and
 * whose element-wise updates round alike on any split and thread count.
 * VecDuplicate keeps the type, so KSP work vectors carry it. Types: "fpna"
 * (the compiled strategy, what the app uses), "fpna_atomic", ..._deterministic,
 * ..._reproducible (benchmarks compare them in one process); "fpnacuda" adds
 * a device mirror (vecdev.c). Across ranks: atomic uses MPI_Allreduce;
 * deterministic sums the gathered rank partials in rank order; reproducible
 * merges the exact accumulators. The *_local ops (VecDotBegin/End in pipelined
 * Krylov methods) give rank-local values that PETSc adds with MPI_Allreduce,
 * outside the switch: solver.c rejects those methods in non-atomic builds. */
#include "vecred.h"
#include "vecdev.h"
#include "solver.h" /* PETSC_SUCCESS on PETSc 3.18 */
#include "solver_reduction.h"

#include <petsc/private/vecimpl.h>

PETSC_EXTERN PetscErrorCode VecCreate_Seq(Vec);
PETSC_EXTERN PetscErrorCode VecCreate_MPI(Vec);

static PetscInt64    reduction_count = 0; /* global reductions through these ops */
static PetscLogEvent cgtail_event;        /* VecCGTail: the fused CG tail (-log_view) */

PetscInt64 VecFPNAGetReductionCount(void) { return reduction_count; }

/* out[j] = global value of partials p[j], j < n, combined with strategy s. */
PetscErrorCode VecFPNACombine(MPI_Comm comm, red_strategy_t s, PetscInt n, red_partial_t *p, PetscReal *out)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  reduction_count++;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (s == RED_ATOMIC) {
    PetscReal loc[64];
    PetscCheck(n <= 64, comm, PETSC_ERR_SUP, "at most 64 simultaneous reductions");
    for (PetscInt j = 0; j < n; j++) loc[j] = p[j].d;
    if (size == 1) {
      for (PetscInt j = 0; j < n; j++) out[j] = loc[j];
    } else PetscCallMPI(MPI_Allreduce(loc, out, (PetscMPIInt)n, MPIU_REAL, MPI_SUM, comm));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (size == 1) {
    for (PetscInt j = 0; j < n; j++) out[j] = red_combine(s, 1, &p[j]);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  red_partial_t *all, *col;
  PetscCall(PetscMalloc2((size_t)size * n, &all, size, &col));
  PetscCallMPI(
    MPI_Allgather(p, (PetscMPIInt)(n * sizeof *p), MPI_BYTE, all, (PetscMPIInt)(n * sizeof *p), MPI_BYTE, comm));
  for (PetscInt j = 0; j < n; j++) {
    for (PetscMPIInt r = 0; r < size; r++) col[r] = all[(size_t)r * n + j]; /* rank order */
    out[j] = red_combine(s, size, col);
  }
  PetscCall(PetscFree2(all, col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LocalPartial(red_strategy_t s, red_op_t op, Vec x, Vec y, red_partial_t *p)
{
  const PetscScalar *xa, *ya = NULL;
  PetscInt           n;
  red_atomic_state  *ord = NULL;

  PetscFunctionBegin;
  PetscCall(VecFPNAGetOrder(x, &ord));
  if (VecDevIs(x)) PetscFunctionReturn(VecDevLocalPartial(s, op, x, y, p, ord));
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  if (y) PetscCall(VecGetArrayRead(y, &ya));
  red_local(s, op, (size_t)n, xa, ya, p, ord);
  /* as PETSc counts (its n - 1 aside) */
  PetscCall(PetscLogFlops(op == RED_OP_DOT || op == RED_OP_SUMSQ ? 2.0 * n : (PetscLogDouble)n));
  if (y) PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LocalMaxAbs(Vec x, PetscReal *m)
{
  const PetscScalar *xa;
  PetscInt           n;

  PetscFunctionBegin;
  if (VecDevIs(x)) {
    PetscCall(VecDevMaxAbs(x, m));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *m = 0.0;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal a = PetscAbsScalar(xa[i]);
    if (a > *m || PetscIsNanReal(a)) *m = a;
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Dot(red_strategy_t s, Vec x, Vec y, PetscScalar *z)
{
  red_partial_t p;

  PetscFunctionBegin;
  PetscCall(LocalPartial(s, RED_OP_DOT, x, y, &p));
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)x), s, 1, &p, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDot(red_strategy_t s, Vec x, PetscInt nv, const Vec y[], PetscScalar *z)
{
  red_partial_t p[64];

  PetscFunctionBegin;
  for (PetscInt j0 = 0; j0 < nv; j0 += 64) { /* batches of 64: one collective each */
    PetscInt m = PetscMin(64, nv - j0);
    for (PetscInt j = 0; j < m; j++) PetscCall(LocalPartial(s, RED_OP_DOT, x, y[j0 + j], &p[j]));
    PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)x), s, m, p, z + j0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Norm(red_strategy_t s, Vec x, NormType type, PetscReal *z)
{
  MPI_Comm      comm = PetscObjectComm((PetscObject)x);
  red_partial_t p[2];

  PetscFunctionBegin;
  if (type == NORM_INFINITY) { /* a max is exact in any order */
    PetscReal m;
    PetscCall(LocalMaxAbs(x, &m));
    PetscCall(MPIU_Allreduce(&m, z, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (type == NORM_1 || type == NORM_1_AND_2) PetscCall(LocalPartial(s, RED_OP_ASUM, x, NULL, &p[0]));
  if (type != NORM_1) PetscCall(LocalPartial(s, RED_OP_SUMSQ, x, NULL, &p[type == NORM_1_AND_2 ? 1 : 0]));
  PetscCall(VecFPNACombine(comm, s, type == NORM_1_AND_2 ? 2 : 1, p, z));
  if (type == NORM_2 || type == NORM_FROBENIUS) z[0] = PetscSqrtReal(z[0]);
  if (type == NORM_1_AND_2) z[1] = PetscSqrtReal(z[1]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DotNorm2(red_strategy_t s, Vec x, Vec y, PetscScalar *dp, PetscScalar *nm)
{
  red_partial_t p[2];
  PetscReal     z[2];

  PetscFunctionBegin;
  PetscCall(LocalPartial(s, RED_OP_DOT, x, y, &p[0]));
  PetscCall(LocalPartial(s, RED_OP_SUMSQ, y, NULL, &p[1]));
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)x), s, 2, p, z));
  *dp = z[0], *nm = z[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's VecSum adds the op's values over the ranks itself (MPI_Allreduce):
 * rank 0 gives the switch's global sum and the others 0, so that its sum is
 * the switch's value exactly. */
static PetscErrorCode Sum(red_strategy_t s, Vec x, PetscScalar *z)
{
  red_partial_t p;
  PetscMPIInt   rank;

  PetscFunctionBegin;
  PetscCall(LocalPartial(s, RED_OP_SUM, x, NULL, &p));
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)x), s, 1, &p, z));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)x), &rank));
  if (rank) *z = 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank-local values (VecDotBegin/End): see the file comment. */
static PetscErrorCode DotLocal(red_strategy_t s, Vec x, Vec y, PetscScalar *z)
{
  red_partial_t p;

  PetscFunctionBegin;
  PetscCall(LocalPartial(s, RED_OP_DOT, x, y, &p));
  *z = red_combine(s, 1, &p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MDotLocal(red_strategy_t s, Vec x, PetscInt nv, const Vec y[], PetscScalar *z)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < nv; j++) PetscCall(DotLocal(s, x, y[j], &z[j]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NormLocal(red_strategy_t s, Vec x, NormType type, PetscReal *z)
{
  red_partial_t p;

  PetscFunctionBegin;
  if (type == NORM_INFINITY) {
    PetscCall(LocalMaxAbs(x, z));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (type == NORM_1 || type == NORM_1_AND_2) {
    PetscCall(LocalPartial(s, RED_OP_ASUM, x, NULL, &p));
    z[0] = red_combine(s, 1, &p);
  }
  if (type != NORM_1) {
    PetscCall(LocalPartial(s, RED_OP_SUMSQ, x, NULL, &p));
    z[type == NORM_1_AND_2 ? 1 : 0] = red_combine(s, 1, &p); /* squared, as PETSc expects */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Element-wise updates. PETSc's Seq AXPY calls BLAS daxpy, whose optimized
 * kernels use FMA in the vector body but not in the remainder: which elements
 * get a fused multiply-add then depends on the local length, i.e. on the
 * decomposition. These loops round every element the same way (the build
 * has -ffp-contract=off), so threads change no bit: each element is
 * computed once, by one thread, alike. Short vectors stay on one thread
 * (the fork would cost more than the pass). */
#define VEC_PAR_MIN 65536
static PetscErrorCode AXPBY(Vec y, PetscScalar a, PetscScalar b, Vec x) /* y = a x + b y */
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
#pragma omp parallel for simd schedule(static) if (n >= VEC_PAR_MIN)
  for (PetscInt i = 0; i < n; i++) ya[i] = a * xa[i] + b * ya[i];
  PetscCall(PetscLogFlops(3.0 * n));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* w = a x + y, rounded as PETSc's Seq WAXPY rounds it (its a = 1 and a = -1
 * cases, y + x and y - x, are the same numbers: 1 * x and -1 * x are exact). */
static PetscErrorCode WAXPY(Vec w, PetscScalar a, Vec x, Vec y)
{
  const PetscScalar *xa, *ya;
  PetscScalar       *wa;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(w, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayWrite(w, &wa));
#pragma omp parallel for simd schedule(static) if (n >= VEC_PAR_MIN)
  for (PetscInt i = 0; i < n; i++) wa[i] = a * xa[i] + ya[i];
  PetscCall(PetscLogFlops(2.0 * n));
  PetscCall(VecRestoreArrayWrite(w, &wa));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 1 * v == v exactly and + commutes, so these round as y + a x and x + a y. */
static PetscErrorCode AXPY(Vec y, PetscScalar a, Vec x) { return AXPBY(y, a, 1.0, x); }
static PetscErrorCode AYPX(Vec y, PetscScalar a, Vec x) { return AXPBY(y, 1.0, a, x); } /* y = x + a y */

static PetscErrorCode MAXPY(Vec y, PetscInt nv, const PetscScalar *a, Vec *x) /* y += sum_j a_j x_j, j ascending */
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < nv; j++) PetscCall(AXPY(y, a[j], x[j]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode HostCGTail(red_strategy_t s, PetscScalar a, Vec x, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp,
                                 Vec z, red_partial_t part[2], red_atomic_state *ord)
{
  const PetscScalar *pa, *wa, *da;
  PetscScalar       *xa, *ra, *za;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(r, &ra));
  PetscCall(VecGetArray(z, &za));
  PetscCall(VecGetArrayRead(p, &pa));
  PetscCall(VecGetArrayRead(dinv, &da));
  if (w != z) PetscCall(VecGetArrayRead(w, &wa));
  else wa = za;
  red_cg_tail(s, (size_t)n, a, xa, pa, ra, wa, da, (size_t)dp, za, &part[0], &part[1], ord);
  if (w != z) PetscCall(VecRestoreArrayRead(w, &wa));
  PetscCall(VecRestoreArrayRead(dinv, &da));
  PetscCall(VecRestoreArrayRead(p, &pa));
  PetscCall(VecRestoreArray(z, &za));
  PetscCall(VecRestoreArray(r, &ra));
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(PetscLogFlops(9.0 * n)); /* 2 AXPY (2 each), the scaling (1), 2 reductions (2 each) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNACGTail(Vec x, PetscScalar a, Vec p, Vec r, Vec w, Vec dinv, PetscInt dp, Vec z, PetscReal *zz,
                             PetscScalar *zr)
{
  PetscBool         is;
  red_strategy_t    s;
  red_partial_t     part[2];
  PetscReal         out[2];
  red_atomic_state *ord = NULL;

  PetscFunctionBegin;
  PetscCall(VecFPNAGetStrategy(x, &is, &s));
  PetscCall(VecFPNAGetOrder(x, &ord));
  PetscCheck(is, PetscObjectComm((PetscObject)x), PETSC_ERR_ARG_WRONG, "VecFPNACGTail needs fpna vectors");
  PetscCall(PetscLogEventBegin(cgtail_event, x, p, r, z));
  if (VecDevIs(x)) PetscCall(VecDevCGTail(s, a, x, p, r, w, dinv, dp, z, part, ord));
  else PetscCall(HostCGTail(s, a, x, p, r, w, dinv, dp, z, part, ord));
  PetscCall(VecFPNACombine(PetscObjectComm((PetscObject)x), s, 2, part, out));
  PetscCall(PetscLogEventEnd(cgtail_event, x, p, r, z));
  *zz = out[0], *zr = out[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's allocator gives every large vector nearly the same offset in a
 * 4 KiB page (measured: six CG vectors within 112 bytes of each other). A
 * loop that stores one vector and loads another a few elements ahead then
 * stalls on 4K aliasing: the load looks like it depends on the pending
 * store. Each new fpna array therefore starts 512 bytes further into its
 * page than the one before, cycling over 8 offsets (a microbenchmark of the
 * fused CG tail: 20 ms with the arrays on one offset, 6 ms staggered). The
 * array stays PETSc's to free: array_allocated is what PetscCalloc gave. */
static PetscErrorCode Stagger(Vec v)
{
  typedef struct {
    VECHEADER
  } Header;
  static unsigned count = 0;
  Header         *h     = (Header *)v->data;
  const PetscInt  n     = v->map->n, page = 4096 / sizeof(PetscScalar);
  PetscScalar    *mem;

  PetscFunctionBegin;
  if (!h->array_allocated || n < 4 * page) PetscFunctionReturn(PETSC_SUCCESS); /* small: in cache anyway */
  PetscCall(PetscCalloc1(n + page, &mem));
  PetscInt at = (PetscInt)(((uintptr_t)mem % 4096) / sizeof(PetscScalar)), want = (PetscInt)(count++ % 8) * (page / 8);
  PetscCall(PetscFree(h->array_allocated));
  h->array_allocated = mem, h->array = mem + (want - at + page) % page;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* VecDuplicate: the same fpna type again (a staggered array, the type name
 * kept). PETSc's MPI duplicate would copy the ops onto a plain "mpi" vector. */
static PetscErrorCode Duplicate(Vec w, Vec *v)
{
  PetscFunctionBegin;
  PetscCall(VecCreate(PetscObjectComm((PetscObject)w), v));
  PetscCall(PetscLayoutReference(w->map, &(*v)->map));
  PetscCall(VecSetType(*v, ((PetscObject)w)->type_name));
  PetscCall(PetscObjectListDestroy(&((PetscObject)(*v))->olist)); /* what its creation composed: w's replace it */
  PetscCall(PetscObjectListDuplicate(((PetscObject)w)->olist, &((PetscObject)(*v))->olist));
  PetscCall(PetscFunctionListDuplicate(((PetscObject)w)->qlist, &((PetscObject)(*v))->qlist));
  (*v)->ops->view = w->ops->view;
  (*v)->stash.ignorenegidx = w->stash.ignorenegidx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One set of ops per strategy, each with its strategy as a constant. */
#define DEFINE_OPS(tag, S) \
  static PetscErrorCode Dot_##tag(Vec x, Vec y, PetscScalar *z) { return Dot(S, x, y, z); } \
  static PetscErrorCode MDot_##tag(Vec x, PetscInt nv, const Vec y[], PetscScalar *z) { return MDot(S, x, nv, y, z); } \
  static PetscErrorCode Norm_##tag(Vec x, NormType t, PetscReal *z) { return Norm(S, x, t, z); } \
  static PetscErrorCode DotNorm2_##tag(Vec x, Vec y, PetscScalar *d, PetscScalar *n) \
  { \
    return DotNorm2(S, x, y, d, n); \
  } \
  static PetscErrorCode Sum_##tag(Vec x, PetscScalar *z) { return Sum(S, x, z); } \
  static PetscErrorCode DotLocal_##tag(Vec x, Vec y, PetscScalar *z) { return DotLocal(S, x, y, z); } \
  static PetscErrorCode MDotLocal_##tag(Vec x, PetscInt nv, const Vec y[], PetscScalar *z) \
  { \
    return MDotLocal(S, x, nv, y, z); \
  } \
  static PetscErrorCode NormLocal_##tag(Vec x, NormType t, PetscReal *z) { return NormLocal(S, x, t, z); } \
  static PetscErrorCode VecCreate_FPNA_##tag(Vec v) \
  { \
    PetscMPIInt size; \
    PetscFunctionBegin; \
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)v), &size)); \
    PetscCall(size > 1 ? VecCreate_MPI(v) : VecCreate_Seq(v)); \
    v->ops->dot = v->ops->tdot = Dot_##tag; /* real scalars: tdot == dot */ \
    v->ops->mdot = v->ops->mtdot = MDot_##tag; \
    v->ops->norm                 = Norm_##tag; \
    v->ops->dotnorm2             = DotNorm2_##tag; \
    v->ops->sum                  = Sum_##tag; \
    v->ops->dot_local = v->ops->tdot_local = DotLocal_##tag; \
    v->ops->mdot_local = v->ops->mtdot_local = MDotLocal_##tag; \
    v->ops->norm_local                       = NormLocal_##tag; \
    v->ops->axpy = AXPY, v->ops->aypx = AYPX, v->ops->axpby = AXPBY, v->ops->maxpy = MAXPY; \
    v->ops->waxpy = WAXPY; \
    v->ops->duplicate = Duplicate; \
    PetscCall(Stagger(v)); \
    PetscCall(PetscObjectChangeTypeName((PetscObject)v, VECFPNA_##S)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

#define VECFPNA_RED_ATOMIC        VECFPNA_ATOMIC
#define VECFPNA_RED_DETERMINISTIC VECFPNA_DETERMINISTIC
#define VECFPNA_RED_REPRODUCIBLE  VECFPNA_REPRODUCIBLE
DEFINE_OPS(atomic, RED_ATOMIC)
DEFINE_OPS(deterministic, RED_DETERMINISTIC)
DEFINE_OPS(reproducible, RED_REPRODUCIBLE)

/* The strategy of a Vec whose reductions are these ops. By the ops, not the
 * type name: VecDuplicate of an MPI vector (the KSP's work vectors) keeps
 * the ops but names the copy "mpi". */
PetscErrorCode VecFPNAGetStrategy(Vec v, PetscBool *is, red_strategy_t *s)
{
  PetscFunctionBegin;
  *is = PETSC_TRUE;
  if (v->ops->dot == Dot_atomic) *s = RED_ATOMIC;
  else if (v->ops->dot == Dot_deterministic) *s = RED_DETERMINISTIC;
  else if (v->ops->dot == Dot_reproducible) *s = RED_REPRODUCIBLE;
  else *is = PETSC_FALSE, *s = RED_DETERMINISTIC; /* not an fpna vector: *s means nothing */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "fpna": the compiled strategy, under its own name so that duplicates
 * (which re-create by type name) come back as "fpna". */
static PetscErrorCode VecCreate_FPNA(Vec v)
{
  PetscFunctionBegin;
#if defined(MINIAPP_SOLVER_REDUCTION_ATOMIC)
  PetscCall(VecCreate_FPNA_atomic(v));
#elif defined(MINIAPP_SOLVER_REDUCTION_DETERMINISTIC)
  PetscCall(VecCreate_FPNA_deterministic(v));
#else
  PetscCall(VecCreate_FPNA_reproducible(v));
#endif
  PetscCall(PetscObjectChangeTypeName((PetscObject)v, VECFPNA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecFPNARegister(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecRegister(VECFPNA, VecCreate_FPNA));
  PetscCall(VecRegister(VECFPNA_ATOMIC, VecCreate_FPNA_atomic));
  PetscCall(VecRegister(VECFPNA_DETERMINISTIC, VecCreate_FPNA_deterministic));
  PetscCall(VecRegister(VECFPNA_REPRODUCIBLE, VecCreate_FPNA_reproducible));
  PetscCall(VecDevRegister(VecCreate_FPNA, Duplicate));
  PetscCall(PetscLogEventRegister("VecCGTail", VEC_CLASSID, &cgtail_event));
  done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *VecFPNACompiledStrategy(void) { return red_strategy_name(SOLVER_STRATEGY); }
