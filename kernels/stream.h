/* kernels/stream.h: the STREAM triad a[i] = b[i] + 3 c[i] and a dot over
 * arrays of n doubles on the calling thread team (kernels/stream.c), for the
 * bandwidth a run's own passes are compared with. Plain C + OpenMP. */
#ifndef MINIAPP_KERNELS_STREAM_H
#define MINIAPP_KERNELS_STREAM_H

#include <stddef.h>

typedef struct {
  double *a, *b, *c, *mem[3];
  size_t  n, m; /* m sweeps a sample: at least 2^22 values */
} stream_t;

/* Three arrays, each 1 KiB further into its page than the last (no 4K
 * aliasing between them), first touched by the threads that sweep them. 0, or 1 out of memory. */
int  stream_create(size_t n, stream_t *st);
void stream_destroy(stream_t *st);
/* One sample of each into the bests *bt and *bd (seconds per sweep): the
 * best of three sweeps (the first after other work finds the arrays cold). */
void stream_sample(const stream_t *st, double *bt, double *bd);
/* The triad's bandwidth, GB/s, of reps samples of n doubles (3 x 8 bytes a
 * value, write-allocate not counted); NaN out of memory. */
double stream_triad_gbs(size_t n, int reps);

#endif
