/* kernels/reduce_impl.h: private helpers shared by the reduction strategies. */
#ifndef MINIAPP_KERNELS_REDUCE_IMPL_H
#define MINIAPP_KERNELS_REDUCE_IMPL_H

#include "reduce.h" /* red_atomic_state; rsum.h (rsum.c and gsum.c use these too) */
#include <math.h>
#include <string.h>

/* Below this many blocks a reduction runs on the calling thread only: the
 * OpenMP fork costs more than it saves. Never affects the bits. */
#define RED_PAR_MIN_BLOCKS 8

/* Seeded atomic replay: does ord draw its orders, and its next call number. */
static inline int red_seeded(const red_atomic_state *ord) { return ord && ord->seed; }
static inline uint64_t red_atomic_next_call(red_atomic_state *ord) { return ord->calls++; }

/* rsum internal shared by rsum.c and gsum.c: adding bins c[0..2] (bin index
 * top, top-1, top-2) to a state. */
void    rsum_add_bins(rsum_t *a, int32_t top, const __int128 *c);

/* The vector path (rsum_isa): 0 generic, 1 AVX2, 2 AVX-512. */
int rsum_isa_level(void);

/* A fold's count after n values whose bits of v + M summed to lanes (mod
 * 2^64): n bits(M) taken off. The lanes wrap, but the true count fits in 63
 * bits, so the result is exact. rsum and gsum both count this way. */
static inline int64_t rsum_fold_count(uint64_t lanes, size_t n, double M)
{
  uint64_t b;
  memcpy(&b, &M, sizeof b);
  return (int64_t)(lanes - (uint64_t)n * b);
}

/* The summand i of op. Inlined with a constant op, the switch disappears. */
static inline double red_elem(red_op_t op, const double *x, const double *y, size_t i)
{
  switch (op) {
  case RED_OP_DOT: return x[i] * y[i];
  case RED_OP_SUMSQ: return x[i] * x[i];
  case RED_OP_ASUM: return fabs(x[i]);
  default: return x[i];
  }
}

#endif
