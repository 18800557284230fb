/* kernels/reduce.h: floating-point reductions with three summation strategies
 * side by side (atomic, deterministic, reproducible), CPU/OpenMP.
 * Plain C, no PETSc, no MPI: combining partials across ranks is the caller's
 * job, done with red_combine() on partials gathered in rank order.
 *
 * Strategies (see docs/reductions.md for the algorithms and error bounds):
 *   RED_ATOMIC        chunk partials added to one shared sum in completion order
 *                     (#pragma omp atomic); bits may change run to run. With
 *                     red_set_atomic_order_seed(s != 0) the combination order is
 *                     a pseudo-random permutation drawn from s instead, so the
 *                     variability of GPU atomics can be replayed on a CPU.
 *   RED_DETERMINISTIC fixed blocks of RED_BLOCK elements summed with a fixed
 *                     lane pattern, block partials combined by a pairwise tree.
 *                     Same bits for the same data split, any thread count.
 *   RED_REPRODUCIBLE  binned 3-fold exact accumulation (rsum_t below): the bits
 *                     do not depend on order, thread count or data split.
 */
#ifndef MINIAPP_KERNELS_REDUCE_H
#define MINIAPP_KERNELS_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RED_ATOMIC = 0, RED_DETERMINISTIC = 1, RED_REPRODUCIBLE = 2 } red_strategy_t;

/* What is summed over i: x_i, x_i*y_i, x_i^2 or |x_i|. */
typedef enum { RED_OP_SUM = 0, RED_OP_DOT = 1, RED_OP_SUMSQ = 2, RED_OP_ASUM = 3 } red_op_t;

#define RED_BLOCK 1024 /* deterministic block length and atomic chunk length */

/* Reproducible accumulator. Values are split at fixed binary boundaries
 * (multiples of RSUM_W bits of exponent) into RSUM_FOLD parts; part k of every
 * value is added exactly into an integer bin. Only the RSUM_FOLD bins below the
 * largest value's bin are kept, so the result is a function of the multiset of
 * values alone. */
#define RSUM_W 40
#define RSUM_FOLD 3
typedef struct {
  int32_t  top;                /* bin index of bin[0]; INT32_MIN when empty   */
  int32_t  nonfinite;          /* 1 when an Inf or NaN was seen               */
  double   special;            /* sum of the non-finite values (order-free)   */
  __int128 bin[RSUM_FOLD];     /* bin[k] counts units of 2^((top-k)*RSUM_W)   */
} rsum_t;

void   rsum_init(rsum_t *a);
void   rsum_add(rsum_t *a, red_op_t op, size_t n, const double *x, const double *y);
/* Serial (call it from within a thread): sum_i x_i y_i (or sum_i x_i when y
 * is NULL) of floats, each product formed exactly in double; the same state
 * rsum_add reaches on the widened values. */
void   rsum_add_fdot(rsum_t *a, size_t n, const float *x, const float *y);
const char *rsum_isa(void); /* the vector path rsum and gsum_add_outer take here: generic, avx2 or avx512 (MINIAPP_RSUM_ISA picks one) */
int         rsum_lanes(void); /* the lanes of rsum's build on that path: 2 (generic), 4 (avx2) or 8 (avx512) */
const char *rsum_set_isa(const char *isa); /* take that path from now on (NULL: the widest); returns the one taken (benchmarks) */
/* Serial: a += sum z_i^2 and b += sum z_i r_i, the states two rsum_add
 * calls reach (the CG tail's two sums, over a block in cache). */
void   rsum_add_sumsq_dot(rsum_t *a, rsum_t *b, size_t n, const double *z, const double *r);
void   rsum_merge(rsum_t *a, const rsum_t *b); /* exact: a += b */
double rsum_value(const rsum_t *a);            /* one fixed rounding to double */

