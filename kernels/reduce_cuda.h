/* kernels/reduce_cuda.h: red_local (kernels/reduce.h) on device arrays, for
 * the solver's vectors on a GPU. Plain C API, no PETSc, no MPI: the rank
 * partials it returns combine with red_combine as the CPU's do.
 *
 * Bits: the partial of every strategy equals red_local's on the same values
 * on the CPU, bitwise:
 *   deterministic  the same RED_BLOCK blocks, each element i of a block added
 *                  to lane i % 8 in index order and the lanes combined by the
 *                  same tree (one thread per block and lane), the block
 *                  partials then combined on the host by the same pairwise
 *                  tree (red_blocks_combine);
 *   reproducible   the same rsum state: the largest |summand| first (an
 *                  order-free maximum), then every summand split canonically
 *                  under its bin (gradsum_split) and the folds added as
 *                  integers (exact, in any order);
 *   atomic         with a seeded order the device forms the block partials
 *                  and the host combines them in the drawn order (the same
 *                  draw; a single block's elements are permuted on the host);
 *                  otherwise the block partials are added with atomicAdd in
 *                  the order the device completes them: the bits may change
 *                  from run to run, as the strategy promises.
 * A non-finite summand makes the partial non-finite with the value the CPU
 * gives (which NaN, when NaNs meet, may differ).
 * Every call is synchronous: the partial is on the host when it returns.
 * Returns 0 or a CUDA error code. */
#ifndef MINIAPP_KERNELS_REDUCE_CUDA_H
#define MINIAPP_KERNELS_REDUCE_CUDA_H

#include "reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device and host scratch of the calls, owned by the caller (a vector's
 * owner): reused and grown as the sizes need; one per thread that calls. */
typedef struct red_cuda_ws red_cuda_ws;
int  red_cuda_ws_create(red_cuda_ws **w);
void red_cuda_ws_destroy(red_cuda_ws **w);

/* The local partial of sum_i op(x_i, y_i), i < n, of device arrays x and y (y
 * read only for RED_OP_DOT). */
int red_cuda_local(red_cuda_ws *w, red_strategy_t s, red_op_t op, size_t n, const double *x, const double *y,
                   red_partial_t *p, red_atomic_state *ord);

#ifdef __cplusplus
}
#endif
#endif
