/* kernels/reduce.h: floating-point reductions with three summation strategies
 * side by side (atomic, deterministic, reproducible), CPU/OpenMP.
 * Plain C, no PETSc, no MPI: combining partials across ranks is the caller's
 * job, done with red_combine() on partials gathered in rank order.
 *
 * Strategies (see docs/reductions.md for the algorithms and error bounds):
 *   RED_ATOMIC        chunk partials added to one shared sum in completion order
 *                     (#pragma omp atomic); bits may change run to run. Given
 *                     an order (red_atomic_state) with seed s != 0, the
 *                     combination order is a pseudo-random permutation drawn
 *                     from (s, its call counter) instead, so the variability
 *                     of GPU atomics can be replayed on a CPU.
 *   RED_DETERMINISTIC fixed blocks of RED_BLOCK elements summed with a fixed
 *                     lane pattern, block partials combined by a pairwise tree.
 *                     Same bits for the same data split, any thread count.
 *   RED_REPRODUCIBLE  binned 3-fold exact accumulation (rsum_t, kernels/rsum.h): the bits
 *                     do not depend on order, thread count or data split.
 */
#ifndef MINIAPP_KERNELS_REDUCE_H
#define MINIAPP_KERNELS_REDUCE_H

#include "rsum.h" /* rsum_t: the reproducible partial; red_op_t */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RED_ATOMIC = 0, RED_DETERMINISTIC = 1, RED_REPRODUCIBLE = 2 } red_strategy_t;

#define RED_BLOCK 1024 /* deterministic block length and atomic chunk length */

/* The seeded atomic order: a context its owner (a solver, a network, a
 * replica) passes to every reduction. seed 0: real atomics (completion
 * order); otherwise each call that combines in a drawn order draws the
 * permutation of (seed, calls) and advances calls. NULL where an order is
 * asked for means real atomics too; the other strategies ignore it. */
typedef struct {
  uint64_t seed, calls;
} red_atomic_state;

/* A rank-local partial of one reduction, in the form its strategy combines. */
typedef struct {
  double d; /* atomic, deterministic */
  rsum_t r; /* reproducible */
} red_partial_t;

/* Local partial of sum_i op(x_i, y_i) over n elements (y ignored unless DOT). */
void red_local(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y, red_partial_t *p,
               red_atomic_state *ord);
/* red_local's result from the block partials p[0..nb) (block b: elements
 * b RED_BLOCK .. (b+1) RED_BLOCK, summed with the lane pattern), for a backend
 * that forms them itself (kernels/reduce_cuda.cu): deterministic: the
 * pairwise tree; atomic with a seeded order and nb >= 2: the drawn order (the
 * same draw as red_local's); otherwise their sum in index order. */
double red_blocks_combine(red_strategy_t s, size_t nb, const double *p, red_atomic_state *ord);
/* p[j] = local partial of x . y[j], j < nv: one pass over x per group of vectors. */
void red_local_mdot(red_strategy_t s, size_t n, const double *x, int nv, const double *const *y, red_partial_t *p,
                    red_atomic_state *ord);
/* The tail of a preconditioned CG iteration in one pass, for i < n:
 *   x_i += a p_i;  r_i += (-a) w_i;  z_i = r_i dinv_i   (each rounded as the
 *   separate element-wise ops round it; w may be z: w_i is read first;
 *   dp = 0: dinv holds n entries; dp = 1, 2, 4 or 8: a periodic diagonal,
 *   dinv_i = dinv[i % dp], one pass less),
 * with the local partials zz of sum z_i^2 and zr of sum z_i r_i formed while
 * each block is in cache: bitwise the partials red_local would give on the
 * updated z and r (the seeded atomic order draws the zz order first). */
void red_cg_tail(red_strategy_t s, size_t n, double a, double *x, const double *p, double *r, const double *w,
                 const double *dinv, size_t dp, double *z, red_partial_t *zz, red_partial_t *zr, red_atomic_state *ord);
/* A pass that produces y block by block, fused with the local partial of
 * x . y: fn(ctx, i0, m, xs) writes y[i0 .. i0+m) (blocks of RED_BLOCK
 * elements, the last one shorter; distinct blocks may run in parallel, so fn
 * writes its block only) and returns where the block's m values of x are:
 * x + i0, or xs (RED_BLOCK doubles of scratch) filled with a copy it has in
 * cache. Each block's share of the dot is formed right after, while it is in
 * cache. *p is bitwise red_local(s, RED_OP_DOT, n, x, y, p) on the finished
 * y, with the same seeded atomic draw. */
typedef const double *(*red_block_fn)(void *ctx, size_t i0, size_t m, double *xs);
void red_dot_blocks(red_strategy_t s, size_t n, red_block_fn fn, void *ctx, const double *x, const double *y,
                    red_partial_t *p, red_atomic_state *ord);
/* Combine np partials in array order (the caller passes them in rank order). */
double red_combine(red_strategy_t s, int np, const red_partial_t *p);
/* Convenience: the whole reduction on one rank. */
double red_reduce(red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y, red_atomic_state *ord);

/* Scatter-add y[target[k]] += val[k] for k < ncontrib (a finite-volume face
 * loop adds each flux to both neighbouring cells this way). The plan groups
 * contributions by target, keeping their index order, for the gather-based
 * strategies; the atomic one scatters in completion (or seeded) order. */
typedef struct scatter_plan scatter_plan;
int  scatter_plan_create(size_t ntarget, size_t ncontrib, const int64_t *target, scatter_plan **plan);
void scatter_plan_destroy(scatter_plan **plan);
void scatter_add(red_strategy_t s, const scatter_plan *plan, const double *val, double *y, red_atomic_state *ord);

const char *red_strategy_name(red_strategy_t s);
int         red_strategy_parse(const char *name, red_strategy_t *s); /* 0 on success */

#ifdef __cplusplus
}
#endif
#endif