/* Global-unit sums of float products (kernels/gsum.c; the surrogate's weight
 * and bias gradients in the reproducible strategy, on CPU and GPU). The unit
 * is fixed before the sum from the rows' largest magnitudes over the whole
 * batch, all ranks included (a max is order-free): with ex, ey the exponents
 * of max|x| and max|y| (gsum_exponent), every product x_i y_i (exact in
 * double) is rounded once to the nearest multiple of U = 2^(ex + ey - 51)
 * (ties to even), and the integers are added exactly (64-bit fixed point).
 * The state is therefore a function of the multiset of products and the two
 * maxima alone: the same for any thread count, chunking, sample order, rank
 * count, CPU or GPU. Error: |sum - exact| <= n U / 2 <= n 2^-50 max|x| max|y|,
 * then the one rounding of rsum_value.
 * A train step may use exponents fixed before its batch exists (gsum_units):
 * a row's exponent E then lies between its own e and e + GSUM_SLACK, so
 * U <= 2^(ex + ey + 2 GSUM_SLACK - 51) and the bound is n 2^(2 GSUM_SLACK - 50)
 * max|x| max|y| (n 2^-44 max|x| max|y|). */
#define GSUM_ZERO      INT32_MIN /* gsum_exponent of an all-zero row */
#define GSUM_NONFINITE INT32_MAX /* ... of a row holding an Inf or NaN */
typedef struct {
  __int128 c;          /* sum of the products rounded to U, in units of U   */
  int32_t  nonfinite; /* a product was Inf or NaN: special is their sum      */
  double   special;
} gsum_t;
void    gsum_init(gsum_t *g);
float   gsum_absmax(size_t n, const float *x); /* max |x_i|; +Inf if some x_i is Inf or NaN */
int32_t gsum_exponent(float absmax);           /* e with absmax = f 2^e, 0.5 <= f < 1; GSUM_ZERO, GSUM_NONFINITE */
/* Serial: r[p * ny + q] += sum_{i<n} x[p * ldx + i] y[q * ldy + i] (p < nx,
 * q < ny) and, when rb is not NULL, rb[p] += sum_i x[p * ldx + i] (the bias
 * sums: y = 1, exponent 1), under the units of the global exponents ex[p],
 * ey[q]. Rows must lie within their exponents (|x| < 2^ex). */
void    gsum_add_outer(gsum_t *r, gsum_t *rb, size_t n, size_t nx, const float *x, size_t ldx, const int32_t *ex, size_t ny, const float *y, size_t ldy, const int32_t *ey);
void    gsum_merge(gsum_t *a, const gsum_t *b); /* exact: a += b (same exponents) */
/* The rsum state of the exact value (e = ex + ey, or a marker): bins aligned
 * so that the value is held exactly, with a top that depends on e only, so
 * that rank partials merge exactly with rsum_merge and round with rsum_value. */
void    gsum_to_rsum(const gsum_t *g, int32_t ex, int32_t ey, rsum_t *r);
double  gsum_half_unit(int32_t ex, int32_t ey); /* U / 2, each product's rounding bound (0 without a unit) */
/* The exponents of n rows for this step, from the exponents the last step
 * used (pred; GSUM_ZERO where there are none) and this step's row maxima over
 * the batch and the ranks (amax): a row keeps pred[r] while it fits it
 * (e <= pred <= e + GSUM_SLACK for the row's own exponent e; an all-zero row
 * fits any), so that its sums can be made while the rows are in cache,
 * before the maxima are known; a row that does not fit is renewed one binade
 * above its maximum (e + GSUM_HEAD, at most 128; an all-zero row takes 0),
 * and its pairs' sums are made afterwards. Returns the number renewed. A
 * function of pred and amax only: every rank, thread count and device takes
 * the same exponents. */
#define GSUM_SLACK 3
#define GSUM_HEAD  1
int     gsum_units(size_t n, const int32_t *pred, const float *amax, int32_t *e); /* rows renewed */
float   gsum_unit_bound(int32_t e); /* a float whose gsum_exponent is e: 2^(e-1), 0 for GSUM_ZERO, +Inf for GSUM_NONFINITE */

/* A rank-local partial of one reduction, in the form its strategy combines. */
typedef struct {
  double d; /* atomic, deterministic */
  rsum_t r; /* reproducible */
} red_partial_t;

/* Local partial of sum_i op(x_i, y_i) over n elements (y ignored unless DOT). */
void red_local(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y, red_partial_t *p);
/* p[j] = local partial of x . y[j], j < nv: one pass over x per group of vectors. */
void red_local_mdot(red_strategy_t s, size_t n, const double *x, int nv, const double *const *y, red_partial_t *p);
/* The tail of a preconditioned CG iteration in one pass, for i < n:
 *   x_i += a p_i;  r_i += (-a) w_i;  z_i = r_i dinv_i   (each rounded as the
 *   separate element-wise ops round it; w may be z: w_i is read first;
 *   dp = 0: dinv holds n entries; dp = 1, 2, 4 or 8: a periodic diagonal,
 *   dinv_i = dinv[i % dp], one pass less),
 * with the local partials zz of sum z_i^2 and zr of sum z_i r_i formed while
 * each block is in cache: bitwise the partials red_local would give on the
 * updated z and r (the seeded atomic order draws the zz order first). */
void red_cg_tail(red_strategy_t s, size_t n, double a, double *x, const double *p, double *r, const double *w, const double *dinv, size_t dp, double *z, red_partial_t *zz, red_partial_t *zr);
/* A pass that produces y block by block, fused with the local partial of
 * x . y: fn(ctx, i0, m, xs) writes y[i0 .. i0+m) (blocks of RED_BLOCK
 * elements, the last one shorter; distinct blocks may run in parallel, so fn
 * writes its block only) and returns where the block's m values of x are:
 * x + i0, or xs (RED_BLOCK doubles of scratch) filled with a copy it has in
 * cache. Each block's share of the dot is formed right after, while it is in
 * cache. *p is bitwise red_local(s, RED_OP_DOT, n, x, y, p) on the finished
 * y, with the same seeded atomic draw. */
typedef const double *(*red_block_fn)(void *ctx, size_t i0, size_t m, double *xs);
void red_dot_blocks(red_strategy_t s, size_t n, red_block_fn fn, void *ctx, const double *x, const double *y, red_partial_t *p);
/* Combine np partials in array order (the caller passes them in rank order). */
double red_combine(red_strategy_t s, int np, const red_partial_t *p);
/* Convenience: the whole reduction on one rank. */
double red_reduce(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y);

/* Atomic strategy: 0 = real OpenMP atomics (completion order); otherwise
 * combine chunk partials in an order drawn from (seed, call counter). */
void     red_set_atomic_order_seed(uint64_t seed);
uint64_t red_get_atomic_order_seed(void);
/* The whole seeded-order state (seed + call counter), so that several
 * independent runs in one process (replicas) can each replay their own. */
typedef struct {
  uint64_t seed, calls;
} red_atomic_state;
void red_get_atomic_order_state(red_atomic_state *st);
void red_set_atomic_order_state(const red_atomic_state *st);

/* Scatter-add y[target[k]] += val[k] for k < ncontrib (a finite-volume face
 * loop adds each flux to both neighbouring cells this way). The plan groups
 * contributions by target, keeping their index order, for the gather-based
 * strategies; the atomic one scatters in completion (or seeded) order. */
typedef struct scatter_plan scatter_plan;
int  scatter_plan_create(size_t ntarget, size_t ncontrib, const int64_t *target, scatter_plan **plan);
void scatter_plan_destroy(scatter_plan **plan);
void scatter_add(red_strategy_t s, const scatter_plan *plan, const double *val, double *y);

const char *red_strategy_name(red_strategy_t s);
int         red_strategy_parse(const char *name, red_strategy_t *s); /* 0 on success */

#ifdef __cplusplus
}
#endif
#endif
